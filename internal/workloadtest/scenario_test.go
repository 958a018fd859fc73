// Package workloadtest holds the differential scenarios of the workload
// controllers (StatefulSet, DaemonSet, Job, CronJob, ReplicationController): each scenario under
// testdata/*.yaml is a list of steps (apply, patch or delete, then wait
// for a condition), recorded once from the real kube-controller-manager
// v1.37.1 with a stand-in kubelet (TestRecordReal, -update) into
// testdata/*.golden.json, and replayed on the embedded cluster by
// TestScenarios, which compares what each step leaves behind field by
// field: the order in which pods, Jobs and claims come and go, the Events
// in the order they happened, and the workload objects, their pods,
// claims and ControllerRevisions with uids, times and generated names
// masked.
package workloadtest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/konverge/konverge/apply"
	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/kubelet"
	"github.com/konverge/konverge/manifest"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

// Scenario is one file of testdata.
type Scenario struct {
	// Name is the file's name without .yaml; it is the namespace too.
	Name string `json:"-"`
	// Unordered compares the ops and events of each step as sets: the
	// real controllers create some things concurrently (Parallel pods,
	// Job pods in batches).
	Unordered bool `json:"unordered,omitempty"`
	// EventsPerObject compares the Events of each step in their order per
	// involved object only: independent controllers of the real cluster
	// (a Job's and its CronJob's) emit theirs in either order.
	EventsPerObject bool `json:"eventsPerObject,omitempty"`
	// Volumes compares the PersistentVolumes named "<scenario>-..." too,
	// the claims' annotations and status, and the Events of the
	// PersistentVolume binder (those about volumes are in default).
	Volumes bool `json:"volumes,omitempty"`
	// Nodes, in the scenarios of testdata/multinode, are the nodes of the
	// cluster (the simulation profile's nodes:, multinode-kubelet.py's
	// NODES.json); the pods' nodes, scheduling conditions and the
	// scheduler's Events are compared too.
	Nodes []kubelet.NodeSpec `json:"nodes,omitempty"`
	// TiedNodes compares the pods of generated names as counts per node
	// (see tiedNodes): kube-scheduler breaks ties between equal nodes
	// at random, a DaemonSet creates its pods in no fixed order.
	TiedNodes bool   `json:"tiedNodes,omitempty"`
	Steps     []Step `json:"steps"`
	// dir is the directory of the scenario's file.
	dir string
}

// Step is one action and the condition that ends it.
type Step struct {
	Name string `json:"name"`
	// Apply is YAML documents applied as `konverge apply` does (in the
	// scenario's namespace).
	Apply string `json:"apply,omitempty"`
	// Patch is "kind/name" and a JSON merge patch.
	Patch *Patch `json:"patch,omitempty"`
	// Delete is "kind/name" (background propagation).
	Delete string `json:"delete,omitempty"`
	// Until are the conditions that end the step, all of them (see
	// condition); Timeout bounds the wait (default 2m).
	Until   []string `json:"until,omitempty"`
	Timeout string   `json:"timeout,omitempty"`
	// Sleep is how long to wait after the conditions hold.
	Sleep string `json:"sleep,omitempty"`
	// Unordered compares this step's ops and events as sets.
	Unordered bool `json:"unordered,omitempty"`
}

// Patch is a merge patch of one object.
type Patch struct {
	Target string         `json:"target"`
	Patch  map[string]any `json:"patch"`
}

func loadScenarios(t testing.TB) []*Scenario {
	t.Helper()
	return loadScenariosIn(t, "testdata/scenarios")
}

func loadScenariosIn(t testing.TB, dir string) []*Scenario {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var out []*Scenario
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var sc Scenario
		if err := yaml.UnmarshalStrict(data, &sc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		sc.Name = strings.TrimSuffix(filepath.Base(f), ".yaml")
		sc.dir = dir
		out = append(out, &sc)
	}
	return out
}

// driver is what differs between the real cluster and the embedded one:
// how time passes.
type driver interface {
	cluster() cluster.Interface
	// waitFor returns once cond holds, or an error after timeout of the
	// driver's time.
	waitFor(ctx context.Context, cond func() (bool, error), timeout time.Duration) error
	// sleep lets d of the driver's time pass.
	sleep(ctx context.Context, d time.Duration) error
	// quiet waits until the watches of rec have delivered what happened.
	quiet(rec *recorder)
}

// Golden is what a scenario leaves after each step.
type Golden struct {
	Steps []StepResult `json:"steps"`
}

