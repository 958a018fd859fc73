package local

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/konverge/konverge/cluster"
)

// cycle creates n ConfigMaps, each owned by the next and the last by the
// first (blocking when block), and returns their names.
func cycle(t *testing.T, s *Store, n int, block bool) []string {
	t.Helper()
	ctx := context.Background()
	var objs []map[string]any
	var names []string
	for i := range n {
		name := fmt.Sprintf("c%d", i)
		names = append(names, name)
		objs = append(objs, mustCreate(t, s, fmt.Sprintf(`{apiVersion: v1, kind: ConfigMap, metadata: {name: %s, namespace: default}}`, name)))
	}
	for i, o := range objs {
		owner := objs[(i+1)%n]
		cur := mustGet(t, s, gvkConfigMap, "default", metaString(o, "name"))
		metadata(cur)["ownerReferences"] = []any{map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": metaString(owner, "name"),
			"uid": metaString(owner, "uid"), "blockOwnerDeletion": block}}
		if _, err := s.Update(ctx, cur); err != nil {
			t.Fatal(err)
		}
	}
	return names
}

// Deletion terminates for every propagation policy on ownerReference
// cycles, as the real garbage collector resolves them: the members go
// (orphan: only the one deleted), none stays stuck — but for an object
// that owns itself with blockOwnerDeletion, deleted in the foreground,
// which kube-controller-manager v1.37.1 leaves with its
// foregroundDeletion finalizer for ever (recorded).
func TestDeleteCycles(t *testing.T) {
	for _, policy := range []cluster.Propagation{"", cluster.Background, cluster.Foreground, cluster.Orphan} {
		for _, n := range []int{1, 2, 3, 5} {
			for _, block := range []bool{true, false} {
				t.Run(fmt.Sprintf("%s/%d/block=%v", policy, n, block), func(t *testing.T) {
					s, _ := openStore(t)
					ctx := context.Background()
					names := cycle(t, s, n, block)
					var opts []cluster.DeleteOption
					if policy != "" {
						opts = append(opts, policy)
					}
					if err := s.Delete(ctx, gvkConfigMap, "default", names[0], opts...); err != nil {
						t.Fatal(err)
					}
					for i, name := range names {
						gone := isGone(t, s, gvkConfigMap, "default", name)
						want := i == 0 || policy != cluster.Orphan
						if n == 1 && block && policy == cluster.Foreground {
							want = false
							o := mustGet(t, s, gvkConfigMap, "default", name)
							if !hasFinalizer(o, finalizerForeground) || !isDeleting(o) {
								t.Errorf("self-owned: %v", o["metadata"])
							}
						}
						if gone != want {
							o, _ := s.Get(ctx, gvkConfigMap, "default", name)
							t.Errorf("%s: gone %v, want %v: %v", name, gone, want, o["metadata"])
						}
					}
				})
			}
		}
	}
}

// Random ownerReference graphs (cycles, self-references, several owners,
// blocking or not), one object deleted with a random policy: the deletion
// returns, and what remains is consistent — an object left deleting in
// the foreground waits for a blocking dependent that remains, and no
// remaining object has only owners that are gone.
func TestDeleteRandomGraphs(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	policies := []cluster.Propagation{"", cluster.Background, cluster.Foreground, cluster.Orphan}
	for trial := range 60 {
		s, _ := openStore(t)
		ctx := context.Background()
		n := 2 + rng.IntN(6)
		var objs []map[string]any
		for i := range n {
			objs = append(objs, mustCreate(t, s, fmt.Sprintf(`{apiVersion: v1, kind: ConfigMap, metadata: {name: g%d, namespace: default}}`, i)))
		}
		for i := range n {
			cur := mustGet(t, s, gvkConfigMap, "default", fmt.Sprintf("g%d", i))
			var refs []any
			for j := range n {
				if rng.IntN(3) == 0 {
					refs = append(refs, map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": metaString(objs[j], "name"),
						"uid": metaString(objs[j], "uid"), "blockOwnerDeletion": rng.IntN(2) == 0})
				}
			}
			if len(refs) > 0 {
				metadata(cur)["ownerReferences"] = refs
				if _, err := s.Update(ctx, cur); err != nil {
					t.Fatal(err)
				}
			}
		}
		policy := policies[rng.IntN(len(policies))]
		var opts []cluster.DeleteOption
		if policy != "" {
			opts = append(opts, policy)
		}
		victim := fmt.Sprintf("g%d", rng.IntN(n))
		if err := s.Delete(ctx, gvkConfigMap, "default", victim, opts...); err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		l, err := s.List(ctx, gvkConfigMap, cluster.InNamespace("default"))
		if err != nil {
			t.Fatal(err)
		}
		live := map[string]map[string]any{}
		for _, o := range l.Items {
			live[metaString(o, "uid")] = o
		}
		for _, o := range l.Items {
			refs := ownerRefs(o)
			if len(refs) > 0 {
				alive := false
				for _, r := range refs {
					if live[r.UID] != nil {
						alive = true
					}
				}
				if !alive && !isDeleting(o) {
					t.Errorf("trial %d (%s %s): %s remains with only gone owners", trial, policy, victim, metaString(o, "name"))
				}
			}
			if isDeleting(o) && hasFinalizer(o, finalizerForeground) {
				waits := false
				for _, d := range l.Items {
					for _, r := range ownerRefs(d) {
						if r.UID == metaString(o, "uid") && r.BlockOwnerDeletion {
							waits = true
						}
					}
				}
				if !waits {
					t.Errorf("trial %d (%s %s): %s deleting in the foreground with no blocking dependent", trial, policy, victim, metaString(o, "name"))
				}
			}
		}
	}
}
