package merge

import (
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"github.com/konverge/konverge/lastapplied"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

// benchCase is one three-way merge as kubectl apply computes it: the
// last-applied configuration, the new config (with its own annotation, as
// kubectl sends it) and the live object, as JSON.
type benchCase struct {
	name               string
	gvk                schema.GVK
	dataStruct         func() any
	last, config, live []byte
}

func mustEncode(tb testing.TB, v any) []byte {
	b, err := value.Encode(v)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func container(name, image string, i int) map[string]any {
	return map[string]any{
		"name":  name,
		"image": image,
		"args":  []any{"--port=" + fmt.Sprint(8080+i), "--verbose"},
		"ports": []any{
			map[string]any{"containerPort": int64(8080 + i), "name": "http"},
			map[string]any{"containerPort": int64(9090 + i), "name": "metrics"},
		},
		"env": []any{
			map[string]any{"name": "MODE", "value": "production"},
			map[string]any{"name": "LOG_LEVEL", "value": "info"},
			map[string]any{"name": "POD_IP", "valueFrom": map[string]any{"fieldRef": map[string]any{"fieldPath": "status.podIP"}}},
		},
		"volumeMounts": []any{
			map[string]any{"name": "config", "mountPath": "/etc/" + name},
			map[string]any{"name": "data", "mountPath": "/var/lib/" + name},
		},
		"resources": map[string]any{
			"requests": map[string]any{"cpu": "100m", "memory": "128Mi"},
			"limits":   map[string]any{"memory": "256Mi"},
		},
	}
}

// withDefaults adds what the API server fills into a container.
func withDefaults(c map[string]any) map[string]any {
	out := value.DeepCopyObject(c)
	out["imagePullPolicy"] = "IfNotPresent"
	out["terminationMessagePath"] = "/dev/termination-log"
	out["terminationMessagePolicy"] = "File"
	for _, p := range out["ports"].([]any) {
		p.(map[string]any)["protocol"] = "TCP"
	}
	return out
}

func podSpec(containers []any) map[string]any {
	return map[string]any{
		"containers": containers,
		"volumes": []any{
			map[string]any{"name": "config", "configMap": map[string]any{"name": "app-config"}},
			map[string]any{"name": "data", "emptyDir": map[string]any{}},
		},
	}
}

func deploymentConfig(images []string, env string) map[string]any {
	var cs []any
	for i, img := range images {
		c := container(fmt.Sprintf("c%d", i), img, i)
		c["env"].([]any)[0].(map[string]any)["value"] = env
		cs = append(cs, c)
	}
	return map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata": map[string]any{
			"name": "web", "namespace": "default",
			"labels": map[string]any{"app": "web", "tier": "frontend"},
		},
		"spec": map[string]any{
			"replicas": int64(3),
			"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": "web", "tier": "frontend"}},
				"spec":     podSpec(cs),
			},
		},
	}
}

// liveOf turns a configuration into the object the API server would hold
// after applying it: annotation, server metadata, defaults and status.
func liveOf(tb testing.TB, config map[string]any) map[string]any {
	live, err := lastapplied.Set(config)
	if err != nil {
		tb.Fatal(err)
	}
	live = value.DeepCopyObject(live)
	md := live["metadata"].(map[string]any)
	md["uid"] = "6f1c2a52-0d3c-4a8e-9b1e-3f1f6b7b2c11"
	md["resourceVersion"] = "123456"
	md["generation"] = int64(4)
	md["creationTimestamp"] = "2026-11-22T10:00:00Z"
	if spec, ok := live["spec"].(map[string]any); ok {
		if tmpl, ok := spec["template"].(map[string]any); ok {
			spec["progressDeadlineSeconds"] = int64(600)
			spec["revisionHistoryLimit"] = int64(10)
			spec["strategy"] = map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"maxSurge": "25%", "maxUnavailable": "25%"}}
			defaultPodSpec(tmpl["spec"].(map[string]any))
		} else if _, ok := spec["containers"]; ok {
			defaultPodSpec(spec)
		}
	}
	return live
}