// StepResult is one step's outcome, masked.
type StepResult struct {
	Name string `json:"name"`
	// Ops are the pods, Jobs and claims created (+) and removed (-), in
	// order.
	Ops []string `json:"ops"`
	// Events are the Events of the workload controllers that happened
	// during the step, in order, one per occurrence.
	Events []string `json:"events"`
	// Objects are the objects of the namespace by kind.
	Objects map[string][]map[string]any `json:"objects"`
}

// watchedKinds are the kinds whose comings and goings are ops.
var watchedKinds = []struct {
	gvk  schema.GVK
	word string
}{
	{schema.GVK{Version: "v1", Kind: "Pod"}, "pod"},
	{schema.GVK{Group: "batch", Version: "v1", Kind: "Job"}, "job"},
	{schema.GVK{Version: "v1", Kind: "PersistentVolumeClaim"}, "pvc"},
}

var eventGVK = schema.GVK{Version: "v1", Kind: "Event"}

// snapshotKinds are the kinds a step's objects are taken of.
var snapshotKinds = []struct {
	gvk  schema.GVK
	name string
}{
	{schema.GVK{Version: "v1", Kind: "ReplicationController"}, "replicationcontrollers"},
	{schema.GVK{Group: "apps", Version: "v1", Kind: "StatefulSet"}, "statefulsets"},
	{schema.GVK{Group: "apps", Version: "v1", Kind: "DaemonSet"}, "daemonsets"},
	{schema.GVK{Group: "batch", Version: "v1", Kind: "CronJob"}, "cronjobs"},
	{schema.GVK{Group: "batch", Version: "v1", Kind: "Job"}, "jobs"},
	{schema.GVK{Version: "v1", Kind: "Pod"}, "pods"},
	{schema.GVK{Version: "v1", Kind: "PersistentVolumeClaim"}, "pvcs"},
	{schema.GVK{Group: "apps", Version: "v1", Kind: "ControllerRevision"}, "controllerrevisions"},
	{schema.GVK{Group: "autoscaling", Version: "v2", Kind: "HorizontalPodAutoscaler"}, "hpas"},
	{schema.GVK{Version: "v1", Kind: "Endpoints"}, "endpoints"},
	{schema.GVK{Group: "discovery.k8s.io", Version: "v1", Kind: "EndpointSlice"}, "endpointslices"},
	{schema.GVK{Group: "policy", Version: "v1", Kind: "PodDisruptionBudget"}, "poddisruptionbudgets"},
}

// workloadComponents are the sources whose Events a scenario compares
// (not the persistent-volume binder's, which the embedded cluster does
// not run).
var workloadComponents = map[string]bool{
	"persistentvolume-controller": false,
	"statefulset-controller":      true, "daemonset-controller": true, "job-controller": true,
	"cronjob-controller": true, "ttl-after-finished-controller": true,
	"horizontal-pod-autoscaler": true, "endpoint-controller": true, "endpointslice-controller": true,
	"replication-controller": true,
	// The disruption controller's recorder calls itself controllermanager.
	"controllermanager": true,
}

// repeatingComponents are the sources that say the same again whenever
// they resync an object (kube-scheduler at every retry, the disruption
// controller at every change of a budget's pods): each text counts once.
var repeatingComponents = map[string]bool{"default-scheduler": true, "controllermanager": true}

// recorder collects the ops and event occurrences of a namespace.
type recorder struct {
	mu     sync.Mutex
	ops    []entry
	events []entry
	counts map[string]int64
	// objs remembers the objects seen, for masking names.
	seen []map[string]any
	// watches are the recorder's watches, with how many events it has
	// taken from each.
	watches []*recordedWatch
	// volumes: the binder's Events count, those about the scenario's
	// volumes too.
	volumes bool
	// scheduler: the scheduler's Events count, each text once
	// (kube-scheduler repeats a FailedScheduling at every retry);
	// schedulerSaid are the texts recorded.
	scheduler     bool
	schedulerSaid map[string]bool
}

// recordedWatch is one watch of a recorder.
type recordedWatch struct {
	w cluster.Watcher
	// taken counts the events the recorder has taken in; guarded by
	// recorder.mu.
	taken int64
}

// progress is what the embedded cluster's watches tell of their
// deliveries (see cluster/local).
type progress interface {
	Progress() (delivered, pending int64)
}

// sync returns once the recorder has taken in every change made so far,
// when its watches tell their progress (the embedded cluster's do: the
// outcome then does not depend on how fast goroutines run); at once
// otherwise.
func (r *recorder) sync() {
	deadline := time.Now().Add(time.Minute)
	for _, rw := range r.watches {
		p, ok := rw.w.(progress)
		if !ok {
			continue
		}
		for {
			delivered, pending := p.Progress()
			r.mu.Lock()
			taken := rw.taken
			r.mu.Unlock()
			if pending == 0 && taken == delivered {
				break
			}
			if time.Now().After(deadline) {
				panic("workloadtest: a watch delivers nothing for a minute")
			}
			time.Sleep(100 * time.Microsecond)
		}
	}
}

