package event_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/controller/event"
	"github.com/konverge/konverge/controller/internal/ctrltest"
	"github.com/konverge/konverge/controller/internal/kobj"
	"github.com/konverge/konverge/schema"
)

func TestRecordAggregates(t *testing.T) {
	ctx := context.Background()
	clk := &ctrltest.Clock{T: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	s := ctrltest.Open(t, clk)
	obj := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "default", "uid": "u1"}}
	t0 := clk.T
	if err := event.Record(ctx, s, t0, obj, event.Normal, "ScalingReplicaSet", "Scaled up", "deployment-controller"); err != nil {
		t.Fatal(err)
	}
	t1 := t0.Add(time.Minute)
	if err := event.Record(ctx, s, t1, obj, event.Normal, "ScalingReplicaSet", "Scaled up", "deployment-controller"); err != nil {
		t.Fatal(err)
	}
	name := event.Name(obj, t0)
	if name != "web.18867251edfa0000" {
		t.Errorf("name %q", name)
	}
	ev, err := s.Get(ctx, kobj.EventGVK, "default", name)
	if err != nil {
		t.Fatal(err)
	}
	if kobj.IntOr(ev, 0, "count") != 2 || ev["firstTimestamp"] != kobj.FormatTime(t0) || ev["lastTimestamp"] != kobj.FormatTime(t1) {
		t.Errorf("aggregated event %v", ev)
	}
	if kobj.Str(ev, "involvedObject", "kind") != "Deployment" || kobj.Str(ev, "source", "component") != "deployment-controller" || ev["type"] != "Normal" {
		t.Errorf("event fields %v", ev)
	}
}

// Events go an hour after their last write; a repeat keeps one alive.
func TestTTL(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := &ctrltest.Clock{T: t0}
	s := ctrltest.Open(t, clk)
	obj := map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "p", "namespace": "default", "uid": "u1"}}
	for _, msg := range []string{"old", "renewed"} {
		if err := event.Record(ctx, s, t0, obj, event.Normal, "R", msg, "c"); err != nil {
			t.Fatal(err)
		}
	}
	if err := event.Record(ctx, s, t0.Add(50*time.Minute), obj, event.Normal, "R", "renewed", "c"); err != nil {
		t.Fatal(err)
	}
	count := func(now time.Time) int {
		if _, err := (&event.TTLController{}).Sync(ctx, s, now); err != nil {
			t.Fatal(err)
		}
		l, err := s.List(ctx, kobj.EventGVK)
		if err != nil {
			t.Fatal(err)
		}
		return len(l.Items)
	}
	if n := count(t0.Add(59 * time.Minute)); n != 2 {
		t.Errorf("before the hour: %d events", n)
	}
	if n := count(t0.Add(time.Hour)); n != 1 {
		t.Errorf("at the hour: %d events, want the renewed one", n)
	}
	if n := count(t0.Add(110 * time.Minute)); n != 0 {
		t.Errorf("later: %d events", n)
	}
}

// indexed offers event.Index over a batch of the store, counting the
// Events read one by one.
type indexed struct {
	cluster.Interface
	gets int
}

func (x *indexed) Get(ctx context.Context, gvk schema.GVK, namespace, name string) (cluster.Object, error) {
	x.gets++
	return x.Interface.Get(ctx, gvk, namespace, name)
}

func (x *indexed) EventsAbout(ctx context.Context, namespace, name, uid string) ([]cluster.Object, error) {
	l, _, err := local.BatchList(ctx, x.Interface, kobj.EventGVK, local.ReadOptions{Namespace: namespace, NamePrefix: name + "."})
	if err != nil {
		return nil, err
	}
	return l.Items, nil
}

func (x *indexed) EventNames(ctx context.Context, fn func(namespace, name string) error) error {
	_, err := local.BatchNames(ctx, x.Interface, kobj.EventGVK, local.ReadOptions{}, fn)
	return err
}

