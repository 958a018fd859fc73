package cli

import (
	"strings"
	"testing"
)

// The same promise as TestRobustness for the other controllers: each
// case is a manifest kube-apiserver accepts (StatefulSets, DaemonSets,
// Jobs, CronJobs, autoscalers, volumes, quotas) that once made a
// controller fail a command or the cluster stall. Every command must
// succeed, print no controller failure, and a healthy Deployment applied
// afterwards must still roll out.

// workloadCases are the cases; each names the Event that must say what
// the controller could not do ("" when nothing is expected).
func workloadCases() []robustCase {
	return []robustCase{
		{"statefulset-pods-refused-by-limitrange", `apiVersion: v1
kind: LimitRange
metadata: {name: ratio}
spec:
  limits:
  - type: Container
    maxLimitRequestRatio: {cpu: "1"}
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
      containers: [{name: c, image: nginx:1.16.1}]
`, "1000h", func(c *seedCluster) {
			c.wantEvent("FailedCreate", `Create Pod db-0 in StatefulSet db failed error: pods "db-0" is forbidden: cpu max limit to request ratio per Container is 1, but no request is specified or request is 0`)
			// The user's fix ends the back-off at once (an update is
			// queued at once, as upstream's informers do), even though
			// the last refusal was minutes ago and the next retry is
			// minutes away.
			c.robustOK("patch", "statefulset/db", "--type=merge", "-p", `{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"nginx:1.16.1","resources":{"requests":{"cpu":"100m"},"limits":{"cpu":"100m"}}}]}}}}`)
			c.robustOK("clock", "advance", "2s")
			if out := c.robustOK("get", "pods", "-o", "name"); !strings.Contains(out, "pod/db-0") {
				t := c.t
				t.Errorf("2 s after the StatefulSet was fixed, its first pod is not there:\n%s", out)
			}
		}},
		{"daemonset-pods-refused-by-quota", `apiVersion: v1
kind: ResourceQuota
metadata: {name: cpu}
spec:
  hard: {requests.cpu: "1"}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers: [{name: c, image: nginx:1.16.1}]
`, "1000h", func(c *seedCluster) {
			c.wantEvent("FailedCreate", `Error creating: pods "agent-`)
			c.wantEvent("FailedCreate", `is forbidden: failed quota: cpu: must specify requests.cpu for: c`)
		}},
		{"statefulset-claims-refused-by-quota", `apiVersion: v1
kind: ResourceQuota
metadata: {name: claims}
spec:
  hard: {persistentvolumeclaims: "0"}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 1
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: c, image: nginx:1.16.1}]
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
`, "1000h", func(c *seedCluster) {
			c.wantEvent("FailedCreate", `Create Claim data-db-0 for Pod db-0 in StatefulSet db failed error: persistentvolumeclaims "data-db-0" is forbidden: exceeded quota: claims`)
		}},
		{"job-pods-refused-by-quota", `apiVersion: v1
kind: ResourceQuota
metadata: {name: none}
spec:
  hard: {pods: "0"}
---
apiVersion: batch/v1
kind: Job
metadata: {name: batch}
spec:
  completions: 100000
  parallelism: 100000
  completionMode: Indexed
  backoffLimitPerIndex: 2147483647
  activeDeadlineSeconds: 9223372036854775807
  ttlSecondsAfterFinished: 2147483647
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox:1.36, command: ["true"]}]
`, "1000h", func(c *seedCluster) {
			c.wantEvent("FailedCreate", `Error creating: pods "batch-0-`)
			c.wantEvent("FailedCreate", `is forbidden: exceeded quota: none, requested: pods=1, used: pods=0, limited: pods=0`)
		}},
		{"cronjob-job-name-refused", `apiVersion: batch/v1
kind: CronJob
metadata: {name: ` + strings.Repeat("c", 52) + `}
spec:
  schedule: "* * * * *"
  startingDeadlineSeconds: 9223372036854775807
  successfulJobsHistoryLimit: 2147483647
  failedJobsHistoryLimit: 0
  jobTemplate:
    spec:
      completions: 100000
      completionMode: Indexed
      template:
        spec:
          restartPolicy: Never
          containers: [{name: c, image: busybox:1.36, command: ["true"]}]
`, "1000h", func(c *seedCluster) {
			c.wantEvent("FailedCreate", `Error creating job: Job.batch "`+strings.Repeat("c", 52)+`-`)
		}},
		{"namespace-deleted-while-full", `apiVersion: v1
kind: Namespace
metadata: {name: full}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: full}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}, finalizers: [example.com/keep]}
    spec: {containers: [{name: c, image: nginx:1.16.1}]}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: full}
spec:
  replicas: 2
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: c, image: nginx:1.16.1}]}
  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: tick, namespace: full}
spec:
  schedule: "* * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: c, image: busybox:1.36, command: ["true"]}]
`, "5m", func(c *seedCluster) {
			// --wait=false: the pods' finalizer holds the namespace, which
			// delete would wait for (and stop after 24h of cluster time
			// without a change, exit 1).
			c.robustOK("delete", "namespace", "full", "--wait=false")
			// The pods' finalizer holds the namespace; the cluster
			// settles (the kubelet deleted them once) instead of
			// spending every command's work on them.
			for _, d := range []string{"1h", "1000h"} {
				_, errOut, code := konvergeRun(c.t, nil, "--state", c.state, "clock", "advance", d)
				if code != 0 || strings.Contains(errOut, "did not catch up") || strings.Contains(errOut, "failed at ") {
					c.t.Fatalf("clock advance %s: exit %d: %s", d, code, errOut)
				}
			}
			out := c.robustOK("get", "namespace", "full", "-o", "yaml")
			if !strings.Contains(out, "example.com/keep") || !strings.Contains(out, "in 3 resource instances") || !strings.Contains(out, "phase: Terminating") {
				c.t.Errorf("namespace full:\n%s", out)
			}
		}},
		{"statefulset-replicas-int32-max", `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 2147483647
  podManagementPolicy: Parallel
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: c, image: nginx:1.16.1}]
`, "10s", func(c *seedCluster) {
			c.wantEvent("FailedCreate", "StatefulSet db asks for 2147483647 replicas; the embedded cluster runs at most 100000 pods per StatefulSet")
			_, errOut, code := konvergeRun(c.t, nil, "--state", c.state, "rollout", "status", "statefulset/db", "--timeout=1s")
			if code != 1 || !strings.Contains(errOut, "timed out") {
				c.t.Errorf("rollout status: exit %d: %s", code, errOut)
			}
			// A scale back is carried out, back-off or not.
			c.robustOK("scale", "statefulset/db", "--replicas=2")
			c.robustOK("rollout", "status", "statefulset/db", "--timeout=10m")
		}},
	}
}

func TestRobustWorkloads(t *testing.T) {
	for _, tc := range workloadCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newSeedCluster(t)
			c.robustOK("apply", "-f", c.file("w.yaml", tc.manifest))
			c.robustOK("clock", "advance", tc.advance)
			c.robustOK("get", "all")
			if tc.check != nil {
				tc.check(c)
			}
			// A healthy Deployment still rolls out, in a namespace of its
			// own (the case's may be bound by a quota).
			c.robustOK("create", "namespace", "healthy")
			c.robustOK("-n", "healthy", "apply", "-f", c.file("healthy.yaml", strings.ReplaceAll(robustDeployment("healthy", 2, plainContainer, "", ""), "robust", "healthy")))
			c.robustOK("-n", "healthy", "rollout", "status", "deployment/healthy", "--timeout=10m")
			c.robustOK("delete", "namespace", "healthy")
			c.robustOK("clock", "advance", "10m")
		})
	}
}