func (r *recorder) start(ctx context.Context, t testing.TB, c cluster.Interface, ns string) {
	r.counts = map[string]int64{}
	r.watchEvents(ctx, t, c, ns, ns)
	if r.volumes {
		r.watchEvents(ctx, t, c, "default", ns)
	}
	for _, k := range watchedKinds {
		w, err := c.Watch(ctx, k.gvk, cluster.InNamespace(ns))
		if err != nil {
			t.Fatalf("watch %s: %v", k.gvk.Kind, err)
		}
		word := k.word
		rw := &recordedWatch{w: w}
		r.watches = append(r.watches, rw)
		go func() {
			defer w.Stop()
			// An object goes when it is first seen being deleted (the
			// order of the delete calls), or when it is removed.
			gone := map[string]bool{}
			for ev := range w.ResultChan() {
				o := ev.Object
				uid := str(o, "metadata", "uid")
				r.mu.Lock()
				rw.taken++
				if ev.Type == cluster.Added {
					r.ops = append(r.ops, entry{rvOf(o), "+" + word + " " + name(o)})
					r.seen = append(r.seen, o)
				}
				if !gone[uid] && (ev.Type == cluster.Deleted || field(o, "metadata.deletionTimestamp") != nil) {
					gone[uid] = true
					r.ops = append(r.ops, entry{rvOf(o), "-" + word + " " + name(o)})
				}
				r.mu.Unlock()
			}
		}()
	}
}

// watchEvents records the Events of namespace ns that count: those of
// the workload controllers, and of the binder when the scenario compares
// volumes (in default, only those about the scenario's volumes).
func (r *recorder) watchEvents(ctx context.Context, t testing.TB, c cluster.Interface, ns, scenario string) {
	w, err := c.Watch(ctx, eventGVK, cluster.InNamespace(ns))
	if err != nil {
		t.Fatalf("watch events: %v", err)
	}
	counts := func(e map[string]any) bool {
		comp := str(e, "source", "component")
		if comp == "persistentvolume-controller" {
			return r.volumes && (ns == scenario || strings.HasPrefix(str(e, "involvedObject", "name"), scenario+"-"))
		}
		if comp == "default-scheduler" || str(e, "reportingComponent") == "default-scheduler" {
			return r.scheduler && ns == scenario
		}
		return ns == scenario && workloadComponents[comp]
	}
	rw := &recordedWatch{w: w}
	r.watches = append(r.watches, rw)
	go func() {
		defer w.Stop()
		for ev := range w.ResultChan() {
			e := ev.Object
			if ev.Type == cluster.Deleted || !counts(e) {
				r.mu.Lock()
				rw.taken++
				r.mu.Unlock()
				continue
			}
			key := name(e)
			count, _ := e["count"].(int64)
			if count == 0 {
				count = 1
			}
			text := fmt.Sprintf("%s %s %s/%s: %s", str(e, "type"), str(e, "reason"),
				str(e, "involvedObject", "kind"), str(e, "involvedObject", "name"), uidPattern.ReplaceAllString(str(e, "message"), "<uid>"))
			r.mu.Lock()
			rw.taken++
			if r.scheduler && str(e, "reportingComponent") == "default-scheduler" || repeatingComponents[str(e, "source", "component")] {
				// The scheduler says the same again at every retry (new
				// Events on a real cluster): each text counts once.
				if r.schedulerSaid == nil {
					r.schedulerSaid = map[string]bool{}
				}
				if !r.schedulerSaid[text] {
					r.schedulerSaid[text] = true
					r.events = append(r.events, entry{rvOf(e), text})
				}
				r.mu.Unlock()
				continue
			}
			for n := r.counts[key]; n < count; n++ {
				r.events = append(r.events, entry{rvOf(e), fmt.Sprintf("%s %s %s/%s: %s", str(e, "type"), str(e, "reason"),
					str(e, "involvedObject", "kind"), str(e, "involvedObject", "name"), str(e, "message"))})
			}
			if count > r.counts[key] {
				r.counts[key] = count
			}
			r.mu.Unlock()
		}
	}()
}

// entry is one thing recorded, with the resourceVersion it happened at:
// the watches of different kinds deliver in their own order, the
// resourceVersions tell the order of the cluster.
type entry struct {
	rv   uint64
	text string
}

func rvOf(o map[string]any) uint64 {
	n, _ := strconv.ParseUint(str(o, "metadata", "resourceVersion"), 10, 64)
	return n
}

