package cli

import (
	"context"
	"strings"
	"sync"
	"testing"
)

// simStates are the state directories of tests that need every command
// to run the embedded cluster's controllers: get_test.go pins the
// session of get, describe, scale, patch... to a fixed clock without
// controllers (testOpen); for these states the real session is used.
var simStates sync.Map

// This file sorts after get_test.go, so its init wraps the testOpen that
// get_test.go's init sets.
func init() {
	prev := testOpen
	testOpen = func(ctx context.Context, g *Globals) (*Session, error) {
		if _, ok := simStates.Load(g.StateDir()); ok || prev == nil {
			return g.openSession(ctx)
		}
		return prev(ctx, g)
	}
}

// useSimSessions makes the commands on state run the controllers.
func useSimSessions(state string) { simStates.Store(state, true) }

// TestGetWatchNamed: get -w of one named object prints only its rows,
// and --timeout bounds the cluster time watched.
func TestGetWatchNamed(t *testing.T) {
	t.Parallel()
	c := newSeedCluster(t)
	c.ok("apply", "-f", c.file("d.yaml", simDeployment))
	out := c.ok("get", "deploy", "nginx-deployment", "-w", "--timeout=2s")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if !strings.HasPrefix(lines[0], "NAME ") || len(lines) < 2 {
		t.Fatalf("get -w:\n%s", out)
	}
	for _, l := range lines[1:] {
		if !strings.HasPrefix(l, "nginx-deployment ") {
			t.Errorf("row of another object: %q", l)
		}
	}
	if clk := c.ok("clock"); clk != "2026-01-01T00:00:02Z manual\n" {
		t.Errorf("clock after get -w --timeout=2s: %q", clk)
	}
	// The rest of the rollout: watched until nothing is due.
	out = c.ok("get", "deploy", "-w", "--timeout=10m")
	if !strings.Contains(out, "3/3") {
		t.Errorf("get deploy -w never showed 3/3:\n%s", out)
	}
	if _, errOut, code := c.run("get", "deploy,rs", "-w"); code != 1 || !strings.Contains(errOut, "watch is only supported on individual resources") {
		t.Errorf("get deploy,rs -w: exit %d %q", code, errOut)
	}
}
