package merge

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"github.com/konverge/konverge/lastapplied"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

// goStructs are the Go types kubectl takes patch metadata from, for the
// kinds used in testdata/merge.
var goStructs = map[string]func() any{
	"apps/v1/Deployment":  func() any { return &appsv1.Deployment{} },
	"apps/v1/StatefulSet": func() any { return &appsv1.StatefulSet{} },
	"apps/v1/DaemonSet":   func() any { return &appsv1.DaemonSet{} },
	"batch/v1/Job":        func() any { return &batchv1.Job{} },
	"batch/v1/CronJob":    func() any { return &batchv1.CronJob{} },
	"v1/Pod":              func() any { return &corev1.Pod{} },
	"v1/Service":          func() any { return &corev1.Service{} },
	"v1/ConfigMap":        func() any { return &corev1.ConfigMap{} },
	"v1/Secret":           func() any { return &corev1.Secret{} },
}

// TestCasesAgainstReference runs every case of testdata/merge through
// ThreeWay and Apply and through kubectl's strategicpatch, and requires the
// same patch and the same result, except in the cases marked as deliberate
// deviations, where applying konverge's patch with strategicpatch must give
// konverge's result (a real API server accepts the patch).
func TestCasesAgainstReference(t *testing.T) {
	dirs, err := filepath.Glob("../testdata/merge/*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			caseYAML, err := os.ReadFile(filepath.Join(dir, "case.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(caseYAML), "\nerror:") {
				t.Skip("an error case")
			}
			deviation := strings.Contains(string(caseYAML), "deviation: true")
			load := func(name string) map[string]any {
				b, err := os.ReadFile(filepath.Join(dir, name))
				if os.IsNotExist(err) {
					return nil
				}
				if err != nil {
					t.Fatal(err)
				}
				return mustYAMLObject(t, string(b))
			}
			config, live, last := load("config.yaml"), load("live.yaml"), load("last-applied.yaml")
			if last == nil {
				if last, err = lastapplied.Get(live); err != nil {
					t.Fatal(err)
				}
			}
			md := config["metadata"].(map[string]any)
			if _, ok := md["namespace"]; !ok {
				if ns, ok := live["metadata"].(map[string]any)["namespace"]; ok {
					md["namespace"] = ns
				}
			}
			modified, err := lastapplied.Set(config)
			if err != nil {
				t.Fatal(err)
			}
			gvk := schema.ParseGVK(config["apiVersion"].(string), config["kind"].(string))
			newStruct, ok := goStructs[strings.TrimPrefix(gvk.Group+"/"+gvk.Version, "/")+"/"+gvk.Kind]
			if !ok {
				t.Skipf("no Go struct for %v: not a strategic merge case", gvk)
			}
			typ := schema.Builtin().Lookup(gvk)
			patch, err := ThreeWay(last, modified, live, typ, Options{})
			if err != nil {
				t.Fatal(err)
			}
			result, err := Apply(live, patch, typ)
			if err != nil {
				t.Fatal(err)
			}
			enc := func(v any) string {
				b, err := value.Encode(v)
				if err != nil {
					t.Fatal(err)
				}
				return string(b)
			}
			if deviation {
				pb := enc(patch)
				rb, err := strategicpatch.StrategicMergePatch([]byte(enc(live)), []byte(pb), newStruct())
				if err != nil {
					t.Fatalf("the API server's merge rejects konverge's patch: %v", err)
				}
				got, err := value.Decode(rb)
				if err != nil {
					t.Fatal(err)
				}
				if enc(got) != enc(result) {
					t.Errorf("the API server's merge of konverge's patch gives\n%s\nkonverge gives\n%s", enc(got), enc(result))
				}
				return
			}
			wantPatch, wantResult, err := reference(t, newStruct(), last, modified, live, true)
			if err != nil {
				t.Fatal(err)
			}
			if enc(patch) != enc(wantPatch) {
				t.Errorf("patch\n got %s\nwant %s", enc(patch), enc(wantPatch))
			}
			if enc(result) != enc(wantResult) {
				t.Errorf("result\n got %s\nwant %s", enc(result), enc(wantResult))
			}
		})
	}
}
