package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// The embedded cluster never hangs, bricks or lets a controller fail a
// command, whatever a user applies: each case is a Deployment that
// kube-apiserver accepts and that once broke the embedded cluster. Every
// command must succeed (the request is fine; what the controllers cannot
// do becomes Events and conditions, as on a real cluster), print no
// controller failure, and a healthy Deployment applied afterwards must
// still roll out.

// robustDeployment is a Deployment named name with a pod template spec
// (YAML, indented by 6) and, optionally, the selector's and template's
// extra YAML.
func robustDeployment(name string, replicas int, podSpec, selectorExtra, templateMeta string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: %s
spec:
  replicas: %d
  selector:
    matchLabels: {app: robust}
%s
  template:
    metadata:
      labels: {app: robust}
%s
    spec:
%s
`, name, replicas, selectorExtra, templateMeta, podSpec)
}

const plainContainer = "      containers: [{name: c, image: nginx:1.16.1}]"

type robustCase struct {
	name     string
	manifest string
	advance  string
	// check looks at the cluster after the advance; nil checks nothing
	// more than the commands' success.
	check func(c *seedCluster)
}

// fillsNode are the cases that leave more pods than the one node's 110:
// a new Deployment's pods then wait (as on a real node) instead of
// rolling out.
var fillsNode = map[string]bool{"selector-with-pod-template-hash": true, "replicas-100k": true}

func robustCases() []robustCase {
	long := strings.Repeat("a", 240)
	return []robustCase{
		{"sleep-infinity", robustDeployment("web", 2, `      containers: [{name: c, image: busybox:1.36, command: ["sleep", "infinity"]}]`, "", ""), "1000h",
			func(c *seedCluster) { c.wantPods("Running", 2, "0") }},
		{"sleep-1e309", robustDeployment("web", 1, `      containers: [{name: c, image: busybox:1.36, command: ["sleep", "1e309"]}]`, "", ""), "1000h",
			func(c *seedCluster) { c.wantPods("Running", 1, "0") }},
		{"sleep-huge", robustDeployment("web", 1, `      containers: [{name: c, image: nginx:1.16.1, command: ["sh", "-c", "sleep 99999999999999999"]}]`, "", ""), "1000h",
			func(c *seedCluster) { c.wantPods("Running", 1, "0") }},
		{"probe-periods-max", robustDeployment("web", 1, `      terminationGracePeriodSeconds: 9223372036
      containers:
      - name: c
        image: nginx:1.16.1
        livenessProbe: {httpGet: {path: /, port: 80}, periodSeconds: 2147483647, initialDelaySeconds: 2147483647, failureThreshold: 2147483647, timeoutSeconds: 2147483647}
        readinessProbe: {tcpSocket: {port: 80}, periodSeconds: 2147483647, successThreshold: 1}`, "", ""), "1000h",
			func(c *seedCluster) { c.wantPods("Running", 1, "0") }},
		{"progress-deadline-max", strings.Replace(robustDeployment("web", 1, plainContainer, "", ""), "  replicas: 1", "  replicas: 1\n  progressDeadlineSeconds: 2147483647\n  minReadySeconds: 2147483646", 1), "1000h", nil},
		{"nodename-and-scheduling-gates", robustDeployment("web", 2, `      nodeName: konverge-node
      schedulingGates: [{name: example.com/gate}]
`+plainContainer, "", ""), "1h",
			func(c *seedCluster) {
				c.wantEvent("FailedCreate", "spec.nodeName: Forbidden: cannot be set until all schedulingGates have been cleared")
				c.wantRSCondition("ReplicaFailure", "FailedCreate")
			}},
		{"image-with-whitespace", robustDeployment("web", 2, `      containers: [{name: c, image: "nginx 1.16.1"}]`, "", ""), "1h",
			func(c *seedCluster) {
				c.wantPods("InvalidImageName", 2, "0")
				c.wantEvent("InspectFailed", `couldn't parse image name "nginx 1.16.1": invalid reference format`)
			}},
		{"invalid-finalizer-in-template", robustDeployment("web", 2, plainContainer, "", `      finalizers: ["not a valid finalizer!"]`), "1h",
			func(c *seedCluster) { c.wantEvent("FailedCreate", "metadata.finalizers") }},
		{"ephemeral-volume-long-names", robustDeployment("eph-"+strings.Repeat("e", 200), 2, plainContainer+`
      volumes:
      - name: `+strings.Repeat("v", 63)+`
        ephemeral:
          volumeClaimTemplate:
            spec:
              accessModes: [ReadWriteOnce]
              resources: {requests: {storage: 1Gi}}`, "", ""), "1h", nil},
		{"selector-pod-template-hash-does-not-exist", robustDeployment("web", 2, plainContainer, "    matchExpressions: [{key: pod-template-hash, operator: DoesNotExist}]", ""), "1h",
			func(c *seedCluster) {
				c.wantEvent("ReplicaSetCreateError", "`selector` does not match template `labels`")
				if got := c.conditions("web")["Progressing"]; got != "False ReplicaSetCreateError" {
					c.t.Errorf("Progressing = %q", got)
				}
			}},
		{"name-240-characters", robustDeployment(long, 2, plainContainer, "", ""), "1h",
			func(c *seedCluster) { c.wantPods("Running", 2, "0") }},
		{"token-volume-without-service-account", robustDeployment("web", 1, plainContainer+`
      serviceAccountName: nosuch
      volumes:
      - name: tok
        projected:
          sources:
          - serviceAccountToken: {path: token}`, "", ""), "1h",
			func(c *seedCluster) { c.wantEvent("FailedCreate", `serviceaccount "nosuch" not found`) }},
		{"selector-with-pod-template-hash", strings.ReplaceAll(robustDeployment("web", 2, plainContainer, "", ""), "{app: robust}", "{app: robust, pod-template-hash: abc}"), "10s", nil},
		{"replicas-100k", robustDeployment("web", 100000, plainContainer, "", ""), "1m",
			func(c *seedCluster) {
				// The API answers while the ReplicaSet fills, at the
				// pace of the controller's client (some 20 pods a
				// second; the status counts them after each burst of
				// 500, as the real controller's does).
				out := c.robustOK("get", "deploy", "web", "--no-headers")
				f := strings.Fields(out)
				n, _ := strconv.Atoi(f[2])
				if n == 0 || n >= 100000 {
					c.t.Errorf("%d pods up to date: want some, not all at once\n%s", n, out)
				}
			}},
		{"crash-loop-2400h", robustDeployment("web", 10, `      containers: [{name: c, image: busybox:1.36, command: ["sh", "-c", "echo starting; sleep 5; exit 3"]}]`, "", ""), "2400h",
			func(c *seedCluster) {
				c.wantPods("CrashLoopBackOff", 10, "")
				p := c.firstPod()
				restarts, _ := strconv.Atoi(fmt.Sprint(get(p, "status.containerStatuses.0.restartCount")))
				if restarts < 28000 || restarts > 28400 {
					c.t.Errorf("%d restarts after 2400h of 5s runs and 5m back-off", restarts)
				}
				if code := fmt.Sprint(get(p, "status.containerStatuses.0.lastState.terminated.exitCode")); code != "3" {
					c.t.Errorf("last exit code %s, want 3", code)
				}
			}},
	}
}

