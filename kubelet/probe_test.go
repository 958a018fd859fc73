package kubelet_test

import (
	"testing"
	"time"

	"github.com/konverge/konverge/cluster"
)

func TestReadinessProbeDelay(t *testing.T) {
	e := newEnv(t, "images:\n- image: \"slow:*\"\n  readiness: {successAfter: 20s}\n")
	e.create(podYAML("p", `  containers:
  - name: c
    image: slow:v
    readinessProbe:
      exec: {command: ["true"]}
      initialDelaySeconds: 5
      periodSeconds: 10
`))
	// Running at 3s; probes at 8s (fails), 18s (fails), 28s (ok).
	e.at(10 * time.Second)
	e.expect("p", map[string]any{"status.phase": "Running", "cond:Ready": "False", "status.containerStatuses.0.ready": false, "status.containerStatuses.0.started": true})
	e.at(27 * time.Second)
	e.expect("p", map[string]any{"cond:Ready": "False"})
	e.at(28 * time.Second)
	e.expect("p", map[string]any{"cond:Ready": "True", "cond:ContainersReady": "True", "status.containerStatuses.0.ready": true})
	for _, c := range e.pod("p")["status"].(map[string]any)["conditions"].([]any) {
		if get(c, "type") == "Ready" && get(c, "lastTransitionTime") != "2026-01-01T00:00:28Z" {
			t.Errorf("Ready since %v, want 00:00:28", get(c, "lastTransitionTime"))
		}
	}
}

// A liveness probe failing from 30s after start kills the container after
// failureThreshold periods; restarts back off 10s, 20s, 40s, ... 5m.
func TestLivenessRestartsWithBackoff(t *testing.T) {
	e := newEnv(t, "images:\n- image: \"sick:*\"\n  liveness: {failAfter: 30s}\n")
	e.create(podYAML("p", `  containers:
  - name: c
    image: sick:v
    livenessProbe:
      httpGet: {path: /healthz, port: 8080}
      periodSeconds: 10
      failureThreshold: 3
`))
	// Run 1 starts at 3s; probes at 3, 13, 23, 33 (fail), 43, 53 (third
	// failure: killed at 53s). Each run lasts 50s.
	e.at(52 * time.Second)
	e.expect("p", map[string]any{"status.containerStatuses.0.restartCount": 0, "status.containerStatuses.0.state.running.startedAt": "2026-01-01T00:00:03Z"})
	e.at(53 * time.Second)
	e.expect("p", map[string]any{
		"status.phase": "Running", "status.containerStatuses.0.restartCount": 1,
		"status.containerStatuses.0.state.waiting.reason":          "CrashLoopBackOff",
		"status.containerStatuses.0.lastState.terminated.exitCode": 137,
		"status.containerStatuses.0.lastState.terminated.reason":   "Error",
	})
	// Restarts at 53+10, then the next run ends 50s later, back-off 20s...
	start, want := 53*time.Second, []time.Duration{10, 20, 40, 80, 160, 300, 300}
	for i, b := range want {
		start += b * time.Second
		e.at(start)
		e.expect("p", map[string]any{"status.containerStatuses.0.state.running.startedAt": clockAt(start), "status.containerStatuses.0.restartCount": i + 1})
		start += 50 * time.Second
	}
}

// Back-off starts over after a container ran for 10 minutes.
func TestBackoffResetsAfterTenMinutes(t *testing.T) {
	e := newEnv(t, "images:\n- image: \"long:*\"\n  exit: {after: 11m, code: 1}\n")
	e.create(podYAML("p", "  containers:\n  - name: c\n    image: long:v\n"))
	first := 3*time.Second + 11*time.Minute
	e.at(first + 10*time.Second)
	e.expect("p", map[string]any{"status.containerStatuses.0.restartCount": 1, "status.containerStatuses.0.state.running.startedAt": clockAt(first + 10*time.Second)})
	second := first + 10*time.Second + 11*time.Minute
	e.at(second + 10*time.Second)
	e.expect("p", map[string]any{"status.containerStatuses.0.restartCount": 2, "status.containerStatuses.0.state.running.startedAt": clockAt(second + 10*time.Second)})
}

