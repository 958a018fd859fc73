package cli

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/konverge/konverge/clock"
	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/objref"
)

// crashConfigMaps is how many ConfigMaps the crash test applies at once,
// with two Deployments (one healthy, one crash-looping).
const crashConfigMaps = 400

// TestKillDuringApplyAndClockAdvance runs the konverge binary on a manual
// clock and kills it with SIGKILL at random instants of `apply` (a
// directory of a few hundred objects, one transaction) and of `clock
// advance 3h` (Deployments, a StatefulSet and a CronJob running, some of
// them crash-looping), then
// checks the invariants of the state:
//
//   - it opens, and every command answers;
//   - the apply is all or nothing: every object of the directory is at
//     the round before or every one at the round applied;
//   - the clock and the objects moved together: no time stamped in any
//     object is later than the persisted clock, the clock is between the
//     times before and after the command, and the last settle the clock
//     records is not ahead of the store's revision;
//   - resourceVersions are unique and not ahead of the store's revision.
//
// A few trials by default; KONVERGE_CRASH_TRIALS=50 for the full run.
func TestKillDuringApplyAndClockAdvance(t *testing.T) {
	t.Parallel()
	bin := buildKonverge(t)
	trials := 4
	if v := os.Getenv("KONVERGE_CRASH_TRIALS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("KONVERGE_CRASH_TRIALS=%q: want a positive number", v)
		}
		trials = n
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d, %d trials", seed, trials)
	rng := rand.New(rand.NewPCG(seed, 2))

	state := t.TempDir()
	inputs := t.TempDir()
	konv := func(args ...string) *exec.Cmd {
		return exec.Command(bin, append([]string{"--state", state}, args...)...)
	}
	// answer runs a command that must succeed within a generous watchdog.
	answer := func(args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, append([]string{"--state", state}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil || strings.Contains(string(out), "controller failed") {
			t.Fatalf("konverge %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	answer("cluster", "init", "--clock=manual")

	writeRound(t, inputs, 0)
	start := time.Now()
	answer("apply", "-f", inputs)
	applyTook := time.Since(start)
	start = time.Now()
	answer("clock", "advance", "3h")
	advanceTook := time.Since(start)
	t.Logf("uninterrupted: apply %v, clock advance 3h %v", applyTook.Round(time.Millisecond), advanceTook.Round(time.Millisecond))

	first := checkCrashInvariants(t, state)
	if first.round != 0 {
		t.Fatalf("after the first apply: round %d", first.round)
	}
	// The kubelet stamps the crash loop's restarts: the check sees times
	// up to the clock's.
	if first.latest.Before(first.now.Add(-10 * time.Minute)) {
		t.Fatalf("latest time stamped in an object %s, clock %s: the time check sees nothing", first.latest, first.now)
	}
	var finished, killed, moved int
	for trial := range trials {
		before := checkCrashInvariants(t, state)
		var cmd *exec.Cmd
		var took time.Duration
		apply := trial%2 == 0
		next := before.round + 1
		if apply {
			writeRound(t, inputs, next)
			cmd, took = konv("apply", "-f", inputs), applyTook
		} else {
			cmd, took = konv("clock", "advance", "3h"), advanceTook
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Up to half as long again as an uninterrupted run (twice for a
		// clock advance, which commits at its end and slows down as Jobs
		// and restarts pile up): kills before, during and sometimes after
		// the commit.
		span := int64(took) * 3 / 2
		if !apply {
			span = int64(took) * 2
		}
		delay := time.Duration(rng.Int64N(span + 1))
		time.Sleep(delay)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		err := cmd.Wait()
		if err == nil {
			finished++
		} else {
			killed++
		}
		after := checkCrashInvariants(t, state)
		what := "clock advance 3h"
		if apply {
			what = "apply"
			if after.round != before.round && after.round != next {
				t.Fatalf("trial %d: killed apply of round %d left round %d (before: %d)", trial, next, after.round, before.round)
			}
			if !after.now.Equal(before.now) {
				t.Errorf("trial %d: apply on a manual clock moved it from %s to %s", trial, before.now, after.now)
			}
		} else if after.now.Before(before.now) || after.now.After(before.now.Add(3*time.Hour)) {
			t.Errorf("trial %d: killed clock advance 3h from %s left the clock at %s", trial, before.now, after.now)
		}
		if !after.now.Equal(before.now) {
			moved++
		}
		t.Logf("trial %d: %s killed after %v (exit: %v): round %d, clock %s, revision %d",
			trial, what, delay.Round(time.Millisecond), err, after.round, after.now.Format(time.RFC3339), after.revision)
		// Every command answers on what the kill left.
		answer("get", "all")
		answer("clock")
	}
	t.Logf("%d trials: %d killed, %d had finished; the clock moved in %d", trials, killed, finished, moved)

	// The state still runs a rollout to the end.
	writeRound(t, inputs, checkCrashInvariants(t, state).round+1)
	answer("apply", "-f", inputs)
	answer("rollout", "status", "deployment/web", "--timeout=10m")
	checkCrashInvariants(t, state)
}

// writeRound writes the crash test's directory: ConfigMaps carrying round
// and a Deployment whose template carries it (a new rollout each round),
// plus a crash-looping Deployment, a crash-looping StatefulSet with claims
// and a CronJob whose Jobs succeed or fail by round.
func writeRound(t *testing.T, dir string, round int) {
	t.Helper()
	payload := strings.Repeat("x", 256)
	for f := range 4 {
		var b strings.Builder
		for i := f; i < crashConfigMaps; i += 4 {
			fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%04d\ndata:\n  round: %q\n  check: \"%d/%d\"\n  payload: %s\n---\n", i, strconv.Itoa(round), round, i, payload)
		}
		writeFile(t, filepath.Join(dir, fmt.Sprintf("cms-%d.yaml", f)), []byte(b.String()))
	}
	writeFile(t, filepath.Join(dir, "deployments.yaml"), []byte(fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 5
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}, annotations: {round: "%d"}}
    spec: {containers: [{name: c, image: nginx:1.16.1}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: crash}
spec:
  replicas: 5
  selector: {matchLabels: {app: crash}}
  template:
    metadata: {labels: {app: crash}}
    spec: {containers: [{name: c, image: busybox:1.36, command: ["sh", "-c", "sleep 30; exit 3"]}]}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 3
  serviceName: db
  podManagementPolicy: Parallel
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: c, image: busybox:1.36, command: ["sh", "-c", "sleep 45; exit 1"]}]}
  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: tick}
spec:
  schedule: "*/5 * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers: [{name: c, image: busybox:1.36, command: ["sh", "-c", "sleep 20; exit %d"]}]
`, round, round%2)))
}

type crashState struct {
	round    int
	now      time.Time
	revision uint64
	// latest is the latest time stamped in an object.
	latest time.Time
}

// checkCrashInvariants opens the crash test's state as the binary left it
// (reading only) and checks its invariants; it returns the round of the
// applied objects and the clock.
func checkCrashInvariants(t *testing.T, dir string) crashState {
	t.Helper()
	st, err := local.Open(dir, local.Options{})
	if err != nil {
		t.Fatalf("the state does not open after kill -9: %v", err)
	}
	defer st.Close()
	ctx := context.Background()
	clk := clock.New(clock.Manual, time.Time{})
	if found, err := clk.Load(ctx, st); err != nil || !found {
		t.Fatalf("clock: found %v, %v", found, err)
	}
	now := clk.Now()
	var revision uint64
	var latest time.Time
	rounds := map[string]int{}
	// The same object may be served in several versions or groups
	// (Events): resourceVersions are unique per uid.
	seen := map[string]string{}
	seenUID := map[string]string{}
	for _, r := range st.Mapper().Resources() {
		list, err := st.List(ctx, r.GVK)
		if err != nil {
			continue // not listable
		}
		rev, err := strconv.ParseUint(list.ResourceVersion, 10, 64)
		if err != nil {
			t.Fatalf("list %s: resourceVersion %q", r.GVK.Kind, list.ResourceVersion)
		}
		revision = max(revision, rev)
		for _, o := range list.Items {
			ref := r.GVK.Kind + " " + objref.Namespace(o) + "/" + objref.Name(o)
			rv := objref.ResourceVersion(o)
			if other, dup := seen[rv]; dup && seenUID[rv] != objref.UID(o) {
				t.Errorf("%s and %s share resourceVersion %s", other, ref, rv)
			}
			seen[rv], seenUID[rv] = ref, objref.UID(o)
			if r.GVK.Group == "events.k8s.io" {
				continue // the same as core Events, other field names
			}
			if n, err := strconv.ParseUint(rv, 10, 64); err != nil || n == 0 || n > rev {
				t.Errorf("%s: resourceVersion %q, list at %d", ref, rv, rev)
			}
			at, path := latestTime(o, "")
			if at.After(latest) {
				latest = at
			}
			if at.After(now) {
				t.Errorf("%s: %s is %s, after the persisted clock %s", ref, path, at.Format(time.RFC3339), now.Format(time.RFC3339))
			}
			switch {
			case r.GVK.Kind == "ConfigMap" && strings.HasPrefix(objref.Name(o), "cm-"):
				data, _ := o["data"].(map[string]any)
				rounds[fmt.Sprint(data["round"])]++
				i, _ := strconv.Atoi(strings.TrimPrefix(objref.Name(o), "cm-"))
				if data["check"] != fmt.Sprintf("%v/%d", data["round"], i) || len(fmt.Sprint(data["payload"])) != 256 {
					t.Errorf("%s: half-written data %v", ref, data)
				}
			case r.GVK.Kind == "Deployment" && objref.Name(o) == "web":
				rounds["web:"+fmt.Sprint(get(o, "spec.template.metadata.annotations.round"))]++
			}
		}
	}
	if s := clk.Settled(); s.Revision > revision {
		t.Errorf("the clock records a settle at revision %d, the store is at %d", s.Revision, revision)
	}
	if s := clk.Settled(); s.At.After(now) {
		t.Errorf("the clock records a settle at %s, after its time %s", s.At, now)
	}
	// Every ConfigMap and the Deployment at one round.
	round := -1
	for k, n := range rounds {
		r, err := strconv.Atoi(strings.TrimPrefix(k, "web:"))
		if err != nil {
			t.Fatalf("round %q", k)
		}
		if round >= 0 && r != round || !strings.HasPrefix(k, "web:") && n != crashConfigMaps {
			t.Fatalf("objects of one apply at different rounds: %v", rounds)
		}
		round = r
	}
	if len(rounds) != 2 {
		t.Fatalf("objects of one apply missing: %v", rounds)
	}
	return crashState{round: round, now: now, revision: revision, latest: latest}
}

// latestTime returns the latest RFC 3339 time found in v's strings, and
// where.
func latestTime(v any, path string) (time.Time, string) {
	var best time.Time
	var at string
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if tm, p := latestTime(x, path+"."+k); tm.After(best) {
				best, at = tm, p
			}
		}
	case []any:
		for i, x := range v {
			if tm, p := latestTime(x, fmt.Sprintf("%s[%d]", path, i)); tm.After(best) {
				best, at = tm, p
			}
		}
	case string:
		if len(v) >= 20 && len(v) <= 35 && v[4] == '-' {
			if tm, err := time.Parse(time.RFC3339Nano, v); err == nil {
				return tm, strings.TrimPrefix(path, ".")
			}
		}
	}
	return best, at
}
