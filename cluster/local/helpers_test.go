package local

import (
	"context"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

// testClock is a clock tests move by hand.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func newTestClock() *testClock {
	return &testClock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// openStore opens a store in a fresh directory, closed at the end of the
// test.
func openStore(t testing.TB) (*Store, *testClock) {
	t.Helper()
	clock := newTestClock()
	s, err := Open(t.TempDir(), Options{Clock: clock})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s, clock
}

// obj decodes a YAML document.
func obj(t testing.TB, doc string) cluster.Object {
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

func mustCreate(t testing.TB, c cluster.Interface, doc string) cluster.Object {
	t.Helper()
	out, err := c.Create(context.Background(), obj(t, doc))
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	return out
}

func mustGet(t testing.TB, c cluster.Interface, gvk schema.GVK, ns, name string) cluster.Object {
	t.Helper()
	out, err := c.Get(context.Background(), gvk, ns, name)
	if err != nil {
		t.Fatalf("Get %s %s/%s: %v", gvk.Kind, ns, name, err)
	}
	return out
}

func isGone(t testing.TB, c cluster.Interface, gvk schema.GVK, ns, name string) bool {
	t.Helper()
	_, err := c.Get(context.Background(), gvk, ns, name)
	if err != nil && !cluster.IsNotFound(err) {
		t.Fatalf("Get %s %s/%s: %v", gvk.Kind, ns, name, err)
	}
	return cluster.IsNotFound(err)
}

// path reads a dotted path of an object ("metadata.generation").
func path(o map[string]any, p string) any {
	var cur any = o
	for _, f := range splitDots(p) {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[f]
	}
	return cur
}

func splitDots(p string) []string {
	var out []string
	start := 0
	for i := 0; i < len(p); i++ {
		if p[i] == '.' {
			out = append(out, p[start:i])
			start = i + 1
		}
	}
	return append(out, p[start:])
}

func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

var (
	gvkNamespace  = schema.GVK{Version: "v1", Kind: "Namespace"}
	gvkConfigMap  = schema.GVK{Version: "v1", Kind: "ConfigMap"}
	gvkPod        = schema.GVK{Version: "v1", Kind: "Pod"}
	gvkSecret     = schema.GVK{Version: "v1", Kind: "Secret"}
	gvkDeployment = schema.GVK{Group: "apps", Version: "v1", Kind: "Deployment"}
	gvkReplicaSet = schema.GVK{Group: "apps", Version: "v1", Kind: "ReplicaSet"}
	gvkJob        = schema.GVK{Group: "batch", Version: "v1", Kind: "Job"}
	gvkCRD        = schema.GVK{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}
)

const deploymentWeb = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
  labels: {app: web}
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
`

func encodeString(v any) (string, error) {
	b, err := value.Encode(v)
	return string(b), err
}

var gvkWidget = schema.GVK{Group: "example.com", Version: "v1", Kind: "Widget"}

// crdWidgets serves example.com Widgets, namespaced, with a schema that
// defaults, validates and prunes.
const crdWidgets = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names:
    kind: Widget
    plural: widgets
    singular: widget
    shortNames: [wd]
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
    selectableFields:
    - jsonPath: .spec.color
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [size]
            properties:
              size: {type: integer}
              color: {type: string, default: blue}
              extra:
                type: object
                x-kubernetes-preserve-unknown-fields: true
          status:
            type: object
            properties:
              ready: {type: boolean}
`
