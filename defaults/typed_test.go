package defaults

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	kjson "sigs.k8s.io/json"

	"github.com/konverge/konverge/value"
)

// goTypes are the k8s.io/api types of the kinds in the type table.
var goTypes = map[string]func() any{
	"apps/v1/DaemonSet":                               func() any { return &appsv1.DaemonSet{} },
	"apps/v1/Deployment":                              func() any { return &appsv1.Deployment{} },
	"apps/v1/ReplicaSet":                              func() any { return &appsv1.ReplicaSet{} },
	"apps/v1/StatefulSet":                             func() any { return &appsv1.StatefulSet{} },
	"batch/v1/CronJob":                                func() any { return &batchv1.CronJob{} },
	"batch/v1/Job":                                    func() any { return &batchv1.Job{} },
	"networking.k8s.io/v1/Ingress":                    func() any { return &networkingv1.Ingress{} },
	"networking.k8s.io/v1/IngressClass":               func() any { return &networkingv1.IngressClass{} },
	"networking.k8s.io/v1/NetworkPolicy":              func() any { return &networkingv1.NetworkPolicy{} },
	"rbac.authorization.k8s.io/v1/ClusterRole":        func() any { return &rbacv1.ClusterRole{} },
	"rbac.authorization.k8s.io/v1/ClusterRoleBinding": func() any { return &rbacv1.ClusterRoleBinding{} },
	"rbac.authorization.k8s.io/v1/Role":               func() any { return &rbacv1.Role{} },
	"rbac.authorization.k8s.io/v1/RoleBinding":        func() any { return &rbacv1.RoleBinding{} },
	"v1/ConfigMap":                                    func() any { return &corev1.ConfigMap{} },
	"v1/Namespace":                                    func() any { return &corev1.Namespace{} },
	"v1/PersistentVolumeClaim":                        func() any { return &corev1.PersistentVolumeClaim{} },
	"v1/Pod":                                          func() any { return &corev1.Pod{} },
	"v1/PodTemplate":                                  func() any { return &corev1.PodTemplate{} },
	"v1/ReplicationController":                        func() any { return &corev1.ReplicationController{} },
	"v1/Secret":                                       func() any { return &corev1.Secret{} },
	"v1/Service":                                      func() any { return &corev1.Service{} },
	"v1/ServiceAccount":                               func() any { return &corev1.ServiceAccount{} },
}

// goRoundTrip decodes obj into its Go type as kube-apiserver does
// (case-sensitive, integers preserved) and encodes it again.
func goRoundTrip(t testing.TB, obj map[string]any) map[string]any {
	t.Helper()
	gvk := obj["apiVersion"].(string) + "/" + obj["kind"].(string)
	newObj := goTypes[gvk]
	if newObj == nil {
		t.Fatalf("no Go type for %s", gvk)
	}
	in, err := value.Encode(obj)
	if err != nil {
		t.Fatal(err)
	}
	typed := newObj()
	if err := kjson.UnmarshalCaseSensitivePreserveInts(in, typed); err != nil {
		t.Fatalf("decode %s: %v", gvk, err)
	}
	out, err := json.Marshal(typed)
	if err != nil {
		t.Fatal(err)
	}
	m, err := value.DecodeObject(out)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := obj["status"]; !ok {
		delete(m, "status") // the typed pass leaves an absent root status to the store
	}
	return m
}

// TestTypedPassMatchesGoTypes checks the typed pass against the real Go
// types: for every case input and every expected output, normalizing with
// the table gives what decoding into k8s.io/api and encoding again gives.
func TestTypedPassMatchesGoTypes(t *testing.T) {
	for _, file := range caseFiles(t) {
		var c defaultsCase
		loadYAML(t, file, &c)
		if c.Error != "" || c.Schema != nil {
			continue
		}
		for _, doc := range []map[string]any{decodeValue(t, c.In), decodeValue(t, c.Want)} {
			if doc == nil {
				continue
			}
			name := strings.TrimPrefix(file, "../testdata/defaults/")
			if doc["kind"] == "Secret" {
				delete(doc, "stringData") // folded by conversion, not by the Go type
			}
			want := goRoundTrip(t, value.DeepCopyObject(doc))
			st := kindStruct(doc["apiVersion"].(string), doc["kind"].(string))
			got := value.DeepCopyObject(doc)
			if err := (&typed{}).object(got, st, nil, true); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if !value.Equal(got, want) {
				t.Errorf("%s: typed pass:\n%s\nGo types:\n%s", name, toYAML(t, got), toYAML(t, want))
			}
		}
	}
}

