package endpoint_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/controller/endpoint"
	"github.com/konverge/konverge/controller/endpointslice"
	"github.com/konverge/konverge/controller/internal/ctrltest"
	"github.com/konverge/konverge/schema"
)

var (
	podGVK   = schema.GVK{Version: "v1", Kind: "Pod"}
	svcGVK   = schema.GVK{Version: "v1", Kind: "Service"}
	epGVK    = schema.GVK{Version: "v1", Kind: "Endpoints"}
	sliceGVK = schema.GVK{Group: "discovery.k8s.io", Version: "v1", Kind: "EndpointSlice"}
)

type env struct {
	*ctrltest.Env
	t testing.TB
	// w, when set, is where pods are written: a transaction of the store.
	w cluster.Interface
}

func newEnv(t testing.TB) *env {
	t.Helper()
	e := &env{Env: ctrltest.New(t), t: t}
	e.create(map[string]any{"apiVersion": "v1", "kind": "Node", "metadata": map[string]any{"name": "node-1",
		"labels": map[string]any{"topology.kubernetes.io/zone": "zone-a"}}})
	return e
}

func (e *env) create(obj map[string]any) map[string]any {
	e.t.Helper()
	if e.w == nil {
		return e.Create(obj)
	}
	out, err := e.w.Create(e.Ctx, obj)
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

// pod creates a running pod with an address, ready or not, in phase.
func (e *env) pod(name, ip string, ready bool, phase string, finalizers ...any) {
	e.t.Helper()
	md := map[string]any{"name": name, "namespace": "default", "labels": map[string]any{"app": "web"}}
	if len(finalizers) > 0 {
		md["finalizers"] = finalizers
	}
	p := e.create(map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": md,
		"spec": map[string]any{"nodeName": "node-1", "containers": []any{map[string]any{"name": "c", "image": "nginx",
			"ports": []any{map[string]any{"name": "http", "containerPort": int64(8080)}}}}}})
	status := "False"
	if ready {
		status = "True"
	}
	st := map[string]any{"phase": phase, "conditions": []any{map[string]any{"type": "Ready", "status": status,
		"lastTransitionTime": e.Now().UTC().Format(time.RFC3339)}}}
	if ip != "" {
		st["podIP"] = ip
		st["podIPs"] = []any{map[string]any{"ip": ip}}
	}
	p["status"] = st
	if e.w == nil {
		e.UpdateStatus(p)
	} else if _, err := e.w.UpdateStatus(e.Ctx, p); err != nil {
		e.t.Fatal(err)
	}
}

// pods creates n ready pods p0000, p0001, ... in one transaction.
func (e *env) pods(n int) {
	e.t.Helper()
	err := e.Batch(func(c cluster.Interface) error {
		e.w = c
		for i := 0; i < n; i++ {
			e.pod(fmt.Sprintf("p%04d", i), fmt.Sprintf("10.1.%d.%d", i/250, i%250+1), true, "Running")
		}
		return nil
	})
	e.w = nil
	if err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) sync() {
	e.t.Helper()
	for i := 0; i < 3; i++ {
		e.Sync(endpoint.Controller{})
		e.Sync(endpointslice.Controller{})
	}
}

