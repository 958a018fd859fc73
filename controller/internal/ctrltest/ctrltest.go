// Package ctrltest is the harness of the controllers' unit tests: a real
// embedded store (package cluster/local) in a temporary directory, on a
// manual clock, that every write goes to in a transaction of its own, as
// the runner of package sim writes. It records which objects each write
// changed, so that a test can hand an incremental controller the writes
// since its last sync (SyncChanged) as the runner does, and check that a
// full sync then finds nothing left to do.
//
// It is imported by tests only.
package ctrltest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/konverge/konverge/clock"
	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/controller"
	"github.com/konverge/konverge/controller/internal/kobj"
	"github.com/konverge/konverge/schema"
)

// Env is one test's cluster.
type Env struct {
	TB    testing.TB
	Ctx   context.Context
	Clock *clock.Clock
	Store *local.Store
	// log is every object a write changed, in order; seen is, by
	// controller, how much of log it was given.
	log  []controller.Key
	seen map[controller.Controller]int
	// Budget, when set, gives each sync a number of writes (it is called
	// once per sync, in order) after which every write returns an error
	// wrapping controller.ErrThrottled, as the runner of package sim
	// holds back the writes its client rate limit has no token for.
	Budget func() int
}

// New opens an empty store at clock.Epoch (a manual clock), closed when
// the test ends.
func New(tb testing.TB) *Env {
	tb.Helper()
	clk := clock.New(clock.Manual, clock.Epoch)
	s, err := local.Open(tb.TempDir(), local.Options{Clock: clk})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return &Env{TB: tb, Ctx: context.Background(), Clock: clk, Store: s, seen: map[controller.Controller]int{}}
}

// Clock is a clock a test sets by hand, to any time (a clock.Clock only
// moves forward).
type Clock struct{ T time.Time }

// Now returns T.
func (c *Clock) Now() time.Time { return c.T }

