package deployment

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/controller/event"
	"github.com/konverge/konverge/controller/internal/kobj"
)

// SkippedError is what Rollback returns when the Deployment's template
// already matches the revision: kubectl prints "skipped rollback (current
// template already matches revision N)" and succeeds.
type SkippedError struct{ Revision int64 }

func (e *SkippedError) Error() string {
	return fmt.Sprintf("skipped rollback (current template already matches revision %d)", e.Revision)
}

// Rollback does what `kubectl rollout undo` does to a Deployment: it finds
// the ReplicaSet of revision toRevision (0: the previous one), copies its
// pod template (less the pod-template-hash label) into the Deployment and
// restores its annotations as kubectl does, then records the
// DeploymentRollback event. The controller then rolls out as for any
// template change.
func Rollback(ctx context.Context, c cluster.Interface, namespace, name string, toRevision int64, now time.Time) error {
	if toRevision < 0 {
		return fmt.Errorf("unable to find specified revision %d in history", toRevision)
	}
	d, err := c.Get(ctx, kobj.DeploymentGVK, namespace, name)
	if err != nil {
		return fmt.Errorf("failed to retrieve Deployment %s: %w", name, err)
	}
	rl, err := c.List(ctx, kobj.ReplicaSetGVK, cluster.InNamespace(namespace))
	if err != nil {
		return fmt.Errorf("failed to retrieve replica sets from deployment %s: %w", name, err)
	}
	uid := kobj.UID(d)
	var target, latest, previous map[string]any
	latestRev, previousRev := int64(-1), int64(-1)
	for _, rs := range rl.Items {
		if kobj.ControllerUID(rs) != uid {
			continue
		}
		v, ok := revision(rs)
		if !ok {
			continue
		}
		if toRevision == 0 {
			if latestRev < v {
				previousRev, previous = latestRev, latest
				latestRev, latest = v, rs
			} else if previousRev < v {
				previousRev, previous = v, rs
			}
		} else if toRevision == v {
			target = rs
			break
		}
	}
	switch {
	case toRevision > 0 && target == nil:
		return fmt.Errorf("unable to find specified revision %d in history", toRevision)
	case toRevision == 0 && previous == nil:
		return fmt.Errorf("no rollout history found for deployment %q", name)
	case toRevision == 0:
		target = previous
	}
	rev, _ := revision(target)
	if kobj.Bool(d, "spec", "paused") {
		return fmt.Errorf("you cannot rollback a paused deployment; resume it first with 'kubectl rollout resume' and try again")
	}
	tmpl := kobj.Map(target, "spec", "template")
	if EqualIgnoreHash(tmpl, kobj.Map(d, "spec", "template")) {
		if toRevision == 0 {
			return &SkippedError{Revision: 0}
		}
		return &SkippedError{Revision: toRevision}
	}
	tmpl = templateWithoutHash(kobj.Copy(tmpl))
	ann := map[string]any{}
	for k := range annotationsToSkip {
		if v, ok := kobj.Map(d, "metadata", "annotations")[k]; ok {
			ann[k] = v
		}
	}
	for k, v := range kobj.Map(target, "metadata", "annotations") {
		if !annotationsToSkip[k] {
			ann[k] = v
		}
	}
	patch, err := json.Marshal([]map[string]any{
		{"op": "replace", "path": "/spec/template", "value": tmpl},
		{"op": "add", "path": "/metadata/annotations", "value": ann},
	})
	if err != nil {
		return fmt.Errorf("failed restoring revision %d: %w", rev, err)
	}
	got, err := c.Patch(ctx, kobj.DeploymentGVK, namespace, name, cluster.JSONPatchType, patch)
	if err != nil {
		return fmt.Errorf("failed restoring revision %d: %w", rev, err)
	}
	return event.Record(ctx, c, now, got, event.Normal, ReasonRollbackDone,
		fmt.Sprintf("Rolled back deployment %q to revision %d", name, rev), Component)
}
