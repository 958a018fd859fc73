package local

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/konverge/konverge/cluster"
)

// next returns the next event or fails after a while.
func next(t *testing.T, w cluster.Watcher) cluster.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("watch closed")
		}
		return ev
	case <-time.After(5 * time.Second):
		t.Fatal("no event")
	}
	return cluster.Event{}
}

func describe(ev cluster.Event) string {
	return fmt.Sprintf("%s %s@%s", ev.Type, metaString(ev.Object, "name"), metaString(ev.Object, "resourceVersion"))
}

func TestWatch(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	all, err := s.Watch(ctx, gvkConfigMap)
	if err != nil {
		t.Fatal(err)
	}
	defer all.Stop()
	selected, err := s.Watch(ctx, gvkConfigMap, cluster.InNamespace("default"), cluster.MatchingLabels("app=web"))
	if err != nil {
		t.Fatal(err)
	}
	defer selected.Stop()

	c := mustCreate(t, s, `{apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: default}}`)
	rv1 := metaString(c, "resourceVersion")
	c, _ = s.Patch(ctx, gvkConfigMap, "default", "c", cluster.MergePatchType, []byte(`{"metadata":{"labels":{"app":"web"}}}`))
	rv2 := metaString(c, "resourceVersion")
	c, _ = s.Patch(ctx, gvkConfigMap, "default", "c", cluster.MergePatchType, []byte(`{"data":{"k":"v"}}`))
	rv3 := metaString(c, "resourceVersion")
	c, _ = s.Patch(ctx, gvkConfigMap, "default", "c", cluster.MergePatchType, []byte(`{"metadata":{"labels":{"app":"db"}}}`))
	rv4 := metaString(c, "resourceVersion")
	mustCreate(t, s, `{apiVersion: v1, kind: Secret, metadata: {name: other-kind, namespace: default}}`)
	if err := s.Delete(ctx, gvkConfigMap, "default", "c"); err != nil {
		t.Fatal(err)
	}
	list, _ := s.List(ctx, gvkConfigMap)
	rv6 := list.ResourceVersion

	var got []string
	for range 5 {
		got = append(got, describe(next(t, all)))
	}
	want := []string{"ADDED c@" + rv1, "MODIFIED c@" + rv2, "MODIFIED c@" + rv3, "MODIFIED c@" + rv4, "DELETED c@" + rv6}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("events\n%s\nwant\n%s", strings.Join(got, ", "), strings.Join(want, ", "))
	}
	got = nil
	for range 3 {
		ev := next(t, selected)
		got = append(got, describe(ev)+" app="+path(ev.Object, "metadata.labels.app").(string))
	}
	// Entering the selection is ADDED, leaving it DELETED (the object as it
	// was, at the revision of the change).
	want = []string{"ADDED c@" + rv2 + " app=web", "MODIFIED c@" + rv3 + " app=web", "DELETED c@" + rv4 + " app=web"}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("selected events\n%s\nwant\n%s", strings.Join(got, ", "), strings.Join(want, ", "))
	}
}

func TestWatchFromResourceVersion(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	a := mustCreate(t, s, `{apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: default}}`)
	mustCreate(t, s, `{apiVersion: v1, kind: ConfigMap, metadata: {name: b, namespace: default}}`)

	w, err := s.Watch(ctx, gvkConfigMap, cluster.FromResourceVersion(metaString(a, "resourceVersion")))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if ev := next(t, w); ev.Type != cluster.Added || metaString(ev.Object, "name") != "b" {
		t.Errorf("replay: %s", describe(ev))
	}
	mustCreate(t, s, `{apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: default}}`)
	if ev := next(t, w); metaString(ev.Object, "name") != "c" {
		t.Errorf("live: %s", describe(ev))
	}

	// "0": the objects that exist, then changes.
	w0, err := s.Watch(ctx, gvkConfigMap, cluster.FromResourceVersion("0"))
	if err != nil {
		t.Fatal(err)
	}
	defer w0.Stop()
	var names []string
	for range 3 {
		ev := next(t, w0)
		names = append(names, string(ev.Type)+" "+metaString(ev.Object, "name"))
	}
	if got := strings.Join(names, ", "); got != "ADDED a, ADDED b, ADDED c" {
		t.Errorf("initial events %s", got)
	}

	_, err = s.Watch(ctx, gvkConfigMap, cluster.FromResourceVersion("1000000"))
	if cluster.ReasonOf(err) != cluster.ReasonTimeout {
		t.Errorf("future resourceVersion: %v", err)
	}
}

