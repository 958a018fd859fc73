package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/schema"
)

const simDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: nginx-deployment
  labels:
    app: nginx
spec:
  replicas: 3
  selector:
    matchLabels:
      app: nginx
  template:
    metadata:
      labels:
        app: nginx
    spec:
      containers:
      - name: nginx
        image: nginx:1.14.2
        ports:
        - containerPort: 80
`

// simRun runs a command that must succeed.
func simRun(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, code := konvergeRun(t, nil, args...)
	if code != 0 {
		t.Fatalf("konverge %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

func TestClusterInitAndClock(t *testing.T) {
	state := t.TempDir()
	out := simRun(t, "--state", state, "cluster", "init", "--clock=manual")
	if !strings.Contains(out, "clock manual at 2026-01-01T00:00:00Z") {
		t.Errorf("cluster init printed %q", out)
	}
	if out := simRun(t, "--state", state, "clock"); out != "2026-01-01T00:00:00Z manual\n" {
		t.Errorf("clock printed %q", out)
	}
	if out := simRun(t, "--state", state, "clock", "advance", "90s"); out != "2026-01-01T00:01:30Z manual\n" {
		t.Errorf("clock advance printed %q", out)
	}
	// Manual time does not move by itself.
	if out := simRun(t, "--state", state, "clock"); out != "2026-01-01T00:01:30Z manual\n" {
		t.Errorf("clock printed %q", out)
	}
	// Re-init needs --force.
	if _, errOut, code := konvergeRun(t, nil, "--state", state, "cluster", "init", "--clock=manual"); code == 0 || !strings.Contains(errOut, "already initialized") {
		t.Errorf("second init: exit %d, %q", code, errOut)
	}
	simRun(t, "--state", state, "cluster", "init", "--clock=manual", "--start-time=2030-05-01T10:00:00Z", "--force")
	if out := simRun(t, "--state", state, "clock"); out != "2030-05-01T10:00:00Z manual\n" {
		t.Errorf("clock after --force printed %q", out)
	}
	if _, errOut, code := konvergeRun(t, nil, "--state", state, "clock", "advance", "soon"); code == 0 || !strings.Contains(errOut, "invalid duration") {
		t.Errorf("advance soon: exit %d, %q", code, errOut)
	}
	// A bad profile is refused with its field.
	bad := filepath.Join(t.TempDir(), "p.yaml")
	if err := os.WriteFile(bad, []byte("images:\n- image: x\n  pull: maybe\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := konvergeRun(t, nil, "--state", t.TempDir(), "cluster", "init", "--sim-profile", bad); code == 0 || !strings.Contains(errOut, "images[0].pull") {
		t.Errorf("bad profile: exit %d, %q", code, errOut)
	}
}

func TestWallClockCatchesUp(t *testing.T) {
	state := t.TempDir()
	simRun(t, "--state", state, "cluster", "init")
	out := simRun(t, "--state", state, "clock")
	if !strings.HasSuffix(out, " wall\n") {
		t.Errorf("clock printed %q", out)
	}
	// Advancing a wall clock puts the cluster ahead of the wall.
	out = simRun(t, "--state", state, "clock", "advance", "1h")
	again := simRun(t, "--state", state, "clock")
	if out != again {
		t.Errorf("a wall clock ahead of the wall moved: %q then %q", out, again)
	}
}

// Through the commands: a Deployment of 3 replicas applied on a manual
// clock has its pods Running and Ready, and its ReplicaSet and itself
// available, 30 s later.
func TestDeploymentRollsOutOnTheClock(t *testing.T) {
	state := t.TempDir()
	simRun(t, "--state", state, "cluster", "init", "--clock=manual")
	file := filepath.Join(t.TempDir(), "deploy.yaml")
	if err := os.WriteFile(file, []byte(simDeployment), 0o600); err != nil {
		t.Fatal(err)
	}
	simRun(t, "--state", state, "apply", "-f", file)
	simRun(t, "--state", state, "clock", "advance", "30s")

	ctx := context.Background()
	st, err := local.Open(state, local.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	pods, err := st.List(ctx, schema.GVK{Version: "v1", Kind: "Pod"})
	if err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 3 {
		t.Fatalf("%d pods, want 3", len(pods.Items))
	}
	for _, p := range pods.Items {
		status := p["status"].(map[string]any)
		if status["phase"] != "Running" {
			t.Errorf("pod %v phase %v", p["metadata"].(map[string]any)["name"], status["phase"])
		}
		ready := false
		for _, c := range status["conditions"].([]any) {
			c := c.(map[string]any)
			if c["type"] == "Ready" && c["status"] == "True" {
				ready = true
			}
		}
		if !ready {
			t.Errorf("pod %v is not Ready", p["metadata"].(map[string]any)["name"])
		}
	}
	d, err := st.Get(ctx, schema.GVK{Group: "apps", Version: "v1", Kind: "Deployment"}, "default", "nginx-deployment")
	if err != nil {
		t.Fatal(err)
	}
	ds := d["status"].(map[string]any)
	for _, f := range []string{"replicas", "readyReplicas", "availableReplicas", "updatedReplicas"} {
		if ds[f] != int64(3) {
			t.Errorf("deployment status.%s = %v, want 3", f, ds[f])
		}
	}
	rss, err := st.List(ctx, schema.GVK{Group: "apps", Version: "v1", Kind: "ReplicaSet"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rss.Items) != 1 || rss.Items[0]["status"].(map[string]any)["readyReplicas"] != int64(3) {
		t.Errorf("replicasets: %v", rss.Items)
	}
}
