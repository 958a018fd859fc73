// Package cluster is the interface konverge talks to a Kubernetes API
// through: get, list and watch (Reader), create, update, patch and delete
// (Writer), and the kinds the API serves (Mapper). Objects are JSON values
// (map[string]any), errors are *StatusError with the API server's reasons
// and messages.
//
// It has two implementations: cluster/local, the embedded cluster konverge
// drives by default (a crash-safe bbolt store with API-server semantics),
// and cluster/kube, a real API server reached through a kubeconfig. This
// package holds only the contract; it stores and sends nothing.
//
// # Options
//
// Each verb takes variadic options, as controller-runtime's client does:
// DryRunAll, FieldOwner, InNamespace, MatchingLabels, PropagationPolicy and
// Preconditions apply to the verbs they make sense for.
package cluster
