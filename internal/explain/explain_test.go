package explain

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/konverge/konverge/openapi"
)

func render(t *testing.T, doc map[string]any, req Request) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := Render(&out, doc, req)
	return out.String(), err
}

// header is what kubectl explain prints first for a kind.
func header(group, kind, version string) string {
	if group == "" {
		return "KIND:       " + kind + "\nVERSION:    " + version + "\n"
	}
	return "GROUP:      " + group + "\nKIND:       " + kind + "\nVERSION:    " + version + "\n"
}

// compare checks that the document of a kind explains it: the kind's
// header, and for a field path of the definition its FIELD line; a path
// that is not in the definition fails as kubectl fails.
func compare(t *testing.T, doc map[string]any, kind string, req Request, exists bool) {
	t.Helper()
	got, err := render(t, doc, req)
	if !strings.HasPrefix(got, header(req.GVR.Group, kind, req.GVR.Version)) {
		t.Errorf("%v %v: output starts\n%.200s", req.GVR, req.FieldPath, got)
	}
	if !exists {
		var e *Error
		want := fmt.Sprintf("field %q does not exist", req.FieldPath[len(req.FieldPath)-1])
		if !errors.As(err, &e) || e.Msg != want {
			t.Errorf("%v %v: error %v, want %q", req.GVR, req.FieldPath, err, want)
		}
		return
	}
	if err != nil {
		t.Errorf("%v %v: %v", req.GVR, req.FieldPath, err)
	}
	if len(req.FieldPath) > 0 && !strings.Contains(got, "FIELD: "+req.FieldPath[len(req.FieldPath)-1]+" <") {
		t.Errorf("%v %v: no FIELD line in\n%s", req.GVR, req.FieldPath, got)
	}
}

// TestBuiltinKinds explains built-in kinds and their top-level fields
// from the embedded documents: every document names its kind, every
// field of the definition is found and a missing one fails as kubectl's
// explain fails.
func TestBuiltinKinds(t *testing.T) {
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
		compare(t, doc, k.GVK.Kind, Request{GVR: gvr}, true)
		def, _ := defs[k.Definition].(map[string]any)
		props, _ := def["properties"].(map[string]any)
		for name := range props {
			compare(t, doc, k.GVK.Kind, Request{GVR: gvr, FieldPath: []string{name}}, true)
			n++
		}
		compare(t, doc, k.GVK.Kind, Request{GVR: gvr, FieldPath: []string{"noSuchField"}}, false)
	}
	t.Logf("%d field paths compared (seed %d)", n, seed)
}

// TestRecursive explains with --recursive, with and without a depth.
func TestRecursive(t *testing.T) {
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
			compare(t, doc, c.kind, Request{GVR: c.gvr, Recursive: true, MaxDepth: depth}, true)
			compare(t, doc, c.kind, Request{GVR: c.gvr, FieldPath: []string{"spec"}, Recursive: true, MaxDepth: depth}, true)
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

func TestCustomResource(t *testing.T) {
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
			if v == "v1beta1" && len(p) > 0 && p[0] == "spec" {
				continue // a version without fields
			}
			compare(t, doc, "CronTab", Request{GVR: gvr, FieldPath: p}, p == nil || p[len(p)-1] != "nope")
		}
		compare(t, doc, "CronTab", Request{GVR: gvr, Recursive: true}, true)
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
