// Package apimeta is the vocabulary in which a Kubernetes API describes
// itself and its failures: Resource (how a kind is served: plural,
// namespaced, subresources) and StatusError (a failed call, with
// metav1.Status's reasons, messages and causes).
//
// It sits below everything that speaks of an API: package cluster (the
// interface konverge talks to) re-exports these types, and packages kinds
// (the built-in resources) and validate (the API server's validation) use
// them without depending on cluster. It does nothing else.
package apimeta