func defaultPodSpec(ps map[string]any) {
	cs := ps["containers"].([]any)
	for i, c := range cs {
		cs[i] = withDefaults(c.(map[string]any))
	}
	ps["dnsPolicy"] = "ClusterFirst"
	ps["restartPolicy"] = "Always"
	ps["schedulerName"] = "default-scheduler"
	ps["securityContext"] = map[string]any{}
	ps["terminationGracePeriodSeconds"] = int64(30)
}

func newBenchCases(tb testing.TB) []benchCase {
	var cases []benchCase
	add := func(name string, gvk schema.GVK, ds func() any, last, config, live map[string]any) {
		modified, err := lastapplied.Set(config)
		if err != nil {
			tb.Fatal(err)
		}
		cases = append(cases, benchCase{name: name, gvk: gvk, dataStruct: ds,
			last: mustEncode(tb, last), config: mustEncode(tb, modified), live: mustEncode(tb, live)})
	}

	// Deployment: three containers with ports, env and volume mounts; live
	// carries server defaults, status and replicas changed by kubectl scale;
	// the config changes an image and an env value.
	{
		last := deploymentConfig([]string{"web:1.0", "sidecar:2.1", "proxy:3.4"}, "production")
		live := liveOf(tb, last)
		live["spec"].(map[string]any)["replicas"] = int64(5)
		live["status"] = map[string]any{"replicas": int64(5), "readyReplicas": int64(5), "availableReplicas": int64(5), "observedGeneration": int64(4)}
		config := deploymentConfig([]string{"web:1.1", "sidecar:2.1", "proxy:3.4"}, "staging")
		delete(config["spec"].(map[string]any), "replicas")
		add("Deployment", schema.GVK{Group: "apps", Version: "v1", Kind: "Deployment"}, func() any { return &appsv1.Deployment{} }, last, config, live)
	}
	// Pod: one container, config adds a label and changes the image.
	{
		last := map[string]any{
			"apiVersion": "v1", "kind": "Pod",
			"metadata": map[string]any{"name": "p", "namespace": "default", "labels": map[string]any{"app": "p"}},
			"spec":     podSpec([]any{container("main", "app:1", 0)}),
		}
		live := liveOf(tb, last)
		config := value.DeepCopyObject(last)
		config["metadata"].(map[string]any)["labels"].(map[string]any)["version"] = "2"
		config["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["image"] = "app:2"
		add("Pod", schema.GVK{Version: "v1", Kind: "Pod"}, func() any { return &corev1.Pod{} }, last, config, live)
	}
	// ConfigMap1MiB: 1 MiB of data in 1024 keys; the config changes 16 of
	// them, drops 8 and adds 8.
	{
		data := map[string]any{}
		for i := 0; i < 1024; i++ {
			data[fmt.Sprintf("key-%04d", i)] = strings.Repeat(string(rune('a'+i%26)), 1000)
		}
		last := map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "big", "namespace": "default"}, "data": data}
		live := liveOf(tb, last)
		config := value.DeepCopyObject(last)
		cd := config["data"].(map[string]any)
		for i := 0; i < 16; i++ {
			cd[fmt.Sprintf("key-%04d", i*7)] = strings.Repeat("z", 1000)
		}
		for i := 0; i < 8; i++ {
			delete(cd, fmt.Sprintf("key-%04d", 1000+i))
			cd[fmt.Sprintf("new-%04d", i)] = strings.Repeat("n", 1000)
		}
		add("ConfigMap1MiB", schema.GVK{Version: "v1", Kind: "ConfigMap"}, func() any { return &corev1.ConfigMap{} }, last, config, live)
	}
	// List500: a pod spec with 500 containers; the config changes the image
	// of every tenth.
	{
		var cs []any
		for i := 0; i < 500; i++ {
			cs = append(cs, container(fmt.Sprintf("c%03d", i), "app:1", i))
		}
		last := map[string]any{"apiVersion": "v1", "kind": "Pod",
			"metadata": map[string]any{"name": "wide", "namespace": "default"}, "spec": podSpec(cs)}
		live := liveOf(tb, last)
		config := value.DeepCopyObject(last)
		for i, c := range config["spec"].(map[string]any)["containers"].([]any) {
			if i%10 == 0 {
				c.(map[string]any)["image"] = "app:2"
			}
		}
		add("List500", schema.GVK{Version: "v1", Kind: "Pod"}, func() any { return &corev1.Pod{} }, last, config, live)
	}
	return cases
}