// The TTL controller reads only the Events whose name does not say they
// live on, and deletes the same ones as from a List of all.
func TestTTLReadsOnlyWhatMayHaveExpired(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := &ctrltest.Clock{T: t0}
	s := ctrltest.Open(t, clk)
	var tc event.TTLController
	step := func(now time.Time, f func(c *indexed)) int {
		clk.T = now
		var gets int
		err := s.Batch(ctx, func(c cluster.Interface) error {
			x := &indexed{Interface: c}
			if f != nil {
				f(x)
			}
			x.gets = 0
			if _, err := tc.Sync(ctx, x, now); err != nil {
				return err
			}
			gets = x.gets
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return gets
	}
	names := func() string {
		l, err := s.List(ctx, kobj.EventGVK)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range l.Items {
			out = append(out, kobj.Name(e))
		}
		return strings.Join(out, " ")
	}
	pod := func(i int) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": fmt.Sprintf("p%d", i), "namespace": "default", "uid": fmt.Sprintf("u%d", i)}}
	}
	gets := step(t0, func(c *indexed) {
		for i := range 20 {
			if err := event.Record(ctx, c, t0, pod(i), event.Normal, "Started", "Started", "kubelet"); err != nil {
				t.Fatal(err)
			}
		}
		// Named by a user: its name says nothing.
		if _, err := c.Create(ctx, map[string]any{"apiVersion": "v1", "kind": "Event", "metadata": map[string]any{"name": "mine", "namespace": "default"},
			"involvedObject": map[string]any{"kind": "Pod", "name": "p0", "namespace": "default"}, "reason": "R", "lastTimestamp": kobj.FormatTime(t0)}); err != nil {
			t.Fatal(err)
		}
	})
	if gets != 1 {
		t.Errorf("the first sync read %d Events, want 1 (the one a user named)", gets)
	}
	if gets := step(t0.Add(40*time.Minute), nil); gets != 0 {
		t.Errorf("a sync before the first Event may expire read %d Events", gets)
	}
	// p1's Event is renewed at 50 minutes: its name is as old as the others.
	if gets := step(t0.Add(50*time.Minute), func(c *indexed) {
		if err := event.Record(ctx, c, t0.Add(50*time.Minute), pod(1), event.Normal, "Started", "Started", "kubelet"); err != nil {
			t.Fatal(err)
		}
	}); gets != 0 {
		t.Errorf("a sync before the first Event may expire read %d Events", gets)
	}
	if gets := step(t0.Add(time.Hour), nil); gets != 21 {
		t.Errorf("a sync at the hour read %d Events, want 21", gets)
	}
	if got, want := names(), event.Name(pod(1), t0); got != want {
		t.Errorf("after the hour: %s, want %s", got, want)
	}
	if gets := step(t0.Add(100*time.Minute), nil); gets != 0 {
		t.Errorf("a sync before the renewed Event expires read %d Events", gets)
	}
	step(t0.Add(110*time.Minute), nil)
	if got := names(); got != "" {
		t.Errorf("later: %s", got)
	}
}

// listCounter counts the Lists of a store, which keeps meta data.
type listCounter struct {
	*local.Store
	lists int
}

func (l *listCounter) List(ctx context.Context, gvk schema.GVK, opts ...cluster.ListOption) (*cluster.List, error) {
	l.lists++
	return l.Store.List(ctx, gvk, opts...)
}

// A new TTL controller (a new process) reads, from the cluster, when an
// Event may expire first, instead of every Event's name.
func TestTTLKeepsItsTimeWithTheCluster(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := &ctrltest.Clock{T: t0}
	s := ctrltest.Open(t, clk)
	c := &listCounter{Store: s}
	obj := map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "p", "namespace": "default", "uid": "u1"}}
	if err := event.Record(ctx, s, t0, obj, event.Normal, "R", "m", "c"); err != nil {
		t.Fatal(err)
	}
	count := func(now time.Time) (events, lists int) {
		c.lists = 0
		if _, err := (&event.TTLController{}).Sync(ctx, c, now); err != nil {
			t.Fatal(err)
		}
		lists = c.lists
		l, err := s.List(ctx, kobj.EventGVK)
		if err != nil {
			t.Fatal(err)
		}
		return len(l.Items), lists
	}
	if n, lists := count(t0.Add(10 * time.Minute)); n != 1 || lists != 1 {
		t.Errorf("first sync: %d events, %d lists; want 1, 1", n, lists)
	}
	if n, lists := count(t0.Add(50 * time.Minute)); n != 1 || lists != 0 {
		t.Errorf("a sync before the time kept: %d events, %d lists; want 1, 0", n, lists)
	}
	if n, lists := count(t0.Add(time.Hour)); n != 0 || lists != 1 {
		t.Errorf("a sync at the hour: %d events, %d lists; want 0, 1", n, lists)
	}
}

// The spam filter lets a burst of 25 through, then one per 5 minutes.
func TestSpamFilter(t *testing.T) {
	var f event.SpamFilter
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	obj := map[string]any{"kind": "Pod", "metadata": map[string]any{"name": "p", "uid": "u"}}
	ev := func(at time.Duration) event.Event {
		return event.Event{Involved: obj, Type: event.Normal, Component: "kubelet", Time: t0.Add(at)}
	}
	n := 0
	for i := range 100 {
		if f.Allow(ev(time.Duration(i) * time.Second)) {
			n++
		}
	}
	if n != 25 {
		t.Errorf("burst: %d allowed, want 25", n)
	}
	if !f.Allow(ev(100*time.Second + 5*time.Minute)) {
		t.Error("after 5 minutes: not allowed")
	}
	if f.Allow(ev(101*time.Second + 5*time.Minute)) {
		t.Error("a second one at once: allowed")
	}
	w := ev(0)
	w.Type = event.Warning
	if !f.Allow(w) {
		t.Error("another type has its own bucket")
	}
}

