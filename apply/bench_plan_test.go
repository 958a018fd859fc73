package apply_test

import (
	"context"
	"encoding/json"
	"reflect"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	kubectlutil "k8s.io/kubectl/pkg/util"

	"github.com/konverge/konverge/apply"
	"github.com/konverge/konverge/kinds"
	"github.com/konverge/konverge/manifest"
	"github.com/konverge/konverge/schema"
)

const planBenchN = 1000

// planBench is the input of the planning benchmarks: 1,000 objects (half
// ConfigMaps, half Deployments) applied to the embedded cluster, the live
// objects read back as a tool's cache holds them, and the next input, in
// which every tenth object changed.
type planBench struct {
	live    []map[string]any
	configs []manifest.Object
}

func newPlanBench(b *testing.B) planBench {
	b.Helper()
	s := openBenchStore(b)
	defer s.Close()
	ctx := context.Background()
	if _, err := apply.New(s, apply.Options{}).Apply(ctx, benchObjects(planBenchN, 0)); err != nil {
		b.Fatal(err)
	}
	var pb planBench
	for _, gvk := range []schema.GVK{gvkConfigMap, gvkDeployment} {
		l, err := s.List(ctx, gvk)
		if err != nil {
			b.Fatal(err)
		}
		pb.live = append(pb.live, l.Items...)
	}
	same, changed := benchObjects(planBenchN, 0), benchObjects(planBenchN, 1)
	for i := range same {
		if i%10 == 0 {
			same[i] = changed[i]
		}
	}
	pb.configs = same
	return pb
}

// BenchmarkPlan1k plans 1,000 objects against a snapshot of the live
// objects, next to what the same takes with kubectl's own code
// (strategicpatch), in one run:
//
//   - konverge: apply.NewPlanner(snapshot, mapper).Plan: every object
//     resolved, validated, merged three-way, the result predicted as the
//     server stores it (defaults, canonical forms) and compared with live,
//     the differing paths named;
//   - strategicpatch: per object, kubectl's GetOriginalConfiguration and
//     GetModifiedConfiguration, CreateThreeWayMergePatch with the patch
//     metadata of the k8s.io/api struct, StrategicMergePatch of live, and
//     live and merged compared (no defaults, so noisier);
//   - strategicpatch-reduced: the same reduced to the merge, everything
//     else prepared once (runReducedReference).
func BenchmarkPlan1k(b *testing.B) {
	pb := newPlanBench(b)
	ctx := context.Background()
	b.Run("konverge", func(b *testing.B) {
		mapper := kinds.NewMapper(kinds.Builtin(), schema.Builtin())
		snap := apply.NewSnapshot(pb.live...)
		planner := apply.NewPlanner(snap, mapper, apply.Options{})
		b.ReportAllocs()
		b.ResetTimer()
		defer reportCPU(b)()
		for range b.N {
			p, err := planner.Plan(ctx, pb.configs)
			if err != nil {
				b.Fatal(err)
			}
			if n := len(p.Drifted()); n != planBenchN/10 {
				b.Fatalf("%d drifted, want %d", n, planBenchN/10)
			}
		}
	})
	b.Run("strategicpatch", func(b *testing.B) {
		byName := make(map[string]map[string]any, len(pb.live))
		for _, o := range pb.live {
			byName[o["kind"].(string)+"/"+o["metadata"].(map[string]any)["name"].(string)] = o
		}
		b.ReportAllocs()
		b.ResetTimer()
		defer reportCPU(b)()
		for range b.N {
			drifted := 0
			for _, o := range pb.configs {
				d, err := referencePlan(o.Obj, byName)
				if err != nil {
					b.Fatal(err)
				}
				if d {
					drifted++
				}
			}
			if drifted < planBenchN/10 {
				b.Fatalf("%d drifted", drifted)
			}
		}
	})
	runReducedReference(b, pb)
}

