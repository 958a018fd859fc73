package describe

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/schema"
)

func TestSmartLabelFor(t *testing.T) {
	cases := map[string]string{
		"apiVersion":        "API Version",
		"creationTimestamp": "Creation Timestamp",
		"uid":               "UID",
		"resourceVersion":   "Resource Version",
		"cronSpec":          "Cron Spec",
		"podIP":             "Pod IP",
		"APIVersion":        "APIVersion",
		"replicas":          "Replicas",
		"x-foo":             "X - Foo",
		"foo_bar":           "foo_bar",
		"v1beta1":           "v1beta1",
	}
	for in, want := range cases {
		if got := smartLabelFor(in); got != want {
			t.Errorf("smartLabelFor(%q) = %q, want %q", in, got, want)
		}
	}
}

type fixedClock time.Time

func (c fixedClock) Now() time.Time { return time.Time(c) }

// TestDescribe describes objects of a real store and checks the exact text.
func TestDescribe(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	st, err := local.Open(t.TempDir(), local.Options{Clock: fixedClock(t0)})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	mk := func(obj map[string]any) map[string]any {
		out, err := st.Create(ctx, obj)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	secret := mk(map[string]any{"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
		"metadata": map[string]any{"name": "s", "namespace": "default", "labels": map[string]any{"b": "2", "a": "1"}},
		"data":     map[string]any{"token": "aHVudGVyMg==", "empty": ""}})
	cm := mk(map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "c", "namespace": "default", "annotations": map[string]any{"note": "x"}},
		"data":     map[string]any{"k": "v"}})
	mk(map[string]any{"apiVersion": "v1", "kind": "Event",
		"metadata":       map[string]any{"name": "c.1", "namespace": "default"},
		"involvedObject": map[string]any{"kind": "ConfigMap", "name": "c", "namespace": "default"},
		"reason":         "Checked", "message": "all good ", "type": "Normal",
		"source": map[string]any{"component": "tester"}, "count": int64(1),
		"firstTimestamp": "2026-01-01T12:00:30Z", "lastTimestamp": "2026-01-01T12:00:30Z"})

	res := func(kind string) cluster.Resource {
		r, err := st.Mapper().ResourceFor(schema.GVK{Version: "v1", Kind: kind})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	opts := Options{Now: t0.Add(time.Minute), Location: time.UTC}
	cases := []struct {
		name string
		res  cluster.Resource
		obj  map[string]any
		want string
	}{
		{"secret", res("Secret"), secret, `Name:         s
Namespace:    default
Labels:       a=1
              b=2
Annotations:  <none>

Type:  Opaque

Data
====
empty:  0 bytes
token:  7 bytes
`},
		{"configmap with event", res("ConfigMap"), cm, `Name:         c
Namespace:    default
Labels:       <none>
Annotations:  note: x

Data
====
k:
----
v


BinaryData
====

Events:
  Type    Reason   Age   From    Message
  ----    ------   ----  ----    -------
  Normal  Checked  30s   tester  all good
`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Describe(ctx, st, c.res, c.obj, opts)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("got\n%s\nwant\n%s", got, c.want)
			}
			if strings.Contains(got, "hunter2") || strings.Contains(got, "aHVudGVyMg") {
				t.Error("a Secret value was printed")
			}
		})
	}
}
