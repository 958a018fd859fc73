package kubelet_test

import (
	"strings"
	"testing"
	"time"

	"github.com/konverge/konverge/controller/event"
	"github.com/konverge/konverge/schema"
)

// Containers end as their commands say, whatever the image, and the
// restart policy decides what follows.
func TestCommandsEndContainers(t *testing.T) {
	e := newEnv(t, "")
	pod := func(name, policy, image, command string) {
		e.create(podYAML(name, "  restartPolicy: "+policy+"\n  containers:\n  - name: app\n    image: "+image+"\n    command: "+command+"\n"))
	}
	pod("exit3", "Never", "busybox:1.36", `["sh", "-c", "echo hi; sleep 5; exit 3"]`)
	pod("ok", "Never", "nginx:1.16.1", `["true"]`)
	pod("fails", "OnFailure", "alpine:3.20", `["false"]`)
	pod("sleep", "Always", "busybox:1.36", `["sleep", "10"]`)
	pod("inf", "Always", "busybox:1.36", `["sleep", "infinity"]`)
	pod("e309", "Always", "busybox:1.36", `["sleep", "1e309"]`)
	pod("huge", "Always", "nginx:1.16.1", `["sleep", "99999999999999999"]`)
	e.at(7 * time.Second)
	e.expect("exit3", map[string]any{"status.phase": "Running"})
	e.at(9 * time.Second)
	e.expect("exit3", map[string]any{"status.phase": "Failed",
		"status.containerStatuses.0.state.terminated.exitCode": 3, "status.containerStatuses.0.state.terminated.reason": "Error"})
	e.expect("ok", map[string]any{"status.phase": "Succeeded",
		"status.containerStatuses.0.state.terminated.exitCode": 0, "status.containerStatuses.0.state.terminated.reason": "Completed"})
	e.expect("fails", map[string]any{"status.phase": "Running",
		"status.containerStatuses.0.lastState.terminated.exitCode": 1, "status.containerStatuses.0.state.waiting.reason": "CrashLoopBackOff"})
	e.at(14 * time.Second)
	e.expect("sleep", map[string]any{"status.containerStatuses.0.restartCount": 1,
		"status.containerStatuses.0.lastState.terminated.reason": "Completed"})
	e.at(1000 * time.Hour)
	for _, name := range []string{"inf", "e309", "huge"} {
		e.expect(name, map[string]any{"status.phase": "Running", "status.containerStatuses.0.restartCount": 0,
			"status.containerStatuses.0.state.running.startedAt": "2026-01-01T00:00:03Z"})
	}
	e.expect("exit3", map[string]any{"status.phase": "Failed"})
}

// Probe periods, delays and thresholds at the API's largest values, and
// the largest grace period, are times that never come: no overflow, no
// endless loop.
func TestHugeDurationsSaturate(t *testing.T) {
	e := newEnv(t, "")
	e.create(podYAML("probes", `  terminationGracePeriodSeconds: 922337203685477
  containers:
  - name: app
    image: busybox:1.36
    command: ["sleep", "infinity"]
    livenessProbe:
      httpGet: {path: /, port: 80}
      periodSeconds: 2147483647
      initialDelaySeconds: 2147483647
      failureThreshold: 2147483647
      timeoutSeconds: 2147483647
    readinessProbe:
      tcpSocket: {port: 80}
      periodSeconds: 2147483647
      successThreshold: 2147483647
`))
	e.at(1000 * time.Hour)
	e.expect("probes", map[string]any{"status.phase": "Running", "status.containerStatuses.0.restartCount": 0})
	if err := e.st.Delete(e.ctx, podGVK, "default", "probes"); err != nil {
		t.Fatal(err)
	}
	e.at(2000 * time.Hour)
	e.expect("probes", map[string]any{"status.phase": "Running"})
}

// The kubelet's Events of a crash loop: the first start's, then one
// BackOff, Pulled, Created and Started per restart, counted.
func TestCrashLoopEvents(t *testing.T) {
	e := newEnv(t, "")
	e.create(podYAML("crash", "  containers:\n  - name: app\n    image: busybox:1.36\n    command: [\"sh\", \"-c\", \"sleep 5; exit 1\"]\n"))
	e.at(10 * time.Minute)
	l, err := e.st.List(e.ctx, schema.GVK{Version: "v1", Kind: "Event"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, ev := range l.Items {
		msg := ev["message"].(string)
		key := ev["reason"].(string) + ": " + msg
		if i := strings.Index(key, " in pod "); i >= 0 {
			key = key[:i]
		}
		got[key] = ev["count"].(int64)
		src := get(ev, "source.component")
		if ev["reason"] != "Scheduled" && (src != "kubelet" || get(ev, "involvedObject.fieldPath") != "spec.containers{app}" || get(ev, "source.host") != "konverge-node") {
			t.Errorf("event %v: source %v, involvedObject %v", key, ev["source"], ev["involvedObject"])
		}
	}
	restarts := get(e.pod("crash"), "status.containerStatuses.0.restartCount").(int64)
	starts := restarts
	if get(e.pod("crash"), "status.containerStatuses.0.state.running") != nil {
		starts++
	}
	want := map[string]int64{
		"Scheduled: Successfully assigned default/crash to konverge-node":                                            1,
		`Pulling: Pulling image "busybox:1.36"`:                                                                      1,
		`Pulled: Successfully pulled image "busybox:1.36" in 2s (2s including waiting). Image size: 90101567 bytes.`: 1,
		"Created: Container created":                                                                                 starts,
		"Started: Container started":                                                                                 starts,
		`Pulled: Container image "busybox:1.36" already present on machine`:                                          starts - 1,
		"BackOff: Back-off restarting failed container app":                                                          restarts,
	}
	if restarts < 4 {
		t.Fatalf("restarts %d", restarts)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: count %d, want %d", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("events %v", got)
	}
	_ = event.Normal
}
