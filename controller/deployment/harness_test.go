package deployment_test

import (
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/controller"
	"github.com/konverge/konverge/controller/deployment"
	"github.com/konverge/konverge/controller/internal/ctrltest"
	"github.com/konverge/konverge/controller/internal/kobj"
	"github.com/konverge/konverge/controller/replicaset"
)

type env struct {
	*ctrltest.Env
	ready func(pod map[string]any) bool // which pods the fake kubelet makes ready
}

func newEnv(tb testing.TB) *env {
	tb.Helper()
	e := &env{Env: ctrltest.New(tb), ready: func(map[string]any) bool { return true }}
	e.Clock.Set(time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC))
	return e
}

// makePodsReady is the test's kubelet: every live pod it accepts gets
// phase Running and Ready=True at the current time, through UpdateStatus.
func (e *env) makePodsReady() bool {
	changed := false
	err := e.Batch(func(c cluster.Interface) error {
		var err error
		changed, err = e.readyPods(c)
		return err
	})
	if err != nil {
		e.TB.Fatal(err)
	}
	return changed
}

func (e *env) readyPods(c cluster.Interface) (bool, error) {
	l, err := c.List(e.Ctx, kobj.PodGVK)
	if err != nil {
		return false, err
	}
	changed := false
	for _, p := range l.Items {
		if kobj.Deleting(p) || !e.ready(p) {
			continue
		}
		if ok, _ := kobj.PodReady(p); ok {
			continue
		}
		next := kobj.Copy(p)
		next["status"] = map[string]any{
			"phase": "Running",
			"conditions": []any{map[string]any{
				"type": "Ready", "status": "True", "lastTransitionTime": kobj.FormatTime(e.Now()),
			}},
		}
		if _, err := c.UpdateStatus(e.Ctx, next); err != nil {
			return false, err
		}
		changed = true
	}
	return changed, nil
}

var controllers = []controller.Controller{deployment.Controller{}, replicaset.Controller{}}

// settle runs the controllers and the fake kubelet until nothing changes,
// stepping the clock by one second a round; it returns the last result.
func (e *env) settle() controller.Result {
	e.TB.Helper()
	for i := 0; i < 200; i++ {
		var res controller.Result
		for _, c := range controllers {
			// One transaction per Sync, as the runner of package sim does.
			r, err := e.SyncErr(c)
			res = res.Merge(r)
			if err != nil {
				e.TB.Fatalf("%s: %v", c.Name(), err)
			}
		}
		if e.makePodsReady() {
			res.Changed = true
		}
		if !res.Changed {
			return res
		}
		e.Advance(time.Second)
	}
	e.TB.Fatal("controllers did not settle in 200 rounds")
	return controller.Result{}
}

// settleUntil also steps the clock to each RequeueAt until none is due
// before limit.
func (e *env) settleUntil(limit time.Time) {
	e.TB.Helper()
	for {
		r := e.settle()
		if r.RequeueAt.IsZero() || r.RequeueAt.After(limit) {
			return
		}
		if r.RequeueAt.After(e.Now()) {
			e.Clock.Set(r.RequeueAt)
		}
	}
}

func deploymentObj(name string, replicas int64, image string) map[string]any {
	return map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata":   map[string]any{"name": name, "namespace": "default", "labels": map[string]any{"app": name}},
		"spec": map[string]any{
			"replicas": replicas,
			"selector": map[string]any{"matchLabels": map[string]any{"app": name}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": name}},
				"spec": map[string]any{"containers": []any{map[string]any{
					"name": "nginx", "image": image, "ports": []any{map[string]any{"containerPort": int64(80)}},
				}}},
			},
		},
	}
}

func (e *env) create(obj map[string]any) map[string]any {
	e.TB.Helper()
	return e.Create(obj)
}

func (e *env) getDeploy(name string) map[string]any {
	e.TB.Helper()
	return e.Get(kobj.DeploymentGVK, "default", name)
}

// modify changes a Deployment with fn and updates it.
func (e *env) modify(name string, fn func(d map[string]any)) {
	e.TB.Helper()
	e.Modify(kobj.DeploymentGVK, "default", name, fn)
}

func setImage(image string) func(map[string]any) {
	return func(d map[string]any) {
		c := kobj.Slice(d, "spec", "template", "spec", "containers")[0].(map[string]any)
		c["image"] = image
	}
}

func setSpec(field string, v any) func(map[string]any) {
	return func(d map[string]any) { kobj.EnsureMap(d, "spec")[field] = v }
}

// replicaSets returns the ReplicaSets of the namespace, oldest first.
func (e *env) replicaSets() []map[string]any {
	e.TB.Helper()
	rss := e.List(kobj.ReplicaSetGVK, "default")
	sort.SliceStable(rss, func(i, j int) bool {
		a, b := kobj.Str(rss[i], "metadata", "creationTimestamp"), kobj.Str(rss[j], "metadata", "creationTimestamp")
		if a != b {
			return a < b
		}
		ra, _ := strconv.Atoi(kobj.Str(rss[i], "metadata", "resourceVersion"))
		rb, _ := strconv.Atoi(kobj.Str(rss[j], "metadata", "resourceVersion"))
		return ra < rb
	})
	return rss
}

func (e *env) pods() []map[string]any { return e.List(kobj.PodGVK, "default") }

// events returns the messages of the Events with reason, in the order
// they were first recorded.
func (e *env) events(reason string) []string {
	e.TB.Helper()
	l := e.List(kobj.EventGVK, "default")
	type ev struct {
		first string
		name  string
		msg   string
	}
	var evs []ev
	for _, x := range l {
		if reason == "" || x["reason"] == reason {
			evs = append(evs, ev{kobj.Str(x, "firstTimestamp"), kobj.Name(x), kobj.Str(x, "message")})
		}
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].first < evs[j].first })
	out := make([]string, len(evs))
	for i, x := range evs {
		out[i] = x.msg
	}
	return out
}

func cond(obj map[string]any, typ string) map[string]any { return kobj.Condition(obj, typ) }

func num(obj map[string]any, path ...string) int64 { return kobj.IntOr(obj, 0, path...) }