// Open opens an empty store on clk in a temporary directory, closed when
// the test ends: for tests that drive a store and a clock of their own
// rather than an Env.
func Open(tb testing.TB, clk local.Clock) *local.Store {
	tb.Helper()
	s, err := local.Open(tb.TempDir(), local.Options{Clock: clk})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// Now is the cluster time.
func (e *Env) Now() time.Time { return e.Clock.Now() }

// Advance moves the cluster time on by d.
func (e *Env) Advance(d time.Duration) { e.Clock.Set(e.Clock.Now().Add(d)) }

// Batch runs fn in one transaction of the store and logs what its writes
// changed.
func (e *Env) Batch(fn func(c cluster.Interface) error) error {
	return e.Store.Batch(e.Ctx, func(c cluster.Interface) error {
		start, _ := local.BatchRevision(c)
		err := fn(c)
		if changes, ok := local.BatchChanges(c, start); ok {
			for _, ch := range changes {
				e.log = append(e.log, controller.Key{Group: ch.Group, Kind: ch.Kind, Namespace: ch.Namespace, Name: ch.Name, Deleted: ch.Deleted})
			}
		}
		return err
	})
}

func (e *Env) write(what string, fn func(c cluster.Interface) error) {
	e.TB.Helper()
	if err := e.Batch(fn); err != nil {
		e.TB.Fatalf("%s: %v", what, err)
	}
}

// Create creates obj and returns it as stored.
func (e *Env) Create(obj map[string]any) map[string]any {
	e.TB.Helper()
	var out map[string]any
	e.write("create "+kobj.Str(obj, "kind")+" "+kobj.Name(obj), func(c cluster.Interface) (err error) {
		out, err = c.Create(e.Ctx, obj)
		return err
	})
	return out
}

// Update updates obj (its spec and metadata) and returns it as stored.
func (e *Env) Update(obj map[string]any) map[string]any {
	e.TB.Helper()
	var out map[string]any
	e.write("update "+kobj.Str(obj, "kind")+" "+kobj.Name(obj), func(c cluster.Interface) (err error) {
		out, err = c.Update(e.Ctx, obj)
		return err
	})
	return out
}

// UpdateStatus updates the status of obj and returns it as stored.
func (e *Env) UpdateStatus(obj map[string]any) map[string]any {
	e.TB.Helper()
	var out map[string]any
	e.write("update status of "+kobj.Str(obj, "kind")+" "+kobj.Name(obj), func(c cluster.Interface) (err error) {
		out, err = c.UpdateStatus(e.Ctx, obj)
		return err
	})
	return out
}

// Modify reads an object, changes it with fn and updates it.
func (e *Env) Modify(gvk schema.GVK, ns, name string, fn func(obj map[string]any)) map[string]any {
	e.TB.Helper()
	obj := e.Get(gvk, ns, name)
	fn(obj)
	return e.Update(obj)
}

// Delete deletes an object.
func (e *Env) Delete(gvk schema.GVK, ns, name string) {
	e.TB.Helper()
	e.write("delete "+gvk.Kind+" "+name, func(c cluster.Interface) error {
		return c.Delete(e.Ctx, gvk, ns, name)
	})
}

// Get returns an object; it must exist.
func (e *Env) Get(gvk schema.GVK, ns, name string) map[string]any {
	e.TB.Helper()
	obj, err := e.Store.Get(e.Ctx, gvk, ns, name)
	if err != nil {
		e.TB.Fatal(err)
	}
	return obj
}

// Exists reports whether an object exists.
func (e *Env) Exists(gvk schema.GVK, ns, name string) bool {
	e.TB.Helper()
	_, err := e.Store.Get(e.Ctx, gvk, ns, name)
	if err != nil && !cluster.IsNotFound(err) {
		e.TB.Fatal(err)
	}
	return err == nil
}

// List returns the objects of a kind in namespace ns ("": all), ordered
// by namespace and name.
func (e *Env) List(gvk schema.GVK, ns string) []map[string]any {
	e.TB.Helper()
	var opts []cluster.ListOption
	if ns != "" {
		opts = append(opts, cluster.InNamespace(ns))
	}
	l, err := e.Store.List(e.Ctx, gvk, opts...)
	if err != nil {
		e.TB.Fatal(err)
	}
	return l.Items
}

// Names returns the names of the objects of a kind in namespace ns.
func (e *Env) Names(gvk schema.GVK, ns string) []string {
	e.TB.Helper()
	var out []string
	for _, o := range e.List(gvk, ns) {
		out = append(out, kobj.Name(o))
	}
	return out
}

// Events returns the Events of namespace ns as "Type Reason Kind/name:
// message" (the form of the workload goldens), oldest first.
func (e *Env) Events(ns string) []string {
	e.TB.Helper()
	evs := e.List(kobj.EventGVK, ns)
	sort.SliceStable(evs, func(i, j int) bool {
		return kobj.Str(evs[i], "firstTimestamp") < kobj.Str(evs[j], "firstTimestamp")
	})
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = fmt.Sprintf("%s %s %s/%s: %s", kobj.Str(ev, "type"), kobj.Str(ev, "reason"),
			kobj.Str(ev, "involvedObject", "kind"), kobj.Str(ev, "involvedObject", "name"), kobj.Str(ev, "message"))
	}
	return out
}

// SyncErr runs one Sync of ctl in a transaction, at the cluster time:
// SyncChanged, with the writes since its last sync, when ctl is an
// Incremental that synced before in this Env.
func (e *Env) SyncErr(ctl controller.Controller) (controller.Result, error) {
	var res controller.Result
	inc, incremental := ctl.(controller.Incremental)
	from, synced := e.seen[ctl]
	changed := changedSince(e.log, from)
	e.seen[ctl] = len(e.log)
	err := e.Batch(func(c cluster.Interface) (err error) {
		if e.Budget != nil {
			c = &throttled{Interface: c, left: e.Budget()}
		}
		if incremental && synced {
			res, err = inc.SyncChanged(e.Ctx, c, e.Now(), changed)
		} else {
			res, err = ctl.Sync(e.Ctx, c, e.Now())
		}
		return err
	})
	return res, err
}

// Sync is SyncErr that fails the test on an error.
func (e *Env) Sync(ctl controller.Controller) controller.Result {
	e.TB.Helper()
	res, err := e.SyncErr(ctl)
	if err != nil {
		e.TB.Fatalf("%s: %v", ctl.Name(), err)
	}
	return res
}

