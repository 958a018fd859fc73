package apply_test

import (
	"testing"

	"github.com/konverge/konverge/apply"
	"github.com/konverge/konverge/manifest"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

const giveDocs = `apiVersion: v1
kind: Namespace
metadata:
  name: shop
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  replicas: 2
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: web
        image: nginx:1.27
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: shop
data:
  mode: fast
---
apiVersion: v1
kind: Secret
metadata:
  name: token
  namespace: shop
stringData:
  token: s3cr3t
`

// TestGiveObjects applies the same input with and without
// Options.GiveObjects: the results and the stored objects are the same
// (but for uids), the creates of a run with it took the input objects
// (the cluster defaulted the Deployment's spec in place), and every other
// run (without it, a server dry run) leaves the input as it was.
func TestGiveObjects(t *testing.T) {
	encodeAll := func(objs []manifest.Object) []string {
		out := make([]string, len(objs))
		for i, o := range objs {
			out[i] = string(encode(t, o.Obj))
		}
		return out
	}
	masked := func(o map[string]any) string {
		o = value.DeepCopyObject(o)
		delete(o["metadata"].(map[string]any), "uid")
		return string(encode(t, o))
	}
	kept := parse(t, giveDocs)
	before := encodeAll(kept)
	copied := openStore(t)
	resKept := mustApply(t, copied, apply.Options{}, kept)
	for i, s := range encodeAll(kept) {
		if s != before[i] {
			t.Errorf("Apply without GiveObjects changed its input:\n%s\nto\n%s", before[i], s)
		}
	}
	dry := parse(t, giveDocs)
	mustApply(t, openStore(t), apply.Options{GiveObjects: true, DryRun: apply.DryRunServer}, dry)
	for i, s := range encodeAll(dry) {
		if s != before[i] {
			t.Errorf("a server dry run with GiveObjects changed its input:\n%s\nto\n%s", before[i], s)
		}
	}

	given := parse(t, giveDocs)
	store := openStore(t)
	resGiven := mustApply(t, store, apply.Options{GiveObjects: true}, given)
	if lines(resGiven) != lines(resKept) {
		t.Errorf("results with GiveObjects\n%s\nwithout\n%s", lines(resGiven), lines(resKept))
	}
	// The Deployment's spec (which the config shares with the object
	// created) has the server's defaults.
	if _, ok := given[1].Obj["spec"].(map[string]any)["revisionHistoryLimit"]; !ok {
		t.Errorf("the create did not take the Deployment given: %s", encode(t, given[1].Obj))
	}
	for i := range given {
		gvk := schema.GVK{Group: resGiven[i].Ref.Group, Version: resGiven[i].Ref.Version, Kind: resGiven[i].Ref.Kind}
		a := mustGet(t, copied, gvk, resGiven[i].Ref.Namespace, resGiven[i].Ref.Name)
		b := mustGet(t, store, gvk, resGiven[i].Ref.Namespace, resGiven[i].Ref.Name)
		if masked(a) != masked(b) {
			t.Errorf("stored with GiveObjects\n%s\nwithout\n%s", masked(b), masked(a))
		}
	}
}
