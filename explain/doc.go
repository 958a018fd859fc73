// Package explain prints the documentation of a kind or of one of its
// fields as `kubectl explain` does: kubectl's plaintext template
// (GROUP/KIND/VERSION, FIELD, DESCRIPTION, FIELDS with types, enums and
// -required-), run with kubectl's template functions over an OpenAPI v3
// document of the kind's group version.
//
// The document comes from a real API server (/openapi/v3/apis/GROUP/VERSION,
// fetched by the caller), from the Kubernetes documents embedded in
// konverge (Builtin), or from a CustomResourceDefinition (CustomResource),
// built as kube-apiserver publishes it.
//
// The template (plaintext.tmpl) is kubectl v1.37.1's, unchanged (Apache
// License 2.0, The Kubernetes Authors); the package does not import
// k8s.io/kubectl.
package explain