// konvergeMerge is what konverge does with the three JSON documents:
// ThreeWayJSON computes the patch and the result, as JSON.
func konvergeMerge(typ *schema.Type, last, config, live []byte) ([]byte, []byte, error) {
	return ThreeWayJSON(last, config, live, typ, Options{})
}

// referenceMerge is what kubectl and the API server do: the three-way patch
// with patch metadata from the Go struct, then the strategic merge of it
// into live.
func referenceMerge(ds any, last, config, live []byte) ([]byte, []byte, error) {
	meta, err := strategicpatch.NewPatchMetaFromStruct(ds)
	if err != nil {
		return nil, nil, err
	}
	patch, err := strategicpatch.CreateThreeWayMergePatch(last, config, live, meta, true)
	if err != nil {
		return nil, nil, err
	}
	result, err := strategicpatch.StrategicMergePatch(live, patch, ds)
	return patch, result, err
}

// TestBenchCasesAgree keeps the benchmark honest: both sides compute the
// same object.
func TestBenchCasesAgree(t *testing.T) {
	for _, c := range newBenchCases(t) {
		t.Run(c.name, func(t *testing.T) {
			typ := schema.Builtin().Lookup(c.gvk)
			pb, rb, err := konvergeMerge(typ, c.last, c.config, c.live)
			if err != nil {
				t.Fatal(err)
			}
			wp, wr, err := referenceMerge(c.dataStruct(), c.last, c.config, c.live)
			if err != nil {
				t.Fatal(err)
			}
			if len(pb) < 10 {
				t.Fatalf("empty patch %s: the case measures nothing", pb)
			}
			for _, x := range []struct {
				name      string
				got, want []byte
			}{{"patch", pb, wp}, {"result", rb, wr}} {
				g, _ := value.Decode(x.got)
				w, _ := value.Decode(x.want)
				if !value.Equal(g, w) {
					t.Errorf("%s differs from the reference", x.name)
				}
			}
		})
	}
}

// BenchmarkThreeWay measures one client-side apply merge, JSON in and JSON
// out, by konverge and by kubectl's strategicpatch in the same run. Next
// to wall time it reports the CPU time of the process per operation
// (cpu-ns/op): on a shared machine wall time counts waits for a CPU too.
func BenchmarkThreeWay(b *testing.B) {
	for _, c := range newBenchCases(b) {
		typ := schema.Builtin().Lookup(c.gvk)
		b.Run(c.name+"/konverge", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.live)))
			defer reportCPU(b)()
			for b.Loop() {
				if _, _, err := konvergeMerge(typ, c.last, c.config, c.live); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/reference", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.live)))
			defer reportCPU(b)()
			for b.Loop() {
				if _, _, err := referenceMerge(c.dataStruct(), c.last, c.config, c.live); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// reportCPU reports the CPU time the process spent per operation.
func reportCPU(b *testing.B) func() {
	start := cpuTime()
	return func() {
		b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
	}
}

// BenchmarkThreeWayDecoded measures konverge on objects already decoded, as
// a GitOps tool holding unstructured objects calls it.
func BenchmarkThreeWayDecoded(b *testing.B) {
	for _, c := range newBenchCases(b) {
		typ := schema.Builtin().Lookup(c.gvk)
		l, _ := value.DecodeObject(c.last)
		cfg, _ := value.DecodeObject(c.config)
		v, _ := value.DecodeObject(c.live)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				patch, err := ThreeWay(l, cfg, v, typ, Options{})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := Apply(v, patch, typ); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
