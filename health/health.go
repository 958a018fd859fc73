package health

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Status is how far an object is from what its spec asks for.
type Status string

// The statuses, kstatus's.
const (
	// Current: the object is what its spec asks for (a rollout finished,
	// a Job completed, a Pod ready).
	Current Status = "Current"
	// InProgress: the controllers are still working on it.
	InProgress Status = "InProgress"
	// Failed: it cannot get there without a change (a progress deadline
	// exceeded, a Job out of retries, a container crash-looping).
	Failed Status = "Failed"
	// Terminating: it is being deleted.
	Terminating Status = "Terminating"
	// NotFound: it does not exist.
	NotFound Status = "NotFound"
)

// Result is the health of one object.
type Result struct {
	// Status is the assessment.
	Status Status
	// Reason is a CamelCase word for a status that is not Current
	// ("ProgressDeadlineExceeded", "CrashLoopBackOff",
	// "LatestGenerationNotObserved"), "" otherwise.
	Reason string
	// Message says it in a sentence; for Deployments, StatefulSets and
	// DaemonSets, kubectl rollout status's line.
	Message string
}

// String prints "InProgress: Waiting for ...", or the status alone.
func (r Result) String() string {
	if r.Message == "" {
		return string(r.Status)
	}
	return string(r.Status) + ": " + r.Message
}

// Assess returns the health of obj; nil is NotFound.
func Assess(obj map[string]any) Result {
	if obj == nil {
		return Result{Status: NotFound, Reason: "NotFound", Message: "Resource not found"}
	}
	if str(obj, "metadata", "deletionTimestamp") != "" {
		return Result{Status: Terminating, Reason: "Terminating", Message: "Resource scheduled for deletion"}
	}
	group, _, _ := strings.Cut(str(obj, "apiVersion"), "/")
	if !strings.Contains(str(obj, "apiVersion"), "/") {
		group = ""
	}
	kind := str(obj, "kind")
	switch group + "/" + kind {
	case "apps/Deployment":
		return deployment(obj)
	case "apps/StatefulSet":
		return statefulSet(obj)
	case "apps/DaemonSet":
		return daemonSet(obj)
	}
	if r, stale := generationNotObserved(obj); stale {
		return r
	}
	switch group + "/" + kind {
	case "apps/ReplicaSet":
		return replicaSet(obj)
	case "batch/Job":
		return job(obj)
	case "/Pod":
		return pod(obj)
	case "/Service":
		return service(obj)
	case "/PersistentVolumeClaim":
		return pvc(obj)
	case "/Namespace":
		if p := str(obj, "status", "phase"); p != "" && p != "Active" {
			return Result{Status: InProgress, Reason: p, Message: "Namespace is " + p}
		}
		return Result{Status: Current, Message: "Namespace is active"}
	case "apiextensions.k8s.io/CustomResourceDefinition":
		return crd(obj)
	}
	return generic(obj)
}

// generationNotObserved reports an object whose controller has not seen
// its latest generation.
func generationNotObserved(obj map[string]any) (Result, bool) {
	gen, ok := integer(obj, "metadata", "generation")
	if !ok {
		return Result{}, false
	}
	observed, ok := integer(obj, "status", "observedGeneration")
	if !ok || observed >= gen {
		return Result{}, false
	}
	return Result{Status: InProgress, Reason: "LatestGenerationNotObserved",
		Message: fmt.Sprintf("%s generation is %d, but latest observed generation is %d", str(obj, "kind"), gen, observed)}, true
}

// generic assesses by the standard conditions.
func generic(obj map[string]any) Result {
	gen, hasGen := integer(obj, "metadata", "generation")
	for _, c := range list(obj, "status", "conditions") {
		cm, _ := c.(map[string]any)
		if og, ok := integer(cm, "observedGeneration"); ok && hasGen && og < gen {
			return Result{Status: InProgress, Reason: "LatestGenerationNotObserved",
				Message: fmt.Sprintf("%s condition %s is for generation %d, the latest is %d", str(obj, "kind"), str(cm, "type"), og, gen)}
		}
	}
	for _, c := range list(obj, "status", "conditions") {
		cm, _ := c.(map[string]any)
		if str(cm, "status") != "True" {
			continue
		}
		switch str(cm, "type") {
		case "Reconciling":
			return Result{Status: InProgress, Reason: or(str(cm, "reason"), "Reconciling"), Message: str(cm, "message")}
		case "Stalled":
			return Result{Status: Failed, Reason: or(str(cm, "reason"), "Stalled"), Message: str(cm, "message")}
		}
	}
	if c := condition(obj, "Ready"); c != nil {
		if str(c, "status") == "True" {
			return Result{Status: Current, Message: or(str(c, "message"), "Resource is Ready")}
		}
		return Result{Status: InProgress, Reason: or(str(c, "reason"), "NotReady"), Message: or(str(c, "message"), "Resource is not Ready")}
	}
	return Result{Status: Current, Message: "Resource is current"}
}

