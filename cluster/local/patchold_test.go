package local

import (
	"bytes"
	"context"
	"testing"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

// TestPatchLeavesStoredObject patches objects of several kinds through
// every patch type (and a status patch) and checks that the stored object
// each update compared against, decoded by the call, is exactly what was
// stored once the update is done: the object a patch builds shares the
// fieldsV1 trees with it (copyForUpdate), and a step that changed
// anything else of it in place would corrupt what the update compares
// with (the managedFields difference, generation, immutability,
// allocations, admission).
func TestPatchLeavesStoredObject(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t)
	var checked int
	defer func(f func(objKey, *record)) { updatedFrom = f }(updatedFrom)
	updatedFrom = func(k objKey, old *record) {
		checked++
		got, err := value.Encode(old.obj)
		if err != nil {
			t.Errorf("%v: encode the stored object: %v", k, err)
			return
		}
		if !bytes.Equal(got, old.raw) {
			t.Errorf("%v: the update changed the stored object it started from:\nstored  %s\nafter   %s", k, old.raw, got)
		}
	}
	for _, doc := range []string{crdWidgets, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default, labels: {app: web}}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
        ports: [{containerPort: 80}]
`, `
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec:
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: 8080}]
`, `
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg, namespace: default, labels: {app: web}}
data: {a: "1"}
`, `
apiVersion: v1
kind: Secret
metadata: {name: sec, namespace: default}
data: {a: MQ==}
`, `
apiVersion: example.com/v1
kind: Widget
metadata: {name: w, namespace: default}
spec: {size: 1, extra: {deep: {x: 1}}}
`} {
		if _, err := s.Create(ctx, obj(t, doc), cluster.FieldOwner("creator")); err != nil {
			t.Fatalf("Create: %v", err)
		}
	}
	crd := schema.GVK{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}
	service := schema.GVK{Version: "v1", Kind: "Service"}
	cases := []struct {
		gvk   schema.GVK
		name  string
		pt    cluster.PatchType
		patch string
		opts  []cluster.PatchOption
	}{
		// Fields below untouched parts: defaults (hostPort from
		// hostNetwork), generation and resourceVersion in metadata.
		{gvkDeployment, "web", cluster.StrategicMergePatchType, `{"spec":{"template":{"spec":{"hostNetwork":true}}}}`, nil},
		{gvkDeployment, "web", cluster.MergePatchType, `{"spec":{"replicas":3}}`, nil},
		{gvkDeployment, "web", cluster.JSONPatchType, `[{"op":"replace","path":"/spec/replicas","value":4}]`, nil},
		{gvkDeployment, "web", cluster.StrategicMergePatchType, `{"metadata":{"annotations":{"a":"b"}},"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.28"}]}}}}`, nil},
		{gvkDeployment, "web", cluster.ApplyPatchType, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default"},"spec":{"replicas":2}}`,
			[]cluster.PatchOption{cluster.FieldOwner("applier"), cluster.ForceOwnership}},
		{gvkDeployment, "web", cluster.MergePatchType, `{"status":{"replicas":1}}`, []cluster.PatchOption{cluster.Subresource("status")}},
		// A new type allocates node ports into the untouched ports.
		{service, "web", cluster.StrategicMergePatchType, `{"spec":{"type":"NodePort"}}`, nil},
		{service, "web", cluster.MergePatchType, `{"spec":{"type":"ClusterIP"}}`, nil},
		{service, "web", cluster.JSONPatchType, `[{"op":"replace","path":"/spec/type","value":"NodePort"}]`, nil},
		{service, "web", cluster.ApplyPatchType, `{"apiVersion":"v1","kind":"Service","metadata":{"name":"web","namespace":"default"},"spec":{"type":"ClusterIP"}}`,
			[]cluster.PatchOption{cluster.FieldOwner("applier"), cluster.ForceOwnership}},
		{gvkConfigMap, "cfg", cluster.StrategicMergePatchType, `{"binaryData":{"b":"aGk="}}`, nil},
		{gvkConfigMap, "cfg", cluster.MergePatchType, `{"data":{"a":"2"}}`, nil},
		{gvkConfigMap, "cfg", cluster.JSONPatchType, `[{"op":"add","path":"/data/c","value":"3"}]`, nil},
		{gvkConfigMap, "cfg", cluster.ApplyPatchType, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg","namespace":"default"},"data":{"d":"4"}}`,
			[]cluster.PatchOption{cluster.FieldOwner("applier")}},
		// stringData goes into the untouched data.
		{gvkSecret, "sec", cluster.StrategicMergePatchType, `{"stringData":{"b":"x"}}`, nil},
		{gvkSecret, "sec", cluster.MergePatchType, `{"stringData":{"c":"y"}}`, nil},
		{gvkSecret, "sec", cluster.JSONPatchType, `[{"op":"add","path":"/stringData","value":{"d":"z"}}]`, nil},
		{gvkSecret, "sec", cluster.ApplyPatchType, `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"sec","namespace":"default"},"stringData":{"e":"w"}}`,
			[]cluster.PatchOption{cluster.FieldOwner("applier")}},
		{crd, "widgets.example.com", cluster.MergePatchType, `{"spec":{"names":{"shortNames":["wd","w"]}}}`, nil},
		{crd, "widgets.example.com", cluster.JSONPatchType, `[{"op":"add","path":"/metadata/labels","value":{"a":"b"}}]`, nil},
		{gvkWidget, "w", cluster.MergePatchType, `{"spec":{"size":2,"color":null}}`, nil},
		{gvkWidget, "w", cluster.JSONPatchType, `[{"op":"add","path":"/spec/extra/deep/y","value":2}]`, nil},
		{gvkWidget, "w", cluster.MergePatchType, `{"status":{"ready":true}}`, []cluster.PatchOption{cluster.Subresource("status")}},
	}
	for _, c := range cases {
		for _, dry := range []bool{true, false} {
			opts := c.opts
			if dry {
				opts = append(opts[:len(opts):len(opts)], cluster.DryRunAll)
			}
			before := checked
			if _, err := s.Patch(ctx, c.gvk, "default", c.name, c.pt, []byte(c.patch), opts...); err != nil {
				t.Errorf("%s %s %s (dry run %v): %v", c.gvk.Kind, c.pt, c.patch, dry, err)
				continue
			}
			if checked == before {
				t.Errorf("%s %s %s: no update seen", c.gvk.Kind, c.pt, c.patch)
			}
		}
	}
}
