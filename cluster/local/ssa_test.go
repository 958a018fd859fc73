package local

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/schema"
)

var (
	cmGVK     = schema.GVK{Version: "v1", Kind: "ConfigMap"}
	deployGVK = schema.GVK{Group: "apps", Version: "v1", Kind: "Deployment"}
)

// entry is one managedFields entry, its fields as compact JSON.
type entry struct {
	Manager, Operation, Subresource, Time, Fields string
}

func entries(t *testing.T, obj cluster.Object) []entry {
	t.Helper()
	md, _ := obj["metadata"].(map[string]any)
	list, _ := md["managedFields"].([]any)
	var out []entry
	for _, x := range list {
		e := x.(map[string]any)
		f, err := json.Marshal(e["fieldsV1"])
		if err != nil {
			t.Fatal(err)
		}
		if e["fieldsType"] != "FieldsV1" {
			t.Errorf("fieldsType %v", e["fieldsType"])
		}
		tm, _ := e["time"].(string)
		sub, _ := e["subresource"].(string)
		out = append(out, entry{Manager: e["manager"].(string), Operation: e["operation"].(string), Subresource: sub, Time: tm, Fields: string(f)})
	}
	return out
}

func applyCM(t *testing.T, s *Store, manager string, force bool, doc string, opts ...cluster.PatchOption) (cluster.Object, error) {
	t.Helper()
	opts = append(opts, cluster.FieldOwner(manager))
	if force {
		opts = append(opts, cluster.ForceOwnership)
	}
	return s.Patch(context.Background(), cmGVK, "default", "c1", cluster.ApplyPatchType, []byte(doc), opts...)
}

// A sequence of applies by two managers: creation, conflicts, force,
// shared ownership and removal of what the applier alone owned.
func TestServerSideApplyOwnership(t *testing.T) {
	s, clock := openStore(t)
	ctx := context.Background()
	out, err := applyCM(t, s, "kubectl", false, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c1}\ndata: {a: '1', b: '2'}\n")
	if err != nil {
		t.Fatal(err)
	}
	created := clock.Now().UTC().Format(time.RFC3339)
	want := []entry{{Manager: "kubectl", Operation: "Apply", Time: created, Fields: `{"f:data":{"f:a":{},"f:b":{}}}`}}
	if got := entries(t, out); len(got) != 1 || got[0] != want[0] {
		t.Fatalf("after create: %+v", got)
	}

	clock.Advance(time.Minute)
	_, err = applyCM(t, s, "other", false, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c1}\ndata: {a: '2', b: '2'}\n")
	var se *cluster.StatusError
	if !cluster.IsConflict(err) || !errorAs(err, &se) {
		t.Fatalf("conflict: %v", err)
	}
	if se.Message != `Apply failed with 1 conflict: conflict with "kubectl": .data.a` || len(se.Causes) != 1 ||
		se.Causes[0] != (cluster.Cause{Type: "FieldManagerConflict", Field: ".data.a", Message: `conflict with "kubectl"`}) {
		t.Errorf("conflict: %q %+v", se.Message, se.Causes)
	}
	// b has the same value: co-owned. a is taken over by force.
	out, err = applyCM(t, s, "other", true, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c1}\ndata: {a: '2', b: '2'}\n")
	if err != nil {
		t.Fatal(err)
	}
	forced := clock.Now().UTC().Format(time.RFC3339)
	got := entries(t, out)
	want = []entry{
		{Manager: "kubectl", Operation: "Apply", Time: created, Fields: `{"f:data":{"f:b":{}}}`},
		{Manager: "other", Operation: "Apply", Time: forced, Fields: `{"f:data":{"f:a":{},"f:b":{}}}`},
	}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("after force:\n%+v\nwant\n%+v", got, want)
	}

	// kubectl drops b: other still sets it, so it stays; other drops a,
	// which it alone owned: it goes.
	clock.Advance(time.Minute)
	if _, err := applyCM(t, s, "kubectl", false, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c1}\n"); err != nil {
		t.Fatal(err)
	}
	out, err = applyCM(t, s, "other", false, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c1}\ndata: {b: '2'}\n")
	if err != nil {
		t.Fatal(err)
	}
	if data := out["data"].(map[string]any); len(data) != 1 || data["b"] != "2" {
		t.Errorf("data %v", data)
	}

	// Applying the same configuration again writes nothing.
	rv := metaString(out, "resourceVersion")
	clock.Advance(time.Minute)
	again, err := applyCM(t, s, "other", false, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c1}\ndata: {b: '2'}\n")
	if err != nil {
		t.Fatal(err)
	}
	if metaString(again, "resourceVersion") != rv || entries(t, again)[len(entries(t, again))-1].Time == clock.Now().UTC().Format(time.RFC3339) {
		t.Errorf("a no-op apply wrote: %v", again["metadata"])
	}

	// An update records an Update entry of its manager; the status
	// subresource is recorded apart.
	upd, err := s.Patch(ctx, cmGVK, "default", "c1", cluster.MergePatchType, []byte(`{"metadata":{"labels":{"x":"y"}}}`), cluster.FieldOwner("kubectl-label"))
	if err != nil {
		t.Fatal(err)
	}
	last := entries(t, upd)
	if e := last[len(last)-1]; e.Manager != "kubectl-label" || e.Operation != "Update" || e.Fields != `{"f:metadata":{"f:labels":{".":{},"f:x":{}}}}` {
		t.Errorf("label entry %+v", e)
	}
}