func TestRobustness(t *testing.T) {
	for _, tc := range robustCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newSeedCluster(t)
			c.robustOK("apply", "-f", c.file("d.yaml", tc.manifest))
			c.robustOK("clock", "advance", tc.advance)
			c.robustOK("get", "pods")
			c.robustOK("get", "deploy,rs")
			if tc.check != nil {
				tc.check(c)
			}
			// A healthy Deployment still rolls out.
			c.robustOK("apply", "-f", c.file("healthy.yaml", strings.ReplaceAll(robustDeployment("healthy", 2, plainContainer, "", ""), "robust", "healthy")))
			if fillsNode[tc.name] {
				// The node holds 110 pods: the new ones wait, with
				// kube-scheduler's reason.
				c.robustOK("clock", "advance", "10s")
				c.wantEvent("FailedScheduling", "0/1 nodes are available: 1 Too many pods.")
			} else {
				c.robustOK("rollout", "status", "deployment/healthy", "--timeout=10m")
			}
			c.robustOK("delete", "deployment", "--all")
			c.robustOK("clock", "advance", "10m")
		})
	}
}

// robustOK runs a command that must succeed without any controller
// failure reported.
func (c *seedCluster) robustOK(args ...string) string {
	c.t.Helper()
	start := time.Now()
	out, errOut, code := konvergeRun(c.t, nil, append([]string{"--state", c.state}, args...)...)
	if code != 0 || strings.Contains(errOut, "controller failed") || strings.Contains(errOut, "failed at ") {
		c.t.Fatalf("konverge %s: exit %d (after %s)\n%s%s", strings.Join(args, " "), code, time.Since(start), out, errOut)
	}
	return out
}

func (c *seedCluster) podList() []any {
	c.t.Helper()
	var l map[string]any
	if err := yaml.Unmarshal([]byte(c.robustOK("get", "pods", "-o", "json")), &l); err != nil {
		c.t.Fatal(err)
	}
	items, _ := l["items"].([]any)
	return items
}

func (c *seedCluster) firstPod() map[string]any {
	c.t.Helper()
	items := c.podList()
	if len(items) == 0 {
		c.t.Fatal("no pods")
	}
	p, _ := items[0].(map[string]any)
	return p
}

