package sim_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/konverge/konverge/clock"
	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/controller"
	"github.com/konverge/konverge/kubelet"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/sim"
)

var (
	deployGVK = schema.GVK{Group: "apps", Version: "v1", Kind: "Deployment"}
	podGVK    = schema.GVK{Version: "v1", Kind: "Pod"}
)

func open(t testing.TB) (*local.Store, *clock.Clock) {
	clk := clock.New(clock.Manual, clock.Epoch)
	st, err := local.Open(t.TempDir(), local.Options{Clock: clk, LockTimeout: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, clk
}

func deployment(name, image string, replicas int64) map[string]any {
	labels := map[string]any{"app": name}
	return map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": name, "namespace": "default"},
		"spec": map[string]any{
			"replicas": replicas,
			"selector": map[string]any{"matchLabels": labels},
			"template": map[string]any{
				"metadata": map[string]any{"labels": labels},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "web", "image": image}}},
			},
		},
	}
}

// flapper changes a ConfigMap on every sync: it never settles.
type flapper struct{}

func (flapper) Name() string { return "flapper" }
func (flapper) Sync(ctx context.Context, c cluster.Interface, now time.Time) (controller.Result, error) {
	cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "flap", "namespace": "default"}}
	if _, err := c.Create(ctx, cm); err != nil {
		if err := c.Delete(ctx, schema.GVK{Version: "v1", Kind: "ConfigMap"}, "default", "flap"); err != nil {
			return controller.Result{}, err
		}
	}
	return controller.Result{Changed: true}, nil
}

// A controller that never settles does bounded work and is named; the
// call still succeeds and the clock moves on.
func TestSettleNamesTheControllerThatNeverSettles(t *testing.T) {
	ctx := context.Background()
	st, clk := open(t)
	r := sim.New(st, clk, flapper{})
	r.MaxRounds = 20
	if _, err := r.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	ns := r.Unsettled()
	if ns == nil || len(ns.Controllers) != 1 || ns.Controllers[0] != "flapper" || ns.Rounds != 20 {
		t.Fatalf("Unsettled = %v, want flapper after 20 rounds", ns)
	}
	r.MaxWork = 1000
	if err := r.Advance(ctx, 1000*time.Hour); err != nil {
		t.Fatal(err)
	}
	if r.Unsettled() == nil || clk.Now() != clock.Epoch.Add(1000*time.Hour) {
		t.Fatalf("after the work limit: unsettled %v, clock %s", r.Unsettled(), clk.Now())
	}
	if st := r.Stopped(); st.IsZero() || !st.Before(clk.Now()) {
		t.Fatalf("Stopped = %s, want the time the work ran out, before %s", st, clk.Now())
	}
	met, err := r.RunUntil(ctx, func() (bool, error) { return false, nil }, 1000*time.Hour)
	if met || !errors.Is(err, sim.ErrWorkLimit) {
		t.Fatalf("RunUntil = %v, %v; want the work limit", met, err)
	}
}

// Stopped tells when a long advance ran out of work before its target,
// and is zero when it did not.
func TestAdvanceReportsWhereTheWorkStopped(t *testing.T) {
	ctx := context.Background()
	st, clk := open(t)
	r := sim.New(st, clk, good{})
	r.CatchUp = -1 // every due time, one a minute
	if err := r.Advance(ctx, 2*time.Hour); err != nil {
		t.Fatal(err)
	}
	if !r.Stopped().IsZero() {
		t.Fatalf("Stopped = %s after an advance that caught up", r.Stopped())
	}
	r.MaxWork = 100
	start := clk.Now()
	if err := r.Advance(ctx, 100*time.Hour); err != nil {
		t.Fatal(err)
	}
	stopped := r.Stopped()
	if stopped.IsZero() || !stopped.After(start) || !stopped.Before(start.Add(100*time.Hour)) {
		t.Fatalf("Stopped = %s, want between %s and %s", stopped, start, start.Add(100*time.Hour))
	}
	if want := start.Add(100 * time.Hour); !clk.Now().Equal(want) {
		t.Fatalf("clock %s, want %s", clk.Now(), want)
	}
	// The next call starts afresh.
	if _, err := r.Settle(ctx); err != nil || !r.Stopped().IsZero() {
		t.Fatalf("after Settle: Stopped %s, err %v", r.Stopped(), err)
	}
}

// broken fails or panics in every sync after writing a ConfigMap; good
// writes one ConfigMap per cluster time.
type broken struct{ panics bool }

func (b broken) Name() string { return "broken" }
func (b broken) Sync(ctx context.Context, c cluster.Interface, now time.Time) (controller.Result, error) {
	cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "half-" + strconv.FormatInt(now.Unix(), 10), "namespace": "default"}}
	if _, err := c.Create(ctx, cm); err != nil {
		return controller.Result{}, err
	}
	if b.panics {
		var m map[string]int
		//lint:ignore SA5000 the test wants a runtime panic (a write to a nil map) inside a controller's sync.
		m["boom"]++
	}
	return controller.Result{Changed: true}, errors.New("something inside broke")
}

type good struct{}

func (good) Name() string { return "good" }
func (good) Sync(ctx context.Context, c cluster.Interface, now time.Time) (controller.Result, error) {
	name := "t-" + strconv.FormatInt(now.Unix(), 10)
	cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name, "namespace": "default"}}
	if _, err := c.Create(ctx, cm); err != nil && !cluster.IsAlreadyExists(err) {
		return controller.Result{}, err
	} else if err == nil {
		return controller.Result{Changed: true, RequeueAt: now.Add(time.Minute)}, nil
	}
	return controller.Result{RequeueAt: now.Add(time.Minute)}, nil
}

