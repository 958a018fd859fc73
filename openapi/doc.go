// Package openapi holds the OpenAPI v3 documents of Kubernetes
// KubernetesVersion (api/openapi-spec/v3 of k8s.io/kubernetes), embedded in
// the binary, for the two uses that need the documents whole: the typed
// schemas that server-side apply merges with, and the descriptions of every
// kind and field that `explain` prints.
//
// It performs no I/O and knows nothing of clusters. Package schema, which
// reads the same documents, keeps only what client-side merging needs (patch
// strategies and merge keys); this package keeps everything.
//
// # Data
//
// `go generate ./openapi` downloads the documents, merges their
// definitions (components.schemas) into one table by name and writes two
// gzipped files that the package embeds: the definitions as JSON, and their
// structured-merge-diff schema, converted ahead of time exactly as
// kube-apiserver converts them (kube-openapi's schemaconv), with the index
// of kinds (x-kubernetes-group-version-kind). Each is decoded on first use
// and shared; nothing is decoded by importing the package.
//
// # Server-side apply
//
// TypeConverter returns the managedfields.TypeConverter of the built-in
// kinds, the one kube-apiserver builds from the same definitions, for
// k8s.io/apimachinery/pkg/util/managedfields's field manager.
// CustomResourceTypeConverter builds the converter of a
// CustomResourceDefinition's kinds from its schemas, as kube-apiserver's
// apiextensions server does (list types, map types, preserve-unknown-fields,
// embedded resources). Type returns one kind's structured-merge-diff type.
//
// # Explain
//
// LookupKind returns a kind's definition (a kube-openapi spec.Schema with
// descriptions, types, required fields and extensions), Resolve follows a
// property's reference to its definition, and Kinds lists every kind.
// Definitions are shared: callers must not modify them.
package openapi
