package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// TestEvents: events lists a namespace's Events oldest first, --for one
// object's, -A with namespaces, -o yaml as an EventList, and -w prints
// them and then watches until interrupted, exiting 0.
func TestEvents(t *testing.T) {
	t.Parallel()
	c := newSeedCluster(t)
	c.ok("apply", "-f", c.file("d.yaml", simDeployment))
	c.ok("clock", "advance", "30s")
	out := c.ok("events")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if !strings.HasPrefix(lines[0], "LAST SEEN   TYPE ") || len(lines) < 3 {
		t.Fatalf("events:\n%s", out)
	}
	if !strings.Contains(out, "ScalingReplicaSet   Deployment/nginx-deployment") {
		t.Errorf("events without the Deployment's scaling:\n%s", out)
	}
	forDeploy := c.ok("events", "--for", "deploy/nginx-deployment")
	if n := strings.Count(forDeploy, "\n"); n != 2 || !strings.Contains(forDeploy, "Deployment/nginx-deployment") {
		t.Errorf("events --for deploy/nginx-deployment:\n%s", forDeploy)
	}
	if all := c.ok("events", "-A"); !strings.HasPrefix(all, "NAMESPACE   LAST SEEN ") || !strings.Contains(all, "\ndefault     ") {
		t.Errorf("events -A:\n%s", all)
	}
	if y := c.ok("events", "--for", "deploy/nginx-deployment", "-o", "yaml"); !strings.HasPrefix(y, "apiVersion: v1\nitems:\n- ") || !strings.Contains(y, "kind: EventList") {
		t.Errorf("events -o yaml:\n%s", y)
	}
	if _, errOut, code := c.run("events", "--types", "Normal,Bad"); code != 1 || errOut != "error: valid --types are Normal or Warning\n" {
		t.Errorf("events --types Normal,Bad: exit %d %q", code, errOut)
	}
	if _, errOut, _ := c.run("events", "--types", "warning"); errOut != "No events found in default namespace.\n" {
		t.Errorf("events --types warning: %q", errOut)
	}

	var wout, werr bytes.Buffer
	root := NewRootCmd(Streams{In: strings.NewReader(""), Out: &wout, ErrOut: &werr})
	root.SetArgs([]string{"--state", c.state, "events", "-w", "--for", "deploy/nginx-deployment"})
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := root.ExecuteContext(ctx); err != nil {
		t.Fatalf("events -w: %v %s", err, werr.String())
	}
	if time.Since(start) < time.Second {
		t.Errorf("events -w returned before it was interrupted")
	}
	if wout.String() != forDeploy {
		t.Errorf("events -w printed\n%s\nwant what events printed\n%s", wout.String(), forDeploy)
	}
}