func TestStartupProbeGatesLiveness(t *testing.T) {
	e := newEnv(t, "images:\n- image: \"slowstart:*\"\n  startup: {successAfter: 25s}\n")
	e.create(podYAML("p", `  containers:
  - name: c
    image: slowstart:v
    startupProbe: {exec: {command: ["true"]}, periodSeconds: 10, failureThreshold: 5}
    livenessProbe: {exec: {command: ["true"]}, periodSeconds: 10}
`))
	// Running at 3s; startup probes at 3, 13, 23 fail, 33 succeeds.
	e.at(20 * time.Second)
	e.expect("p", map[string]any{"status.containerStatuses.0.started": false, "cond:Ready": "False"})
	e.at(33 * time.Second)
	e.expect("p", map[string]any{"status.containerStatuses.0.started": true, "cond:Ready": "True", "status.containerStatuses.0.restartCount": 0})

	// With failureThreshold 2 the startup probe kills it at 13s.
	e2 := newEnv(t, "images:\n- image: \"slowstart:*\"\n  startup: {successAfter: 25s}\n")
	e2.create(podYAML("p", `  containers:
  - name: c
    image: slowstart:v
    startupProbe: {exec: {command: ["true"]}, periodSeconds: 10, failureThreshold: 2}
`))
	e2.at(13 * time.Second)
	e2.expect("p", map[string]any{"status.containerStatuses.0.restartCount": 1, "status.containerStatuses.0.state.waiting.reason": "CrashLoopBackOff"})
}

func TestInitContainersRunInOrder(t *testing.T) {
	e := newEnv(t, "images:\n- image: \"busybox:*\"\n  command: \"*sleep*\"\n  exit: {after: sleep}\n- image: \"bad-init:*\"\n  exit: {after: 1s, code: 1}\n")
	e.create(podYAML("p", `  initContainers:
  - name: first
    image: busybox:1.36
    command: [sh, -c, sleep 5]
  - name: second
    image: busybox:1.36
    command: [sh, -c, sleep 2]
  containers:
  - name: app
    image: nginx:1.16.1
`))
	// first: pull 2s, start 1s, runs 3s..8s; second: 8s+3s = 11s..13s;
	// app created from 13s, running at 16s.
	e.at(5 * time.Second)
	e.expect("p", map[string]any{
		"status.phase": "Pending", "cond:Initialized": "False",
		"status.initContainerStatuses.0.state.running.startedAt": "2026-01-01T00:00:03Z",
		"status.initContainerStatuses.1.state.waiting.reason":    "PodInitializing",
		"status.containerStatuses.0.state.waiting.reason":        "PodInitializing",
	})
	e.at(12 * time.Second)
	e.expect("p", map[string]any{"status.initContainerStatuses.0.state.terminated.reason": "Completed",
		"status.initContainerStatuses.1.state.running.startedAt": "2026-01-01T00:00:11Z"})
	e.at(16 * time.Second)
	e.expect("p", map[string]any{"status.phase": "Running", "cond:Initialized": "True", "cond:Ready": "True",
		"status.containerStatuses.0.state.running.startedAt": "2026-01-01T00:00:16Z"})

	// A failing init container under Never fails the pod.
	e.create(podYAML("q", "  restartPolicy: Never\n  initContainers:\n  - name: init\n    image: bad-init:v\n  containers:\n  - name: app\n    image: nginx:1.16.1\n"))
	e.at(30 * time.Second)
	e.expect("q", map[string]any{"status.phase": "Failed", "status.initContainerStatuses.0.state.terminated.exitCode": 1})
}