func TestWatchGone(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s, `{apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: default}}`)
	s.Close()
	// History is in memory: a reopened store starts without it.
	s, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = s.Watch(context.Background(), gvkConfigMap, cluster.FromResourceVersion("1"))
	if cluster.ReasonOf(err) != cluster.ReasonGone || !strings.HasPrefix(errText(err), "too old resource version: 1 (") {
		t.Errorf("got %v", err)
	}
}

func TestWatchStop(t *testing.T) {
	s, _ := openStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	w1, err := s.Watch(ctx, gvkConfigMap)
	if err != nil {
		t.Fatal(err)
	}
	w2, err := s.Watch(context.Background(), gvkConfigMap)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	w2.Stop()
	for _, w := range []cluster.Watcher{w1, w2} {
		select {
		case _, ok := <-w.ResultChan():
			if ok {
				t.Errorf("event after stop")
			}
		case <-time.After(5 * time.Second):
			t.Errorf("channel not closed")
		}
	}
	// Writes after the stop do not block.
	mustCreate(t, s, `{apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: default}}`)
}

func TestWatchBatchAfterCommit(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	w, err := s.Watch(ctx, gvkConfigMap)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	failed := fmt.Errorf("give up")
	err = s.Batch(ctx, func(c cluster.Interface) error {
		mustCreate(t, c, `{apiVersion: v1, kind: ConfigMap, metadata: {name: rolled-back, namespace: default}}`)
		return failed
	})
	if err != failed {
		t.Fatalf("batch: %v", err)
	}
	err = s.Batch(ctx, func(c cluster.Interface) error {
		mustCreate(t, c, `{apiVersion: v1, kind: ConfigMap, metadata: {name: one, namespace: default}}`)
		select {
		case ev := <-w.ResultChan():
			t.Errorf("event before the commit: %s", describe(ev))
		case <-time.After(50 * time.Millisecond):
		}
		mustCreate(t, c, `{apiVersion: v1, kind: ConfigMap, metadata: {name: two, namespace: default}}`)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if ev := next(t, w); metaString(ev.Object, "name") != "one" {
		t.Errorf("first event %s", describe(ev))
	}
	if ev := next(t, w); metaString(ev.Object, "name") != "two" {
		t.Errorf("second event %s", describe(ev))
	}
}

// TestWatchProgress: every committed change counts as pending until the
// watch hands it out (or drops it, out of its selection); then it counts
// as delivered.
func TestWatchProgress(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	mustCreate(t, s, `{apiVersion: v1, kind: ConfigMap, metadata: {name: before, namespace: default}}`)
	w, err := s.Watch(ctx, gvkConfigMap, cluster.FromResourceVersion("0"), cluster.MatchingLabels("app=web"))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	p := w.(interface{ Progress() (int64, int64) })
	mustCreate(t, s, `{apiVersion: v1, kind: ConfigMap, metadata: {name: web, namespace: default, labels: {app: web}}}`)
	mustCreate(t, s, `{apiVersion: v1, kind: ConfigMap, metadata: {name: db, namespace: default, labels: {app: db}}}`)
	if _, pending := p.Progress(); pending == 0 {
		t.Fatal("pending 0 before anything was received")
	}
	if ev := next(t, w); metaString(ev.Object, "name") != "web" {
		t.Fatalf("got %s, want web", describe(ev))
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		delivered, pending := p.Progress()
		if pending == 0 {
			if delivered != 1 {
				t.Fatalf("delivered %d, want 1", delivered)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pending %d after 5s", pending)
		}
		time.Sleep(time.Millisecond)
	}
}
