package sim_test

import (
	"context"
	"testing"
	"time"

	"github.com/konverge/konverge/clock"
	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/sim"
)

// TestDeletedPodHeldByFinalizerTerminates: a deleted pod that a finalizer
// holds does not stay Running: once its containers stopped (at once on
// SIGTERM: exit 0, Completed; a sleeping shell ignores it and is killed
// at the end of the grace period: 137, Error) the kubelet writes its
// terminal phase, Succeeded or Failed, not ready, and the object stays
// until the finalizer goes.
func TestDeletedPodHeldByFinalizerTerminates(t *testing.T) {
	ctx := context.Background()
	clk := clock.New(clock.Manual, clock.Epoch)
	st, err := local.Open(t.TempDir(), local.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r := sim.New(st, clk, sim.Controllers(nil)...)
	podGVK := schema.GVK{Version: "v1", Kind: "Pod"}
	for _, p := range []struct{ name, image string }{{"web", "nginx:1.27"}, {"shell", "busybox:1.36"}} {
		pod := map[string]any{"apiVersion": "v1", "kind": "Pod",
			"metadata": map[string]any{"name": p.name, "namespace": "default", "finalizers": []any{"example.com/hold"}},
			"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": p.image,
				"command": []any{"sleep", "infinity"}}}}}
		if _, err := st.Create(ctx, pod); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Advance(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"web", "shell"} {
		p, err := st.Get(ctx, podGVK, "default", n)
		if err != nil {
			t.Fatal(err)
		}
		if ph := str(p, "status", "phase"); ph != "Running" {
			t.Fatalf("%s: %s before the deletion", n, ph)
		}
		if err := st.Delete(ctx, podGVK, "default", n); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Advance(ctx, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	check := func(name, phase string, code int64, reason string) {
		t.Helper()
		p, err := st.Get(ctx, podGVK, "default", name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := str(p, "status", "phase"); got != phase {
			t.Errorf("%s: phase %s, want %s", name, got, phase)
		}
		cs := p["status"].(map[string]any)["containerStatuses"].([]any)[0].(map[string]any)
		term, _ := cs["state"].(map[string]any)["terminated"].(map[string]any)
		if term == nil || term["exitCode"] != code || term["reason"] != reason || cs["ready"] != false {
			t.Errorf("%s: container status %v", name, cs)
		}
		for _, c := range p["status"].(map[string]any)["conditions"].([]any) {
			cm := c.(map[string]any)
			if (cm["type"] == "Ready" || cm["type"] == "ContainersReady") && (cm["status"] != "False" || cm["reason"] != "PodCompleted") {
				t.Errorf("%s: condition %v", name, cm)
			}
		}
	}
	check("web", "Succeeded", 0, "Completed")
	if p, _ := st.Get(ctx, podGVK, "default", "shell"); str(p, "status", "phase") != "Running" {
		t.Errorf("shell: %s within its grace period", str(p, "status", "phase"))
	}
	if err := r.Advance(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	check("shell", "Failed", 137, "Error")
	// The finalizer goes: so does the pod.
	p, _ := st.Get(ctx, podGVK, "default", "web")
	p["metadata"].(map[string]any)["finalizers"] = nil
	if _, err := st.Update(ctx, p); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Get(ctx, podGVK, "default", "web"); !cluster.IsNotFound(err) {
		t.Errorf("web after its finalizer: %v", err)
	}
}
