// Package explain prints the documentation of a kind or of one of its
// fields as `kubectl explain` does, by running kubectl's own explain
// (k8s.io/kubectl/pkg/explain/v2) over an OpenAPI v3 document of the
// kind's group version.
//
// The document comes from a real API server (/openapi/v3/apis/GROUP/VERSION,
// fetched by the caller), from the Kubernetes documents embedded in
// konverge (Builtin), or from a CustomResourceDefinition (CustomResource),
// built as kube-apiserver publishes it. It is a package of the CLI: the
// library packages do not import kubectl.
package explain
