package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/konverge/konverge/internal/golden"
)

// The workload controllers end to end through the CLI on a manual clock:
// a StatefulSet rolled out, updated, its history viewed, rolled back and
// restarted; a DaemonSet likewise; a Job waited for; a CronJob run by a
// clock advance of hours, and a Job created from it by hand. Outputs are
// kept in testdata/cli-rollout/workloads.txt; the figures that matter
// are asserted too.

const walkSTS = `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
spec:
  serviceName: web
  replicas: 3
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: nginx
        image: nginx:1.25
  volumeClaimTemplates:
  - metadata:
      name: data
    spec:
      accessModes: [ReadWriteOnce]
      resources:
        requests:
          storage: 1Gi
`

const walkDS = `apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
spec:
  selector:
    matchLabels: {app: agent}
  template:
    metadata:
      labels: {app: agent}
    spec:
      containers:
      - name: a
        image: nginx:1.25
`

const walkJob = `apiVersion: batch/v1
kind: Job
metadata:
  name: calc
spec:
  completions: 3
  parallelism: 2
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: c
        image: busybox:1.36
        command: ["sh", "-c", "sleep 4"]
`

const walkFail = `apiVersion: batch/v1
kind: Job
metadata:
  name: broken
spec:
  backoffLimit: 1
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: b
        image: busybox:1.36
        command: ["sh", "-c", "exit 3"]
`

const walkCron = `apiVersion: batch/v1
kind: CronJob
metadata:
  name: hourly
spec:
  schedule: "0 * * * *"
  successfulJobsHistoryLimit: 2
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers:
          - name: h
            image: busybox:1.36
            command: ["sh", "-c", "sleep 10"]
`

func TestWorkloadsWalkthrough(t *testing.T) {
	c := newSeedCluster(t)
	c.ok("apply", "-f", c.file("sts.yaml", walkSTS))
	if out := c.ok("rollout", "status", "statefulset/web"); !strings.HasSuffix(out, "partitioned roll out complete: 3 new pods have been updated...\n") {
		t.Errorf("rollout status: %q", out)
	}
	c.ok("get", "statefulset,pods,pvc")
	c.ok("set", "image", "statefulset/web", "nginx=nginx:1.26")
	c.ok("rollout", "status", "statefulset/web")
	hist := c.ok("rollout", "history", "statefulset/web")
	if !strings.Contains(hist, "1         <none>\n2         <none>\n") {
		t.Errorf("history: %q", hist)
	}
	c.ok("rollout", "history", "statefulset/web", "--revision=1")
	c.ok("rollout", "undo", "statefulset/web")
	c.ok("rollout", "status", "statefulset/web")
	if out := c.ok("get", "pod", "web-0", "-o", "jsonpath={.spec.containers[0].image}"); out != "nginx:1.25" {
		t.Errorf("after undo web-0 runs %q", out)
	}
	c.ok("rollout", "undo", "statefulset/web", "--to-revision=3")
	c.run("rollout", "undo", "statefulset/web", "--to-revision=9")
	c.run("rollout", "pause", "statefulset/web")
	c.ok("rollout", "restart", "statefulset/web")
	c.ok("rollout", "status", "statefulset/web")
	c.ok("get", "controllerrevisions")
	c.ok("describe", "statefulset", "web")

	c.ok("apply", "-f", c.file("ds.yaml", walkDS))
	c.ok("rollout", "status", "daemonset/agent")
	c.ok("set", "image", "daemonset/agent", "a=nginx:1.26")
	c.ok("rollout", "status", "daemonset/agent")
	c.ok("rollout", "history", "daemonset/agent")
	c.ok("rollout", "undo", "daemonset/agent")
	c.ok("rollout", "status", "daemonset/agent")
	c.ok("get", "daemonset")
	c.ok("describe", "daemonset", "agent")

	c.ok("apply", "-f", c.file("job.yaml", walkJob))
	c.ok("wait", "--for=condition=complete", "job/calc", "--timeout=1m")
	if out := c.ok("get", "job", "calc"); !strings.Contains(out, "Complete   3/3") {
		t.Errorf("job: %q", out)
	}
	c.ok("apply", "-f", c.file("fail.yaml", walkFail))
	c.ok("wait", "--for=condition=failed", "job/broken", "--timeout=1m")
	c.ok("get", "jobs")
	c.ok("describe", "job", "broken")
	c.run("wait", "--for=condition=complete", "job/broken", "--timeout=30s")

	c.ok("apply", "-f", c.file("cron.yaml", walkCron))
	c.ok("clock", "advance", "5h")
	out := c.ok("get", "cronjob,jobs")
	if n := strings.Count(out, "job.batch/hourly-"); n != 2 {
		t.Errorf("%d Jobs of the CronJob left after 5h (history limit 2):\n%s", n, out)
	}
	c.ok("describe", "cronjob", "hourly")
	c.ok("create", "job", "manual", "--from=cronjob/hourly")
	c.ok("wait", "--for=condition=complete", "job/manual", "--timeout=1m")
	// Uids are random: the transcript shows them masked.
	masked := uidPattern.ReplaceAllString(c.log.String(), "<uid>")
	golden.Assert(t, filepath.Join("..", "..", "testdata", "cli-rollout", "workloads.txt"), []byte(masked))
}