// take returns what was recorded since the last take, in the cluster's
// order.
func (r *recorder) take(opsFrom, eventsFrom *int) ([]string, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	texts := func(es []entry) []string {
		es = append([]entry{}, es...)
		sort.SliceStable(es, func(i, j int) bool { return es[i].rv < es[j].rv })
		out := make([]string, len(es))
		for i, e := range es {
			out[i] = e.text
		}
		return out
	}
	ops := texts(r.ops[*opsFrom:])
	evs := texts(r.events[*eventsFrom:])
	*opsFrom, *eventsFrom = len(r.ops), len(r.events)
	return ops, evs
}

func (r *recorder) seenObjects() []map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]map[string]any{}, r.seen...)
}

// run plays a scenario on a driver and returns what each step left.
func run(ctx context.Context, t testing.TB, d driver, sc *Scenario) *Golden {
	c := d.cluster()
	ns := sc.Name
	if _, err := c.Create(ctx, map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}); err != nil && !cluster.IsAlreadyExists(err) {
		t.Fatalf("create namespace: %v", err)
	}
	rec := &recorder{volumes: sc.Volumes, scheduler: len(sc.Nodes) > 0}
	rec.start(ctx, t, c, ns)
	masks := &masker{renames: map[string]string{}, counters: map[string]int{}}
	out := &Golden{}
	opsFrom, eventsFrom := 0, 0
	for _, st := range sc.Steps {
		if err := act(ctx, c, ns, st); err != nil {
			t.Fatalf("%s: step %s: %v", sc.Name, st.Name, err)
		}
		timeout := 2 * time.Minute
		if st.Timeout != "" {
			var err error
			if timeout, err = time.ParseDuration(st.Timeout); err != nil {
				t.Fatalf("%s: step %s: timeout: %v", sc.Name, st.Name, err)
			}
		}
		conds := make([]cond, len(st.Until))
		for i, u := range st.Until {
			var err error
			if conds[i], err = parseCond(u); err != nil {
				t.Fatalf("%s: step %s: %v", sc.Name, st.Name, err)
			}
		}
		check := func() (bool, error) {
			rec.sync()
			for _, cd := range conds {
				ok, err := cd(ctx, c, ns, rec)
				if err != nil || !ok {
					return false, err
				}
			}
			return true, nil
		}
		if err := d.waitFor(ctx, check, timeout); err != nil {
			snap := snapshot(ctx, t, c, ns, sc.Volumes, len(sc.Nodes) > 0)
			t.Fatalf("%s: step %s: waiting for %v: %v\nobjects: %s", sc.Name, st.Name, st.Until, err, encode(snap))
		}
		if st.Sleep != "" {
			dur, err := time.ParseDuration(st.Sleep)
			if err != nil {
				t.Fatalf("%s: step %s: sleep: %v", sc.Name, st.Name, err)
			}
			if err := d.sleep(ctx, dur); err != nil {
				t.Fatalf("%s: step %s: sleep: %v", sc.Name, st.Name, err)
			}
		}
		d.quiet(rec)
		objs := snapshot(ctx, t, c, ns, sc.Volumes, len(sc.Nodes) > 0)
		ops, evs := rec.take(&opsFrom, &eventsFrom)
		masks.learn(rec.seenObjects())
		res := StepResult{Name: st.Name, Ops: masks.strings(ops), Events: masks.strings(evs), Objects: map[string][]map[string]any{}}
		for k, list := range objs {
			for _, o := range list {
				res.Objects[k] = append(res.Objects[k], masks.object(o))
			}
			sort.SliceStable(res.Objects[k], func(i, j int) bool {
				return str(res.Objects[k][i], "name") < str(res.Objects[k][j], "name")
			})
		}
		if sc.Unordered || st.Unordered {
			sort.Strings(res.Ops)
			sort.Strings(res.Events)
		}
		out.Steps = append(out.Steps, res)
	}
	return out
}

// act does a step's action.
func act(ctx context.Context, c cluster.Interface, ns string, st Step) error {
	switch {
	case st.Apply != "":
		objs, err := manifest.Parse(ctx, "step.yaml", []byte(st.Apply))
		if err != nil {
			return err
		}
		for i := range objs {
			if res, err := c.Mapper().ResourceFor(schema.ParseGVK(str(objs[i].Obj, "apiVersion"), str(objs[i].Obj, "kind"))); err == nil && !res.Namespaced {
				continue
			}
			md, _ := objs[i].Obj["metadata"].(map[string]any)
			md["namespace"] = ns
		}
		// One request at a time: on a real cluster concurrent creates
		// take resourceVersions (the order of ops) in any order, and the
		// scheduler and controllers see the objects in that order.
		_, err = apply.New(c, apply.Options{Concurrency: 1}).Apply(ctx, objs)
		return err
	case st.Patch != nil:
		gvk, name, err := target(c, st.Patch.Target)
		if err != nil {
			return err
		}
		b, err := value.Encode(st.Patch.Patch)
		if err != nil {
			return err
		}
		_, err = c.Patch(ctx, gvk, scoped(c, gvk, ns), name, cluster.MergePatchType, b)
		return err
	case st.Delete != "":
		gvk, name, err := target(c, st.Delete)
		if err != nil {
			return err
		}
		return c.Delete(ctx, gvk, scoped(c, gvk, ns), name, cluster.Background)
	}
	return nil
}

