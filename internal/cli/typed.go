package cli

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/runtime"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/konverge/konverge/internal/printer"
	"github.com/konverge/konverge/value"
)

// kubectl decodes the objects it builds, reads from files and gets back
// from its typed clients into the Go types of k8s.io/api, and prints them
// from those types: fields in the order the types declare them (-o json),
// empty structs kept ("resources: {}", "status: {}"), zero times left
// out. typedRaw gives an object that shape, so that konverge prints it as
// kubectl does. Objects are never modified through the types: konverge's
// one representation stays the JSON value.

// typedRaw returns obj as the JSON kubectl prints for it: through its
// k8s.io/api type when the kind is a built-in one, else with sorted keys
// (as kubectl prints unstructured objects). ok is false for a kind
// without a Go type.
func typedRaw(obj map[string]any) (printer.Raw, bool) {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	gv, err := k8sschema.ParseGroupVersion(apiVersion)
	if err != nil || kind == "" {
		return nil, false
	}
	typed, err := scheme.Scheme.New(gv.WithKind(kind))
	if err != nil {
		return nil, false
	}
	b, err := value.Encode(obj)
	if err != nil {
		return nil, false
	}
	if err := json.Unmarshal(b, typed); err != nil {
		return nil, false
	}
	return marshalTyped(typed)
}

// marshalTyped encodes a typed object as kubectl's printers do.
func marshalTyped(obj runtime.Object) (printer.Raw, bool) {
	out, err := json.Marshal(obj)
	if err != nil {
		return nil, false
	}
	return printer.Raw(out), true
}

// asTyped returns what kubectl prints for obj: its typed form, or obj
// itself when its kind has no Go type.
func asTyped(obj map[string]any) any {
	if r, ok := typedRaw(obj); ok {
		return r
	}
	return obj
}

// toValue turns a typed object into konverge's JSON value.
func toValue(obj runtime.Object) (map[string]any, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	return value.DecodeObject(b)
}