// A controller that fails (an error or a panic) loses its own writes,
// is reported once, and the others go on at every due time.
func TestFailingControllerIsolated(t *testing.T) {
	for _, panics := range []bool{false, true} {
		ctx := context.Background()
		st, clk := open(t)
		var warnings []string
		r := sim.New(st, clk, broken{panics: panics}, good{})
		r.Warn = func(msg string) { warnings = append(warnings, msg) }
		if err := r.Advance(ctx, 10*time.Minute); err != nil {
			t.Fatal(err)
		}
		l, err := st.List(ctx, schema.GVK{Version: "v1", Kind: "ConfigMap"})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, o := range l.Items {
			if name := o["metadata"].(map[string]any)["name"].(string); strings.HasPrefix(name, "t-") || strings.HasPrefix(name, "half-") {
				names = append(names, name)
			}
		}
		if len(names) != 11 || names[0] != "t-"+strconv.FormatInt(clock.Epoch.Unix(), 10) {
			t.Errorf("panics=%v: ConfigMaps %v, want good's 11 and none of broken's", panics, names)
		}
		if len(warnings) != 1 || !strings.Contains(warnings[0], "broken controller failed") {
			t.Errorf("panics=%v: warnings %q, want one about broken", panics, warnings)
		}
		if panics && !strings.Contains(warnings[0], "panic: assignment to entry in nil map") {
			t.Errorf("warning %q does not say what panicked", warnings[0])
		}
	}
}

func TestRunUntil(t *testing.T) {
	ctx := context.Background()
	st, clk := open(t)
	r := sim.New(st, clk, sim.Controllers(nil)...)
	if _, err := st.Create(ctx, deployment("web", "nginx:1.16.1", 3)); err != nil {
		t.Fatal(err)
	}
	available := func() (bool, error) {
		d, err := st.Get(ctx, deployGVK, "default", "web")
		if err != nil {
			return false, err
		}
		n, _ := d["status"].(map[string]any)["availableReplicas"].(int64)
		return n == 3, nil
	}
	met, err := r.RunUntil(ctx, available, time.Minute)
	if err != nil || !met {
		t.Fatalf("RunUntil = %v, %v", met, err)
	}
	// Pods pull 2s and start 1s: available at 3s, not a minute later.
	if got := clk.Now().Sub(clock.Epoch); got != 3*time.Second {
		t.Errorf("available after %s of cluster time, want 3s", got)
	}
	// A condition that never holds times out at the deadline.
	met, err = r.RunUntil(ctx, func() (bool, error) { return false, nil }, 10*time.Minute)
	if err != nil || met {
		t.Fatalf("RunUntil(never) = %v, %v", met, err)
	}
	if got := clk.Now().Sub(clock.Epoch); got != 3*time.Second+10*time.Minute {
		t.Errorf("timed out at %s, want 10m3s", got)
	}
}

// Same state, same steps: same pod names and statuses.
func TestDeterminism(t *testing.T) {
	run := func() []string {
		ctx := context.Background()
		st, clk := open(t)
		r := sim.New(st, clk, sim.Controllers(nil)...)
		for i := range 3 {
			if _, err := st.Create(ctx, deployment("web"+strconv.Itoa(i), "nginx:1.16.1", 2)); err != nil {
				t.Fatal(err)
			}
		}
		if err := r.Advance(ctx, 30*time.Second); err != nil {
			t.Fatal(err)
		}
		pods, err := st.List(ctx, podGVK)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, p := range pods.Items {
			st := p["status"].(map[string]any)
			out = append(out, fmt.Sprint(p["metadata"].(map[string]any)["name"], st["podIP"], st["phase"]))
		}
		return out
	}
	a, b := run(), run()
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("two runs differ:\n%v\n%v", a, b)
	}
}

// BenchmarkRollout rolls N Deployments of 10 replicas to a new image and
// waits until every one is complete (SIM_BENCH_DEPLOYMENTS, default 100;
// the target is 1000 in under 10 s). The one node has pod room for all
// of them and their surge (the scheduler holds a node to its capacity).
func BenchmarkRollout(b *testing.B) {
	n := 100
	if v, err := strconv.Atoi(os.Getenv("SIM_BENCH_DEPLOYMENTS")); err == nil {
		n = v
	}
	prof := kubelet.DefaultProfile()
	prof.Nodes = []kubelet.NodeSpec{{Name: "konverge-node", Capacity: map[string]string{"pods": strconv.Itoa(20 * n)}}}
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		st, clk := open(b)
		r := sim.New(st, clk, sim.Controllers(prof)...)
		err := st.Batch(ctx, func(c cluster.Interface) error {
			for i := range n {
				if _, err := c.Create(ctx, deployment(fmt.Sprintf("web-%04d", i), "nginx:1.16.1", 10)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if err := r.Advance(ctx, time.Minute); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(time.Since(start).Seconds(), "s/create")
		err = st.Batch(ctx, func(c cluster.Interface) error {
			list, err := c.List(ctx, deployGVK)
			if err != nil {
				return err
			}
			for _, d := range list.Items {
				d["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["image"] = "nginx:1.14.2"
				if _, err := c.Update(ctx, d); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		done := func() (bool, error) {
			list, err := st.List(ctx, deployGVK)
			if err != nil {
				return false, err
			}
			for _, d := range list.Items {
				s := d["status"].(map[string]any)
				if s["updatedReplicas"] != int64(10) || s["availableReplicas"] != int64(10) || s["replicas"] != int64(10) {
					return false, nil
				}
			}
			return true, nil
		}
		met, err := r.RunUntil(ctx, done, 10*time.Minute)
		if err != nil || !met {
			b.Fatalf("rollout: %v %v", met, err)
		}
		b.ReportMetric(clk.Now().Sub(clock.Epoch).Seconds(), "cluster-s")
	}
}