// TestTypedPassVariants mutates every field of every case input in turn
// (null, an empty value, a zero value) and checks the typed pass against
// the Go types on each variant.
func TestTypedPassVariants(t *testing.T) {
	n := 0
	for _, file := range caseFiles(t) {
		var c defaultsCase
		loadYAML(t, file, &c)
		if c.Error != "" || c.Schema != nil {
			continue
		}
		base := decodeValue(t, c.In)
		if base["kind"] == "Secret" {
			delete(base, "stringData")
		}
		var paths [][]any
		collectPaths(base, nil, &paths)
		for _, p := range paths {
			if len(p) == 1 && (p[0] == "apiVersion" || p[0] == "kind") {
				continue
			}
			for _, variant := range variantsOf(getAt(base, p)) {
				doc := value.DeepCopyObject(base)
				setAt(doc, p, variant)
				want, ok := tryGoRoundTrip(doc)
				if !ok {
					continue // the Go types reject it too
				}
				got := value.DeepCopyObject(doc)
				st := kindStruct(doc["apiVersion"].(string), doc["kind"].(string))
				if err := (&typed{}).object(got, st, nil, true); err != nil {
					t.Errorf("%s %v=%v: typed pass fails (%v), Go types accept it", file, p, variant, err)
					continue
				}
				n++
				if !value.Equal(got, want) {
					t.Errorf("%s %v=%#v:\ntyped pass:\n%s\nGo types:\n%s", file, p, variant, toYAML(t, got), toYAML(t, want))
				}
			}
		}
	}
	t.Logf("%d variants", n)
}

func collectPaths(v any, prefix []any, out *[][]any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			p := append(append([]any{}, prefix...), k)
			*out = append(*out, p)
			collectPaths(e, p, out)
		}
	case []any:
		for i, e := range x {
			p := append(append([]any{}, prefix...), i)
			*out = append(*out, p)
			collectPaths(e, p, out)
		}
	}
}

func getAt(v any, p []any) any {
	for _, e := range p {
		switch k := e.(type) {
		case string:
			v = v.(map[string]any)[k]
		case int:
			v = v.([]any)[k]
		}
	}
	return v
}

func setAt(v any, p []any, x any) {
	parent := getAt(v, p[:len(p)-1])
	switch k := p[len(p)-1].(type) {
	case string:
		parent.(map[string]any)[k] = x
	case int:
		parent.([]any)[k] = x
	}
}

func variantsOf(v any) []any {
	out := []any{nil}
	switch v.(type) {
	case string:
		out = append(out, "")
	case bool:
		out = append(out, false)
	case int64:
		out = append(out, int64(0))
	case []any:
		out = append(out, []any{})
	case map[string]any:
		out = append(out, map[string]any{})
	}
	return out
}

// tryGoRoundTrip is goRoundTrip for documents the Go types may reject.
func tryGoRoundTrip(obj map[string]any) (map[string]any, bool) {
	gvk := obj["apiVersion"].(string) + "/" + obj["kind"].(string)
	in, err := value.Encode(obj)
	if err != nil {
		return nil, false
	}
	typedObj := goTypes[gvk]()
	if err := kjson.UnmarshalCaseSensitivePreserveInts(in, typedObj); err != nil {
		return nil, false
	}
	out, err := json.Marshal(typedObj)
	if err != nil {
		return nil, false
	}
	m, err := value.DecodeObject(out)
	if err != nil {
		return nil, false
	}
	if _, ok := obj["status"]; !ok {
		delete(m, "status")
	}
	return m, true
}

// TestSame: the walk writes a value back only when it is not the one it
// read; same tells the one from an equal copy.
func TestSame(t *testing.T) {
	m := map[string]any{"a": "b"}
	l := []any{"x", "y"}
	s := strings.Repeat("q", 3)
	for _, tc := range []struct {
		out, v any
		want   bool
	}{
		{m, m, true},
		{m, map[string]any{"a": "b"}, false},
		{l, l, true},
		{l, l[:1], false},
		{l, []any{"x", "y"}, false},
		{s, s, true},
		{s, strings.Repeat("q", 3), false},
		{true, true, true},
		{true, false, false},
		{int64(3), int64(3), true},
		{int64(3), float64(3), false},
		{float64(3), float64(3), false}, // not told apart: written back
		{nil, nil, false},
	} {
		if got := same(tc.out, tc.v); got != tc.want {
			t.Errorf("same(%#v, %#v) = %v, want %v", tc.out, tc.v, got, tc.want)
		}
	}
}

// TestAbsentFields: the fields the walk looks for in every object of a
// struct are exactly those absentValue prints something for.
func TestAbsentFields(t *testing.T) {
	n := 0
	for name, st := range loadTables().structs {
		var want []int
		for i, f := range st.fields {
			if _, ok := absentValue(f); ok {
				want = append(want, i)
			}
		}
		if !slices.Equal(st.absent, want) {
			t.Errorf("%s: absent %v, want %v", name, st.absent, want)
		}
		n += len(want)
	}
	if n == 0 {
		t.Fatal("no struct has a field that prints when absent")
	}
}