// Ten different messages of one reason within ten minutes: the tenth and
// the ones after are combined into one more Event, as client-go's
// aggregator does; names sort in the order the events happened.
func TestRecordCombinesSimilar(t *testing.T) {
	ctx := context.Background()
	clk := &ctrltest.Clock{T: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	s := ctrltest.Open(t, clk)
	obj := map[string]any{"apiVersion": "apps/v1", "kind": "StatefulSet",
		"metadata": map[string]any{"name": "web", "namespace": "default", "uid": "u1"}}
	for i := 0; i < 12; i++ {
		msg := fmt.Sprintf("Create Pod web-%d in StatefulSet web successful", i)
		if err := event.Record(ctx, s, clk.T, obj, event.Normal, "SuccessfulCreate", msg, "statefulset-controller"); err != nil {
			t.Fatal(err)
		}
	}
	l, err := s.List(ctx, kobj.EventGVK)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range l.Items {
		got = append(got, fmt.Sprintf("%d %s", kobj.IntOr(e, 0, "count"), e["message"]))
	}
	want := []string{}
	for i := 0; i < 9; i++ {
		want = append(want, fmt.Sprintf("1 Create Pod web-%d in StatefulSet web successful", i))
	}
	want = append(want, "3 (combined from similar events): Create Pod web-11 in StatefulSet web successful")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events in name order:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Eleven minutes later the streak is over: a new message stands alone.
	clk.T = clk.T.Add(11 * time.Minute)
	if err := event.Record(ctx, s, clk.T, obj, event.Normal, "SuccessfulCreate", "Create Pod web-12 in StatefulSet web successful", "statefulset-controller"); err != nil {
		t.Fatal(err)
	}
	ev, err := s.Get(ctx, kobj.EventGVK, "default", event.Name(obj, clk.T))
	if err != nil {
		t.Fatal(err)
	}
	if ev["message"] != "Create Pod web-12 in StatefulSet web successful" {
		t.Errorf("after the interval: %v", ev["message"])
	}
}

// A controller whose create the API refused waits for the back-off of
// the failures its Events count, unless the object changed since.
func TestWaiting(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	st := ctrltest.Open(t, &ctrltest.Clock{T: now})
	set := map[string]any{"apiVersion": "apps/v1", "kind": "StatefulSet",
		"metadata": map[string]any{"name": "db", "namespace": "default", "uid": "u1",
			"managedFields": []any{map[string]any{"manager": "kubectl", "operation": "Update", "time": "2026-01-01T00:00:00Z"}}}}
	for i := range 12 {
		at := now.Add(time.Duration(i) * time.Second)
		if err := event.Record(ctx, st, at, set, event.Warning, "FailedCreate", fmt.Sprintf("create Pod db-%d failed", i), "statefulset-controller"); err != nil {
			t.Fatal(err)
		}
	}
	last := now.Add(11 * time.Second)
	until, waiting, err := event.Waiting(ctx, st, set, "statefulset-controller", last)
	if err != nil || !waiting {
		t.Fatalf("waiting %v, %v", waiting, err)
	}
	// 12 failures counted (9 Events, then one that combines the rest).
	if want := last.Add(event.Backoff(12)); !until.Equal(want) {
		t.Errorf("until %s, want %s", until, want)
	}
	// Changed by a user after the failure: synced at once.
	set["metadata"].(map[string]any)["managedFields"] = []any{map[string]any{"manager": "kubectl", "operation": "Update", "time": "2026-01-01T00:00:20Z"}}
	if _, waiting, _ := event.Waiting(ctx, st, set, "statefulset-controller", last.Add(10*time.Second)); waiting {
		t.Error("still waiting after an update")
	}
	// A later success forgets the back-off.
	set["metadata"].(map[string]any)["managedFields"] = nil
	if err := event.Record(ctx, st, last, set, event.Normal, "SuccessfulCreate", "create Pod db-0 successful", "statefulset-controller"); err != nil {
		t.Fatal(err)
	}
	if _, waiting, _ := event.Waiting(ctx, st, set, "statefulset-controller", last); waiting {
		t.Error("still waiting after a success of the same second")
	}
}

// TestWaitingEndsWithTheUsersWrite: a controller whose create was refused
// waits for its back-off, unless the object was written since (an update
// is queued at once, as upstream's informers do) — also when the object
// it holds is a cached copy without managed fields (the embedded
// cluster's controllers read those), which then says nothing of who
// wrote it when.
func TestWaitingEndsWithTheUsersWrite(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := &ctrltest.Clock{T: t0}
	s := ctrltest.Open(t, clk)
	obj, err := s.Create(ctx, map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "db", "namespace": "default"}, "data": map[string]any{"k": "v"}})
	if err != nil {
		t.Fatal(err)
	}
	const comp = "statefulset-controller"
	if err := event.Record(ctx, s, t0, obj, event.Warning, "FailedCreate", "refused", comp); err != nil {
		t.Fatal(err)
	}
	lean := func(o cluster.Object) cluster.Object {
		o = kobj.Copy(o)
		delete(kobj.Map(o, "metadata"), "managedFields")
		return o
	}
	for i := range 20 { // the back-off reaches its cap
		if err := event.Record(ctx, s, t0, obj, event.Warning, "FailedCreate", "refused", comp); err != nil {
			t.Fatal(i, err)
		}
	}
	now := t0.Add(2 * time.Minute)
	for _, held := range []cluster.Object{obj, lean(obj)} {
		if _, waiting, err := event.Waiting(ctx, s, held, comp, now); err != nil || !waiting {
			t.Fatalf("nobody wrote the object: waiting %v, %v; want waiting", waiting, err)
		}
	}
	clk.T = t0.Add(time.Minute)
	obj["data"] = map[string]any{"k": "fixed"}
	fixed, err := s.Update(ctx, obj)
	if err != nil {
		t.Fatal(err)
	}
	for _, held := range []cluster.Object{fixed, lean(fixed)} {
		if _, waiting, err := event.Waiting(ctx, s, held, comp, now); err != nil || waiting {
			t.Errorf("the object was written after the failure: waiting %v, %v; want a retry at once", waiting, err)
		}
	}
}

