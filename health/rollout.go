package health

import (
	"fmt"
	"strconv"
	"strings"
)

// RevisionAnnotation holds a Deployment's revision.
const RevisionAnnotation = "deployment.kubernetes.io/revision"

// Rollout is kubectl rollout status's answer for a Deployment, StatefulSet
// or DaemonSet: the line it prints (without its newline), whether the
// rollout is done, or the error that ends it (a Deployment past its
// progress deadline, an update strategy without rollout status, a
// revision that is not the running one). revision > 0 pins a
// Deployment's revision, as --revision. Other kinds are an error naming
// them, as kubectl's.
func Rollout(obj map[string]any, revision int64) (msg string, done bool, err error) {
	switch str(obj, "apiVersion") + "/" + str(obj, "kind") {
	case "apps/v1/Deployment":
		return deploymentRollout(obj, revision)
	case "apps/v1/StatefulSet":
		return statefulSetRollout(obj)
	case "apps/v1/DaemonSet":
		return daemonSetRollout(obj)
	}
	gk := str(obj, "kind")
	if g, _, ok := strings.Cut(str(obj, "apiVersion"), "/"); ok {
		gk += "." + g
	}
	return "", false, fmt.Errorf("no status viewer has been implemented for %s", gk)
}

// deploymentRollout is kubectl's DeploymentStatusViewer.Status.
func deploymentRollout(d map[string]any, revision int64) (string, bool, error) {
	name := str(d, "metadata", "name")
	if revision > 0 {
		rev, err := strconv.ParseInt(str(d, "metadata", "annotations", RevisionAnnotation), 10, 64)
		if err != nil {
			return "", false, fmt.Errorf("cannot get the revision of deployment %q: %v", name, err)
		}
		if rev != revision {
			return "", false, fmt.Errorf("desired revision (%d) is different from the running revision (%d)", revision, rev)
		}
	}
	gen, _ := integer(d, "metadata", "generation")
	og, _ := integer(d, "status", "observedGeneration")
	if gen > og {
		return "Waiting for deployment spec update to be observed...", false, nil
	}
	if c := condition(d, "Progressing"); c != nil && str(c, "reason") == "ProgressDeadlineExceeded" {
		return "", false, fmt.Errorf("deployment %q exceeded its progress deadline", name)
	}
	updated, _ := integer(d, "status", "updatedReplicas")
	if want, ok := integer(d, "spec", "replicas"); ok && updated < want {
		return fmt.Sprintf("Waiting for deployment %q rollout to finish: %d out of %d new replicas have been updated...", name, updated, want), false, nil
	}
	if r, _ := integer(d, "status", "replicas"); r > updated {
		return fmt.Sprintf("Waiting for deployment %q rollout to finish: %d old replicas are pending termination...", name, r-updated), false, nil
	}
	if a, _ := integer(d, "status", "availableReplicas"); a < updated {
		return fmt.Sprintf("Waiting for deployment %q rollout to finish: %d of %d updated replicas are available...", name, a, updated), false, nil
	}
	return fmt.Sprintf("deployment %q successfully rolled out", name), true, nil
}

// daemonSetRollout is kubectl's DaemonSetStatusViewer.Status.
func daemonSetRollout(ds map[string]any) (string, bool, error) {
	if t := str(ds, "spec", "updateStrategy", "type"); t != "RollingUpdate" {
		return "", true, fmt.Errorf("rollout status is only available for RollingUpdate strategy type")
	}
	name := str(ds, "metadata", "name")
	gen, _ := integer(ds, "metadata", "generation")
	og, _ := integer(ds, "status", "observedGeneration")
	if gen > og {
		return "Waiting for daemon set spec update to be observed...", false, nil
	}
	desired, _ := integer(ds, "status", "desiredNumberScheduled")
	if updated, _ := integer(ds, "status", "updatedNumberScheduled"); updated < desired {
		return fmt.Sprintf("Waiting for daemon set %q rollout to finish: %d out of %d new pods have been updated...", name, updated, desired), false, nil
	}
	if avail, _ := integer(ds, "status", "numberAvailable"); avail < desired {
		return fmt.Sprintf("Waiting for daemon set %q rollout to finish: %d of %d updated pods are available...", name, avail, desired), false, nil
	}
	return fmt.Sprintf("daemon set %q successfully rolled out", name), true, nil
}

// statefulSetRollout is kubectl's StatefulSetStatusViewer.Status.
func statefulSetRollout(sts map[string]any) (string, bool, error) {
	if t := str(sts, "spec", "updateStrategy", "type"); t != "RollingUpdate" {
		return "", true, fmt.Errorf("rollout status is only available for RollingUpdate strategy type")
	}
	gen, _ := integer(sts, "metadata", "generation")
	og, _ := integer(sts, "status", "observedGeneration")
	if og == 0 || gen > og {
		return "Waiting for statefulset spec update to be observed...", false, nil
	}
	want, hasReplicas := integer(sts, "spec", "replicas")
	ready, _ := integer(sts, "status", "readyReplicas")
	if hasReplicas && ready < want {
		return fmt.Sprintf("Waiting for %d pods to be ready...", want-ready), false, nil
	}
	updated, _ := integer(sts, "status", "updatedReplicas")
	if _, ok := at(sts, "spec", "updateStrategy", "rollingUpdate"); ok {
		if partition, ok := integer(sts, "spec", "updateStrategy", "rollingUpdate", "partition"); ok && hasReplicas {
			if updated < want-partition {
				return fmt.Sprintf("Waiting for partitioned roll out to finish: %d out of %d new pods have been updated...", updated, want-partition), false, nil
			}
		}
		return fmt.Sprintf("partitioned roll out complete: %d new pods have been updated...", updated), true, nil
	}
	if ur, cr := str(sts, "status", "updateRevision"), str(sts, "status", "currentRevision"); ur != cr {
		return fmt.Sprintf("waiting for statefulset rolling update to complete %d pods at revision %s...", updated, ur), false, nil
	}
	current, _ := integer(sts, "status", "currentReplicas")
	return fmt.Sprintf("statefulset rolling update complete %d pods at revision %s...", current, str(sts, "status", "currentRevision")), true, nil
}
