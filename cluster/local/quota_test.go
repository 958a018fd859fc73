package local

import (
	"testing"

	"github.com/konverge/konverge/schema"
)

// TestQuotaStoresPodAsSubmitted: in a namespace with a ResourceQuota, a
// pod is stored as it came (the quota's admission and usage count write
// no empty resources into its containers or its spec), and a pod's
// RuntimeClass overhead counts in the usage: requests for every resource
// of the overhead, limits only where the pod has one.
func TestQuotaStoresPodAsSubmitted(t *testing.T) {
	s, _ := openStore(t)
	mustCreate(t, s, `
apiVersion: v1
kind: ResourceQuota
metadata: {name: q, namespace: default}
spec:
  hard: {pods: "10", requests.memory: 1Gi, limits.memory: 2Gi}
`)
	mustCreate(t, s, `
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: sandboxed}
handler: runsc
overhead:
  podFixed: {cpu: 250m, memory: 120Mi}
`)
	pod := mustCreate(t, s, `
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec:
  runtimeClassName: sandboxed
  initContainers:
  - {name: init, image: busybox, resources: {limits: {memory: 64Mi}}}
  containers:
  - {name: app, image: nginx, resources: {requests: {memory: 64Mi}, limits: {cpu: 200m, memory: 64Mi}}}
  - {name: side, image: nginx, resources: {limits: {cpu: 100m, memory: 32Mi}}}
`)
	spec := pod["spec"].(map[string]any)
	if _, ok := spec["resources"]; ok {
		t.Errorf("spec.resources written: %v", spec["resources"])
	}
	for _, c := range spec["initContainers"].([]any) {
		if _, ok := c.(map[string]any)["resources"].(map[string]any)["requests"]; !ok {
			// The defaulted requests (from the limits) are the API's.
			t.Errorf("init container: requests not defaulted from limits: %v", c)
		}
	}
	side := spec["containers"].([]any)[1].(map[string]any)["resources"].(map[string]any)
	if len(side) != 2 {
		t.Errorf("container side: resources %v", side)
	}
	q := mustGet(t, s, schema.GVK{Version: "v1", Kind: "ResourceQuota"}, "default", "q")
	used := q["status"].(map[string]any)["used"].(map[string]any)
	want := map[string]string{"pods": "1", "requests.memory": "216Mi", "limits.memory": "216Mi"}
	for k, v := range want {
		if used[k] != v {
			t.Errorf("used %s = %v, want %s (all: %v)", k, used[k], v, used)
		}
	}
}
