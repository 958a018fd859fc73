package local

import (
	"context"
	"errors"
	"testing"

	"github.com/konverge/konverge/cluster"
)

// TestStrategicPatchNotAnObject: a strategic merge patch that is JSON but
// no object is refused with kube-apiserver's words (encoding/json's).
func TestStrategicPatchNotAnObject(t *testing.T) {
	s, _ := openStore(t)
	mustCreate(t, s, deploymentWeb)
	for patch, want := range map[string]string{
		`"not json"`: "json: cannot unmarshal string into Go value of type map[string]interface {}",
		`[1]`:        "json: cannot unmarshal array into Go value of type map[string]interface {}",
		`12`:         "json: cannot unmarshal number into Go value of type map[string]interface {}",
		`true`:       "json: cannot unmarshal bool into Go value of type map[string]interface {}",
	} {
		_, err := s.Patch(context.Background(), gvkDeployment, "default", "web", cluster.StrategicMergePatchType, []byte(patch))
		var se *cluster.StatusError
		if !errors.As(err, &se) || se.Reason != cluster.ReasonBadRequest || se.Message != want {
			t.Errorf("patch %s: %v, want BadRequest %q", patch, err, want)
		}
	}
}
