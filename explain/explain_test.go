package explain

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	clientopenapi "k8s.io/client-go/openapi"
	kubectlexplain "k8s.io/kubectl/pkg/explain/v2"

	"github.com/konverge/konverge/openapi"
)

// docClient serves one document as kubectl's OpenAPI v3 client would.
type docClient struct {
	path string
	doc  []byte
}

func (c docClient) Paths() (map[string]clientopenapi.GroupVersion, error) {
	return map[string]clientopenapi.GroupVersion{c.path: docGV(c.doc)}, nil
}

type docGV []byte

func (d docGV) Schema(string) ([]byte, error) { return d, nil }
func (d docGV) ServerRelativeURL() string     { return "/openapi/v3/x" }

// kubectlRender runs kubectl's own explain (the reference) on doc.
func kubectlRender(t *testing.T, doc map[string]any, req Request) (string, error) {
	t.Helper()
	raw, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	path := "api/" + req.GVR.Version
	if req.GVR.Group != "" {
		path = "apis/" + req.GVR.Group + "/" + req.GVR.Version
	}
	var out bytes.Buffer
	gvr := k8sschema.GroupVersionResource{Group: req.GVR.Group, Version: req.GVR.Version, Resource: req.GVR.Resource}
	err = kubectlexplain.PrintModelDescription(req.FieldPath, &out, docClient{path, raw}, gvr, req.Recursive, req.MaxDepth, "plaintext")
	return out.String(), err
}

func render(t *testing.T, doc map[string]any, req Request) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := Render(&out, doc, req)
	return out.String(), err
}

// compare checks that Render prints what kubectl prints, and fails as it
// fails.
func compare(t *testing.T, doc map[string]any, req Request) {
	t.Helper()
	want, wantErr := kubectlRender(t, doc, req)
	got, err := render(t, doc, req)
	if got != want {
		t.Errorf("%v %v: konverge printed\n%s\nkubectl printed\n%s", req.GVR, req.FieldPath, got, want)
	}
	if (err == nil) != (wantErr == nil) || (err != nil && "error: "+err.Error() != wantErr.Error()) {
		t.Errorf("%v %v: error %v, kubectl's %v", req.GVR, req.FieldPath, err, wantErr)
	}
}

// fieldPaths returns some field paths of a definition: every top-level
// field, and random walks below them.
func fieldPaths(defs map[string]any, def map[string]any, rng *rand.Rand) [][]string {
	props, _ := def["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	sort.Strings(names)
	var out [][]string
	for _, n := range names {
		path := []string{n}
		out = append(out, path)
		cur := props[n]
		for depth := 0; depth < 6; depth++ {
			s := follow(defs, cur)
			p, _ := s["properties"].(map[string]any)
			if len(p) == 0 {
				break
			}
			keys := make([]string, 0, len(p))
			for k := range p {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			k := keys[rng.IntN(len(keys))]
			path = append(append([]string(nil), path...), k)
			out = append(out, path)
			cur = p[k]
		}
	}
	if len(out) > 0 {
		last := out[len(out)-1]
		out = append(out, append(append([]string(nil), last...), "noSuchField"))
	}
	return append(out, []string{"noSuchField"})
}

// follow resolves a property's schema: its $ref, its one-element allOf,
// its items or map values.
func follow(defs map[string]any, v any) map[string]any {
	s, _ := v.(map[string]any)
	for range 4 {
		if s == nil {
			return nil
		}
		if ref, ok := s["$ref"].(string); ok {
			s, _ = defs[strings.TrimPrefix(ref, openapi.RefPrefix)].(map[string]any)
			continue
		}
		if all, ok := s["allOf"].([]any); ok && len(all) == 1 {
			s, _ = all[0].(map[string]any)
			continue
		}
		if it, ok := s["items"].(map[string]any); ok {
			s = it
			continue
		}
		if ap, ok := s["additionalProperties"].(map[string]any); ok {
			s = ap
			continue
		}
		break
	}
	return s
}

// TestBuiltinKindsAsKubectl explains every built-in kind, its fields and
// random paths below them with this package and with kubectl's own
// explain on the same documents.
func TestBuiltinKindsAsKubectl(t *testing.T) {
	kinds, err := openapi.Kinds()
	if err != nil {
		t.Fatal(err)
	}
	defs, err := schemas()
	if err != nil {
		t.Fatal(err)
	}
	// kubectl's explain decodes the whole document on every call: a
	// sample of the kinds by default, all of them with
	// KONVERGE_EXPLAIN_ALL=1.
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 2))
	all := os.Getenv("KONVERGE_EXPLAIN_ALL") != ""
	n := 0
	for _, k := range kinds {
		if !all && rng.IntN(40) != 0 && k.GVK.Kind != "Deployment" && k.GVK.Kind != "Pod" {
			continue
		}
		if strings.HasSuffix(k.GVK.Kind, "List") || k.GVK.Kind == "DeleteOptions" || k.GVK.Kind == "WatchEvent" {
			continue
		}
		gvr := GVR{Group: k.GVK.Group, Version: k.GVK.Version, Resource: strings.ToLower(k.GVK.Kind) + "s"}
		doc, ok, err := Builtin(gvr, k.GVK.Kind)
		if err != nil || !ok {
			t.Fatalf("%v: %v %v", k.GVK, ok, err)
		}
		compare(t, doc, Request{GVR: gvr})
		def, _ := defs[k.Definition].(map[string]any)
		for _, p := range fieldPaths(defs, def, rng) {
			compare(t, doc, Request{GVR: gvr, FieldPath: p})
			n++
		}
	}
	t.Logf("%d field paths compared (seed %d)", n, seed)
}

