package kube

import (
	"errors"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/konverge/konverge/cluster"
)

// TestConvert checks that the API errors client-go returns become
// *cluster.StatusError with the same code, reason, message and causes,
// also when wrapped, and that other errors pass through.
func TestConvert(t *testing.T) {
	gr := schema.GroupResource{Group: "apps", Resource: "deployments"}
	invalid := apierrors.NewInvalid(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "web",
		field.ErrorList{field.Required(field.NewPath("spec", "selector"), "")})
	for _, in := range []error{
		apierrors.NewNotFound(gr, "web"),
		apierrors.NewAlreadyExists(gr, "web"),
		apierrors.NewConflict(gr, "web", errors.New("the object has been modified")),
		invalid,
		fmt.Errorf("wrapped: %w", apierrors.NewForbidden(gr, "web", errors.New("no"))),
	} {
		var api apierrors.APIStatus
		if !errors.As(in, &api) {
			t.Fatalf("%v is not an API status", in)
		}
		st := api.Status()
		out := convert(in)
		var se *cluster.StatusError
		if !errors.As(out, &se) {
			t.Fatalf("convert(%v) = %T", in, out)
		}
		if se.Code != int(st.Code) || string(se.Reason) != string(st.Reason) || se.Message != st.Message || se.Name != st.Details.Name || se.Kind != st.Details.Kind {
			t.Errorf("convert(%v) = %+v", in, se)
		}
		if cluster.ReasonOf(out) != cluster.Reason(st.Reason) {
			t.Errorf("ReasonOf = %q, want %q", cluster.ReasonOf(out), st.Reason)
		}
	}
	if !cluster.IsNotFound(convert(apierrors.NewNotFound(gr, "x"))) || !cluster.IsConflict(convert(apierrors.NewConflict(gr, "x", errors.New("c")))) {
		t.Error("IsNotFound / IsConflict")
	}
	se := convert(invalid).(*cluster.StatusError)
	if !cluster.IsInvalid(se) || len(se.Causes) != 1 || se.Causes[0].Field != "spec.selector" || se.Causes[0].Type != "FieldValueRequired" {
		t.Errorf("invalid causes: %+v", se.Causes)
	}
	plain := errors.New("dial tcp: connection refused")
	if convert(plain) != plain || convert(nil) != nil {
		t.Error("a non-API error changed")
	}
}
