package local

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/konverge/konverge/cluster"
)

// The quantities of a pod's resource lists are stored as kube-apiserver
// v1.37.1 stores them (recorded by scripts/record-quantities.sh): parsed,
// rounded up to milli units, in canonical form, however large or exotic;
// refused where it refuses them.
func TestPodQuantitiesAsRecorded(t *testing.T) {
	data, err := os.ReadFile("../../testdata/quantity/pod-resources.txt")
	if err != nil {
		t.Fatal(err)
	}
	s, _ := openStore(t)
	ctx := context.Background()
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		in, want, _ := strings.Cut(line, "\t")
		name := fmt.Sprintf("q%d", i)
		pod := map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": name, "namespace": "default"},
			"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx:1.16.1",
				"resources": map[string]any{"requests": map[string]any{"cpu": in}}}}}}
		got, err := s.Create(ctx, pod)
		if want == "ERROR" {
			if err == nil || !cluster.IsInvalid(err) {
				t.Errorf("%q: stored (%v), want it refused", in, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		c := got["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
		cpu := c["resources"].(map[string]any)["requests"].(map[string]any)["cpu"]
		if cpu != want {
			t.Errorf("%q: stored %q, kube-apiserver stores %q", in, cpu, want)
		}
	}
}
