package apply_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/konverge/konverge/apply"
	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/kinds"
	"github.com/konverge/konverge/lastapplied"
	"github.com/konverge/konverge/manifest"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

// TestPlannerMemoryMatchesFresh plans, round after round of random edits
// (manifests edited, added and dropped; live objects scaled, relabelled,
// deleted; some rounds applied), with one Planner that remembers and with
// a fresh Planner each round, and requires the same plans. It also checks
// that the memory is used: unchanged objects get the remembered change.
func TestPlannerMemoryMatchesFresh(t *testing.T) {
	ctx := context.Background()
	s, err := local.Open(t.TempDir(), local.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const n = 40
	variants := make([][]manifest.Object, 4)
	for v := range variants {
		variants[v] = benchObjects(n, v)
	}
	rng := rand.New(rand.NewPCG(23, 1))
	cur := make([]int, n) // the variant of each object, -1: not in the input
	input := func() []manifest.Object {
		var objs []manifest.Object
		for i, v := range cur {
			if v >= 0 {
				objs = append(objs, variants[v][i])
			}
		}
		return objs
	}
	if _, err := apply.New(s, apply.Options{}).Apply(ctx, input()); err != nil {
		t.Fatal(err)
	}
	for _, ignore := range [][]apply.IgnoreRule{nil, {{Group: "apps", Kind: "Deployment", Paths: []string{"spec.replicas"}}}} {
		opts := apply.Options{Ignore: ignore}
		remembering := apply.NewPlanner(s, s.Mapper(), opts).WithMemory()
		prev := map[string]apply.Change{}
		reusedTotal := 0
		for round := range 30 {
			for range rng.IntN(4) {
				i := rng.IntN(n)
				if rng.IntN(5) == 0 && cur[i] >= 0 {
					cur[i] = -1
				} else {
					cur[i] = rng.IntN(len(variants))
				}
			}
			for range rng.IntN(4) {
				editLive(t, s, rng, fmt.Sprintf("obj-%05d", rng.IntN(n)))
			}
			objs := input()
			got, err := remembering.Plan(ctx, objs)
			if err != nil {
				t.Fatal(err)
			}
			want, err := apply.NewPlanner(s, s.Mapper(), opts).Plan(ctx, objs)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Changes) != len(want.Changes) {
				t.Fatalf("round %d: %d changes, want %d", round, len(got.Changes), len(want.Changes))
			}
			for i := range got.Changes {
				g, w := got.Changes[i], want.Changes[i]
				if !reflect.DeepEqual(g, w) {
					t.Fatalf("round %d: the remembered plan differs for %s:\n got %+v\nwant %+v", round, w.Ref, g, w)
				}
				if p, ok := prev[g.Ref.String()]; ok && g.Merged != nil && reflect.ValueOf(p.Merged).UnsafePointer() == reflect.ValueOf(g.Merged).UnsafePointer() {
					reusedTotal++
				}
				prev[g.Ref.String()] = g
			}
			if rng.IntN(3) == 0 {
				if _, err := apply.New(s, apply.Options{}).ApplyPlan(ctx, got); err != nil {
					t.Fatal(err)
				}
			}
		}
		if reusedTotal < 30*n/4 {
			t.Errorf("the memory gave %d changes in 30 rounds of %d objects: barely used", reusedTotal, n)
		}
	}
}

// editLive changes the live object name as other writers do: a scale, a
// label, or a delete.
func editLive(t *testing.T, s *local.Store, rng *rand.Rand, name string) {
	t.Helper()
	ctx := context.Background()
	gvk := gvkConfigMap
	var i int
	fmt.Sscanf(name, "obj-%d", &i)
	if i%2 == 1 {
		gvk = gvkDeployment
	}
	var err error
	switch rng.IntN(3) {
	case 0:
		_, err = s.Patch(ctx, gvk, "default", name, cluster.MergePatchType, []byte(`{"metadata":{"labels":{"edited":"yes"}}}`))
	case 1:
		if gvk == gvkDeployment {
			_, err = s.Patch(ctx, gvk, "default", name, cluster.MergePatchType, []byte(fmt.Sprintf(`{"spec":{"replicas":%d}}`, 1+rng.IntN(5))))
		}
	case 2:
		err = s.Delete(ctx, gvk, "default", name)
	}
	if err != nil && !cluster.IsNotFound(err) {
		t.Fatal(err)
	}
}

// BenchmarkReplan10k plans 10,000 objects (half ConfigMaps, half
// Deployments) against a snapshot: cold (a fresh Planner), and again with
// a Planner that remembers its last plan while 10 objects changed since.
func BenchmarkReplan10k(b *testing.B) {
	const n = 10000
	ctx := context.Background()
	mapper := kinds.NewMapper(kinds.Builtin(), schema.Builtin())
	base := benchObjects(n, 0)
	live := make([]map[string]any, n)
	for i, o := range base {
		l, err := liveFor(o.Obj, i)
		if err != nil {
			b.Fatal(err)
		}
		live[i] = l
	}
	snap := apply.NewSnapshot(live...)
	edits := [2][]manifest.Object{benchObjects(10, 1), benchObjects(10, 2)}
	round := func(k int) []manifest.Object {
		objs := append([]manifest.Object(nil), base...)
		copy(objs, edits[k%2])
		return objs
	}
	b.Run("cold", func(b *testing.B) {
		objs := round(0)
		b.ReportAllocs()
		defer reportCPU(b)()
		for b.Loop() {
			if _, err := apply.NewPlanner(snap, mapper, apply.Options{}).Plan(ctx, objs); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("remembered", func(b *testing.B) {
		p := apply.NewPlanner(snap, mapper, apply.Options{}).WithMemory()
		if _, err := p.Plan(ctx, round(1)); err != nil {
			b.Fatal(err)
		}
		inputs := [2][]manifest.Object{round(0), round(1)}
		k := 0
		b.ReportAllocs()
		defer reportCPU(b)()
		for b.Loop() {
			pl, err := p.Plan(ctx, inputs[k%2])
			if err != nil {
				b.Fatal(err)
			}
			if d := len(pl.Drifted()); d != 10 && d != 0 {
				b.Fatalf("%d drifted", d)
			}
			k++
		}
	})
}

// liveFor is the object the API server would hold after a first apply of
// config: the namespace, the annotation, a uid and a resourceVersion (no
// defaults: the plan compares objects with them normalized away).
func liveFor(config map[string]any, i int) (map[string]any, error) {
	c := value.DeepCopyObject(config)
	c["metadata"].(map[string]any)["namespace"] = "default"
	l, err := lastapplied.Set(c)
	if err != nil {
		return nil, err
	}
	md := l["metadata"].(map[string]any)
	md["uid"] = fmt.Sprintf("00000000-0000-0000-0000-%012d", i)
	md["resourceVersion"] = fmt.Sprint(1000 + i)
	md["creationTimestamp"] = "2026-12-01T00:00:00Z"
	return l, nil
}