// scoped is ns for a namespaced kind, "" for a cluster-scoped one.
func scoped(c cluster.Interface, gvk schema.GVK, ns string) string {
	if res, err := c.Mapper().ResourceFor(gvk); err == nil && !res.Namespaced {
		return ""
	}
	return ns
}

func target(c cluster.Interface, s string) (schema.GVK, string, error) {
	kind, name, ok := strings.Cut(s, "/")
	if !ok {
		return schema.GVK{}, "", fmt.Errorf("target %q: want kind/name", s)
	}
	res, err := c.Mapper().Find(kind)
	if err != nil {
		return schema.GVK{}, "", fmt.Errorf("target %q: %w", s, err)
	}
	return res.GVK, name, nil
}

// cond is one condition of a step.
type cond func(ctx context.Context, c cluster.Interface, ns string, rec *recorder) (bool, error)

// parseCond reads a condition:
//
//	rollout KIND/NAME         the rollout is complete (as kubectl rollout status)
//	condition KIND/NAME TYPE  the condition TYPE is True
//	reason KIND/NAME TYPE R   the condition TYPE has reason R
//	field KIND/NAME PATH VAL  the field at PATH (dotted) prints as VAL (<none>: absent, <set>: present)
//	gone KIND/NAME            the object does not exist
//	count KIND N              N objects of KIND exist, not being deleted
//	created KIND N            at least N objects of KIND were created
func parseCond(s string) (cond, error) {
	f := strings.Fields(s)
	if len(f) < 2 {
		return nil, fmt.Errorf("condition %q", s)
	}
	getObj := func(ctx context.Context, c cluster.Interface, ns, ref string) (map[string]any, error) {
		gvk, name, err := target(c, ref)
		if err != nil {
			return nil, err
		}
		o, err := c.Get(ctx, gvk, scoped(c, gvk, ns), name)
		if cluster.IsNotFound(err) {
			return nil, nil
		}
		return o, err
	}
	switch f[0] {
	case "rollout":
		return func(ctx context.Context, c cluster.Interface, ns string, _ *recorder) (bool, error) {
			o, err := getObj(ctx, c, ns, f[1])
			if err != nil || o == nil {
				return false, err
			}
			return rolledOut(o), nil
		}, nil
	case "condition":
		if len(f) != 3 {
			return nil, fmt.Errorf("condition %q", s)
		}
		return func(ctx context.Context, c cluster.Interface, ns string, _ *recorder) (bool, error) {
			o, err := getObj(ctx, c, ns, f[1])
			if err != nil || o == nil {
				return false, err
			}
			conds, _ := field(o, "status.conditions").([]any)
			for _, x := range conds {
				m, _ := x.(map[string]any)
				if m["type"] == f[2] && m["status"] == "True" {
					return true, nil
				}
			}
			return false, nil
		}, nil
	case "reason":
		if len(f) != 4 {
			return nil, fmt.Errorf("condition %q", s)
		}
		return func(ctx context.Context, c cluster.Interface, ns string, _ *recorder) (bool, error) {
			o, err := getObj(ctx, c, ns, f[1])
			if err != nil || o == nil {
				return false, err
			}
			conds, _ := field(o, "status.conditions").([]any)
			for _, x := range conds {
				m, _ := x.(map[string]any)
				if m["type"] == f[2] && m["reason"] == f[3] {
					return true, nil
				}
			}
			return false, nil
		}, nil
	case "field":
		if len(f) != 4 {
			return nil, fmt.Errorf("condition %q", s)
		}
		return func(ctx context.Context, c cluster.Interface, ns string, _ *recorder) (bool, error) {
			o, err := getObj(ctx, c, ns, f[1])
			if err != nil || o == nil {
				return false, err
			}
			v := field(o, f[2])
			if f[3] == "<set>" {
				return v != nil, nil
			}
			return scalar(v) == f[3], nil
		}, nil
	case "gone":
		return func(ctx context.Context, c cluster.Interface, ns string, _ *recorder) (bool, error) {
			o, err := getObj(ctx, c, ns, f[1])
			return o == nil && err == nil, err
		}, nil
	case "count", "created":
		if len(f) != 3 {
			return nil, fmt.Errorf("condition %q", s)
		}
		n, err := strconv.Atoi(f[2])
		if err != nil {
			return nil, fmt.Errorf("condition %q: %v", s, err)
		}
		if f[0] == "created" {
			return func(ctx context.Context, c cluster.Interface, ns string, rec *recorder) (bool, error) {
				rec.mu.Lock()
				defer rec.mu.Unlock()
				got := 0
				for _, op := range rec.ops {
					if strings.HasPrefix(op.text, "+"+f[1]+" ") {
						got++
					}
				}
				return got >= n, nil
			}, nil
		}
		return func(ctx context.Context, c cluster.Interface, ns string, _ *recorder) (bool, error) {
			res, err := c.Mapper().Find(f[1])
			if err != nil {
				return false, err
			}
			l, err := c.List(ctx, res.GVK, cluster.InNamespace(ns))
			if err != nil {
				return false, err
			}
			got := 0
			for _, o := range l.Items {
				if field(o, "metadata.deletionTimestamp") == nil {
					got++
				}
			}
			return got == n, nil
		}, nil
	}
	return nil, fmt.Errorf("condition %q: unknown", s)
}

