package apply_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/konverge/konverge/apply"
	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/schema"
)

// recorder counts and records the calls an apply makes to an unbatched
// cluster, and how many were in flight at once.
type recorder struct {
	cluster.Interface
	delay time.Duration

	mu    sync.Mutex
	calls []string // "get configmap/x", "list configmap default", "create configmap/x", ...
	// metadataOnly are the calls of calls that asked for the metadata of
	// their result alone.
	metadataOnly []string
	flight       atomic.Int32
	peak         atomic.Int32
}

func (r *recorder) enter(call string) func() {
	r.mu.Lock()
	r.calls = append(r.calls, call)
	r.mu.Unlock()
	n := r.flight.Add(1)
	for {
		p := r.peak.Load()
		if n <= p || r.peak.CompareAndSwap(p, n) {
			break
		}
	}
	if r.delay > 0 {
		time.Sleep(r.delay)
	}
	return func() { r.flight.Add(-1) }
}

func (r *recorder) count(prefix string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, c := range r.calls {
		if strings.HasPrefix(c, prefix) {
			n++
		}
	}
	return n
}

func (r *recorder) reset() {
	r.mu.Lock()
	r.calls, r.metadataOnly = nil, nil
	r.mu.Unlock()
	r.peak.Store(0)
}

func (r *recorder) recordMetadataOnly(call string, on bool) {
	if !on {
		return
	}
	r.mu.Lock()
	r.metadataOnly = append(r.metadataOnly, call)
	r.mu.Unlock()
}

func dryRunSuffix(dry bool) string {
	if dry {
		return " (dry run)"
	}
	return ""
}

func (r *recorder) Get(ctx context.Context, gvk schema.GVK, ns, name string) (cluster.Object, error) {
	defer r.enter("get " + strings.ToLower(gvk.Kind) + "/" + name)()
	return r.Interface.Get(ctx, gvk, ns, name)
}

func (r *recorder) List(ctx context.Context, gvk schema.GVK, opts ...cluster.ListOption) (*cluster.List, error) {
	defer r.enter("list " + strings.ToLower(gvk.Kind) + " " + cluster.CollectList(opts).Namespace)()
	return r.Interface.List(ctx, gvk, opts...)
}

func (r *recorder) Create(ctx context.Context, obj cluster.Object, opts ...cluster.CreateOption) (cluster.Object, error) {
	md, _ := obj["metadata"].(map[string]any)
	kind, _ := obj["kind"].(string)
	o := cluster.CollectCreate(opts)
	call := fmt.Sprintf("create %s/%s%s", strings.ToLower(kind), md["name"], dryRunSuffix(o.DryRun))
	r.recordMetadataOnly(call, o.MetadataOnly)
	defer r.enter(call)()
	return r.Interface.Create(ctx, obj, opts...)
}

func (r *recorder) Patch(ctx context.Context, gvk schema.GVK, ns, name string, pt cluster.PatchType, data []byte, opts ...cluster.PatchOption) (cluster.Object, error) {
	o := cluster.CollectPatch(opts)
	call := fmt.Sprintf("patch %s/%s%s", strings.ToLower(gvk.Kind), name, dryRunSuffix(o.DryRun))
	r.recordMetadataOnly(call, o.MetadataOnly)
	defer r.enter(call)()
	return r.Interface.Patch(ctx, gvk, ns, name, pt, data, opts...)
}

// configMaps returns n ConfigMaps cm-0..cm-(n-1) as YAML documents.
func configMaps(n int, value string) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%d}\ndata: {v: %q}\n", i, value)
	}
	return b.String()
}

