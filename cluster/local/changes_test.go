package local

import (
	"context"
	"fmt"
	"testing"

	"github.com/konverge/konverge/schema"
)

// BatchChanges names every object the writes of a transaction changed
// after a revision, a cascading deletion's dependents included, and
// refuses a revision from before the transaction.
func TestBatchChanges(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	owner := mustCreate(t, s, `{apiVersion: v1, kind: ConfigMap, metadata: {name: owner, namespace: default}}`)
	before, err := s.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	start, _ := BatchRevision(before.Cluster())
	before.Rollback()

	tx, err := s.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	c := tx.Cluster()
	mustCreate(t, c, pod("p1", owner, false, ""))
	mustCreate(t, c, pod("p2", owner, false, ""))
	mid, _ := BatchRevision(c)
	if err := c.Delete(ctx, schema.GVK{Version: "v1", Kind: "ConfigMap"}, "default", "owner"); err != nil {
		t.Fatal(err)
	}
	changes, ok := BatchChanges(c, mid)
	if !ok {
		t.Fatal("BatchChanges after the creates: not ok")
	}
	got := map[string]bool{}
	for _, ch := range changes {
		got[fmt.Sprintf("%s/%s %s/%s", ch.Group, ch.Kind, ch.Namespace, ch.Name)] = true
		if ch.Revision <= mid {
			t.Errorf("change %v at or before %d", ch, mid)
		}
	}
	for _, want := range []string{"/ConfigMap default/owner", "/Pod default/p1", "/Pod default/p2"} {
		if !got[want] {
			t.Errorf("changes %v: %s missing", changes, want)
		}
	}
	all, ok := BatchChanges(c, start)
	if !ok || len(all) != len(changes)+2 || all[0].Name != "p1" || all[0].Revision != start+1 {
		t.Errorf("BatchChanges from the start of the transaction = %v, %v", all, ok)
	}
	end, _ := BatchRevision(c)
	if none, ok := BatchChanges(c, end); !ok || len(none) != 0 {
		t.Errorf("BatchChanges at the current revision = %v, %v", none, ok)
	}
	if _, ok := BatchChanges(c, start-1); ok {
		t.Error("BatchChanges from before the transaction: ok")
	}
	if _, ok := BatchChanges(s, start); ok {
		t.Error("BatchChanges of the store itself: ok")
	}
}