// Settle syncs the controllers in turn, and runs each of between (a test's
// kubelet: it reports whether it wrote) after them, until a round changes
// nothing; it returns the merged results of the last round. The clock
// does not move.
func (e *Env) Settle(ctls []controller.Controller, between ...func(e *Env) bool) controller.Result {
	e.TB.Helper()
	for range 100 {
		var res controller.Result
		for _, ctl := range ctls {
			res = res.Merge(e.Sync(ctl))
		}
		for _, fn := range between {
			if fn(e) {
				res.Changed = true
			}
		}
		if !res.Changed {
			return res
		}
	}
	e.TB.Fatal("the controllers did not settle in 100 rounds")
	return controller.Result{}
}

// Quiet fails the test when a full Sync of ctl (a controller that
// remembers nothing) would write something now: after an incremental
// controller settled, the writes it skipped are none.
func (e *Env) Quiet(ctl controller.Controller) {
	e.TB.Helper()
	var res controller.Result
	before := len(e.log)
	err := e.Batch(func(c cluster.Interface) (err error) {
		res, err = ctl.Sync(e.Ctx, c, e.Now())
		return err
	})
	if err != nil {
		e.TB.Fatalf("%s: %v", ctl.Name(), err)
	}
	if res.Changed || len(e.log) != before {
		e.TB.Fatalf("%s: a full sync still wrote %v", ctl.Name(), e.log[before:])
	}
}

// Modes runs fn, in a subtest and an Env of its own each, with a
// controller that syncs fully every time (full) and with an incremental
// one (SyncChanged after its first sync); after fn, a full sync of full()
// must find nothing left to write (Quiet).
func Modes(t *testing.T, full, incremental func() controller.Controller, fn func(t *testing.T, e *Env, ctl controller.Controller)) {
	t.Helper()
	for _, m := range []struct {
		name string
		ctl  func() controller.Controller
	}{{"full", full}, {"incremental", incremental}} {
		t.Run(m.name, func(t *testing.T) {
			e := New(t)
			fn(t, e, m.ctl())
			e.Quiet(full())
		})
	}
}

// changedSince returns the keys of log[from:], each once in the order of
// its first write, Deleted as its last write left it.
func changedSince(log []controller.Key, from int) []controller.Key {
	var out []controller.Key
	at := map[controller.Key]int{}
	for _, k := range log[from:] {
		id := k
		id.Deleted = false
		if i, ok := at[id]; ok {
			out[i].Deleted = k.Deleted
			continue
		}
		at[id] = len(out)
		out = append(out, k)
	}
	return out
}

// Node returns a Node with labels and taints (each "key=value:Effect" or
// "key:Effect").
func Node(name string, labels map[string]string, taints ...string) map[string]any {
	l := map[string]any{}
	for k, v := range labels {
		l[k] = v
	}
	var ts []any
	for _, t := range taints {
		kv, effect := t, ""
		for i := len(t) - 1; i >= 0; i-- {
			if t[i] == ':' {
				kv, effect = t[:i], t[i+1:]
				break
			}
		}
		m := map[string]any{"effect": effect}
		k, v := kv, ""
		for i := range len(kv) {
			if kv[i] == '=' {
				k, v = kv[:i], kv[i+1:]
				break
			}
		}
		m["key"] = k
		if v != "" {
			m["value"] = v
		}
		ts = append(ts, m)
	}
	n := map[string]any{"apiVersion": "v1", "kind": "Node", "metadata": map[string]any{"name": name, "labels": l}}
	if len(ts) > 0 {
		n["spec"] = map[string]any{"taints": ts}
	}
	return n
}

// PodTemplate returns a pod template of one container with the image and
// labels.
func PodTemplate(image string, labels map[string]any) map[string]any {
	return map[string]any{
		"metadata": map[string]any{"labels": labels},
		"spec":     map[string]any{"containers": []any{map[string]any{"name": "c", "image": image}}},
	}
}