// TestRecursiveAsKubectl compares --recursive, with and without a depth.
func TestRecursiveAsKubectl(t *testing.T) {
	for _, c := range []struct {
		gvr  GVR
		kind string
	}{
		{GVR{"", "v1", "pods"}, "Pod"},
		{GVR{"apps", "v1", "deployments"}, "Deployment"},
		{GVR{"apiextensions.k8s.io", "v1", "customresourcedefinitions"}, "CustomResourceDefinition"},
	} {
		doc, ok, err := Builtin(c.gvr, c.kind)
		if err != nil || !ok {
			t.Fatalf("%v: %v %v", c.gvr, ok, err)
		}
		for _, depth := range []int{0, 1, 3} {
			compare(t, doc, Request{GVR: c.gvr, Recursive: true, MaxDepth: depth})
			compare(t, doc, Request{GVR: c.gvr, FieldPath: []string{"spec"}, Recursive: true, MaxDepth: depth})
		}
	}
}

func TestUnknownGroupVersionKind(t *testing.T) {
	if _, ok, err := Builtin(GVR{"apps", "v2", "deployments"}, "Deployment"); ok || err != nil {
		t.Errorf("apps/v2 Deployment: ok %v, err %v; want not found", ok, err)
	}
	doc, _, _ := Builtin(GVR{"apps", "v1", "deployments"}, "Deployment")
	_, err := render(t, doc, Request{GVR: GVR{"apps", "v1", "nothings"}})
	var e *Error
	if !errors.As(err, &e) || e.Msg != "GVR (apps/v1, Resource=nothings) not found in OpenAPI schema" {
		t.Errorf("unknown resource: %v", err)
	}
}

// crd is a CustomResourceDefinition with a schema, an embedded resource
// and a version without fields.
const crd = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
"metadata":{"name":"crontabs.stable.example.com"},
"spec":{"group":"stable.example.com","scope":"Namespaced",
 "names":{"plural":"crontabs","singular":"crontab","kind":"CronTab","shortNames":["ct"]},
 "versions":[
  {"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","description":"A CronTab runs an image.",
   "properties":{"spec":{"type":"object","required":["image"],"properties":{
     "cronSpec":{"type":"string","description":"When to run."},
     "image":{"type":"string"},
     "policy":{"type":"string","enum":["Allow","Forbid","Replace"]},
     "replicas":{"type":"integer","format":"int32"},
     "hosts":{"type":"array","items":{"type":"string"}},
     "labels":{"type":"object","additionalProperties":{"type":"string"}},
     "template":{"type":"object","x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true}}}}}}},
  {"name":"v1beta1","served":true,"storage":false,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`

func TestCustomResourceAsKubectl(t *testing.T) {
	var obj map[string]any
	if err := json.Unmarshal([]byte(crd), &obj); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"v1", "v1beta1"} {
		doc, ok, err := CustomResource(obj, v)
		if err != nil || !ok {
			t.Fatalf("%s: %v %v", v, ok, err)
		}
		gvr := GVR{"stable.example.com", v, "crontabs"}
		for _, p := range [][]string{nil, {"spec"}, {"spec", "policy"}, {"spec", "hosts"}, {"spec", "labels"}, {"spec", "template"}, {"spec", "template", "metadata"}, {"metadata", "labels"}, {"spec", "nope"}} {
			compare(t, doc, Request{GVR: gvr, FieldPath: p})
		}
		compare(t, doc, Request{GVR: gvr, Recursive: true})
	}
	got, err := render(t, mustCR(t, obj, "v1"), Request{GVR: GVR{"stable.example.com", "v1", "crontabs"}, FieldPath: []string{"spec", "template"}, Recursive: true})
	if err != nil || !strings.Contains(got, "apiVersion\t<string> -required-") || !strings.Contains(got, "  metadata\t<ObjectMeta>") {
		t.Errorf("embedded resource without apiVersion/kind/metadata (%v):\n%s", err, got)
	}
	if _, ok, _ := CustomResource(obj, "v2"); ok {
		t.Error("v2 of a CRD without it: ok")
	}
}

func mustCR(t *testing.T, obj map[string]any, v string) map[string]any {
	doc, ok, err := CustomResource(obj, v)
	if err != nil || !ok {
		t.Fatalf("%s: %v %v", v, ok, err)
	}
	return doc
}