func deployment(obj map[string]any) Result {
	msg, done, err := deploymentRollout(obj, 0)
	switch {
	case err != nil:
		return Result{Status: Failed, Reason: "ProgressDeadlineExceeded", Message: err.Error()}
	case !done:
		return Result{Status: InProgress, Reason: rolloutReason(obj), Message: msg}
	}
	if r, settled := deploymentSettled(obj); !settled {
		return r
	}
	return Result{Status: Current, Message: msg}
}

// deploymentSettled is kstatus's view of a Deployment whose rollout
// kubectl calls done: every replica updated, available and ready, none
// left to terminate, and the controller's conditions saying so.
func deploymentSettled(obj map[string]any) (Result, bool) {
	want := replicas(obj)
	have, _ := integer(obj, "status", "replicas")
	updated, _ := integer(obj, "status", "updatedReplicas")
	ready, _ := integer(obj, "status", "readyReplicas")
	avail, _ := integer(obj, "status", "availableReplicas")
	switch {
	case have < want:
		return inProgress("LessReplicas", "Replicas: %d/%d", have, want), false
	case updated < want:
		return inProgress("LessUpdated", "Updated: %d/%d", updated, want), false
	case have > want:
		return inProgress("ExtraPods", "Pending termination: %d", have-want), false
	case avail < updated:
		return inProgress("LessAvailable", "Available: %d/%d", avail, updated), false
	case ready < want:
		return inProgress("LessReady", "Ready: %d/%d", ready, want), false
	}
	// Without a progress deadline the controller sets no Progressing
	// condition.
	_, hasDeadline := integer(obj, "spec", "progressDeadlineSeconds")
	if d, _ := integer(obj, "spec", "progressDeadlineSeconds"); hasDeadline && d != math.MaxInt32 {
		c := condition(obj, "Progressing")
		if c == nil || str(c, "status") != "True" || str(c, "reason") != "NewReplicaSetAvailable" {
			return inProgress("ReplicaSetNotAvailable", "ReplicaSet not Available"), false
		}
	}
	if c := condition(obj, "Available"); c == nil || str(c, "status") != "True" {
		return inProgress("DeploymentNotAvailable", "Deployment not Available"), false
	}
	return Result{}, true
}

func statefulSet(obj map[string]any) Result {
	if str(obj, "spec", "updateStrategy", "type") == "OnDelete" {
		if r, stale := observed(obj, true, "Waiting for statefulset spec update to be observed..."); stale {
			return r
		}
		want := replicas(obj)
		if ready, _ := integer(obj, "status", "readyReplicas"); ready < want {
			return Result{Status: InProgress, Reason: "NotReady", Message: fmt.Sprintf("Waiting for %d pods to be ready...", want-ready)}
		}
		return Result{Status: Current, Message: fmt.Sprintf("statefulset with OnDelete strategy: %d pods ready", want)}
	}
	msg, done, _ := statefulSetRollout(obj)
	if !done {
		return Result{Status: InProgress, Reason: rolloutReason(obj), Message: msg}
	}
	want := replicas(obj)
	have, _ := integer(obj, "status", "replicas")
	ready, _ := integer(obj, "status", "readyReplicas")
	current, _ := integer(obj, "status", "currentReplicas")
	switch _, partitioned := at(obj, "spec", "updateStrategy", "rollingUpdate", "partition"); {
	case have < want:
		return inProgress("LessReplicas", "Replicas: %d/%d", have, want)
	case ready < want:
		return inProgress("LessReady", "Ready: %d/%d", ready, want)
	case have > want:
		return inProgress("ExtraPods", "Pending termination: %d", have-want)
	case !partitioned && current < want:
		return inProgress("LessCurrent", "current: %d/%d", current, want)
	case !partitioned && str(obj, "status", "currentRevision") != str(obj, "status", "updateRevision"):
		return inProgress("RevisionMismatch", "Waiting for updated revision to match current")
	}
	return Result{Status: Current, Message: msg}
}