// RunPods is a test's kubelet: every pod that is not being deleted, has
// not finished and is not Running and Ready yet becomes so, at the cluster time. It binds no
// pod to a node, so that a deleted pod goes at once. It reports whether
// it wrote.
func RunPods(e *Env) bool {
	e.TB.Helper()
	wrote := false
	e.write("run pods", func(c cluster.Interface) error {
		l, err := c.List(e.Ctx, kobj.PodGVK)
		if err != nil {
			return err
		}
		for _, p := range l.Items {
			if phase := kobj.Str(p, "status", "phase"); kobj.Deleting(p) || phase == "Succeeded" || phase == "Failed" {
				continue
			}
			if ok, _ := kobj.PodReady(p); ok {
				continue
			}
			next := kobj.Copy(p)
			now := kobj.FormatTime(e.Now())
			next["status"] = map[string]any{
				"phase":     "Running",
				"startTime": now,
				"conditions": []any{
					map[string]any{"type": "Ready", "status": "True", "lastTransitionTime": now},
				},
			}
			if _, err := c.UpdateStatus(e.Ctx, next); err != nil {
				return err
			}
			wrote = true
		}
		return nil
	})
	return wrote
}

// throttled lets a number of writes through, then holds every later one
// back with an error wrapping controller.ErrThrottled.
type throttled struct {
	cluster.Interface
	left int
}

func (t *throttled) take() error {
	if t.left <= 0 {
		return fmt.Errorf("test budget of writes spent: %w", controller.ErrThrottled)
	}
	t.left--
	return nil
}

func (t *throttled) Create(ctx context.Context, obj cluster.Object, opts ...cluster.CreateOption) (cluster.Object, error) {
	if err := t.take(); err != nil {
		return nil, err
	}
	return t.Interface.Create(ctx, obj, opts...)
}

func (t *throttled) Update(ctx context.Context, obj cluster.Object, opts ...cluster.UpdateOption) (cluster.Object, error) {
	if err := t.take(); err != nil {
		return nil, err
	}
	return t.Interface.Update(ctx, obj, opts...)
}

func (t *throttled) UpdateStatus(ctx context.Context, obj cluster.Object, opts ...cluster.UpdateOption) (cluster.Object, error) {
	if err := t.take(); err != nil {
		return nil, err
	}
	return t.Interface.UpdateStatus(ctx, obj, opts...)
}

func (t *throttled) Patch(ctx context.Context, gvk schema.GVK, namespace, name string, pt cluster.PatchType, patch []byte, opts ...cluster.PatchOption) (cluster.Object, error) {
	if err := t.take(); err != nil {
		return nil, err
	}
	return t.Interface.Patch(ctx, gvk, namespace, name, pt, patch, opts...)
}

func (t *throttled) Delete(ctx context.Context, gvk schema.GVK, namespace, name string, opts ...cluster.DeleteOption) error {
	if err := t.take(); err != nil {
		return err
	}
	return t.Interface.Delete(ctx, gvk, namespace, name, opts...)
}

// SameWrites runs steps seeded random steps (step makes one edit of the
// cluster) twice, each followed by three syncs of the controllers with a
// budget of 1 to 4 writes each (as a client rate limit cuts syncs
// short): once with full controllers (full), once with incremental ones
// (incremental); after every step the two clusters must read the same
// (dump), and at the end a full sync of the incremental run must find
// nothing left to write once the budget is lifted and the controllers
// settled.
func SameWrites(t *testing.T, seed uint64, steps int, full, incremental func() []controller.Controller, step func(e *Env, r *rand.Rand, i int), dump func(e *Env) string) {
	t.Helper()
	run := func(ctls []controller.Controller) (*Env, []string) {
		e := New(t)
		r := rand.New(rand.NewPCG(seed, 11))
		n := 0
		e.Budget = func() int { n++; return 1 + n*7%4 }
		var states []string
		for i := range steps {
			step(e, r, i)
			for range 3 {
				for _, c := range ctls {
					e.Sync(c)
				}
			}
			states = append(states, dump(e))
		}
		return e, states
	}
	_, want := run(full())
	ctls := incremental()
	e, got := run(ctls)
	for i := range want {
		if want[i] != got[i] {
			t.Fatalf("seed %d step %d: incremental and full syncs differ:\nfull:\n%s\nincremental:\n%s", seed, i, want[i], got[i])
		}
	}
	e.Budget = nil
	e.Settle(ctls)
	for _, c := range full() {
		e.Quiet(c)
	}
}
