// Package printer formats Kubernetes objects as kubectl get prints them:
// the table columns of every kind kubectl 1.37 knows (pkg/printers of
// k8s.io/kubernetes), -o wide, --show-labels, a NAMESPACE column for
// --all-namespaces, ages by apimachinery's duration.HumanDuration, and the
// STATUS of a pod computed from its phase, reason and container states as
// kubectl computes it.
//
// It works on objects as JSON values (map[string]any) and reads nothing from
// a cluster; the time to measure ages against is given by the caller (the
// embedded cluster's clock).
//
// # Not implemented
//
// Server-side columns of custom resources (additionalPrinterColumns) are
// not printed: custom resources get NAME and AGE. Kinds without a table of
// their own here (nodes, persistent volumes, HPAs, ...) get NAME and AGE too.
package printer