// TestBulkReadAndOnlyChangedWrites: the live state is read with one List
// per kind and namespace that holds three objects or more (Gets for the
// others), and only the objects whose patch is not empty are sent a dry
// run and a write.
func TestBulkReadAndOnlyChangedWrites(t *testing.T) {
	s := openStore(t)
	rec := &recorder{Interface: unbatched{s}}
	deploy := "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: web, image: nginx}]}\n"
	input := configMaps(5, "1") + deploy

	mustApply(t, rec, apply.Options{}, parse(t, input))
	if got := rec.count("list configmap default"); got != 1 {
		t.Errorf("%d Lists of ConfigMaps, want 1: %v", got, rec.calls)
	}
	if got := rec.count("get configmap"); got != 0 {
		t.Errorf("%d Gets of ConfigMaps, want 0: %v", got, rec.calls)
	}
	if got := rec.count("get deployment/web"); got != 1 {
		t.Errorf("%d Gets of the Deployment, want 1: %v", got, rec.calls)
	}
	if got := rec.count("create"); got != 12 {
		t.Errorf("%d creates, want 6 dry runs and 6 writes: %v", got, rec.calls)
	}

	rec.reset()
	res := mustApply(t, rec, apply.Options{}, parse(t, input))
	for _, r := range res {
		if r.Action != apply.Unchanged {
			t.Errorf("re-apply: %s", r)
		}
	}
	if got := rec.count("patch") + rec.count("create"); got != 0 {
		t.Errorf("a re-apply that changes nothing sent %d writes or dry runs: %v", got, rec.calls)
	}

	rec.reset()
	res = mustApply(t, rec, apply.Options{}, parse(t, strings.Replace(input, "name: cm-3}\ndata: {v: \"1\"}", "name: cm-3}\ndata: {v: \"2\"}", 1)))
	if got := lines(res); got != "configmap/cm-0 unchanged\nconfigmap/cm-1 unchanged\nconfigmap/cm-2 unchanged\nconfigmap/cm-3 configured\nconfigmap/cm-4 unchanged\ndeployment.apps/web unchanged\n" {
		t.Errorf("results:\n%s", got)
	}
	if got := strings.Join(slices.DeleteFunc(slices.Clone(rec.calls), func(c string) bool { return !strings.HasPrefix(c, "patch") }), ", "); got != "patch configmap/cm-3 (dry run), patch configmap/cm-3" {
		t.Errorf("writes: %s", got)
	}
	if got := mustGet(t, s, gvkConfigMap, "default", "cm-3"); field(got, "data.v") != "2" {
		t.Errorf("cm-3 not changed: %v", got)
	}
}

// TestConcurrencyBounded: requests go out Options.Concurrency at a time.
func TestConcurrencyBounded(t *testing.T) {
	for _, n := range []int{1, 4} {
		s := openStore(t)
		rec := &recorder{Interface: unbatched{s}, delay: 2 * time.Millisecond}
		input := parse(t, strings.ReplaceAll(configMaps(12, "1"), "kind: ConfigMap\nmetadata: {name: cm-", "kind: ConfigMap\nmetadata: {namespace: default, name: cm-"))
		mustApply(t, rec, apply.Options{Concurrency: n}, input)
		if got := rec.peak.Load(); got != int32(n) {
			t.Errorf("Concurrency %d: %d requests in flight at most", n, got)
		}
	}
}

// TestAdmissionGatesOrderWrites: an object that changes how the server
// admits Pods (a ServiceAccount here) is written after everything before
// it in the input and before everything after it, as in kubectl's
// one-by-one order, and the Pods after it are not tried before it exists.
func TestAdmissionGatesOrderWrites(t *testing.T) {
	s := openStore(t)
	rec := &recorder{Interface: unbatched{s}}
	pod := func(name string) string {
		return "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " + name + "}\nspec: {serviceAccountName: runner, containers: [{name: c, image: busybox}]}\n"
	}
	// The first pod runs as the default ServiceAccount: runner does not
	// exist yet.
	before := strings.Replace(pod("before"), "serviceAccountName: runner, ", "", 1)
	input := before + "---\napiVersion: v1\nkind: ServiceAccount\nmetadata: {name: runner}\n" + pod("after-1") + configMaps(2, "x") + pod("after-2")
	res := mustApply(t, rec, apply.Options{}, parse(t, input))
	if got := lines(res); got != "pod/before created\nserviceaccount/runner created\npod/after-1 created\nconfigmap/cm-0 created\nconfigmap/cm-1 created\npod/after-2 created\n" {
		t.Fatalf("results:\n%s", got)
	}
	var writes []string
	for _, c := range rec.calls {
		if strings.HasPrefix(c, "create") && !strings.HasSuffix(c, "(dry run)") {
			writes = append(writes, strings.TrimPrefix(c, "create "))
		}
	}
	at := func(name string) int { return slices.Index(writes, name) }
	sa := at("serviceaccount/runner")
	if at("pod/before") > sa || at("pod/after-1") < sa || at("pod/after-2") < sa {
		t.Errorf("writes out of kubectl's order around the ServiceAccount: %v", writes)
	}
	for _, c := range rec.calls {
		if strings.HasPrefix(c, "create pod/after") && strings.HasSuffix(c, "(dry run)") {
			t.Errorf("%s: tried before its ServiceAccount exists", c)
		}
	}
}