// runReducedReference is the reference of BenchmarkPlan1k reduced to
// the merge, as a GitOps tool that caches everything else would run it:
// per object, the modified configuration (with its annotation), the
// original configuration, live's JSON and the patch metadata are prepared
// once, outside the loop; each round runs CreateThreeWayMergePatch, and
// for a patch that is not empty StrategicMergePatch and the comparison of
// the result with live.
func runReducedReference(b *testing.B, pb planBench) {
	byName := make(map[string]map[string]any, len(pb.live))
	for _, o := range pb.live {
		byName[o["kind"].(string)+"/"+o["metadata"].(map[string]any)["name"].(string)] = o
	}
	type prepared struct {
		ds                          any
		meta                        strategicpatch.LookupPatchMeta
		original, modified, current []byte
		live                        map[string]any
	}
	var objs []prepared
	for _, o := range pb.configs {
		kind := o.Obj["kind"].(string)
		cur := byName[kind+"/"+o.Obj["metadata"].(map[string]any)["name"].(string)]
		var ds any = &corev1.ConfigMap{}
		if kind == "Deployment" {
			ds = &appsv1.Deployment{}
		}
		meta, err := strategicpatch.NewPatchMetaFromStruct(ds)
		if err != nil {
			b.Fatal(err)
		}
		cfg := &unstructured.Unstructured{Object: o.Obj}
		cfg.SetNamespace("default")
		modified, err := kubectlutil.GetModifiedConfiguration(cfg, true, unstructured.UnstructuredJSONScheme)
		if err != nil {
			b.Fatal(err)
		}
		original, err := kubectlutil.GetOriginalConfiguration(&unstructured.Unstructured{Object: cur})
		if err != nil {
			b.Fatal(err)
		}
		current, err := json.Marshal(cur)
		if err != nil {
			b.Fatal(err)
		}
		var live map[string]any
		if err := json.Unmarshal(current, &live); err != nil {
			b.Fatal(err)
		}
		objs = append(objs, prepared{ds, meta, original, modified, current, live})
	}
	b.Run("strategicpatch-reduced", func(b *testing.B) {
		b.ReportAllocs()
		defer reportCPU(b)()
		for b.Loop() {
			drifted := 0
			for _, o := range objs {
				patch, err := strategicpatch.CreateThreeWayMergePatch(o.original, o.modified, o.current, o.meta, true)
				if err != nil {
					b.Fatal(err)
				}
				if string(patch) == "{}" {
					continue
				}
				merged, err := strategicpatch.StrategicMergePatch(o.current, patch, o.ds)
				if err != nil {
					b.Fatal(err)
				}
				var m map[string]any
				if err := json.Unmarshal(merged, &m); err != nil {
					b.Fatal(err)
				}
				if !reflect.DeepEqual(o.live, m) {
					drifted++
				}
			}
			if drifted < planBenchN/10 {
				b.Fatalf("%d drifted", drifted)
			}
		}
	})
}

// reportCPU reports the CPU time the process spent per operation
// (user and system, all threads): on a machine shared with other work,
// wall time per operation counts the waits for a CPU too.
func reportCPU(b *testing.B) func() {
	start := cpuTime()
	return func() {
		b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// referencePlan plans one object with kubectl's code: it reports whether
// live and the merged object differ.
func referencePlan(config map[string]any, live map[string]map[string]any) (bool, error) {
	kind := config["kind"].(string)
	name := config["metadata"].(map[string]any)["name"].(string)
	cur := live[kind+"/"+name]
	var ds any = &corev1.ConfigMap{}
	if kind == "Deployment" {
		ds = &appsv1.Deployment{}
	}
	cfg := &unstructured.Unstructured{Object: config}
	cfg.SetNamespace("default")
	modified, err := kubectlutil.GetModifiedConfiguration(cfg, true, unstructured.UnstructuredJSONScheme)
	if err != nil {
		return false, err
	}
	liveObj := &unstructured.Unstructured{Object: cur}
	original, err := kubectlutil.GetOriginalConfiguration(liveObj)
	if err != nil {
		return false, err
	}
	current, err := json.Marshal(cur)
	if err != nil {
		return false, err
	}
	meta, err := strategicpatch.NewPatchMetaFromStruct(ds)
	if err != nil {
		return false, err
	}
	patch, err := strategicpatch.CreateThreeWayMergePatch(original, modified, current, meta, true)
	if err != nil {
		return false, err
	}
	if string(patch) == "{}" {
		return false, nil
	}
	merged, err := strategicpatch.StrategicMergePatch(current, patch, ds)
	if err != nil {
		return false, err
	}
	var m map[string]any
	if err := json.Unmarshal(merged, &m); err != nil {
		return false, err
	}
	var l map[string]any
	if err := json.Unmarshal(current, &l); err != nil {
		return false, err
	}
	return !reflect.DeepEqual(l, m), nil
}