func TestReadinessGates(t *testing.T) {
	e := newEnv(t, "")
	e.create(podYAML("p", "  readinessGates:\n  - conditionType: www.example.com/feature-1\n  containers:\n  - name: c\n    image: nginx:1.16.1\n"))
	e.at(5 * time.Second)
	e.expect("p", map[string]any{"cond:ContainersReady": "True", "cond:Ready": "False"})
	p := e.pod("p")
	st := p["status"].(map[string]any)
	st["conditions"] = append(st["conditions"].([]any), map[string]any{"type": "www.example.com/feature-1", "status": "True"})
	if _, err := e.st.UpdateStatus(e.ctx, p); err != nil {
		t.Fatal(err)
	}
	e.at(6 * time.Second)
	e.expect("p", map[string]any{"cond:Ready": "True", "cond:www.example.com/feature-1": "True"})
}

func TestGracefulTermination(t *testing.T) {
	e := newEnv(t, "images:\n- image: \"stubborn:*\"\n  stop: never\n- image: \"quick:*\"\n  stop: 3s\n")
	e.create(podYAML("stubborn", "  terminationGracePeriodSeconds: 20\n  containers:\n  - name: c\n    image: stubborn:v\n"))
	e.create(podYAML("quick", "  containers:\n  - name: c\n    image: quick:v\n"))
	e.create(podYAML("nginx", "  containers:\n  - name: c\n    image: nginx:1.16.1\n"))
	e.at(10 * time.Second)
	for _, n := range []string{"stubborn", "quick", "nginx"} {
		if err := e.st.Delete(e.ctx, podGVK, "default", n); err != nil {
			t.Fatal(err)
		}
	}
	e.at(10 * time.Second)
	if _, err := e.st.Get(e.ctx, podGVK, "default", "nginx"); !cluster.IsNotFound(err) {
		t.Errorf("nginx pod still there after its containers stopped at once: %v", err)
	}
	e.expect("stubborn", map[string]any{"cond:Ready": "False", "status.containerStatuses.0.ready": false, "metadata.deletionTimestamp": "2026-01-01T00:00:30Z"})
	e.at(12 * time.Second)
	e.expect("quick", map[string]any{"status.phase": "Running"})
	e.at(13 * time.Second)
	if _, err := e.st.Get(e.ctx, podGVK, "default", "quick"); !cluster.IsNotFound(err) {
		t.Errorf("quick pod still there 3s after deletion: %v", err)
	}
	e.at(29 * time.Second)
	e.expect("stubborn", map[string]any{"status.phase": "Running"})
	e.at(30 * time.Second)
	if _, err := e.st.Get(e.ctx, podGVK, "default", "stubborn"); !cluster.IsNotFound(err) {
		t.Errorf("stubborn pod still there after its grace period: %v", err)
	}
}

func clockAt(d time.Duration) string {
	return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(d).Format(time.RFC3339)
}

// TestCrashingSidecarKeepsPodUnready: a restartable init container (a
// sidecar) counts for the pod's readiness, as the kubelet checks it
// before the regular containers: while it crash-loops the pod is not
// ready, whatever its app container does.
func TestCrashingSidecarKeepsPodUnready(t *testing.T) {
	e := newEnv(t, "")
	e.create(podYAML("p", `  initContainers:
  - name: proxy
    image: busybox:1.36
    restartPolicy: Always
    command: [sh, -c, "exit 1"]
  containers:
  - name: app
    image: nginx:1.16.1
`))
	e.at(10 * time.Minute)
	e.expect("p", map[string]any{
		"cond:ContainersReady": "False", "cond:Ready": "False",
		"status.initContainerStatuses.0.ready": false,
	})
	for _, c := range get(e.pod("p"), "status.conditions").([]any) {
		if m := c.(map[string]any); m["type"] == "ContainersReady" && m["message"] != "containers with unready status: [proxy]" {
			t.Errorf("ContainersReady message %q", m["message"])
		}
	}
}
