package merge

import (
	"encoding/json"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

// reference runs kubectl's client-side apply merge on the three objects:
// the patch of strategicpatch.CreateThreeWayMergePatch with patch metadata
// from the Go struct of the kind, and the object that
// strategicpatch.StrategicMergePatch makes of live with it.
func reference(tb testing.TB, dataStruct any, last, config, live map[string]any, overwrite bool) (patch, result map[string]any, err error) {
	tb.Helper()
	enc := func(m map[string]any) []byte {
		if m == nil {
			return nil
		}
		b, err := json.Marshal(m)
		if err != nil {
			tb.Fatal(err)
		}
		return b
	}
	meta, err := strategicpatch.NewPatchMetaFromStruct(dataStruct)
	if err != nil {
		tb.Fatal(err)
	}
	pb, err := strategicpatch.CreateThreeWayMergePatch(enc(last), enc(config), enc(live), meta, overwrite)
	if err != nil {
		return nil, nil, err
	}
	rb, err := strategicpatch.StrategicMergePatch(enc(live), pb, dataStruct)
	if err != nil {
		return nil, nil, err
	}
	if patch, err = value.DecodeObject(pb); err != nil {
		tb.Fatal(err)
	}
	if result, err = value.DecodeObject(rb); err != nil {
		tb.Fatal(err)
	}
	return patch, result, nil
}

func mustYAMLObject(tb testing.TB, s string) map[string]any {
	tb.Helper()
	if s == "" {
		return nil
	}
	b, err := yamlToJSON([]byte(s))
	if err != nil {
		tb.Fatal(err)
	}
	m, err := value.DecodeObject(b)
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

func TestSmokeDeployment(t *testing.T) {
	dep := schema.Builtin().Lookup(schema.GVK{Group: "apps", Version: "v1", Kind: "Deployment"})
	if dep == nil {
		t.Fatal("no Deployment schema")
	}
	last := mustYAMLObject(t, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: nginx-deployment, namespace: default, annotations: {}}
spec:
  minReadySeconds: 5
  selector: {matchLabels: {app: nginx}}
  template:
    metadata: {labels: {app: nginx}}
    spec:
      containers:
      - name: nginx
        image: nginx:1.10
      - name: nginx-helper-a
        image: helper:1.3
      - name: nginx-helper-b
        image: helper:1.3
`)
	config := mustYAMLObject(t, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: nginx-deployment, namespace: default}
spec:
  selector: {matchLabels: {app: nginx}}
  template:
    metadata: {labels: {app: nginx}}
    spec:
      containers:
      - name: nginx
        image: nginx:1.16.1
        ports: [{containerPort: 80}]
      - name: nginx-helper-b
        image: helper:1.3
      - name: nginx-helper-c
        image: helper:1.3
      finalizers: null
`)
	live := mustYAMLObject(t, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: nginx-deployment, namespace: default, annotations: {x: y}, finalizers: [a, b]}
spec:
  replicas: 2
  minReadySeconds: 5
  selector: {matchLabels: {app: nginx}}
  strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 25%, maxUnavailable: 25%}}
  template:
    metadata: {labels: {app: nginx}}
    spec:
      containers:
      - name: nginx
        image: nginx:1.10
        imagePullPolicy: IfNotPresent
      - name: nginx-helper-a
        image: helper:1.3
      - name: nginx-helper-b
        image: helper:1.3
        args: [run]
      - name: nginx-helper-d
        image: helper:1.3
`)
	wantPatch, wantResult, err := reference(t, &appsv1.Deployment{}, last, config, live, true)
	if err != nil {
		t.Fatal(err)
	}
	patch, err := ThreeWay(last, config, live, dep, Options{})
	if err != nil {
		t.Fatal(err)
	}
	result, err := Apply(live, patch, dep)
	if err != nil {
		pj, _ := value.Encode(patch)
		t.Fatalf("%v\npatch: %s", err, pj)
	}
	pj, _ := value.Encode(patch)
	wj, _ := value.Encode(wantPatch)
	if string(pj) != string(wj) {
		t.Errorf("patch\n got %s\nwant %s", pj, wj)
	}
	rj, _ := value.Encode(result)
	wrj, _ := value.Encode(wantResult)
	if string(rj) != string(wrj) {
		t.Errorf("result\n got %s\nwant %s", rj, wrj)
	}
}