func (e *env) service(name string, publishNotReady bool, selector map[string]any) {
	e.t.Helper()
	spec := map[string]any{"ports": []any{map[string]any{"name": "web", "port": int64(80), "targetPort": "http"}}}
	if selector != nil {
		spec["selector"] = selector
	}
	if publishNotReady {
		spec["publishNotReadyAddresses"] = true
	}
	e.create(map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": name, "namespace": "default"}, "spec": spec})
}

func (e *env) slices(svc string) []map[string]any {
	e.t.Helper()
	l, err := e.Store.List(e.Ctx, sliceGVK, cluster.InNamespace("default"), cluster.MatchingLabels("kubernetes.io/service-name="+svc))
	if err != nil {
		e.t.Fatal(err)
	}
	return l.Items
}

func str(v any) string { return fmt.Sprint(v) }

// Ready pods are addresses, not-ready ones notReadyAddresses; terminating,
// finished and address-less pods are in no Endpoints. In slices,
// terminating pods stay (serving, not ready, terminating), with the
// node's zone.
func TestReadinessAndTermination(t *testing.T) {
	e := newEnv(t)
	e.pod("a", "10.0.0.1", true, "Running")
	e.pod("b", "10.0.0.2", false, "Running")
	e.pod("c", "10.0.0.3", true, "Running", "example.com/hold")
	e.pod("d", "10.0.0.4", false, "Succeeded")
	e.pod("e", "", false, "Pending")
	if err := e.Store.Delete(e.Ctx, podGVK, "default", "c"); err != nil {
		t.Fatal(err)
	}
	e.service("web", false, map[string]any{"app": "web"})
	e.service("pub", true, map[string]any{"app": "web"})
	e.sync()

	ep, err := e.Store.Get(e.Ctx, epGVK, "default", "web")
	if err != nil {
		t.Fatal(err)
	}
	got := str(ep["subsets"])
	want := "[map[addresses:[map[ip:10.0.0.1 nodeName:node-1 targetRef:map[kind:Pod name:a namespace:default uid:" + uidOf(e, "a") + "]]] " +
		"notReadyAddresses:[map[ip:10.0.0.2 nodeName:node-1 targetRef:map[kind:Pod name:b namespace:default uid:" + uidOf(e, "b") + "]]] " +
		"ports:[map[name:web port:8080 protocol:TCP]]]]"
	if got != want {
		t.Errorf("subsets:\n got %s\nwant %s", got, want)
	}
	if l := str(ep["metadata"].(map[string]any)["labels"]); l != "map[endpoints.kubernetes.io/managed-by:endpoint-controller]" {
		t.Errorf("labels: %s", l)
	}
	pub, err := e.Store.Get(e.Ctx, epGVK, "default", "pub")
	if err != nil {
		t.Fatal(err)
	}
	// Published not-ready addresses, and the terminating pod too.
	if n := len(pub["subsets"].([]any)[0].(map[string]any)["addresses"].([]any)); n != 3 {
		t.Errorf("publishNotReadyAddresses: %d addresses, want 3: %v", n, pub["subsets"])
	}

	sl := e.slices("web")
	if len(sl) != 1 {
		t.Fatalf("%d slices, want 1", len(sl))
	}
	conds := map[string]string{}
	for _, x := range sl[0]["endpoints"].([]any) {
		m := x.(map[string]any)
		ref := m["targetRef"].(map[string]any)
		conds[str(ref["name"])] = str(m["conditions"]) + " " + str(m["zone"]) + " " + str(m["nodeName"])
	}
	wantConds := map[string]string{
		"a": "map[ready:true serving:true terminating:false] zone-a node-1",
		"b": "map[ready:false serving:false terminating:false] zone-a node-1",
		"c": "map[ready:false serving:true terminating:true] zone-a node-1",
	}
	if str(conds) != str(wantConds) {
		t.Errorf("slice endpoints:\n got %v\nwant %v", conds, wantConds)
	}
	if p := str(sl[0]["ports"]); p != "[map[name:web port:8080 protocol:TCP]]" {
		t.Errorf("slice ports: %s", p)
	}
}

func uidOf(e *env, pod string) string {
	p, err := e.Store.Get(e.Ctx, podGVK, "default", pod)
	if err != nil {
		e.t.Fatal(err)
	}
	return str(p["metadata"].(map[string]any)["uid"])
}

// Beyond 100 endpoints a slice is full and another one takes the rest;
// beyond 1000 addresses the Endpoints object is truncated and says so.
func TestCapacity(t *testing.T) {
	e := newEnv(t)
	e.pods(1001)
	e.service("web", false, map[string]any{"app": "web"})
	e.sync()
	ep, err := e.Store.Get(e.Ctx, epGVK, "default", "web")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(ep["subsets"].([]any)[0].(map[string]any)["addresses"].([]any)); n != endpoint.MaxCapacity {
		t.Errorf("%d addresses, want %d", n, endpoint.MaxCapacity)
	}
	if a := ep["metadata"].(map[string]any)["annotations"].(map[string]any)["endpoints.kubernetes.io/over-capacity"]; a != "truncated" {
		t.Errorf("over-capacity annotation: %v", a)
	}
	sl := e.slices("web")
	total := 0
	for _, s := range sl {
		n := len(s["endpoints"].([]any))
		if n > endpointslice.MaxEndpointsPerSlice {
			t.Errorf("slice of %d endpoints", n)
		}
		total += n
	}
	if total != 1001 || len(sl) != 11 {
		t.Errorf("%d endpoints in %d slices, want 1001 in 11", total, len(sl))
	}
}

// The Endpoints of a Service without a selector are its users': left
// alone. Those of a deleted Service go.
func TestOwnership(t *testing.T) {
	e := newEnv(t)
	e.pod("a", "10.0.0.1", true, "Running")
	e.service("manual", false, nil)
	e.create(map[string]any{"apiVersion": "v1", "kind": "Endpoints", "metadata": map[string]any{"name": "manual", "namespace": "default"},
		"subsets": []any{map[string]any{"addresses": []any{map[string]any{"ip": "192.0.2.1"}}}}})
	e.service("web", false, map[string]any{"app": "web"})
	e.sync()
	m, err := e.Store.Get(e.Ctx, epGVK, "default", "manual")
	if err != nil {
		t.Fatal(err)
	}
	if s := str(m["subsets"]); s != "[map[addresses:[map[ip:192.0.2.1]]]]" {
		t.Errorf("a selector-less Service's Endpoints changed: %s", s)
	}
	if len(e.slices("manual")) != 0 {
		t.Errorf("a selector-less Service got slices")
	}
	if err := e.Store.Delete(e.Ctx, svcGVK, "default", "web"); err != nil {
		t.Fatal(err)
	}
	e.sync()
	if _, err := e.Store.Get(e.Ctx, epGVK, "default", "web"); !cluster.IsNotFound(err) {
		t.Errorf("the Endpoints of a deleted Service stay: %v", err)
	}
}

// An Endpoints object over capacity (truncated) is written once: the
// syncs after it find the same truncated addresses and write nothing,
// so that the controllers settle.
func TestOverCapacitySettles(t *testing.T) {
	e := newEnv(t)
	e.Advance(time.Minute)
	e.pods(endpoint.MaxCapacity + 20)
	e.create(map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": "web", "namespace": "default"},
		"spec": map[string]any{"ports": []any{map[string]any{"port": int64(80)}}, "selector": map[string]any{"app": "web"}}})
	ctl := endpoint.New()
	for i, want := range []bool{true, false, false} {
		res, err := ctl.Sync(e.Ctx, e.Store, e.Now())
		if err != nil {
			t.Fatal(err)
		}
		if res.Changed != want {
			t.Fatalf("sync %d: changed %v, want %v", i, res.Changed, want)
		}
	}
	ep, err := e.Store.Get(e.Ctx, epGVK, "default", "web")
	if err != nil {
		t.Fatal(err)
	}
	md := ep["metadata"].(map[string]any)
	if ann, _ := md["annotations"].(map[string]any); ann["endpoints.kubernetes.io/over-capacity"] != "truncated" {
		t.Errorf("annotations %v, want over-capacity truncated", ann)
	}
}