func daemonSet(obj map[string]any) Result {
	if _, ok := integer(obj, "status", "observedGeneration"); !ok {
		return inProgress("NoObservedGeneration", "DaemonSet status.observedGeneration not found")
	}
	if str(obj, "spec", "updateStrategy", "type") == "OnDelete" {
		if r, stale := observed(obj, false, "Waiting for daemon set spec update to be observed..."); stale {
			return r
		}
	} else {
		msg, done, _ := daemonSetRollout(obj)
		if !done {
			return Result{Status: InProgress, Reason: rolloutReason(obj), Message: msg}
		}
	}
	name := str(obj, "metadata", "name")
	desired, ok := integer(obj, "status", "desiredNumberScheduled")
	if !ok {
		return inProgress("NoDesiredNumber", "Missing .status.desiredNumberScheduled")
	}
	current, _ := integer(obj, "status", "currentNumberScheduled")
	updated, _ := integer(obj, "status", "updatedNumberScheduled")
	avail, _ := integer(obj, "status", "numberAvailable")
	ready, _ := integer(obj, "status", "numberReady")
	switch {
	case current < desired:
		return inProgress("LessCurrent", "Current: %d/%d", current, desired)
	case updated < desired && str(obj, "spec", "updateStrategy", "type") != "OnDelete":
		return inProgress("LessUpdated", "Updated: %d/%d", updated, desired)
	case avail < desired:
		return inProgress("LessAvailable", "Available: %d/%d", avail, desired)
	case ready < desired:
		return inProgress("LessReady", "Ready: %d/%d", ready, desired)
	}
	if str(obj, "spec", "updateStrategy", "type") == "OnDelete" {
		return Result{Status: Current, Message: fmt.Sprintf("daemon set %q with OnDelete strategy: %d pods available", name, desired)}
	}
	return Result{Status: Current, Message: fmt.Sprintf("daemon set %q successfully rolled out", name)}
}

