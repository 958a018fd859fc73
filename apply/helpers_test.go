package apply_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/konverge/konverge/apply"
	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/lastapplied"
	"github.com/konverge/konverge/manifest"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

var (
	gvkDeployment = schema.GVK{Group: "apps", Version: "v1", Kind: "Deployment"}
	gvkConfigMap  = schema.GVK{Version: "v1", Kind: "ConfigMap"}
	gvkSecret     = schema.GVK{Version: "v1", Kind: "Secret"}
	gvkNamespace  = schema.GVK{Version: "v1", Kind: "Namespace"}
)

// testdata is the directory of apply's test inputs and golden files.
var testdata = filepath.Join("..", "testdata", "apply")

type fixedClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fixedClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// openStore opens an embedded cluster in a fresh directory, closed at the
// end of the test.
func openStore(t testing.TB) *local.Store {
	t.Helper()
	s, err := local.Open(t.TempDir(), local.Options{Clock: &fixedClock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// read reads manifests under testdata/apply.
func read(t testing.TB, paths ...string) []manifest.Object {
	t.Helper()
	full := make([]string, len(paths))
	for i, p := range paths {
		full[i] = filepath.Join(testdata, p)
	}
	objs, err := manifest.Read(context.Background(), full, manifest.Options{})
	if err != nil {
		t.Fatalf("read %v: %v", paths, err)
	}
	return objs
}

// parse decodes YAML documents (separated by "---") into inputs named
// "test.yaml#N".
func parse(t testing.TB, docs string) []manifest.Object {
	t.Helper()
	objs, err := manifest.Parse(context.Background(), "test.yaml", []byte(docs))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return objs
}

// obj decodes one YAML document.
func obj(t testing.TB, doc string) map[string]any {
	t.Helper()
	j, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatalf("yaml: %v", err)
	}
	o, err := value.DecodeObject(j)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	return o
}

// lines prints results as kubectl prints them.
func lines(results []apply.Result) string {
	var b strings.Builder
	for _, r := range results {
		b.WriteString(r.String())
		b.WriteByte('\n')
	}
	return b.String()
}

func mustApply(t testing.TB, c cluster.Interface, opts apply.Options, objs []manifest.Object) []apply.Result {
	t.Helper()
	res, err := apply.New(c, opts).Apply(context.Background(), objs)
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	return res
}

func mustGet(t testing.TB, c cluster.Reader, gvk schema.GVK, ns, name string) map[string]any {
	t.Helper()
	o, err := c.Get(context.Background(), gvk, ns, name)
	if err != nil {
		t.Fatalf("Get %s %s/%s: %v", gvk.Kind, ns, name, err)
	}
	return o
}

func exists(t testing.TB, c cluster.Reader, gvk schema.GVK, ns, name string) bool {
	t.Helper()
	_, err := c.Get(context.Background(), gvk, ns, name)
	if err != nil && !cluster.IsNotFound(err) {
		t.Fatalf("Get %s %s/%s: %v", gvk.Kind, ns, name, err)
	}
	return err == nil
}

// field returns the value at a dotted path of obj.
func field(obj map[string]any, path string) any {
	var v any = obj
	for _, f := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[f]
	}
	return v
}

func toYAML(t testing.TB, v any) string {
	t.Helper()
	j, err := value.Encode(v)
	if err != nil {
		t.Fatal(err)
	}
	y, err := yaml.JSONToYAML(j)
	if err != nil {
		t.Fatal(err)
	}
	return string(y)
}

func encode(t testing.TB, v any) []byte {
	t.Helper()
	b, err := value.Encode(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// annotation returns the last-applied annotation of obj.
func annotation(obj map[string]any) any {
	a, _ := field(obj, "metadata.annotations").(map[string]any)
	return a[lastapplied.Annotation]
}