// rolledOut is kubectl rollout status's verdict for StatefulSets and
// DaemonSets.
func rolledOut(o map[string]any) bool {
	gen, _ := field(o, "metadata.generation").(int64)
	obs, _ := field(o, "status.observedGeneration").(int64)
	if obs < gen {
		return false
	}
	n := func(p string) int64 { v, _ := field(o, p).(int64); return v }
	switch str(o, "kind") {
	case "StatefulSet":
		replicas := n("spec.replicas")
		if n("status.readyReplicas") < replicas {
			return false
		}
		if str(o, "spec", "updateStrategy", "type") == "RollingUpdate" && field(o, "spec.updateStrategy.rollingUpdate") != nil {
			if p := n("spec.updateStrategy.rollingUpdate.partition"); p > 0 {
				return n("status.updatedReplicas") >= replicas-p
			}
		}
		return str(o, "status", "updateRevision") == str(o, "status", "currentRevision")
	case "DaemonSet":
		desired := n("status.desiredNumberScheduled")
		return n("status.updatedNumberScheduled") >= desired && n("status.numberAvailable") >= desired
	}
	return false
}

// snapshot lists the objects of the namespace, reduced to what the
// controllers decide.
func snapshot(ctx context.Context, t testing.TB, c cluster.Interface, ns string, volumes, scheduled bool) map[string][]map[string]any {
	out := map[string][]map[string]any{}
	for _, k := range snapshotKinds {
		l, err := c.List(ctx, k.gvk, cluster.InNamespace(ns))
		if err != nil {
			t.Fatalf("list %s: %v", k.name, err)
		}
		for _, o := range l.Items {
			r := reduce(o)
			if volumes && k.name == "pvcs" {
				reduceClaimStatus(o, r)
			}
			if scheduled && k.name == "pods" {
				reduceScheduling(o, r)
			}
			out[k.name] = append(out[k.name], r)
		}
	}
	if volumes {
		l, err := c.List(ctx, pvGVK)
		if err != nil {
			t.Fatalf("list persistentvolumes: %v", err)
		}
		for _, o := range l.Items {
			if strings.HasPrefix(name(o), ns+"-") {
				out["persistentvolumes"] = append(out["persistentvolumes"], reduceVolume(o))
			}
		}
	}
	return out
}

var pvGVK = schema.GVK{Version: "v1", Kind: "PersistentVolume"}

// reduceScheduling adds what the scheduler decides of a pod: its node, a
// nominated node, and why it waits.
func reduceScheduling(o, out map[string]any) {
	if n := str(o, "spec", "nodeName"); n != "" {
		out["node"] = n
	}
	if n := str(o, "status", "nominatedNodeName"); n != "" {
		out["nominated"] = n
	}
	for _, x := range listAt(o, "status.conditions") {
		m, _ := x.(map[string]any)
		if m["type"] == "PodScheduled" && m["status"] == "False" {
			out["unscheduled"] = fmt.Sprintf("%v: %v", m["reason"], m["message"])
		}
		if m["type"] == "DisruptionTarget" && m["status"] == "True" {
			out["disruption"] = fmt.Sprintf("%v: %v", m["reason"], m["message"])
		}
	}
}

