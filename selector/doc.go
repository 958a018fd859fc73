// Package selector parses and evaluates Kubernetes label and field
// selectors for konverge's cluster backends and controllers. The parsing,
// the validation of label keys and values, the error messages and the
// canonical String form are apimachinery's own (k8s.io/apimachinery/pkg/labels
// and .../fields, which kube-apiserver and kubectl run); this package puts
// them behind an API on JSON values.
//
// It does not know which fields a kind supports in a field selector (the API
// server rejects "field label not supported" per kind; Fields.Matches
// evaluates any dotted path), and it does not list or watch anything: the
// cluster backends use it to filter objects.
//
// # Label selectors
//
// ParseLabels reads the string syntax of `kubectl get -l` with
// labels.Parse:
//
//	app=web,tier in (frontend, backend),!canary,release notin (beta),replicas>1
//
// Commas mean AND; the empty string selects everything. FromLabelSelector
// reads a metav1.LabelSelector as JSON values (matchLabels,
// matchExpressions) as it appears in a Deployment's spec.selector: an empty
// selector ({}) selects everything and a nil one selects nothing, as
// metav1.LabelSelectorAsSelector decides; a part of the wrong JSON type is
// reported with its path.
//
// # Field selectors
//
// ParseFields reads the syntax of `kubectl get --field-selector` with
// fields.ParseSelector: "metadata.name=web,status.phase!=Running".
// Fields.Matches evaluates each field path on an object decoded from JSON:
// an absent field reads as "", booleans and numbers compare by their JSON
// text.
//
// # Errors
//
// Parse errors are *Error. Their Reason is apimachinery's message, so that
// konverge prints what kubectl prints; Error() prefixes it with the package
// and the offending input.
package selector
