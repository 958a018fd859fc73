package podres

import (
	"testing"

	"github.com/konverge/konverge/cluster/local/internal/jsonobj"
)

func container(name, restart, cpuReq, cpuLim string) any {
	c := map[string]any{"name": name, "resources": map[string]any{
		"requests": map[string]any{"cpu": cpuReq}, "limits": map[string]any{"cpu": cpuLim}}}
	if restart != "" {
		c["restartPolicy"] = restart
	}
	return c
}

// A pod's effective cpu: its containers and sidecars together, or more
// where an init container beside the sidecars started before it needs
// more; pod-level resources replace the sum.
func TestTotals(t *testing.T) {
	for _, tc := range []struct {
		name           string
		spec           map[string]any
		request, limit string
	}{{
		name:    "containers add up",
		spec:    map[string]any{"containers": []any{container("a", "", "100m", "200m"), container("b", "", "1", "1")}},
		request: "1100m", limit: "1200m",
	}, {
		name: "an init container alone needs more",
		spec: map[string]any{
			"initContainers": []any{container("setup", "", "2", "3")},
			"containers":     []any{container("app", "", "1", "1")}},
		request: "2", limit: "3",
	}, {
		name: "a sidecar started before the init container adds to it",
		spec: map[string]any{
			"initContainers": []any{container("proxy", "Always", "1", "1"), container("setup", "", "1500m", "2500m")},
			"containers":     []any{container("app", "", "1", "1")}},
		request: "2500m", limit: "3500m",
	}, {
		name: "a sidecar started after it does not",
		spec: map[string]any{
			"initContainers": []any{container("setup", "", "1500m", "2500m"), container("proxy", "Always", "1", "1")},
			"containers":     []any{container("app", "", "1", "1")}},
		request: "2", limit: "2500m",
	}, {
		name: "pod-level resources replace the containers'",
		spec: map[string]any{
			"resources":  map[string]any{"requests": map[string]any{"cpu": "3"}, "limits": map[string]any{"cpu": "4"}},
			"containers": []any{container("app", "", "1", "1")}},
		request: "3", limit: "4",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			req, lim := Totals(tc.spec)
			r, l := req["cpu"], lim["cpu"]
			want := jsonobj.Quantity(tc.request)
			if r.Cmp(want) != 0 {
				t.Errorf("request %s, want %s", r.String(), tc.request)
			}
			want = jsonobj.Quantity(tc.limit)
			if l.Cmp(want) != 0 {
				t.Errorf("limit %s, want %s", l.String(), tc.limit)
			}
		})
	}
}

func TestQOSClass(t *testing.T) {
	pod := func(res map[string]any) map[string]any {
		return map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "resources": res}}}}
	}
	for _, tc := range []struct {
		res  map[string]any
		want string
	}{
		{map[string]any{}, "BestEffort"},
		{map[string]any{"requests": map[string]any{"cpu": "1"}}, "Burstable"},
		{map[string]any{"limits": map[string]any{"cpu": "1", "memory": "1Gi"}}, "Guaranteed"},
		{map[string]any{"requests": map[string]any{"cpu": "1", "memory": "1073741824"}, "limits": map[string]any{"cpu": "1000m", "memory": "1Gi"}}, "Guaranteed"},
		{map[string]any{"requests": map[string]any{"cpu": "500m", "memory": "1Gi"}, "limits": map[string]any{"cpu": "1", "memory": "1Gi"}}, "Burstable"},
	} {
		if got := QOSClass(pod(tc.res)); got != tc.want {
			t.Errorf("%v: %s, want %s", tc.res, got, tc.want)
		}
	}
}