// reduceClaimStatus adds what the binder and the pvc-protection
// controller decide of a claim: its annotations and status.
func reduceClaimStatus(o, out map[string]any) {
	if a, ok := field(o, "metadata.annotations").(map[string]any); ok {
		a = value.DeepCopy(a).(map[string]any)
		delete(a, "kubectl.kubernetes.io/last-applied-configuration")
		if len(a) > 0 {
			out["annotations"] = a
		}
	}
	if st := field(o, "status"); st != nil {
		out["status"] = value.DeepCopy(st)
	}
}

// reduceVolume keeps what the binder decides of a PersistentVolume.
func reduceVolume(o map[string]any) map[string]any {
	out := map[string]any{"name": name(o)}
	if f := field(o, "metadata.finalizers"); f != nil {
		out["finalizers"] = value.DeepCopy(f)
	}
	reduceClaimStatus(o, out)
	if ref := field(o, "spec.claimRef"); ref != nil {
		out["claimRef"] = value.DeepCopy(ref)
	}
	if field(o, "metadata.deletionTimestamp") != nil {
		out["deleting"] = true
	}
	return out
}

// reduce keeps the fields of an object that its controller decides.
func reduce(o map[string]any) map[string]any {
	out := map[string]any{"name": name(o)}
	keep := func(key, path string) {
		if v := field(o, path); v != nil {
			out[key] = value.DeepCopy(v)
		}
	}
	keep("labels", "metadata.labels")
	keep("owners", "metadata.ownerReferences")
	keep("finalizers", "metadata.finalizers")
	if field(o, "metadata.deletionTimestamp") != nil {
		out["deleting"] = true
	}
	switch str(o, "kind") {
	case "StatefulSet", "DaemonSet", "CronJob":
		keep("generation", "metadata.generation")
		keep("status", "status")
		if str(o, "kind") == "DaemonSet" {
			keep("templateGeneration", "metadata.annotations.deprecated\\.daemonset\\.template\\.generation")
		}
	case "Job":
		keep("status", "status")
		keep("annotations", "metadata.annotations")
		keep("selector", "spec.selector")
		keep("suspend", "spec.suspend")
	case "Pod":
		keep("annotations", "metadata.annotations")
		keep("phase", "status.phase")
		keep("hostname", "spec.hostname")
		keep("subdomain", "spec.subdomain")
		keep("affinity", "spec.affinity")
		if tols := listAt(o, "spec.tolerations"); len(tols) > 0 {
			out["tolerations"] = value.DeepCopy(tols)
		}
		var claims []any
		for _, v := range listAt(o, "spec.volumes") {
			if cn := str(v.(map[string]any), "persistentVolumeClaim", "claimName"); cn != "" {
				claims = append(claims, cn)
			}
		}
		if len(claims) > 0 {
			out["claims"] = claims
		}
		var states []any
		for _, cs := range listAt(o, "status.containerStatuses") {
			m, _ := cs.(map[string]any)
			if term := fieldOf(m, "state.terminated"); term != nil {
				states = append(states, fmt.Sprintf("terminated %v %v", fieldOf(m, "state.terminated.exitCode"), fieldOf(m, "state.terminated.reason")))
			}
		}
		if len(states) > 0 {
			out["terminated"] = states
		}
	case "HorizontalPodAutoscaler":
		keep("generation", "metadata.generation")
		keep("status", "status")
	case "Endpoints":
		reduceEndpoints(o, out)
	case "EndpointSlice":
		reduceEndpointSlice(o, out)
	case "PersistentVolumeClaim":
		keep("spec", "spec")
		if v := field(o, "status.phase"); v != nil {
			out["phase"] = v
		}
	case "PodDisruptionBudget":
		keep("generation", "metadata.generation")
		keep("status", "status")
	case "ControllerRevision":
		keep("revision", "revision")
		keep("data", "data")
		keep("annotations", "metadata.annotations")
	}
	if a, ok := out["annotations"].(map[string]any); ok {
		delete(a, "kubectl.kubernetes.io/last-applied-configuration")
		if len(a) == 0 {
			delete(out, "annotations")
		}
	}
	return out
}

// masker hides what differs from one run to the next: uids, times,
// generated names (numbered in order of appearance) and the scheduled
// times in the names of a CronJob's Jobs.
type masker struct {
	renames  map[string]string
	order    []string
	counters map[string]int
}

// uidPattern is a uid in an Event's message ("Preempted by pod <uid>").
var uidPattern = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

var safeSuffix = regexp.MustCompile(`^[bcdfghjklmnpqrstvwxz2456789]{5}$`)
var digits = regexp.MustCompile(`^[0-9]+$`)

