package sim_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/konverge/konverge/clock"
	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/controller"
	"github.com/konverge/konverge/controller/replicaset"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/sim"
)

var configMapGVK = schema.GVK{Version: "v1", Kind: "ConfigMap"}

// filler creates the ConfigMaps fill-0 to fill-<n-1> that are missing,
// one request each; with swallow it ignores the errors of its writes (as
// a careless controller might) instead of returning them.
type filler struct {
	n       int
	swallow bool
}

func (filler) Name() string { return "filler" }

func (f filler) Sync(ctx context.Context, c cluster.Interface, now time.Time) (controller.Result, error) {
	l, err := c.List(ctx, configMapGVK, cluster.InNamespace("default"))
	if err != nil {
		return controller.Result{}, err
	}
	have := map[string]bool{}
	for _, o := range l.Items {
		have[o["metadata"].(map[string]any)["name"].(string)] = true
	}
	var res controller.Result
	for i := range f.n {
		name := fmt.Sprintf("fill-%d", i)
		if have[name] {
			continue
		}
		cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name, "namespace": "default"}}
		if _, err := c.Create(ctx, cm); err != nil {
			if f.swallow {
				continue
			}
			return res, err
		}
		res.Changed = true
	}
	return res, nil
}

func countFilled(t *testing.T, c cluster.Interface) int {
	t.Helper()
	l, err := c.List(context.Background(), configMapGVK, cluster.InNamespace("default"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, o := range l.Items {
		if name, _ := o["metadata"].(map[string]any)["name"].(string); len(name) > 5 && name[:5] == "fill-" {
			n++
		}
	}
	return n
}

// TestClientRateLimit: a controller's writes go through a token bucket of
// kube-controller-manager's 20 per second and burst of 30 in cluster time:
// 30 at once and 19 more within the first second, then 20 a second, the
// rest waiting for later seconds; whether the controller returns the
// throttled error or swallows it.
func TestClientRateLimit(t *testing.T) {
	for _, swallow := range []bool{false, true} {
		t.Run(fmt.Sprintf("swallow=%v", swallow), func(t *testing.T) {
			ctx := context.Background()
			st, clk := open(t)
			r := sim.New(st, clk, filler{n: 100, swallow: swallow})
			var warned []string
			r.Warn = func(msg string) { warned = append(warned, msg) }
			next, err := r.Settle(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got := countFilled(t, st); got != 49 {
				t.Errorf("first second: %d ConfigMaps, want 49", got)
			}
			if want := clock.Epoch.Add(time.Second); !next.Equal(want) {
				t.Errorf("next due time %s, want %s (the next token's second)", next, want)
			}
			for i, want := range []int{69, 89, 100, 100} {
				if err := r.Advance(ctx, time.Second); err != nil {
					t.Fatal(err)
				}
				if got := countFilled(t, st); got != want {
					t.Errorf("second %d: %d ConfigMaps, want %d", i+1, got, want)
				}
			}
			if len(warned) > 0 {
				t.Errorf("a throttled write was reported as a failure: %q", warned)
			}
		})
	}
}

// TestClientRateLimitAcrossRunners: the buckets live with the clock, so a
// new Runner (a new command) goes on where the last one left them.
func TestClientRateLimitAcrossRunners(t *testing.T) {
	ctx := context.Background()
	st, clk := open(t)
	if _, err := sim.New(st, clk, filler{n: 60}).Settle(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := sim.New(st, clk, filler{n: 60}).Settle(ctx); err != nil {
		t.Fatal(err)
	}
	if got := countFilled(t, st); got != 49 {
		t.Errorf("two runners in one second made %d ConfigMaps, want 49", got)
	}
}

// TestClientRateUnlimited: a Rate without QPS limits nothing.
func TestClientRateUnlimited(t *testing.T) {
	ctx := context.Background()
	st, clk := open(t)
	r := sim.New(st, clk, filler{n: 100})
	r.Rates = func(controller.Controller) clock.Rate { return clock.Rate{} }
	if _, err := r.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	if got := countFilled(t, st); got != 100 {
		t.Errorf("%d ConfigMaps, want 100", got)
	}
}

// TestReplicaSetBurstStatus: the ReplicaSet controller creates pods at
// its client's pace (its Events take 25 of the requests) and, as the real
// one, writes the status once a burst of 500 is done, not at every
// throttled step of it.
func TestReplicaSetBurstStatus(t *testing.T) {
	ctx := context.Background()
	st, clk := open(t)
	labels := map[string]any{"app": "big"}
	rs := map[string]any{
		"apiVersion": "apps/v1", "kind": "ReplicaSet",
		"metadata": map[string]any{"name": "big", "namespace": "default"},
		"spec": map[string]any{
			"replicas": int64(1000),
			"selector": map[string]any{"matchLabels": labels},
			"template": map[string]any{
				"metadata": map[string]any{"labels": labels},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}},
			},
		},
	}
	if _, err := st.Create(ctx, rs); err != nil {
		t.Fatal(err)
	}
	r := sim.New(st, clk, replicaset.New())
	state := func() (pods, statusReplicas int64) {
		l, err := st.List(ctx, podGVK, cluster.InNamespace("default"))
		if err != nil {
			t.Fatal(err)
		}
		got, err := st.Get(ctx, schema.GVK{Group: "apps", Version: "v1", Kind: "ReplicaSet"}, "default", "big")
		if err != nil {
			t.Fatal(err)
		}
		n, _ := got["status"].(map[string]any)["replicas"].(int64)
		return int64(len(l.Items)), n
	}
	// 49 requests in the first second (25 pods, 24 Events), 20 a second
	// after: the 500 pods and 25 Events of the first burst are the 525th
	// request, in second 24, its status the 526th; the next burst takes
	// the 3 tokens left and 20 a second after.
	for _, step := range []struct {
		at           time.Duration
		pods, status int64
	}{
		{0, 25, 0}, {10 * time.Second, 224, 0}, {23 * time.Second, 484, 0}, {24 * time.Second, 503, 500}, {25 * time.Second, 523, 500},
	} {
		if err := r.AdvanceTo(ctx, clock.Epoch.Add(step.at)); err != nil {
			t.Fatal(err)
		}
		if pods, status := state(); pods != step.pods || status != step.status {
			t.Errorf("at %s: %d pods, status.replicas %d; want %d, %d", step.at, pods, status, step.pods, step.status)
		}
	}
}
