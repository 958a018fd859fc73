package cli

import (
	"strings"
	"testing"
)

// Hostile command lines about the clock: each must fail with one clear
// line and change nothing, or succeed and leave a state that works.
func TestClockLimits(t *testing.T) {
	c := newSeedCluster(t)
	for _, tc := range []struct {
		args []string
		want string // in the error; "" for success
	}{
		{[]string{"clock", "advance", "-1h"}, "unknown shorthand flag"},
		{[]string{"clock", "advance", "--", "-1h"}, "the clock does not go back"},
		{[]string{"clock", "advance", "abc"}, `invalid duration "abc"`},
		{[]string{"clock", "advance", "1e309h"}, `unknown unit "e"`},
		{[]string{"clock", "advance", "2562048h"}, `invalid duration "2562048h"`},
		// The largest duration would pass the last time Event names can
		// carry (in nanoseconds since 1970): refused, the clock stays.
		{[]string{"clock", "advance", "2562047h47m16.854775807s"}, "the cluster time would pass 2262-04-11T23:47:16Z"},
		{[]string{"clock", "advance", "0"}, ""},
	} {
		out, errOut, code := c.run(tc.args...)
		if tc.want == "" {
			if code != 0 {
				t.Errorf("konverge %s: exit %d: %s", strings.Join(tc.args, " "), code, errOut)
			}
			continue
		}
		if code != 1 || !strings.Contains(errOut, tc.want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("konverge %s: exit %d, stdout %q, stderr %q; want one line with %q", strings.Join(tc.args, " "), code, out, errOut, tc.want)
		}
	}
	if got := c.ok("clock"); got != "2026-01-01T00:00:00Z manual\n" {
		t.Errorf("clock after refused advances: %q", got)
	}

	// Start times outside [1970, 2262-04-11T23:47:16Z] are refused.
	for _, start := range []string{"9999-12-31T23:00:00Z", "0001-01-01T00:00:00Z", "1969-12-31T23:59:59Z", "2262-04-11T23:47:17Z"} {
		_, errOut, code := c.run("cluster", "init", "--force", "--clock=manual", "--start-time", start)
		if code != 1 || !strings.Contains(errOut, "the cluster time must lie between 1970-01-01T00:00:00Z and 2262-04-11T23:47:16Z") {
			t.Errorf("init --start-time %s: exit %d: %s", start, code, errOut)
		}
	}
	// At the last second, the cluster still works; a step further is
	// refused.
	c.ok("cluster", "init", "--force", "--clock=manual", "--start-time", "2262-04-11T23:00:00Z")
	c.robustOK("apply", "-f", c.file("mix.yaml", `apiVersion: batch/v1
kind: CronJob
metadata: {name: cj}
spec:
  schedule: "* * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: c, image: busybox:1.36, command: ["true"]}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 2
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: c, image: busybox:1.36, command: ["sh", "-c", "sleep 5; exit 3"]}]
`))
	c.robustOK("clock", "advance", "47m16s")
	if _, errOut, code := c.run("clock", "advance", "1s"); code != 1 || !strings.Contains(errOut, "would pass") {
		t.Errorf("advance past the last second: exit %d: %s", code, errOut)
	}
	c.robustOK("get", "all")
	if out := c.robustOK("get", "events"); !strings.Contains(out, "SuccessfulCreate") || !strings.Contains(out, "BackOff") {
		t.Errorf("Events near the last second:\n%s", out)
	}
	// A wait that would pass the last second times out there (the pods
	// crash) instead of spinning on a clock that cannot move.
	if _, errOut, code := c.run("rollout", "status", "statefulset/db", "--timeout=1h"); code != 1 || !strings.Contains(errOut, "error: timed out waiting for the condition") {
		t.Errorf("rollout status at the last second: exit %d: %s", code, errOut)
	}
}
