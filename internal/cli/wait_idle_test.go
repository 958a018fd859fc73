package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// neverReadyPod runs but is never Ready: its readiness gate is a condition
// that nothing sets, so once it has started nothing in the cluster
// changes any more.
const neverReadyPod = `apiVersion: v1
kind: Pod
metadata: {name: x}
spec:
  readinessGates: [{conditionType: example.com/never}]
  containers: [{name: c, image: nginx:1.25}]
`

// TestWaitCenturyStopsAtIdleCap: wait --timeout of a century for a
// condition that never holds stops after sim.MaxIdle (24 h of cluster
// time without a change), says so, exits 1 and leaves every object less
// than a few days old instead of a hundred years.
//
// Why an earlier form of this test hung: in this package's tests,
// get_test.go's testOpen gives the commands that read objects (get, wait,
// describe, ...) a session on a fixed clock without the embedded
// cluster's controllers, unless the state is registered with
// useSimSessions. wait's session then has no sim.Runner, so sessionDriver
// takes the real-cluster driver, which polls every second of wall time:
// for a century. The state is registered here, and a watchdog cancels any
// command after a few minutes of wall time and fails the test.
//
// The pod is idle once started, which is what the cap is for: a pod that
// crash-loops writes a restart and its Events every back-off period (5
// min of cluster time at most), so no 24 h pass without a change and such
// a wait runs until the command's work limit (minutes of CPU on a loaded
// machine, the objects months older at the end).
func TestWaitCenturyStopsAtIdleCap(t *testing.T) {
	state := t.TempDir()
	useSimSessions(state)
	run := func(timeout time.Duration, stdin string, args ...string) (string, string, int) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		var out, errOut bytes.Buffer
		root := NewRootCmd(Streams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut})
		root.SetArgs(append([]string{"--state", state}, args...))
		err := root.ExecuteContext(ctx)
		code := exitCodeOf(err, &errOut)
		if ctx.Err() != nil {
			t.Fatalf("konverge %s: still running after %s of wall time (watchdog); stderr:\n%s", strings.Join(args, " "), timeout, errOut.String())
		}
		return out.String(), errOut.String(), code
	}
	ok := func(args ...string) string {
		t.Helper()
		out, errOut, code := run(2*time.Minute, "", args...)
		if code != 0 {
			t.Fatalf("konverge %s: exit %d: %s", strings.Join(args, " "), code, errOut)
		}
		return out
	}
	clockNow := func() time.Time {
		t.Helper()
		f := strings.Fields(ok("clock"))
		if len(f) == 0 {
			t.Fatal("clock printed nothing")
		}
		at, err := time.Parse(time.RFC3339, f[0])
		if err != nil {
			t.Fatal(err)
		}
		return at
	}
	ok("cluster", "init", "--clock=manual")
	if _, errOut, code := run(time.Minute, neverReadyPod, "apply", "-f", "-"); code != 0 {
		t.Fatalf("apply: exit %d: %s", code, errOut)
	}
	ok("wait", "--for=jsonpath={.status.phase}=Running", "pod/x", "--timeout=10m")
	before := clockNow()

	// Go durations have no years: the flag is refused, as kubectl's, and
	// the clock stays.
	_, errOut, code := run(time.Minute, "", "wait", "--for=condition=Ready", "pod/x", "--timeout=100y")
	if code != 1 || !strings.Contains(errOut, `invalid argument "100y" for "--timeout" flag`) {
		t.Errorf("--timeout=100y: exit %d, stderr %q", code, errOut)
	}
	if now := clockNow(); !now.Equal(before) {
		t.Errorf("a refused flag moved the clock from %s to %s", before, now)
	}

	// A century, in hours: stopped by the cap, with sim's message.
	start := time.Now()
	_, errOut, code = run(5*time.Minute, "", "wait", "--for=condition=Ready", "pod/x", "--timeout=876000h")
	t.Logf("wait --timeout=876000h took %s of wall time", time.Since(start))
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	want := "error: waiting on pods/x: nothing changed in the embedded cluster for 24h0m0s of cluster time, the most one wait fast-forwards without a change; stopped after "
	if !strings.HasPrefix(errOut, want) || !strings.HasSuffix(errOut, "of cluster time (of a time limit of 876000h0m0s)\n") {
		t.Errorf("stderr:\n%s\nwant the idle cap's message:\n%s...", errOut, want)
	}
	moved := clockNow().Sub(before)
	if moved < 24*time.Hour || moved > 72*time.Hour {
		t.Errorf("the clock moved %s, want 24h (the cap) up to a few days", moved)
	}
	created, err := time.Parse(time.RFC3339, ok("get", "pod", "x", "-o", "jsonpath={.metadata.creationTimestamp}"))
	if err != nil {
		t.Fatal(err)
	}
	if age := clockNow().Sub(created); age > 72*time.Hour {
		t.Errorf("pod x is %s old after the wait", age)
	}
	if out := ok("get", "pod", "x", "-o", "jsonpath={.status.phase}"); out != "Running" {
		t.Errorf("pod x: phase %q, want Running", out)
	}
}
