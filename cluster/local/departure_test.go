package local

import (
	"context"
	"fmt"
	"testing"

	"github.com/konverge/konverge/cluster"
)

// TestDeparturesCostLinear deletes an owner in the foreground, and a
// namespace, each waiting for many objects that a finalizer holds, then
// releases those objects one by one: the work (objects decoded) must grow
// with their number, not with its square, as it did when every departure
// reconciled the owner or namespace in full (a Deployment of 2,000
// replicas deleted in the foreground took 90 s of CPU). Both must still
// go once the last object went.
func TestDeparturesCostLinear(t *testing.T) {
	ctx := context.Background()
	const n = 250
	hold := func(s *Store, ns, name string) {
		t.Helper()
		cur := mustGet(t, s, gvkConfigMap, ns, name)
		setFinalizers(cur, nil)
		if _, err := s.Update(ctx, cur); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("foreground-owner", func(t *testing.T) {
		s, _ := openStore(t)
		owner := mustCreate(t, s, `{apiVersion: v1, kind: ConfigMap, metadata: {name: owner, namespace: default}}`)
		for i := range n {
			mustCreate(t, s, fmt.Sprintf(`{apiVersion: v1, kind: ConfigMap, metadata: {name: d%d, namespace: default, finalizers: [example.com/hold],
				ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: owner, uid: %q, blockOwnerDeletion: true}]}}`, i, metaString(owner, "uid")))
		}
		if err := s.Delete(ctx, gvkConfigMap, "default", "owner", cluster.Foreground); err != nil {
			t.Fatal(err)
		}
		before := s.decoded.Load()
		for i := range n {
			if _, err := s.Get(ctx, gvkConfigMap, "default", "owner"); err != nil {
				t.Fatalf("owner gone with %d dependents left: %v", n-i, err)
			}
			hold(s, "default", fmt.Sprintf("d%d", i))
		}
		if _, err := s.Get(ctx, gvkConfigMap, "default", "owner"); !cluster.IsNotFound(err) {
			t.Fatalf("owner still there after its last dependent went: %v", err)
		}
		if work := s.decoded.Load() - before; work > 20*n {
			t.Errorf("releasing %d dependents decoded %d objects, want at most %d", n, work, 20*n)
		}
	})
	t.Run("namespace", func(t *testing.T) {
		s, _ := openStore(t)
		mustCreate(t, s, `{apiVersion: v1, kind: Namespace, metadata: {name: full}}`)
		for i := range n {
			mustCreate(t, s, fmt.Sprintf(`{apiVersion: v1, kind: ConfigMap, metadata: {name: d%d, namespace: full, finalizers: [example.com/hold]}}`, i))
		}
		if err := s.Delete(ctx, gvkNamespace, "", "full"); err != nil {
			t.Fatal(err)
		}
		before := s.decoded.Load()
		for i := range n {
			hold(s, "full", fmt.Sprintf("d%d", i))
		}
		if _, err := s.Get(ctx, gvkNamespace, "", "full"); !cluster.IsNotFound(err) {
			t.Fatalf("namespace still there after its last object went: %v", err)
		}
		if work := s.decoded.Load() - before; work > 20*n {
			t.Errorf("releasing %d objects decoded %d objects, want at most %d", n, work, 20*n)
		}
	})
}
