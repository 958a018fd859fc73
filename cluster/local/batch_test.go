package local

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/konverge/konverge/cluster"
)

func TestBatch(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	var inside cluster.Interface
	err := s.Batch(ctx, func(c cluster.Interface) error {
		inside = c
		mustCreate(t, c, `{apiVersion: v1, kind: Namespace, metadata: {name: team}}`)
		mustCreate(t, c, `{apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: team}}`)
		// A call that fails with an API error leaves the batch usable.
		if _, err := c.Create(ctx, obj(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: team}}`)); !cluster.IsAlreadyExists(err) {
			t.Errorf("duplicate create in batch: %v", err)
		}
		if _, err := c.Patch(ctx, gvkConfigMap, "team", "a", cluster.MergePatchType, []byte(`{"data":{"k":"v"}}`)); err != nil {
			t.Errorf("patch in batch: %v", err)
		}
		// Reads see the batch's own writes.
		if got := mustGet(t, c, gvkConfigMap, "team", "a"); path(got, "data.k") != "v" {
			t.Errorf("read in batch: %v", got)
		}
		list, err := c.List(ctx, gvkConfigMap, cluster.InNamespace("team"), cluster.MatchingFields("metadata.name=a"))
		if err != nil || len(list.Items) != 1 {
			t.Errorf("list in batch: %v %v", err, list)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, s, gvkConfigMap, "team", "a"); path(got, "data.k") != "v" {
		t.Errorf("after commit: %v", got)
	}
	if _, err := inside.Get(ctx, gvkConfigMap, "team", "a"); err == nil {
		t.Errorf("call after the batch ended succeeded")
	}

	boom := errors.New("boom")
	err = s.Batch(ctx, func(c cluster.Interface) error {
		mustCreate(t, c, `{apiVersion: v1, kind: ConfigMap, metadata: {name: b, namespace: team}}`)
		if err := c.Delete(ctx, gvkNamespace, "", "team"); err != nil {
			t.Errorf("delete in batch: %v", err)
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("batch error %v", err)
	}
	if !isGone(t, s, gvkConfigMap, "team", "b") {
		t.Errorf("rolled-back create is visible")
	}
	if ns := mustGet(t, s, gvkNamespace, "", "team"); path(ns, "status.phase") != "Active" {
		t.Errorf("rolled-back delete is visible: %v", ns["status"])
	}
}

func TestMeta(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if v, err := s.GetMeta(ctx, "clock"); err != nil || v != nil {
		t.Errorf("unset key: %q %v", v, err)
	}
	if err := s.PutMeta(ctx, "clock", []byte("2026-01-01T00:00:00Z")); err != nil {
		t.Fatal(err)
	}
	if err := s.PutMeta(ctx, "revision", []byte("x")); err == nil {
		t.Errorf("the revision key is writable")
	}
	s.Close()
	s, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v, err := s.GetMeta(ctx, "clock"); err != nil || string(v) != "2026-01-01T00:00:00Z" {
		t.Errorf("after reopen: %q %v", v, err)
	}
}

// TestCorruptObject plants bytes that are not an object in the database:
// reads fail naming the object, and a batch that meets such an error rolls
// back even if its function carries on.
func TestCorruptObject(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	mustCreate(t, s, `{apiVersion: v1, kind: ConfigMap, metadata: {name: bad, namespace: default}}`)
	err := s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketObjects).Bucket(groupKind{"", "ConfigMap"}.bucket()).Put(nameKey("default", "bad"), []byte("{"))
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Get(ctx, gvkConfigMap, "default", "bad")
	if err == nil || !strings.HasPrefix(err.Error(), "local: decode configmaps default/bad: ") || cluster.ReasonOf(err) != "" {
		t.Errorf("Get: %v", err)
	}
	err = s.Batch(ctx, func(c cluster.Interface) error {
		mustCreate(t, c, `{apiVersion: v1, kind: ConfigMap, metadata: {name: good, namespace: default}}`)
		if _, err := c.Patch(ctx, gvkConfigMap, "default", "bad", cluster.MergePatchType, []byte(`{}`)); err == nil {
			t.Errorf("patch of a corrupt object succeeded")
		}
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "local: decode configmaps default/bad") {
		t.Errorf("batch: %v", err)
	}
	if !isGone(t, s, gvkConfigMap, "default", "good") {
		t.Errorf("a batch that failed half-way committed")
	}
}

// TestConcurrentCalls runs writers, readers and a watcher at once (for the
// race detector), and checks that no update is lost.
func TestConcurrentCalls(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	mustCreate(t, s, `{apiVersion: v1, kind: ConfigMap, metadata: {name: counter, namespace: default}, data: {count: "0"}}`)
	w, err := s.Watch(ctx, gvkConfigMap)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	const workers, rounds = 4, 25
	errs := make(chan error, workers*2)
	for i := range workers {
		go func() {
			for range rounds {
				// Read-modify-write with a retry on Conflict, as controllers do.
				for {
					cm, err := s.Get(ctx, gvkConfigMap, "default", "counter")
					if err != nil {
						errs <- err
						return
					}
					data := cm["data"].(map[string]any)
					n, _ := strconv.Atoi(data["count"].(string))
					data["count"] = strconv.Itoa(n + 1)
					if _, err := s.Update(ctx, cm); err == nil {
						break
					} else if !cluster.IsConflict(err) {
						errs <- err
						return
					}
				}
			}
			errs <- nil
		}()
		go func() {
			for j := range rounds {
				name := fmt.Sprintf("w%d-%d", i, j)
				if _, err := s.Create(ctx, obj(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: `+name+`, namespace: default}}`)); err != nil {
					errs <- err
					return
				}
				if _, err := s.List(ctx, gvkConfigMap, cluster.MatchingFields("metadata.name="+name)); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range workers * 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n := path(mustGet(t, s, gvkConfigMap, "default", "counter"), "data.count"); n != strconv.Itoa(workers*rounds) {
		t.Errorf("counter %v, want %d", n, workers*rounds)
	}
	// The watcher saw every write, in resourceVersion order.
	last := 0
	for range workers * rounds * 2 {
		ev := next(t, w)
		rv, _ := strconv.Atoi(metaString(ev.Object, "resourceVersion"))
		if rv <= last {
			t.Fatalf("event at %d after %d", rv, last)
		}
		last = rv
	}
}