// learn numbers the generated names of objs in order.
func (m *masker) learn(objs []map[string]any) {
	for _, o := range objs {
		n := name(o)
		if _, ok := m.renames[n]; ok {
			continue
		}
		if gen := str(o, "metadata", "generateName"); gen != "" && strings.HasPrefix(n, gen) && safeSuffix.MatchString(n[len(gen):]) {
			mg := m.str(gen)
			m.counters[mg]++
			m.add(n, mg+"#"+strconv.Itoa(m.counters[mg]))
			continue
		}
		for _, r := range listAt(o, "metadata.ownerReferences") {
			ref, _ := r.(map[string]any)
			if ref["kind"] != "CronJob" {
				continue
			}
			owner, _ := ref["name"].(string)
			if rest, ok := strings.CutPrefix(n, owner+"-"); ok && digits.MatchString(rest) {
				m.counters["@"+owner]++
				m.add(n, owner+"-@"+strconv.Itoa(m.counters["@"+owner]))
			}
		}
	}
}

func (m *masker) add(from, to string) {
	m.renames[from] = to
	m.order = append(m.order, from)
	sort.SliceStable(m.order, func(i, j int) bool { return len(m.order[i]) > len(m.order[j]) })
}

var timeLike = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$`)
var uidLike = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// hpaList is the list of HPAs an AmbiguousSelector message names, in the
// order of a map of the real controller.
var hpaList = regexp.MustCompile(`\(e\.g\. \[([^\]]*)\]\)`)

// refusedName is a generated pod name in kube-apiserver's refusal of its
// creation (the pod never exists, so learn never sees it).
var refusedName = regexp.MustCompile(`(pods? "[a-z0-9.-]*-)[bcdfghjklmnpqrstvwxz2456789]{5}(" is forbidden)`)

// str masks one string.
func (m *masker) str(s string) string {
	s = refusedName.ReplaceAllString(s, "${1}<generated>${2}")
	s = hpaList.ReplaceAllStringFunc(s, func(l string) string {
		names := strings.Fields(hpaList.FindStringSubmatch(l)[1])
		sort.Strings(names)
		return "(e.g. [" + strings.Join(names, " ") + "])"
	})
	if timeLike.MatchString(s) {
		return "<time>"
	}
	if uidLike.MatchString(s) {
		return "<uid>"
	}
	for _, from := range m.order {
		if !strings.Contains(s, from) {
			continue
		}
		var b strings.Builder
		rest := s
		for {
			i := strings.Index(rest, from)
			if i < 0 {
				b.WriteString(rest)
				break
			}
			end := i + len(from)
			if end < len(rest) && isNameChar(rest[end]) && rest[end] != '-' || i > 0 && isNameChar(rest[i-1]) && rest[i-1] != '-' {
				b.WriteString(rest[:end])
				rest = rest[end:]
				continue
			}
			b.WriteString(rest[:i])
			b.WriteString(m.renames[from])
			rest = rest[end:]
		}
		s = b.String()
	}
	return s
}

func isNameChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.'
}

func (m *masker) strings(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = m.str(s)
	}
	return out
}

func (m *masker) object(o map[string]any) map[string]any {
	v, _ := m.value(o).(map[string]any)
	return v
}

func (m *masker) value(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if k == "uid" || k == "resourceVersion" {
				out[k] = "<" + k + ">"
				continue
			}
			out[m.str(k)] = m.value(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = m.value(e)
		}
		return out
	case string:
		return m.str(x)
	}
	return v
}

// Helpers on JSON values.

func name(o map[string]any) string { return str(o, "metadata", "name") }

func str(o map[string]any, path ...string) string {
	var cur any = o
	for _, p := range path {
		m, _ := cur.(map[string]any)
		cur = m[p]
	}
	s, _ := cur.(string)
	return s
}

// field reads a dotted path ("\." escapes a dot in a key).
func field(o map[string]any, path string) any { return fieldOf(o, path) }

func fieldOf(o map[string]any, path string) any {
	var cur any = o
	for _, p := range splitPath(path) {
		m, _ := cur.(map[string]any)
		if m == nil {
			return nil
		}
		cur = m[p]
	}
	return cur
}

func splitPath(p string) []string {
	var out []string
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		switch {
		case p[i] == '\\' && i+1 < len(p):
			i++
			b.WriteByte(p[i])
		case p[i] == '.':
			out = append(out, b.String())
			b.Reset()
		default:
			b.WriteByte(p[i])
		}
	}
	return append(out, b.String())
}

func listAt(o map[string]any, path string) []any {
	l, _ := field(o, path).([]any)
	return l
}

func scalar(v any) string {
	switch x := v.(type) {
	case nil:
		return "<none>"
	case string:
		return x
	}
	b, _ := value.Encode(v)
	return string(b)
}

func encode(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}