func inProgress(reason, format string, args ...any) Result {
	return Result{Status: InProgress, Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// observed reports a workload whose latest generation was not observed
// (with zero: an observedGeneration of 0 counts as not observed, as
// kubectl's StatefulSet viewer has it).
func observed(obj map[string]any, zero bool, msg string) (Result, bool) {
	gen, _ := integer(obj, "metadata", "generation")
	og, _ := integer(obj, "status", "observedGeneration")
	if og < gen || (zero && og == 0) {
		return Result{Status: InProgress, Reason: "LatestGenerationNotObserved", Message: msg}, true
	}
	return Result{}, false
}

// rolloutReason names why a rollout is not done.
func rolloutReason(obj map[string]any) string {
	gen, _ := integer(obj, "metadata", "generation")
	og, _ := integer(obj, "status", "observedGeneration")
	if og < gen {
		return "LatestGenerationNotObserved"
	}
	return "RolloutInProgress"
}

func replicaSet(obj map[string]any) Result {
	if c := condition(obj, "ReplicaFailure"); c != nil && str(c, "status") == "True" {
		return Result{Status: InProgress, Reason: "ReplicaFailure", Message: or(str(c, "message"), "Replica failure")}
	}
	want := replicas(obj)
	have, _ := integer(obj, "status", "replicas")
	labelled, _ := integer(obj, "status", "fullyLabeledReplicas")
	ready, _ := integer(obj, "status", "readyReplicas")
	avail, _ := integer(obj, "status", "availableReplicas")
	switch {
	case labelled < want:
		return inProgress("LessLabelled", "Labelled: %d/%d", labelled, want)
	case avail < want:
		return inProgress("LessAvailable", "Available: %d/%d", avail, want)
	case ready < want:
		return inProgress("LessReady", "Ready: %d/%d", ready, want)
	case have > want:
		return inProgress("ExtraPods", "Pending termination: %d", have-want)
	}
	return Result{Status: Current, Message: fmt.Sprintf("ReplicaSet is available. Replicas: %d", have)}
}

func job(obj map[string]any) Result {
	succeeded, _ := integer(obj, "status", "succeeded")
	active, _ := integer(obj, "status", "active")
	failed, _ := integer(obj, "status", "failed")
	for _, c := range list(obj, "status", "conditions") {
		cm, _ := c.(map[string]any)
		if str(cm, "status") != "True" {
			continue
		}
		switch str(cm, "type") {
		case "Complete":
			return Result{Status: Current, Message: fmt.Sprintf("Job Completed. succeeded: %d/%d", succeeded, completions(obj))}
		case "Failed":
			return Result{Status: Failed, Reason: or(str(cm, "reason"), "JobFailed"), Message: or(str(cm, "message"), "Job Failed")}
		case "Suspended":
			return Result{Status: Current, Message: "Job is suspended"}
		}
	}
	return Result{Status: InProgress, Reason: "JobInProgress", Message: fmt.Sprintf("Job in progress. success:%d, active: %d, failed: %d", succeeded, active, failed)}
}

func completions(obj map[string]any) int64 {
	if c, ok := integer(obj, "spec", "completions"); ok {
		return c
	}
	return 1
}

// failingWaits are the waiting reasons of a container that make its pod
// Failed.
var failingWaits = map[string]bool{
	"CrashLoopBackOff":           true,
	"ImagePullBackOff":           true,
	"ErrImagePull":               true,
	"InvalidImageName":           true,
	"CreateContainerConfigError": true,
}

func pod(obj map[string]any) Result {
	phase := str(obj, "status", "phase")
	switch phase {
	case "Succeeded":
		return Result{Status: Current, Message: "Pod has completed successfully"}
	case "Failed":
		return Result{Status: Failed, Reason: or(str(obj, "status", "reason"), "PodFailed"), Message: or(str(obj, "status", "message"), "Pod has completed, but not successfully")}
	}
	for _, field := range []string{"initContainerStatuses", "containerStatuses"} {
		for _, cs := range list(obj, "status", field) {
			cm, _ := cs.(map[string]any)
			if reason := str(cm, "state", "waiting", "reason"); failingWaits[reason] {
				msg := fmt.Sprintf("Container %s is in %s", str(cm, "name"), reason)
				if m := str(cm, "state", "waiting", "message"); m != "" {
					msg += ": " + m
				}
				return Result{Status: Failed, Reason: reason, Message: msg}
			}
		}
	}
	if c := condition(obj, "Ready"); c != nil && str(c, "status") == "True" && phase == "Running" {
		return Result{Status: Current, Message: "Pod is Ready"}
	}
	if c := condition(obj, "PodScheduled"); c != nil && str(c, "status") == "False" && str(c, "reason") == "Unschedulable" {
		return Result{Status: InProgress, Reason: "PodUnschedulable", Message: or(str(c, "message"), "Pod could not be scheduled")}
	}
	if phase == "Running" {
		return Result{Status: InProgress, Reason: "PodRunningNotReady", Message: "Pod is running but is not Ready"}
	}
	return Result{Status: InProgress, Reason: "PodNotReady", Message: "Pod phase is " + or(phase, "not set")}
}

func service(obj map[string]any) Result {
	if str(obj, "spec", "type") == "LoadBalancer" && str(obj, "spec", "clusterIP") == "" {
		return inProgress("NoIPAssigned", "ClusterIP not set. Service type: LoadBalancer")
	}
	return Result{Status: Current, Message: "Service is ready"}
}

func pvc(obj map[string]any) Result {
	switch p := str(obj, "status", "phase"); p {
	case "Bound":
		return Result{Status: Current, Message: "PVC is Bound"}
	case "Lost":
		return Result{Status: Failed, Reason: "ClaimLost", Message: "PVC lost its volume"}
	default:
		return Result{Status: InProgress, Reason: "NotBound", Message: "PVC is not Bound. phase: " + or(p, "Pending")}
	}
}

func crd(obj map[string]any) Result {
	if c := condition(obj, "NamesAccepted"); c != nil && str(c, "status") == "False" {
		return Result{Status: Failed, Reason: or(str(c, "reason"), "NamesNotAccepted"), Message: str(c, "message")}
	}
	if c := condition(obj, "Established"); c != nil {
		switch {
		case str(c, "status") == "True":
			return Result{Status: Current, Message: "CRD is established"}
		case str(c, "status") == "False" && str(c, "reason") != "Installing":
			return Result{Status: Failed, Reason: or(str(c, "reason"), "NotEstablished"), Message: str(c, "message")}
		}
	}
	return Result{Status: InProgress, Reason: "Installing", Message: "Install in progress"}
}

// replicas returns spec.replicas, 1 when absent.
func replicas(obj map[string]any) int64 {
	if r, ok := integer(obj, "spec", "replicas"); ok {
		return r
	}
	return 1
}

// condition returns the condition of the type, or nil.
func condition(obj map[string]any, typ string) map[string]any {
	for _, c := range list(obj, "status", "conditions") {
		if cm, ok := c.(map[string]any); ok && str(cm, "type") == typ {
			return cm
		}
	}
	return nil
}

func at(obj map[string]any, path ...string) (any, bool) {
	var cur any = obj
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[p]; !ok {
			return nil, false
		}
	}
	return cur, true
}

func str(obj map[string]any, path ...string) string {
	v, _ := at(obj, path...)
	s, _ := v.(string)
	return s
}

func integer(obj map[string]any, path ...string) (int64, bool) {
	v, ok := at(obj, path...)
	if !ok {
		return 0, false
	}
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case float64:
		return int64(n), true
	case string:
		i, err := strconv.ParseInt(n, 10, 64)
		return i, err == nil
	}
	return 0, false
}

func list(obj map[string]any, path ...string) []any {
	v, _ := at(obj, path...)
	l, _ := v.([]any)
	return l
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