// TestProgress: every object of a step is reported once, in order.
func TestProgress(t *testing.T) {
	s := openStore(t)
	var mu sync.Mutex
	seen := map[string][]int{}
	opts := apply.Options{Progress: func(p apply.Progress) {
		mu.Lock()
		defer mu.Unlock()
		if p.Total != 7 {
			t.Errorf("%s: total %d, want 7", p.Step, p.Total)
		}
		seen[p.Step] = append(seen[p.Step], p.Done)
	}}
	mustApply(t, unbatched{s}, opts, parse(t, configMaps(7, "1")))
	for _, step := range []string{apply.StepCheck, apply.StepApply} {
		if got := seen[step]; !slices.Equal(got, []int{1, 2, 3, 4, 5, 6, 7}) {
			t.Errorf("%s: %v", step, got)
		}
	}
}

// TestChecksReadOnlyMetadata: the dry runs that check every write before
// the first one ask for the metadata of their result alone (a real server
// encodes less), the writes for the whole object, which Apply returns;
// with server-side apply, every request asks for the whole object.
func TestChecksReadOnlyMetadata(t *testing.T) {
	s := openStore(t)
	rec := &recorder{Interface: unbatched{s}}
	input := configMaps(4, "1")
	res := mustApply(t, rec, apply.Options{}, parse(t, input))
	want := []string{"create configmap/cm-0 (dry run)", "create configmap/cm-1 (dry run)", "create configmap/cm-2 (dry run)", "create configmap/cm-3 (dry run)"}
	got := slices.Sorted(slices.Values(rec.metadataOnly))
	if !slices.Equal(got, want) {
		t.Errorf("metadata-only calls %q, want %q (all: %q)", got, want, rec.calls)
	}
	for _, r := range res {
		if field(r.Object, "data.v") != "1" {
			t.Errorf("%s: result without its data: %v", r, r.Object)
		}
	}

	rec.reset()
	mustApply(t, rec, apply.Options{}, parse(t, strings.Replace(input, "name: cm-1}\ndata: {v: \"1\"}", "name: cm-1}\ndata: {v: \"2\"}", 1)))
	if want := []string{"patch configmap/cm-1 (dry run)"}; !slices.Equal(rec.metadataOnly, want) {
		t.Errorf("metadata-only calls %q, want %q (all: %q)", rec.metadataOnly, want, rec.calls)
	}

	rec.reset()
	mustApply(t, rec, apply.Options{ServerSide: true}, parse(t, strings.Replace(input, "name: cm-2}\ndata: {v: \"1\"}", "name: cm-2}\ndata: {v: \"3\"}", 1)))
	if len(rec.metadataOnly) != 0 {
		t.Errorf("server-side apply: metadata-only calls %q", rec.metadataOnly)
	}
}

// TestMetadataOnlyWrites: with Options.MetadataOnly every write of a
// client-side apply (and its check) asks for the metadata of its result
// alone, and the results still name every object.
func TestMetadataOnlyWrites(t *testing.T) {
	s := openStore(t)
	rec := &recorder{Interface: unbatched{s}}
	res := mustApply(t, rec, apply.Options{MetadataOnly: true}, parse(t, configMaps(3, "1")))
	if got := lines(res); got != "configmap/cm-0 created\nconfigmap/cm-1 created\nconfigmap/cm-2 created\n" {
		t.Errorf("results:\n%s", got)
	}
	if got := len(rec.metadataOnly); got != 6 {
		t.Errorf("%d metadata-only calls, want 3 dry runs and 3 creates: %q", got, rec.metadataOnly)
	}
	rec.reset()
	mustApply(t, rec, apply.Options{MetadataOnly: true}, parse(t, configMaps(3, "2")))
	if got := len(rec.metadataOnly); got != 6 || rec.count("patch") != 6 {
		t.Errorf("%d metadata-only calls, want 3 dry runs and 3 patches: %q", got, rec.calls)
	}
	rec.reset()
	mustApply(t, rec, apply.Options{MetadataOnly: true, ServerSide: true}, parse(t, configMaps(3, "3")))
	if len(rec.metadataOnly) != 0 {
		t.Errorf("server-side apply: metadata-only calls %q", rec.metadataOnly)
	}
}