// wantPods checks that n pods show status (the STATUS column) and
// restarts (when not "").
func (c *seedCluster) wantPods(status string, n int, restarts string) {
	c.t.Helper()
	out := c.robustOK("get", "pods", "--no-headers")
	got := 0
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) >= 4 && f[2] == status && (restarts == "" || f[3] == restarts) {
			got++
		}
	}
	if got != n {
		c.t.Errorf("want %d pods %s (restarts %q):\n%s", n, status, restarts, out)
	}
}

func (c *seedCluster) wantEvent(reason, msgPart string) {
	c.t.Helper()
	out := c.robustOK("get", "events")
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, " "+reason+" ") && strings.Contains(line, msgPart) {
			return
		}
	}
	c.t.Errorf("no %s Event saying %q:\n%s", reason, msgPart, out)
}

func (c *seedCluster) wantRSCondition(typ, reason string) {
	c.t.Helper()
	out := c.robustOK("get", "rs", "-o", "yaml")
	if !strings.Contains(out, "type: "+typ) || !strings.Contains(out, "reason: "+reason) {
		c.t.Errorf("no ReplicaSet condition %s/%s:\n%s", typ, reason, out)
	}
}

// get reads a dotted path ("status.containerStatuses.0.state").
func get(obj any, path string) any {
	cur := obj
	for _, f := range strings.Split(path, ".") {
		switch v := cur.(type) {
		case map[string]any:
			cur = v[f]
		case []any:
			i, err := strconv.Atoi(f)
			if err != nil || i >= len(v) {
				return nil
			}
			cur = v[i]
		default:
			return nil
		}
	}
	return cur
}

// A damaged state file gets one line naming it and the way out, exit 1,
// and is left as it was; cluster reset moves it aside and starts over.
func TestDamagedStateAndReset(t *testing.T) {
	for name, damage := range map[string]func(b []byte) []byte{
		"empty":     func([]byte) []byte { return nil },
		"truncated": func(b []byte) []byte { return b[:10000] },
		"garbage":   func(b []byte) []byte { return []byte(strings.Repeat("not a database ", 1000)) },
	} {
		t.Run(name, func(t *testing.T) {
			c := newSeedCluster(t)
			c.ok("apply", "-f", c.file("d.yaml", strings.ReplaceAll(robustDeployment("web", 2, plainContainer, "", ""), "robust", "web")))
			path := filepath.Join(c.state, "state.db")
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			damaged := damage(b)
			if err := os.WriteFile(path, damaged, 0o600); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{{"get", "pods"}, {"apply", "-f", c.file("cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")}, {"clock"}, {"cluster", "init", "--force"}} {
				out, errOut, code := c.run(args...)
				lines := strings.Split(strings.TrimSpace(errOut), "\n")
				if code != 1 || len(lines) != 1 || !strings.Contains(errOut, path) || !strings.Contains(errOut, `"konverge cluster reset"`) || out != "" {
					t.Errorf("konverge %s: exit %d, stdout %q, stderr %q: want one line naming %s and the reset", strings.Join(args, " "), code, out, errOut, path)
				}
				after, _ := os.ReadFile(path)
				if string(after) != string(damaged) {
					t.Fatalf("konverge %s changed the damaged file", strings.Join(args, " "))
				}
			}
			out := c.ok("cluster", "reset", "--clock=manual")
			if !strings.Contains(out, "the old state file is kept as "+path+".") {
				t.Errorf("reset: %q", out)
			}
			if got := c.ok("get", "pods"); !strings.Contains(got, "No resources") && got != "" {
				t.Errorf("after the reset: %q", got)
			}
			kept, _ := filepath.Glob(path + ".*.bak")
			if len(kept) != 1 {
				t.Fatalf("backups %v", kept)
			}
			if b, _ := os.ReadFile(kept[0]); string(b) != string(damaged) {
				t.Error("the backup is not the damaged file")
			}
		})
	}
}

// A clock advance whose work runs out before its target still moves the
// clock (exit 0: it did what it says) and says on stderr that the cluster
// did not catch up fully: a CronJob then skips schedules a real cluster
// would have run.
func TestClockAdvanceTellsWhenItDidNotCatchUp(t *testing.T) {
	c := newSeedCluster(t)
	c.robustOK("apply", "-f", c.file("cj.yaml", `apiVersion: batch/v1
kind: CronJob
metadata: {name: every-minute}
spec:
  schedule: "* * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: c, image: busybox:1.36, command: ["true"]}]
`))
	out, errOut, code := konvergeRun(t, nil, "--state", c.state, "clock", "advance", "200h")
	if code != 0 || !strings.Contains(errOut, "did not catch up fully") || strings.Contains(errOut, "controller failed") || strings.Contains(errOut, "failed at ") {
		t.Fatalf("clock advance 200h: exit %d\n%s%s", code, out, errOut)
	}
	_, errOut, code = konvergeRun(t, nil, "--state", c.state, "clock", "advance", "1m")
	if code != 0 || strings.Contains(errOut, "did not catch up") {
		t.Fatalf("clock advance 1m: exit %d\n%s", code, errOut)
	}
}