func errorAs(err error, se **cluster.StatusError) bool {
	e, ok := err.(*cluster.StatusError)
	if ok {
		*se = e
	}
	return ok
}

func TestServerSideApplyErrors(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	cases := []struct {
		name, doc string
		opts      []cluster.PatchOption
		reason    cluster.Reason
		msg       string
	}{
		{"no field manager", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c1}\n", nil, cluster.ReasonInvalid,
			`PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch`},
		{"unknown field", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c1}\ncolor: blue\n", []cluster.PatchOption{cluster.FieldOwner("m")}, "",
			`failed to create typed patch object (/c1; /v1, Kind=ConfigMap): .color: field not declared in schema`},
		{"wrong kind", "apiVersion: v1\nkind: Secret\nmetadata: {name: c1}\n", []cluster.PatchOption{cluster.FieldOwner("m")}, cluster.ReasonBadRequest,
			`invalid object type: /v1, Kind=Secret`},
		{"other name", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c2}\n", []cluster.PatchOption{cluster.FieldOwner("m")}, cluster.ReasonBadRequest,
			`the name of the object (c2) does not match the name on the URL (c1)`},
		{"managed fields", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c1, managedFields: []}\n", []cluster.PatchOption{cluster.FieldOwner("m")}, cluster.ReasonBadRequest,
			`metadata.managedFields must be nil`},
		{"not an object", "[1]", []cluster.PatchOption{cluster.FieldOwner("m")}, cluster.ReasonBadRequest,
			`error decoding patch: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go value of type map[string]interface {}`},
		{"force on a merge patch", "", []cluster.PatchOption{cluster.FieldOwner("m"), cluster.ForceOwnership}, cluster.ReasonInvalid,
			`PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch`},
		{"duplicate field", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c1"},"data":{"a":"1","a":"2"}}`, []cluster.PatchOption{cluster.FieldOwner("m"), cluster.FieldValidationStrict}, cluster.ReasonBadRequest,
			"error strict decoding patch: error converting YAML to JSON: yaml: unmarshal errors:\n  line 1: key \"a\" already set in map"},
		{"long field manager", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c1}\n", []cluster.PatchOption{cluster.FieldOwner(strings.Repeat("m", 129))}, cluster.ReasonInvalid,
			`PatchOptions.meta.k8s.io "" is invalid: fieldManager: Too long: may not be more than 128 bytes`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pt := cluster.ApplyPatchType
			data := c.doc
			if c.doc == "" {
				pt, data = cluster.MergePatchType, "{}"
			}
			_, err := s.Patch(ctx, cmGVK, "default", "c1", pt, []byte(data), c.opts...)
			se, ok := err.(*cluster.StatusError)
			if !ok || se.Reason != c.reason || se.Message != c.msg {
				t.Errorf("got %v (%T)\nwant %s: %s", err, err, c.reason, c.msg)
			}
		})
	}
	if _, err := s.Get(ctx, cmGVK, "default", "c1"); !cluster.IsNotFound(err) {
		t.Errorf("an apply that failed stored: %v", err)
	}
}

func TestServerSideApplyDryRun(t *testing.T) {
	s, _ := openStore(t)
	out, err := applyCM(t, s, "kubectl", false, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c1}\ndata: {a: '1'}\n", cluster.DryRunAll)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries(t, out)) != 1 {
		t.Errorf("dry run result without its managedFields: %v", out["metadata"])
	}
	if _, err := s.Get(context.Background(), cmGVK, "default", "c1"); !cluster.IsNotFound(err) {
		t.Errorf("dry run stored: %v", err)
	}
}

