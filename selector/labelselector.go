package selector

import (
	"fmt"
	"slices"
	"strconv"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// FromLabelSelector converts a metav1.LabelSelector, given as the JSON
// values of an object's selector field (a Deployment's spec.selector), as
// metav1.LabelSelectorAsSelector converts it:
//
//   - a nil map (no selector, or null) returns Nothing: it matches no
//     labels;
//   - a selector with neither matchLabels nor matchExpressions ({}) returns
//     Everything: it matches all labels;
//   - otherwise every matchLabels pair is an Equals requirement and every
//     matchExpressions entry an In, NotIn, Exists or DoesNotExist one,
//     made and validated by apimachinery's labels.NewRequirement.
//
// matchLabels are checked in key order, so of several invalid ones the
// first by key is reported (apimachinery reports any one of them). Fields
// other than matchLabels and matchExpressions are ignored, as JSON decoding
// ignores them. Errors are *Error with Syntax "LabelSelector".
func FromLabelSelector(m map[string]any) (Labels, error) {
	if m == nil {
		return Nothing(), nil
	}
	matchLabels, err := objectField(m, "matchLabels")
	if err != nil {
		return Labels{}, err
	}
	exprs, err := listField(m, "matchExpressions", "matchExpressions")
	if err != nil {
		return Labels{}, err
	}
	if len(matchLabels)+len(exprs) == 0 {
		return Everything(), nil
	}
	reqs := make([]labels.Requirement, 0, len(matchLabels)+len(exprs))
	keys := make([]string, 0, len(matchLabels))
	for k := range matchLabels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		input := "matchLabels[" + strconv.Quote(k) + "]"
		v, ok := matchLabels[k].(string)
		if !ok {
			return Labels{}, &Error{Syntax: syntaxLabelSelector, Input: input, Reason: "must be a string, not " + jsonType(matchLabels[k])}
		}
		r, err := labels.NewRequirement(k, selection.Equals, []string{v})
		if err != nil {
			return Labels{}, &Error{Syntax: syntaxLabelSelector, Input: input, Reason: err.Error()}
		}
		reqs = append(reqs, *r)
	}
	for i, e := range exprs {
		input := "matchExpressions[" + strconv.Itoa(i) + "]"
		r, err := expression(e, input)
		if err != nil {
			return Labels{}, err
		}
		reqs = append(reqs, *r)
	}
	return Labels{sel: labels.NewSelector().Add(reqs...)}, nil
}

// expression converts one metav1.LabelSelectorRequirement.
func expression(v any, input string) (*labels.Requirement, error) {
	bad := func(reason string) error {
		return &Error{Syntax: syntaxLabelSelector, Input: input, Reason: reason}
	}
	e, ok := v.(map[string]any)
	if !ok {
		return nil, bad("must be an object, not " + jsonType(v))
	}
	key, err := stringField(e, "key", input)
	if err != nil {
		return nil, err
	}
	opName, err := stringField(e, "operator", input)
	if err != nil {
		return nil, err
	}
	var op selection.Operator
	switch opName {
	case "In":
		op = selection.In
	case "NotIn":
		op = selection.NotIn
	case "Exists":
		op = selection.Exists
	case "DoesNotExist":
		op = selection.DoesNotExist
	default:
		return nil, bad(fmt.Sprintf("%q is not a valid label selector operator", opName))
	}
	list, err := listField(e, "values", input+".values")
	if err != nil {
		return nil, err
	}
	// apimachinery passes append([]string(nil), values...): nil when empty.
	var vals []string
	for j, x := range list {
		s, ok := x.(string)
		if !ok {
			return nil, &Error{Syntax: syntaxLabelSelector, Input: input + ".values[" + strconv.Itoa(j) + "]", Reason: "must be a string, not " + jsonType(x)}
		}
		vals = append(vals, s)
	}
	r, err := labels.NewRequirement(key, op, vals)
	if err != nil {
		return nil, bad(err.Error())
	}
	return r, nil
}

func objectField(m map[string]any, name string) (map[string]any, error) {
	switch v := m[name].(type) {
	case nil:
		return nil, nil
	case map[string]any:
		return v, nil
	default:
		return nil, &Error{Syntax: syntaxLabelSelector, Input: name, Reason: "must be an object, not " + jsonType(v)}
	}
}

func listField(m map[string]any, name, path string) ([]any, error) {
	switch v := m[name].(type) {
	case nil:
		return nil, nil
	case []any:
		return v, nil
	default:
		return nil, &Error{Syntax: syntaxLabelSelector, Input: path, Reason: "must be a list, not " + jsonType(v)}
	}
}

func stringField(m map[string]any, name, input string) (string, error) {
	switch v := m[name].(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	default:
		return "", &Error{Syntax: syntaxLabelSelector, Input: input + "." + name, Reason: "must be a string, not " + jsonType(v)}
	}
}

// jsonType names the JSON type of a decoded value.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case map[string]any:
		return "object"
	case []any:
		return "list"
	case float64, float32, int, int64, int32, uint, uint64, uint32:
		return "number"
	}
	return fmt.Sprintf("%T", v)
}
