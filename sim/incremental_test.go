package sim_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/controller"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/sim"
)

var cmGVK = schema.GVK{Version: "v1", Kind: "ConfigMap"}

// writer creates the ConfigMap "a" on its first sync, deletes it on its
// second; then it does nothing.
type writer struct{ syncs *int }

func (writer) Name() string { return "writer" }
func (w writer) Sync(ctx context.Context, c cluster.Interface, now time.Time) (controller.Result, error) {
	*w.syncs++
	switch *w.syncs {
	case 1:
		_, err := c.Create(ctx, map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a", "namespace": "default"}})
		return controller.Result{Changed: true}, err
	case 2:
		return controller.Result{Changed: true}, c.Delete(ctx, cmGVK, "default", "a")
	}
	return controller.Result{}, nil
}

// follower records how it was called.
type follower struct{ calls *[]string }

func (follower) Name() string { return "follower" }
func (f follower) Sync(ctx context.Context, c cluster.Interface, now time.Time) (controller.Result, error) {
	*f.calls = append(*f.calls, "Sync")
	return controller.Result{}, nil
}
func (f follower) SyncChanged(ctx context.Context, c cluster.Interface, now time.Time, changed []controller.Key) (controller.Result, error) {
	*f.calls = append(*f.calls, fmt.Sprint("SyncChanged", changed))
	for _, k := range changed {
		if k.Kind == "ConfigMap" && !k.Deleted {
			// The object as the cache holds it.
			if _, err := controller.GetShared(ctx, c, cmGVK, k.Namespace, k.Name); err != nil {
				return controller.Result{}, err
			}
		}
	}
	return controller.Result{}, nil
}

// An incremental controller gets a full Sync first, then the objects
// written since its last sync (a deletion marked), nothing when nothing
// was written, and a full Sync again after writes the runner did not see.
func TestIncrementalGetsTheWrites(t *testing.T) {
	ctx := context.Background()
	st, clk := open(t)
	var syncs int
	var calls []string
	r := sim.New(st, clk, writer{&syncs}, follower{&calls})
	if _, err := r.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"Sync",
		"SyncChanged[{ ConfigMap default a true}]",
		"SyncChanged[]",
	}
	if fmt.Sprint(calls) != fmt.Sprint(want) {
		t.Fatalf("calls:\n%q\nwant\n%q", calls, want)
	}
	// A write of the command itself, between two calls of the runner.
	if _, err := st.Create(ctx, map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "b", "namespace": "default"}}); err != nil {
		t.Fatal(err)
	}
	calls = nil
	if _, err := r.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(calls) != "[Sync]" {
		t.Errorf("after a write the runner did not see: %q, want a full Sync", calls)
	}
}

// A controller put in the place of another one gets a full Sync first.
func TestIncrementalNewControllerSyncsFully(t *testing.T) {
	ctx := context.Background()
	st, clk := open(t)
	var syncs int
	var a, b []string
	r := sim.New(st, clk, writer{&syncs}, &follower{&a})
	if _, err := r.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	r.Controllers[1] = &follower{&b}
	if err := r.Advance(ctx, time.Second); err != nil {
		t.Fatal(err)
	}
	if len(b) == 0 || b[0] != "Sync" {
		t.Errorf("the new controller's calls: %q, want a full Sync first", b)
	}
}
