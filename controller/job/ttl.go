package job

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/controller"
	"github.com/konverge/konverge/controller/internal/kobj"
)

// TTLComponent is the source of the ttl-after-finished controller.
const TTLComponent = "ttl-after-finished-controller"

// TTLAfterFinished is kube-controller-manager's ttl-after-finished
// controller: it deletes a finished Job (and, in the foreground, its pods)
// ttlSecondsAfterFinished after the Complete or Failed condition's
// transition. The zero value is ready to use.
type TTLAfterFinished struct{}

var _ controller.Controller = TTLAfterFinished{}

// Name implements controller.Controller.
func (TTLAfterFinished) Name() string { return "ttl-after-finished" }

// maxTTL bounds the durations read from ttlSecondsAfterFinished so that
// they saturate instead of overflowing.
const maxTTL = int64(100 * 365 * 24 * 3600)

// Sync deletes the Jobs whose time is up and asks to be woken for the
// next one.
func (TTLAfterFinished) Sync(ctx context.Context, c cluster.Interface, now time.Time) (controller.Result, error) {
	var res controller.Result
	jobs, err := c.List(ctx, kobj.JobGVK)
	if err != nil {
		return res, fmt.Errorf("ttl-after-finished: list jobs: %w", err)
	}
	var errs []error
	for _, j := range jobs.Items {
		ttl, ok := kobj.Int(j, "spec", "ttlSecondsAfterFinished")
		if !ok || kobj.Deleting(j) || !finished(j) {
			continue
		}
		if ttl > maxTTL {
			ttl = maxTTL
		}
		var at time.Time
		for _, t := range []string{"Complete", "Failed"} {
			if cd := kobj.Condition(j, t); cd != nil && cd["status"] == "True" {
				at = kobj.ParseTime(kobj.Str(cd, "lastTransitionTime"))
				break
			}
		}
		if at.IsZero() {
			continue
		}
		expire := at.Add(time.Duration(ttl) * time.Second)
		if expire.After(now) {
			res = res.Merge(controller.Result{RequeueAt: expire})
			continue
		}
		err := c.Delete(ctx, kobj.JobGVK, kobj.Namespace(j), kobj.Name(j), cluster.Foreground, cluster.Preconditions{UID: kobj.UID(j)})
		if err != nil && !cluster.IsNotFound(err) && !cluster.IsConflict(err) {
			errs = append(errs, fmt.Errorf("delete job %s/%s: %w", kobj.Namespace(j), kobj.Name(j), err))
			continue
		}
		res.Changed = true
	}
	if len(errs) > 0 {
		return res, fmt.Errorf("ttl-after-finished: %w", errors.Join(errs...))
	}
	return res, nil
}
