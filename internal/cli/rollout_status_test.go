package cli

import (
	"strings"
	"testing"
)

const simStatefulSet = `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  serviceName: db
  replicas: 2
  selector:
    matchLabels: {app: db}
  template:
    metadata:
      labels: {app: db}
    spec:
      containers:
      - name: db
        image: nginx:1.27
`

// TestRolloutStatusStatefulSet: rollout status follows a StatefulSet with
// kubectl's lines (package health), fast-forwarding the embedded cluster,
// and refuses kinds that have no rollout, with kubectl's message.
func TestRolloutStatusStatefulSet(t *testing.T) {
	t.Parallel()
	c := newSeedCluster(t)
	c.ok("apply", "-f", c.file("sts.yaml", simStatefulSet))
	out := c.ok("rollout", "status", "statefulset/db", "--timeout=5m")
	if !strings.HasSuffix(out, "partitioned roll out complete: 2 new pods have been updated...\n") {
		t.Fatalf("rollout status:\n%s", out)
	}
	if !strings.HasPrefix(out, "Waiting for ") {
		t.Fatalf("no waiting line:\n%s", out)
	}
	c.ok("apply", "-f", c.file("cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n"))
	_, errOut, code := c.run("rollout", "status", "configmap/settings")
	if code == 0 || errOut != "error: no status viewer has been implemented for ConfigMap\n" {
		t.Fatalf("configmap: exit %d, %q", code, errOut)
	}
}
