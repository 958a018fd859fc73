package health

import (
	"testing"

	"sigs.k8s.io/yaml"
)

// TestAssess: one case per kind and outcome, objects as the API returns
// them.
func TestAssess(t *testing.T) {
	cases := []struct {
		name, obj string
		want      Result
	}{
		{"nil", ``, Result{Status: NotFound, Reason: "NotFound", Message: "Resource not found"}},
		{"terminating", `{apiVersion: v1, kind: ConfigMap, metadata: {name: c, deletionTimestamp: "2026-01-01T00:00:00Z"}}`,
			Result{Status: Terminating, Reason: "Terminating", Message: "Resource scheduled for deletion"}},
		{"configmap", `{apiVersion: v1, kind: ConfigMap, metadata: {name: c}}`, Result{Status: Current, Message: "Resource is current"}},
		{"replicaset ready", `{apiVersion: apps/v1, kind: ReplicaSet, metadata: {generation: 1}, spec: {replicas: 2}, status: {observedGeneration: 1, replicas: 2, fullyLabeledReplicas: 2, readyReplicas: 2, availableReplicas: 2}}`,
			Result{Status: Current, Message: "ReplicaSet is available. Replicas: 2"}},
		{"replicaset not ready", `{apiVersion: apps/v1, kind: ReplicaSet, metadata: {generation: 1}, spec: {replicas: 2}, status: {observedGeneration: 1, replicas: 2, fullyLabeledReplicas: 2, availableReplicas: 2, readyReplicas: 1}}`,
			Result{Status: InProgress, Reason: "LessReady", Message: "Ready: 1/2"}},
		{"replicaset stale", `{apiVersion: apps/v1, kind: ReplicaSet, metadata: {generation: 3}, spec: {replicas: 2}, status: {observedGeneration: 2}}`,
			Result{Status: InProgress, Reason: "LatestGenerationNotObserved", Message: "ReplicaSet generation is 3, but latest observed generation is 2"}},
		{"job complete", `{apiVersion: batch/v1, kind: Job, spec: {completions: 3}, status: {succeeded: 3, conditions: [{type: Complete, status: "True"}]}}`,
			Result{Status: Current, Message: "Job Completed. succeeded: 3/3"}},
		{"job failed", `{apiVersion: batch/v1, kind: Job, status: {failed: 7, conditions: [{type: Failed, status: "True", reason: BackoffLimitExceeded, message: Job has reached the specified backoff limit}]}}`,
			Result{Status: Failed, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit"}},
		{"job running", `{apiVersion: batch/v1, kind: Job, status: {active: 1}}`,
			Result{Status: InProgress, Reason: "JobInProgress", Message: "Job in progress. success:0, active: 1, failed: 0"}},
		{"pod ready", `{apiVersion: v1, kind: Pod, status: {phase: Running, conditions: [{type: Ready, status: "True"}]}}`, Result{Status: Current, Message: "Pod is Ready"}},
		{"pod crash loop", `{apiVersion: v1, kind: Pod, status: {phase: Running, containerStatuses: [{name: app, state: {waiting: {reason: CrashLoopBackOff, message: back-off 40s restarting failed container}}}]}}`,
			Result{Status: Failed, Reason: "CrashLoopBackOff", Message: "Container app is in CrashLoopBackOff: back-off 40s restarting failed container"}},
		{"pod image", `{apiVersion: v1, kind: Pod, status: {phase: Pending, containerStatuses: [{name: app, state: {waiting: {reason: ImagePullBackOff}}}]}}`,
			Result{Status: Failed, Reason: "ImagePullBackOff", Message: "Container app is in ImagePullBackOff"}},
		{"pod unschedulable", `{apiVersion: v1, kind: Pod, status: {phase: Pending, conditions: [{type: PodScheduled, status: "False", reason: Unschedulable, message: 0/1 nodes are available}]}}`,
			Result{Status: InProgress, Reason: "PodUnschedulable", Message: "0/1 nodes are available"}},
		{"pod succeeded", `{apiVersion: v1, kind: Pod, status: {phase: Succeeded}}`, Result{Status: Current, Message: "Pod has completed successfully"}},
		{"pod failed", `{apiVersion: v1, kind: Pod, status: {phase: Failed, reason: Evicted}}`, Result{Status: Failed, Reason: "Evicted", Message: "Pod has completed, but not successfully"}},
		{"service", `{apiVersion: v1, kind: Service, spec: {type: ClusterIP}}`, Result{Status: Current, Message: "Service is ready"}},
		{"lb pending", `{apiVersion: v1, kind: Service, spec: {type: LoadBalancer}, status: {loadBalancer: {}}}`,
			Result{Status: InProgress, Reason: "NoIPAssigned", Message: "ClusterIP not set. Service type: LoadBalancer"}},
		{"lb without ingress", `{apiVersion: v1, kind: Service, spec: {type: LoadBalancer, clusterIP: 10.96.0.7}, status: {loadBalancer: {}}}`,
			Result{Status: Current, Message: "Service is ready"}},
		{"pvc bound", `{apiVersion: v1, kind: PersistentVolumeClaim, status: {phase: Bound}}`, Result{Status: Current, Message: "PVC is Bound"}},
		{"pvc pending", `{apiVersion: v1, kind: PersistentVolumeClaim, status: {phase: Pending}}`,
			Result{Status: InProgress, Reason: "NotBound", Message: "PVC is not Bound. phase: Pending"}},
		{"crd", `{apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, status: {conditions: [{type: NamesAccepted, status: "True"}, {type: Established, status: "True"}]}}`,
			Result{Status: Current, Message: "CRD is established"}},
		{"cr ready", `{apiVersion: example.com/v1, kind: Db, metadata: {generation: 2}, status: {conditions: [{type: Ready, status: "True", observedGeneration: 2, message: up}]}}`,
			Result{Status: Current, Message: "up"}},
		{"cr ready old", `{apiVersion: example.com/v1, kind: Db, metadata: {generation: 2}, status: {conditions: [{type: Ready, status: "True", observedGeneration: 1}]}}`,
			Result{Status: InProgress, Reason: "LatestGenerationNotObserved", Message: "Db condition Ready is for generation 1, the latest is 2"}},
		{"cr stalled", `{apiVersion: example.com/v1, kind: Db, status: {conditions: [{type: Ready, status: "False"}, {type: Stalled, status: "True", reason: QuotaExceeded, message: no room}]}}`,
			Result{Status: Failed, Reason: "QuotaExceeded", Message: "no room"}},
		{"cr reconciling", `{apiVersion: example.com/v1, kind: Db, status: {conditions: [{type: Reconciling, status: "True", reason: Progressing}]}}`,
			Result{Status: InProgress, Reason: "Progressing"}},
		{"cr not ready", `{apiVersion: example.com/v1, kind: Db, status: {conditions: [{type: Ready, status: "Unknown"}]}}`,
			Result{Status: InProgress, Reason: "NotReady", Message: "Resource is not Ready"}},
		{"sts done", `{apiVersion: apps/v1, kind: StatefulSet, metadata: {name: db, generation: 1}, spec: {replicas: 2, updateStrategy: {type: RollingUpdate, rollingUpdate: {partition: 0}}}, status: {observedGeneration: 1, replicas: 2, readyReplicas: 2, updatedReplicas: 2}}`,
			Result{Status: Current, Message: "partitioned roll out complete: 2 new pods have been updated..."}},
		{"sts on delete", `{apiVersion: apps/v1, kind: StatefulSet, metadata: {name: db, generation: 1}, spec: {replicas: 2, updateStrategy: {type: OnDelete}}, status: {observedGeneration: 1, readyReplicas: 1}}`,
			Result{Status: InProgress, Reason: "NotReady", Message: "Waiting for 1 pods to be ready..."}},
		{"sts pods to delete", `{apiVersion: apps/v1, kind: StatefulSet, metadata: {name: db, generation: 1}, spec: {replicas: 2, updateStrategy: {type: RollingUpdate, rollingUpdate: {partition: 0}}}, status: {observedGeneration: 1, replicas: 3, readyReplicas: 2, updatedReplicas: 2}}`,
			Result{Status: InProgress, Reason: "ExtraPods", Message: "Pending termination: 1"}},
		{"ds rolling", `{apiVersion: apps/v1, kind: DaemonSet, metadata: {name: agent, generation: 2}, spec: {updateStrategy: {type: RollingUpdate}}, status: {observedGeneration: 2, desiredNumberScheduled: 1, updatedNumberScheduled: 0}}`,
			Result{Status: InProgress, Reason: "RolloutInProgress", Message: `Waiting for daemon set "agent" rollout to finish: 0 out of 1 new pods have been updated...`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var obj map[string]any
			if c.obj != "" {
				if err := yaml.Unmarshal([]byte(c.obj), &obj); err != nil {
					t.Fatal(err)
				}
			}
			if got := Assess(obj); got != c.want {
				t.Errorf("Assess = %#v\nwant %#v", got, c.want)
			}
		})
	}
}
