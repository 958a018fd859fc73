package cluster_test

import (
	"testing"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/schema"
)

// TestNewUndecodable: the message is kube-apiserver v1.37.1's for a Secret
// with bad base64 data (recorded with kubectl apply against it: no field
// in the message); the field is the one cause.
func TestNewUndecodable(t *testing.T) {
	e := cluster.NewUndecodable(schema.GVK{Version: "v1", Kind: "Secret"}, "data.password", "illegal base64 data at input byte 3")
	if want := `Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 3`; e.Error() != want || e.Code != 400 || e.Reason != cluster.ReasonBadRequest {
		t.Errorf("%d %s %q, want 400 BadRequest %q", e.Code, e.Reason, e.Error(), want)
	}
	if f, ok := cluster.UndecodableField(e); !ok || f != "data.password" || e.Causes[0].Path().String() != "data.password" {
		t.Errorf("field %q %v", f, ok)
	}
}
