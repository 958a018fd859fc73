package local

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

func TestBatchReads(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	names := func(l *cluster.List) string {
		var out []string
		for _, o := range l.Items {
			out = append(out, path(o, "metadata.namespace").(string)+"/"+path(o, "metadata.name").(string))
		}
		return strings.Join(out, " ")
	}
	err := s.Batch(ctx, func(c cluster.Interface) error {
		mustCreate(t, c, `{apiVersion: v1, kind: Namespace, metadata: {name: team}}`)
		for _, y := range []string{
			`{apiVersion: v1, kind: ConfigMap, metadata: {name: web.1, namespace: team}}`,
			`{apiVersion: v1, kind: ConfigMap, metadata: {name: web.2, namespace: team}}`,
			`{apiVersion: v1, kind: ConfigMap, metadata: {name: web-x.1, namespace: team}}`,
			`{apiVersion: v1, kind: ConfigMap, metadata: {name: web, namespace: team}}`,
			`{apiVersion: v1, kind: ConfigMap, metadata: {name: web.3}}`,
		} {
			mustCreate(t, c, y)
		}
		l, ok, err := BatchList(ctx, c, gvkConfigMap, ReadOptions{Namespace: "team", NamePrefix: "web."})
		if !ok || err != nil || names(l) != "team/web.1 team/web.2" {
			t.Errorf("BatchList in team, prefix web. = %v, %v, %v", l, ok, err)
		}
		if l, _, _ := BatchList(ctx, c, gvkConfigMap, ReadOptions{NamePrefix: "web."}); names(l) != "default/web.3 team/web.1 team/web.2" {
			t.Errorf("BatchList of every namespace, prefix web. = %s", names(l))
		}
		full, err := c.List(ctx, gvkConfigMap)
		if err != nil {
			t.Fatal(err)
		}
		lean, _, err := BatchList(ctx, c, gvkConfigMap, ReadOptions{WithoutManagedFields: true})
		if err != nil || names(lean) != names(full) {
			t.Fatalf("BatchList without managed fields = %s, %v; want %s", names(lean), err, names(full))
		}
		withFields := 0
		for i, o := range full.Items {
			if path(o, "metadata.managedFields") != nil {
				withFields++
			}
			delete(o["metadata"].(map[string]any), "managedFields")
			if !value.Equal(o, lean.Items[i]) {
				t.Errorf("without managed fields: %v, want %v", lean.Items[i], o)
			}
		}
		if withFields < 5 {
			t.Errorf("%d objects with managed fields in %s", withFields, names(full))
		}
		var seen []string
		ok, err = BatchNames(ctx, c, gvkConfigMap, ReadOptions{Namespace: "team"}, func(ns, name string) error {
			seen = append(seen, ns+"/"+name)
			return nil
		})
		if !ok || err != nil || strings.Join(seen, " ") != "team/kube-root-ca.crt team/web team/web-x.1 team/web.1 team/web.2" {
			t.Errorf("BatchNames = %v, %v, %v", seen, ok, err)
		}
		got, ok, err := BatchGet(ctx, c, gvkConfigMap, "team", "web.2", ReadOptions{WithoutManagedFields: true})
		if !ok || err != nil || path(got, "metadata.name") != "web.2" || path(got, "metadata.managedFields") != nil || got["apiVersion"] != "v1" {
			t.Errorf("BatchGet = %v, %v, %v", got, ok, err)
		}
		if _, _, err := BatchGet(ctx, c, gvkConfigMap, "team", "web.9", ReadOptions{}); !cluster.IsNotFound(err) {
			t.Errorf("BatchGet of a missing object: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := BatchList(ctx, s, gvkConfigMap, ReadOptions{}); ok {
		t.Errorf("BatchList on a Store, not a batch: ok")
	}
	if ok, _ := BatchNames(ctx, s, gvkConfigMap, ReadOptions{}, nil); ok {
		t.Errorf("BatchNames on a Store, not a batch: ok")
	}
}

func TestBatchMeta(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	tx, err := s.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := BatchPutMeta(ctx, tx.Cluster(), "revision", []byte("x")); err == nil {
		t.Errorf("BatchPutMeta of the revision succeeded")
	}
	if ok, err := BatchPutMeta(ctx, tx.Cluster(), "k", []byte("v")); !ok || err != nil || !tx.Wrote() {
		t.Fatalf("BatchPutMeta = %v, %v; Wrote %v", ok, err, tx.Wrote())
	}
	if v, ok, err := BatchGetMeta(ctx, tx.Cluster(), "k"); !ok || err != nil || string(v) != "v" {
		t.Errorf("BatchGetMeta in the batch = %q, %v, %v", v, ok, err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if v, err := s.GetMeta(ctx, "k"); err != nil || string(v) != "v" {
		t.Errorf("GetMeta after the commit = %q, %v", v, err)
	}
	if _, ok, _ := BatchGetMeta(ctx, s, "k"); ok {
		t.Errorf("BatchGetMeta on a Store, not a batch: ok")
	}
}

// TestGetMany reads, in one batch, more objects than one goroutine decodes
// (namespaced and cluster-scoped, missing ones, a kind that is not
// served) and compares every answer with Get's.
func TestGetMany(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	err := s.Batch(ctx, func(c cluster.Interface) error {
		mustCreate(t, c, `{apiVersion: v1, kind: Namespace, metadata: {name: team}}`)
		var keys []cluster.Key
		for i := range 300 {
			name := "cm-" + strconv.Itoa(i)
			if i%3 != 0 {
				mustCreate(t, c, `{apiVersion: v1, kind: ConfigMap, metadata: {name: `+name+`, namespace: team}, data: {i: "`+strconv.Itoa(i)+`"}}`)
			}
			keys = append(keys, cluster.Key{GVK: gvkConfigMap, Namespace: "team", Name: name})
		}
		keys = append(keys,
			cluster.Key{GVK: schema.GVK{Version: "v1", Kind: "Namespace"}, Name: "team"},
			cluster.Key{GVK: schema.GVK{Version: "v1", Kind: "Namespace"}, Namespace: "ignored", Name: "team"},
			cluster.Key{GVK: schema.GVK{Group: "example.com", Version: "v1", Kind: "Widget"}, Namespace: "team", Name: "w"},
			cluster.Key{GVK: gvkConfigMap, Namespace: "elsewhere", Name: "cm-1"},
		)
		wait := c.(cluster.ManyGetter).GetMany(ctx, keys)
		objs, errs := wait()
		if len(objs) != len(keys) || len(errs) != len(keys) {
			t.Fatalf("GetMany of %d keys: %d objects, %d errors", len(keys), len(objs), len(errs))
		}
		found := 0
		for i, k := range keys {
			want, werr := c.Get(ctx, k.GVK, k.Namespace, k.Name)
			if (werr == nil) != (errs[i] == nil) || (werr != nil && werr.Error() != errs[i].Error()) {
				t.Errorf("%v: error %v, Get's %v", k, errs[i], werr)
			}
			if !value.Equal(objs[i], want) {
				t.Errorf("%v: %v, Get's %v", k, objs[i], want)
			}
			if objs[i] != nil {
				found++
			}
		}
		if found != 202 {
			t.Errorf("GetMany found %d objects, want 202", found)
		}
		lean, _ := c.(cluster.ManyGetter).GetMany(ctx, keys, cluster.WithoutManagedFields)()
		for i, o := range objs {
			if o == nil {
				continue
			}
			md := o["metadata"].(map[string]any)
			if md["managedFields"] == nil {
				t.Fatalf("%v: no managedFields", keys[i])
			}
			delete(md, "managedFields")
			if !value.Equal(lean[i], o) {
				t.Errorf("%v without managedFields: %v, want %v", keys[i], lean[i], o)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestPrefetch patches objects read ahead: those unchanged since are
// patched from what was read ahead (not decoded again), and one that
// another write changed in between is patched from what is stored now
// (no write is lost).
func TestPrefetch(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	err := s.Batch(ctx, func(c cluster.Interface) error {
		var writes []cluster.Upcoming
		for _, name := range []string{"a", "b", "c"} {
			mustCreate(t, c, `{apiVersion: v1, kind: ConfigMap, metadata: {name: `+name+`}, data: {k: "0"}}`)
			writes = append(writes, cluster.Upcoming{Key: cluster.Key{GVK: gvkConfigMap, Namespace: "default", Name: name}})
		}
		writes = append(writes,
			cluster.Upcoming{Key: cluster.Key{GVK: gvkConfigMap, Namespace: "default", Name: "missing"}},
			cluster.Upcoming{Key: cluster.Key{GVK: schema.GVK{Group: "example.com", Version: "v1", Kind: "Widget"}, Name: "w"}})
		c.(cluster.Prefetcher).Prefetch(ctx, writes)
		// b changes after it was read ahead.
		if _, err := c.Patch(ctx, gvkConfigMap, "default", "b", cluster.MergePatchType, []byte(`{"data":{"other":"1"}}`)); err != nil {
			t.Fatal(err)
		}
		before, ahead := s.decoded.Load(), s.readAhead.Load()
		for _, name := range []string{"a", "b", "c"} {
			if _, err := c.Patch(ctx, gvkConfigMap, "default", name, cluster.MergePatchType, []byte(`{"data":{"k":"1"}}`)); err != nil {
				t.Fatal(err)
			}
		}
		if n := s.decoded.Load() - before; n != 3 {
			t.Errorf("three patches decoded or took %d objects, want 3", n)
		}
		if n := s.readAhead.Load() - ahead; n != 2 {
			t.Errorf("%d patches took the object read ahead, want 2 (a and c)", n)
		}
		for name, want := range map[string]string{"a": `{"k":"1"}`, "b": `{"k":"1","other":"1"}`, "c": `{"k":"1"}`} {
			got, _ := value.Encode(path(mustGet(t, c, gvkConfigMap, "default", name), "data"))
			if string(got) != want {
				t.Errorf("%s: data %s, want %s", name, got, want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestPrefetchPatches makes the same writes on two stores, one told them
// ahead (batch.Prefetch) and one not: strategic and JSON merge patches of
// Deployments, Services and ConfigMaps, a patch that fails, a patch other
// than the one told, a JSON patch, an object another write changed in
// between. Every answer and every stored object is the same, and the
// patches told and made as told took the patched object.
func TestPrefetchPatches(t *testing.T) {
	ctx := context.Background()
	setup := []string{
		`{apiVersion: apps/v1, kind: Deployment, metadata: {name: web, labels: {app: web}}, spec: {replicas: 1, selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c, image: nginx, ports: [{containerPort: 80}]}]}}}}`,
		`{apiVersion: v1, kind: Service, metadata: {name: web}, spec: {type: NodePort, clusterIP: 10.96.0.50, selector: {app: web}, ports: [{name: http, port: 80, nodePort: 30080}]}}`,
		`{apiVersion: v1, kind: ConfigMap, metadata: {name: a}, data: {k: "0"}}`,
		`{apiVersion: v1, kind: ConfigMap, metadata: {name: b}, data: {k: "0"}}`,
		`{apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {k: "0"}}`,
		`{apiVersion: v1, kind: ConfigMap, metadata: {name: d}, data: {k: "0"}}`,
	}
	type write struct {
		gvk        schema.GVK
		name       string
		pt         cluster.PatchType
		told, sent string
	}
	writes := []write{
		{gvkDeployment, "web", cluster.StrategicMergePatchType, `{"metadata":{"labels":{"v":"2"}},"spec":{"template":{"spec":{"containers":[{"name":"c","image":"nginx:2"}]}}}}`, ""},
		{gvkService, "web", cluster.StrategicMergePatchType, `{"spec":{"ports":[{"name":"http","port":80,"nodePort":30080,"targetPort":8080}]}}`, ""},
		{gvkConfigMap, "a", cluster.MergePatchType, `{"data":{"k":"1","n":null}}`, ""},
		{gvkConfigMap, "b", cluster.StrategicMergePatchType, `{"data":{"k":"2"}}`, `{"data":{"k":"3"}}`},
		{gvkConfigMap, "c", cluster.StrategicMergePatchType, `{"metadata":{"name":"other"}}`, ""},
		{gvkConfigMap, "d", cluster.JSONPatchType, `[{"op":"replace","path":"/data/k","value":"4"}]`, ""},
	}
	run := func(tell bool) (answers []string, stored []string, patched int64) {
		s, _ := openStore(t)
		err := s.Batch(ctx, func(c cluster.Interface) error {
			for _, y := range setup {
				mustCreate(t, c, y)
			}
			if tell {
				var up []cluster.Upcoming
				for _, w := range writes {
					up = append(up, cluster.Upcoming{Key: cluster.Key{GVK: w.gvk, Namespace: "default", Name: w.name}, PatchType: w.pt, Patch: []byte(w.told)})
				}
				c.(cluster.Prefetcher).Prefetch(ctx, up)
			}
			// The Deployment changes after it was told.
			if _, err := c.Patch(ctx, gvkDeployment, "default", "web", cluster.MergePatchType, []byte(`{"metadata":{"annotations":{"x":"y"}}}`)); err != nil {
				t.Fatal(err)
			}
			before := s.patchedAhead.Load()
			for _, w := range writes {
				body := w.told
				if w.sent != "" {
					body = w.sent
				}
				out, err := c.Patch(ctx, w.gvk, "default", w.name, w.pt, []byte(body))
				if out != nil {
					delete(out["metadata"].(map[string]any), "uid") // each store makes its own
				}
				enc, _ := value.Encode(out)
				answers = append(answers, fmt.Sprintf("%s %s: %v %s", w.gvk.Kind, w.name, err, enc))
			}
			patched = s.patchedAhead.Load() - before
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range writes {
			obj := mustGet(t, s, w.gvk, "default", w.name)
			delete(obj["metadata"].(map[string]any), "uid")
			enc, _ := value.Encode(obj)
			stored = append(stored, string(enc))
		}
		return answers, stored, patched
	}
	wantAnswers, wantStored, _ := run(false)
	gotAnswers, gotStored, patched := run(true)
	for i := range wantAnswers {
		if gotAnswers[i] != wantAnswers[i] {
			t.Errorf("told ahead: %s\nnot told:   %s", gotAnswers[i], wantAnswers[i])
		}
		if gotStored[i] != wantStored[i] {
			t.Errorf("stored, told ahead: %s\nnot told:           %s", gotStored[i], wantStored[i])
		}
	}
	// The Service, a and c (whose patch fails as it does otherwise).
	if patched != 3 {
		t.Errorf("%d patches took the patched object, want 3", patched)
	}
}