// Writes that name no manager are recorded as the store's default; an
// empty managedFields list clears them, and an object without them stays
// so until it is applied.
func TestManagedFieldsReset(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	out := mustCreate(t, s, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c1}\ndata: {a: '1'}\n")
	if got := entries(t, out); len(got) != 1 || got[0].Manager != DefaultFieldManager || got[0].Fields != `{"f:data":{".":{},"f:a":{}}}` {
		t.Fatalf("create: %+v", got)
	}
	out, err := s.Patch(ctx, cmGVK, "default", "c1", cluster.MergePatchType, []byte(`{"metadata":{"managedFields":[]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := entries(t, out); len(got) != 0 {
		t.Fatalf("reset: %+v", got)
	}
	out, err = s.Patch(ctx, cmGVK, "default", "c1", cluster.MergePatchType, []byte(`{"data":{"b":"2"}}`), cluster.FieldOwner("x"))
	if err != nil {
		t.Fatal(err)
	}
	if got := entries(t, out); len(got) != 0 {
		t.Fatalf("an update of an object without managedFields: %+v", got)
	}
	out, err = applyCM(t, s, "kubectl", false, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c1}\ndata: {c: '3'}\n")
	if err != nil {
		t.Fatal(err)
	}
	got := entries(t, out)
	if len(got) != 2 || got[1].Manager != "before-first-apply" || got[1].Fields != `{"f:data":{".":{},"f:a":{},"f:b":{}}}` {
		t.Errorf("first apply: %+v", got)
	}
}

// kubectl scale writes spec.replicas through the scale subresource: the
// managers of replicas are those of the Scale.
func TestScaleSubresource(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	deploy := "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: app, image: nginx}]}\n"
	if _, err := s.Patch(ctx, deployGVK, "default", "web", cluster.ApplyPatchType, []byte(deploy), cluster.FieldOwner("kubectl")); err != nil {
		t.Fatal(err)
	}
	scale, err := s.Patch(ctx, deployGVK, "default", "web", cluster.MergePatchType, []byte(`{"spec":{"replicas":4}}`),
		cluster.FieldOwner("kubectl"), cluster.Subresource("scale"))
	if err != nil {
		t.Fatal(err)
	}
	if scale["kind"] != "Scale" || scale["spec"].(map[string]any)["replicas"] != int64(4) || scale["status"].(map[string]any)["selector"] != "app=web" {
		t.Errorf("scale %v", scale)
	}
	live := mustGet(t, s, deployGVK, "default", "web")
	got := entries(t, live)
	if len(got) != 2 || got[1] != (entry{Manager: "kubectl", Operation: "Update", Subresource: "scale", Fields: `{"f:spec":{"f:replicas":{}}}`}) ||
		strings.Contains(got[0].Fields, "replicas") {
		t.Errorf("managed fields %+v", got)
	}
	_, err = s.Patch(ctx, deployGVK, "default", "web", cluster.ApplyPatchType, []byte(deploy), cluster.FieldOwner("kubectl"))
	if err == nil || err.Error() != `Apply failed with 1 conflict: conflict with "kubectl" with subresource "scale" using apps/v1: .spec.replicas` {
		t.Errorf("apply after scale: %v", err)
	}
	if _, err := s.Patch(ctx, cmGVK, "default", "web", cluster.MergePatchType, []byte(`{}`), cluster.Subresource("scale")); err == nil || err.Error() != "the server could not find the requested resource" {
		t.Errorf("scale of a ConfigMap: %v", err)
	}
	if _, err := s.Patch(ctx, deployGVK, "default", "web", cluster.MergePatchType, []byte(`{"spec":{"replicas":-1}}`), cluster.Subresource("scale")); err == nil ||
		err.Error() != `Scale.autoscaling "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0` {
		t.Errorf("negative scale: %v", err)
	}
}

// A custom resource merges by its schema's list types.
func TestServerSideApplyCustomResource(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	mustCreate(t, s, `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.example.com}
spec:
  group: example.com
  names: {kind: Gadget, plural: gadgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              ports:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items: {type: object, required: [name], properties: {name: {type: string}, port: {type: integer}}}
`)
	gvk := schema.GVK{Group: "example.com", Version: "v1", Kind: "Gadget"}
	apply := func(manager, ports string) cluster.Object {
		t.Helper()
		out, err := s.Patch(ctx, gvk, "default", "g", cluster.ApplyPatchType,
			[]byte("apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g}\nspec:\n  ports: "+ports+"\n"), cluster.FieldOwner(manager))
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	apply("a", "[{name: http, port: 80}]")
	out := apply("b", "[{name: metrics, port: 9090}]")
	ports := out["spec"].(map[string]any)["ports"].([]any)
	if len(ports) != 2 {
		t.Fatalf("ports %v", ports)
	}
	out = apply("a", "[]")
	ports = out["spec"].(map[string]any)["ports"].([]any)
	if len(ports) != 1 || ports[0].(map[string]any)["name"] != "metrics" {
		t.Errorf("after a dropped http: %v", ports)
	}
}