// A controller's Events about one object go through client-go's spam
// filter, read from the stored Events: 25 occurrences (the aggregated
// ones included), then one more every 5 minutes; the kubelet's (with a
// Host) are left to its own SpamFilter.
func TestControllerEventsSpamFiltered(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := &ctrltest.Clock{T: t0}
	s := ctrltest.Open(t, clk)
	rs := map[string]any{"apiVersion": "apps/v1", "kind": "ReplicaSet",
		"metadata": map[string]any{"name": "web-1", "namespace": "default", "uid": "u1"}}
	occurrences := func() int64 {
		l, err := s.List(ctx, kobj.EventGVK, cluster.InNamespace("default"))
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		for _, e := range l.Items {
			if kobj.Str(e, "involvedObject", "uid") == "u1" {
				n += kobj.IntOr(e, 1, "count")
			}
		}
		return n
	}
	for i := range 200 {
		if err := event.Record(ctx, s, t0, rs, event.Normal, "SuccessfulCreate", fmt.Sprintf("Created pod: web-1-%d", i), "replicaset-controller"); err != nil {
			t.Fatal(err)
		}
	}
	if got := occurrences(); got != event.SpamBurst {
		t.Errorf("200 Events at once: %d recorded, want %d", got, event.SpamBurst)
	}
	// Another type is another bucket.
	if err := event.Record(ctx, s, t0, rs, event.Warning, "FailedCreate", "quota", "replicaset-controller"); err != nil {
		t.Fatal(err)
	}
	if got := occurrences(); got != event.SpamBurst+1 {
		t.Errorf("a Warning after the Normal burst: %d recorded, want %d", got, event.SpamBurst+1)
	}
	// One token per 5 minutes.
	for _, at := range []time.Duration{4 * time.Minute, 5 * time.Minute, 6 * time.Minute, 10 * time.Minute} {
		if err := event.Record(ctx, s, t0.Add(at), rs, event.Normal, "SuccessfulCreate", "Created pod: later", "replicaset-controller"); err != nil {
			t.Fatal(err)
		}
	}
	if got := occurrences(); got != event.SpamBurst+3 {
		t.Errorf("after 10 minutes: %d recorded, want %d", got, event.SpamBurst+3)
	}
	// A node's component keeps its own filter.
	pod := map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "p", "namespace": "default", "uid": "u2"}}
	for i := range 30 {
		if _, err := event.Emit(ctx, s, event.Event{Involved: pod, Type: event.Normal, Reason: "Pulled", Message: fmt.Sprint(i),
			Component: "kubelet", Host: "node-1", Time: t0}); err != nil {
			t.Fatal(err)
		}
	}
	l, _ := s.List(ctx, kobj.EventGVK, cluster.InNamespace("default"))
	var kubelet int64
	for _, e := range l.Items {
		if kobj.Str(e, "involvedObject", "uid") == "u2" {
			kubelet += kobj.IntOr(e, 1, "count")
		}
	}
	if kubelet != 30 {
		t.Errorf("the kubelet's Events: %d recorded, want all 30", kubelet)
	}
}
