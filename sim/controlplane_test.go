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

func str(obj map[string]any, path ...string) string {
	var x any = obj
	for _, p := range path {
		m, _ := x.(map[string]any)
		x = m[p]
	}
	s, _ := x.(string)
	return s
}

// TestKubernetesServiceRecreated: a deleted kubernetes Service is back at
// kube-apiserver's next ten-second tick (not before), as it was, with a
// new uid; a changed one is left as it is.
func TestKubernetesServiceRecreated(t *testing.T) {
	ctx := context.Background()
	clk := clock.New(clock.Manual, clock.Epoch.Add(3*time.Second))
	st, err := local.Open(t.TempDir(), local.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r := sim.New(st, clk, sim.Controllers(nil)...)
	svc := schema.GVK{Version: "v1", Kind: "Service"}
	before, err := st.Get(ctx, svc, "default", "kubernetes")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Delete(ctx, svc, "default", "kubernetes"); err != nil {
		t.Fatal(err)
	}
	if err := r.AdvanceTo(ctx, clock.Epoch.Add(10*time.Second-time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Get(ctx, svc, "default", "kubernetes"); !cluster.IsNotFound(err) {
		t.Fatalf("before the tick: %v", err)
	}
	if err := r.AdvanceTo(ctx, clock.Epoch.Add(10*time.Second)); err != nil {
		t.Fatal(err)
	}
	after, err := st.Get(ctx, svc, "default", "kubernetes")
	if err != nil {
		t.Fatalf("at the tick: %v", err)
	}
	if str(after, "metadata", "uid") == str(before, "metadata", "uid") {
		t.Error("same uid")
	}
	if got, want := str(after, "spec", "clusterIP"), str(before, "spec", "clusterIP"); got != want {
		t.Errorf("clusterIP %s, want %s", got, want)
	}
	if got := str(after, "metadata", "creationTimestamp"); got != "2026-01-01T00:00:10Z" {
		t.Errorf("created at %s", got)
	}
	// A changed port stays.
	after["spec"].(map[string]any)["ports"].([]any)[0].(map[string]any)["port"] = int64(8443)
	if _, err := st.Update(ctx, after); err != nil {
		t.Fatal(err)
	}
	if err := r.Advance(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	got, _ := st.Get(ctx, svc, "default", "kubernetes")
	if p := got["spec"].(map[string]any)["ports"].([]any)[0].(map[string]any)["port"]; p != int64(8443) {
		t.Errorf("port reset to %d", p)
	}
}
