// Package kube is the real-cluster backend of konverge: a cluster.Interface
// over a Kubernetes API server reached through a kubeconfig. What it reads
// and writes are the JSON values the rest of konverge works on
// (map[string]any), encoded and decoded by package value over client-go's
// REST client (Watch goes through client-go's dynamic client); its errors
// are *cluster.StatusError with the API server's reason, message and
// causes. It is safe for concurrent use.
//
// # Kinds and schemas
//
// The kinds it serves come from the server's discovery when the Cluster is
// made (short names, scope, status subresource; Strategic for the built-in
// kinds, not for custom resources or aggregated APIs), and again when a
// kind is asked for that discovery did not list (the kinds of a CRD created
// meanwhile), at most every 200 ms. Merge schemas are read the first time
// one is needed and kept: a custom resource's from its
// CustomResourceDefinition (schema.FromCRD, the rules of server-side apply
// for custom resources, as in cluster/local), other kinds' from the
// server's /openapi/v3 document of their group version; a built-in kind
// the server does not describe falls back to konverge's own
// (schema.Builtin, Kubernetes 1.37).
//
// # Caches
//
// With Options.CacheDir (the CLI passes kubectl's, DefaultCacheDir),
// discovery and the OpenAPI documents are cached on disk as kubectl caches
// them, and so are the merge schemas parsed from the documents, named by
// the hash the server gives each document: a second process starts warm,
// and a changed document is read again.
//
// # Requests
//
// Nothing is throttled on the client unless the rest.Config asks for it
// (QPS > 0): the API server's API Priority and Fairness protects it, and
// its 429 and 5xx answers with a Retry-After are retried by client-go, up
// to ten times. Dry runs are sent as dryRun=All, field owners as
// fieldManager, field validation as fieldValidation.
//
// With KONVERGE_TRACE set (EnvTrace), every request is printed to standard
// error as it ends: when it started since the process did, method, path and
// query, status, protocol and duration, so that the round trips of a
// command can be counted and timed.
package kube
