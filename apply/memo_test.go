package apply_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/konverge/konverge/apply"
	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/kinds"
	"github.com/konverge/konverge/lastapplied"
	"github.com/konverge/konverge/manifest"
	"github.com/konverge/konverge/objref"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

// TestPlannerMemoryMatchesFresh plans, round after round of random edits
// (manifests edited, added, dropped and given twice; live objects scaled,
// relabelled, deleted; some rounds applied), with one Planner that
// remembers and with a fresh Planner each round, and requires the same
// plans (or the same errors). It plans against the embedded cluster and
// against a Snapshot that follows it, objects built in code (digests of
// their content) and read from manifests (digests of their bytes). It
// also checks that the memory is used: unchanged objects get the
// remembered change.
func TestPlannerMemoryMatchesFresh(t *testing.T) {
	for _, c := range []struct {
		name       string
		snapshot   bool
		manifested bool
	}{{"store/built", false, false}, {"store/read", false, true}, {"snapshot/built", true, false}, {"snapshot/read", true, true}} {
		t.Run(c.name, func(t *testing.T) { testMemoryMatchesFresh(t, c.snapshot, c.manifested) })
	}
}

func testMemoryMatchesFresh(t *testing.T, useSnapshot, manifested bool) {
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
		if manifested {
			variants[v] = readBack(t, variants[v])
		}
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
	// The Snapshot follows the store: objects Set again when their
	// resourceVersion moved, deleted when they are gone.
	snap := apply.NewSnapshot()
	held := map[string]string{}
	follow := func() {
		seen := map[string]bool{}
		for _, gvk := range []schema.GVK{gvkConfigMap, gvkDeployment} {
			l, err := s.List(ctx, gvk)
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range l.Items {
				k := gvk.Kind + "/" + objref.Name(o)
				seen[k] = true
				if rv := objref.ResourceVersion(o); held[k] != rv {
					snap.Set(o)
					held[k] = rv
				}
			}
		}
		for k := range held {
			if !seen[k] {
				gvk := gvkConfigMap
				if strings.HasPrefix(k, "Deployment/") {
					gvk = gvkDeployment
				}
				snap.Delete(gvk, "default", strings.TrimPrefix(k, gvk.Kind+"/"))
				delete(held, k)
			}
		}
	}
	var src apply.LiveSource = s
	if useSnapshot {
		src = snap
	}
	for _, ignore := range [][]apply.IgnoreRule{nil, {{Group: "apps", Kind: "Deployment", Paths: []string{"spec.replicas"}}}} {
		opts := apply.Options{Ignore: ignore}
		remembering := apply.NewPlanner(src, s.Mapper(), opts).WithMemory()
		prev := map[string]apply.Change{}
		reusedTotal, failed := 0, 0
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
			follow()
			objs := input()
			if rng.IntN(8) == 0 {
				// An object given twice: the same text, or another
				// version of it.
				i := rng.IntN(len(objs))
				dup := objs[i]
				if rng.IntN(2) == 0 {
					var idx int
					fmt.Sscanf(objref.Name(dup.Obj), "obj-%d", &idx)
					dup = variants[rng.IntN(len(variants))][idx]
				}
				dup.Source.Doc += 1000
				at := rng.IntN(len(objs) + 1)
				objs = append(objs[:at], append([]manifest.Object{dup}, objs[at:]...)...)
			}
			got, gerr := remembering.Plan(ctx, objs)
			want, werr := apply.NewPlanner(src, s.Mapper(), opts).Plan(ctx, objs)
			if gerr != nil || werr != nil {
				if fmt.Sprint(gerr) != fmt.Sprint(werr) {
					t.Fatalf("round %d: errors differ:\n got %v\nwant %v", round, gerr, werr)
				}
				failed++
				continue
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
		if failed == 0 {
			t.Errorf("no round gave an object twice")
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
// The objects are read from a JSON stream, as manifest.Read gives them
// (with their digests); "remembered-built" plans the same objects built
// in code (digests of their content).
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
	built := func(k int) []manifest.Object {
		objs := append([]manifest.Object(nil), base...)
		copy(objs, edits[k%2])
		return objs
	}
	round := func(k int) []manifest.Object { return readBack(b, built(k)) }
	b.Run("cold", func(b *testing.B) {
		objs := round(0)
		b.ReportAllocs()
		runtime.GC() // the garbage of the setup is not the loop's
		defer reportCPU(b)()
		for b.Loop() {
			if _, err := apply.NewPlanner(snap, mapper, apply.Options{}).Plan(ctx, objs); err != nil {
				b.Fatal(err)
			}
		}
	})
	remembered := func(b *testing.B, inputs [2][]manifest.Object) {
		p := apply.NewPlanner(snap, mapper, apply.Options{}).WithMemory()
		if _, err := p.Plan(ctx, inputs[1]); err != nil {
			b.Fatal(err)
		}
		k := 0
		b.ReportAllocs()
		runtime.GC() // the garbage of the setup is not the loop's
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
	}
	b.Run("remembered", func(b *testing.B) { remembered(b, [2][]manifest.Object{round(0), round(1)}) })
	b.Run("remembered-built", func(b *testing.B) { remembered(b, [2][]manifest.Object{built(0), built(1)}) })
}

// readBack returns objs as manifest.Parse reads them from a JSON stream:
// with their digests.
func readBack(tb testing.TB, objs []manifest.Object) []manifest.Object {
	tb.Helper()
	var stream []byte
	for _, o := range objs {
		var err error
		if stream, err = value.AppendEncode(stream, o.Obj); err != nil {
			tb.Fatal(err)
		}
		stream = append(stream, '\n')
	}
	out, err := manifest.Parse(context.Background(), "objects.json", stream)
	if err != nil {
		tb.Fatal(err)
	}
	if len(out) != len(objs) {
		tb.Fatalf("read %d objects back, want %d", len(out), len(objs))
	}
	return out
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

// TestPlannerMemoryOtherVersion plans an object of one version of its
// kind against a Snapshot that holds it in another (an
// autoscaling/v1 HorizontalPodAutoscaler held as autoscaling/v2), with
// and without the memory: the memory takes the identity of the object
// found in the other version, and plans again when it moves.
func TestPlannerMemoryOtherVersion(t *testing.T) {
	ctx := context.Background()
	mapper := kinds.NewMapper(kinds.Builtin(), schema.Builtin())
	live := func(rv string, max int64) map[string]any {
		return map[string]any{
			"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
			"metadata": map[string]any{
				"name": "web", "namespace": "default",
				"uid": "00000000-0000-0000-0000-000000000001", "resourceVersion": rv,
			},
			"spec": map[string]any{
				"scaleTargetRef": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
				"minReplicas":    int64(1), "maxReplicas": max,
			},
		}
	}
	config := apply.Objects(map[string]any{
		"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
		"metadata": map[string]any{"name": "web", "namespace": "default"},
		"spec": map[string]any{
			"scaleTargetRef": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
			"minReplicas":    int64(1), "maxReplicas": int64(5),
		},
	})
	snap := apply.NewSnapshot(live("10", 3))
	remembering := apply.NewPlanner(snap, mapper, apply.Options{}).WithMemory()
	var prev apply.Change
	for round := range 4 {
		if round == 2 {
			snap.Set(live("11", 5))
		}
		got, err := remembering.Plan(ctx, config)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		want, err := apply.NewPlanner(snap, mapper, apply.Options{}).Plan(ctx, config)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if !reflect.DeepEqual(got.Changes, want.Changes) {
			t.Fatalf("round %d: the remembered plan differs:\n got %+v\nwant %+v", round, got.Changes, want.Changes)
		}
		c := got.Changes[0]
		if rv, want := objref.ResourceVersion(c.Live), map[bool]string{true: "10", false: "11"}[round < 2]; rv != want {
			t.Errorf("round %d: planned against resourceVersion %q, want %q", round, rv, want)
		}
		// Rounds 1 and 3 find the object and its live object as they
		// were: the memory's change (the same Merged map).
		reused := round > 0 && reflect.ValueOf(c.Merged).UnsafePointer() == reflect.ValueOf(prev.Merged).UnsafePointer()
		if reused != (round%2 == 1) {
			t.Errorf("round %d: remembered change taken = %v", round, reused)
		}
		prev = c
	}
}
