package wait_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/konverge/konverge/apply"
	"github.com/konverge/konverge/clock"
	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/health"
	"github.com/konverge/konverge/kubelet"
	"github.com/konverge/konverge/objref"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/sim"
	"github.com/konverge/konverge/wait"
)

type env struct {
	st  *local.Store
	clk *clock.Clock
	r   *sim.Runner
}

func newEnv(t *testing.T) *env {
	t.Helper()
	clk := clock.New(clock.Manual, clock.Epoch)
	st, err := local.Open(t.TempDir(), local.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return &env{st: st, clk: clk, r: sim.New(st, clk, sim.Controllers(kubelet.DefaultProfile())...)}
}

func (e *env) apply(t *testing.T, objs ...map[string]any) []objref.Ref {
	t.Helper()
	res, err := apply.New(e.st, apply.Options{}).Apply(context.Background(), apply.Objects(objs...))
	if err != nil {
		t.Fatal(err)
	}
	var refs []objref.Ref
	for _, r := range res {
		refs = append(refs, r.Ref)
	}
	return refs
}

// TestTimeoutNamesPending: a rollout that cannot finish (an image that
// does not exist) times out, naming the Deployment and why.
func TestTimeoutNamesPending(t *testing.T) {
	e := newEnv(t)
	refs := e.apply(t, deployment("good", "nginx:1.27"), deployment("bad", "nginx:0.0.0-nope"))
	last, err := wait.ForCurrent(context.Background(), e.st, refs, wait.Options{Timeout: time.Minute, Driver: e.r})
	var te *wait.TimeoutError
	if !errors.As(err, &te) || !errors.Is(err, wait.ErrTimeout) {
		t.Fatalf("err = %v", err)
	}
	if len(te.Pending) != 1 || te.Pending[0].Ref.Name != "bad" || te.Pending[0].Health.Status != health.InProgress {
		t.Fatalf("pending = %v", te.Pending)
	}
	if !strings.HasPrefix(err.Error(), `timed out waiting for the condition: deployment.apps/bad InProgress: Waiting for deployment "bad" rollout to finish: 0 of 2 updated replicas are available...`) {
		t.Fatalf("message %q", err)
	}
	if last[0].Health.Status != health.Current {
		t.Fatalf("good: %v", last[0])
	}
	if got := e.clk.Now().Sub(clock.Epoch); got != time.Minute {
		t.Fatalf("cluster time %s, want 1m", got)
	}
}

// TestFailedEndsWait: once the progress deadline passes, the Deployment is
// Failed and the wait ends with a FailedError, unless ContinueOnFailure.
func TestFailedEndsWait(t *testing.T) {
	e := newEnv(t)
	d := deployment("bad", "nginx:0.0.0-nope")
	d["spec"].(map[string]any)["progressDeadlineSeconds"] = int64(30)
	refs := e.apply(t, d)
	_, err := wait.ForCurrent(context.Background(), e.st, refs, wait.Options{Timeout: 10 * time.Minute, Driver: e.r})
	var fe *wait.FailedError
	if !errors.As(err, &fe) {
		t.Fatalf("err = %v", err)
	}
	if h := fe.Failed[0].Health; h.Reason != "ProgressDeadlineExceeded" || h.Message != `deployment "bad" exceeded its progress deadline` {
		t.Fatalf("failed: %v", fe.Failed)
	}
	if e.clk.Now().Sub(clock.Epoch) > 2*time.Minute {
		t.Fatalf("the wait went on until %s", e.clk.Now().Sub(clock.Epoch))
	}
	_, err = wait.ForCurrent(context.Background(), e.st, refs, wait.Options{Timeout: time.Minute, ContinueOnFailure: true, Driver: e.r})
	if !errors.Is(err, wait.ErrTimeout) {
		t.Fatalf("ContinueOnFailure: %v", err)
	}
}

// TestWaitForDeletion: Desired NotFound waits until the objects are gone;
// an object that does not exist is NotFound, not an error.
func TestWaitForDeletion(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	refs := e.apply(t, map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c"}})
	gone := objref.Ref{GVK: schema.GVK{Version: "v1", Kind: "ConfigMap"}, Namespace: "default", Name: "never"}
	last, err := wait.ForCurrent(ctx, e.st, append(refs, gone), wait.Options{Timeout: time.Second, Driver: wait.Poll{Interval: 10 * time.Millisecond}})
	if !errors.Is(err, wait.ErrTimeout) || last[0].Health.Status != health.Current || last[1].Health.Status != health.NotFound {
		t.Fatalf("%v %v", last, err)
	}
	if err := e.st.Delete(ctx, refs[0].GVK, "default", "c"); err != nil {
		t.Fatal(err)
	}
	if _, err := wait.ForCurrent(ctx, e.st, append(refs, gone), wait.Options{Desired: health.NotFound, Timeout: time.Second, Driver: wait.Poll{Interval: 10 * time.Millisecond}}); err != nil {
		t.Fatal(err)
	}
}

// TestPollStopsWithContext: Poll ends when its context does.
func TestPollStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	err := wait.Until(ctx, wait.Poll{Interval: time.Millisecond}, 0, func() (bool, error) {
		calls++
		if calls == 3 {
			cancel()
		}
		return false, nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

// TestConditionMet: kubectl wait's condition check, with observed
// generations.
func TestConditionMet(t *testing.T) {
	obj := map[string]any{
		"metadata": map[string]any{"generation": int64(2)},
		"status": map[string]any{"observedGeneration": int64(2), "conditions": []any{
			map[string]any{"type": "Available", "status": "True"},
			map[string]any{"type": "Progressing", "status": "True", "observedGeneration": int64(1)},
		}},
	}
	for _, c := range []struct {
		typ, want string
		met       bool
	}{
		{"available", "true", true},
		{"Available", "False", false},
		{"Progressing", "True", false},
		{"Missing", "True", false},
	} {
		if got := wait.ConditionMet(obj, c.typ, c.want); got != c.met {
			t.Errorf("%s=%s: %v", c.typ, c.want, got)
		}
	}
}

// The embedded cluster's simulation is a Driver.
var _ wait.Driver = (*sim.Runner)(nil)
