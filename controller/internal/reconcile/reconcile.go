// Package reconcile is the scaffold the embedded cluster's controllers
// are built on. It draws the lines controller-runtime draws between a
// client, a cache and a reconciler, in the terms of this project:
//
//   - the client is the cluster.Interface a Sync is given (one
//     transaction of the store; package controller's GetShared and
//     OwnerIndex are its read-only shortcuts);
//   - the cache is what an incremental controller remembers between
//     syncs: package podmemo for controllers that own pods (DaemonSet,
//     StatefulSet, Job), package svcpods for the endpoint controllers.
//     They build on this package's Clean (the owners whose last sync
//     wrote nothing, with their requeue times), Dirty (the owners that
//     the writes since concern) and Queue (the owners themselves and
//     those queued, for a controller that lists nothing after its first
//     sync);
//   - the reconciler is a function that syncs one owner object; Loop
//     calls it for each owner in List order with upstream's work-queue
//     rules: an owner whose last sync the API server refused waits for
//     its back-off unless someone changed it, a refusal is retried at the
//     time its Event names, any other error is the controller's own,
//     named by the owner, and joined with the others (or, for the
//     Deployment and ReplicaSet controllers, which keep their back-off in
//     the owner's status, refusals are dropped: Loop.Refused).
//
// Nothing here writes: what a controller writes is decided by its
// reconciler alone, so that a controller's Sync and SyncChanged make the
// same writes whichever parts of the scaffold they use.
package reconcile

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/controller"
	"github.com/konverge/konverge/controller/event"
	"github.com/konverge/konverge/controller/internal/kobj"
)

// Key is a namespace and a name.
type Key = [2]string

// KeyOf returns the namespace and name of obj.
func KeyOf(obj map[string]any) Key { return Key{kobj.Namespace(obj), kobj.Name(obj)} }

// Clean holds the owners whose last sync wrote nothing (and did not
// fail), with the requeue time that sync returned (zero: none). Such an
// owner gives the same (no) writes until something its sync reads is
// written (Dirty) or its requeue time comes. A nil Clean remembers
// nothing.
type Clean map[Key]time.Time

// Record records the outcome of owner's sync: clean, with its requeue
// time, when it wrote nothing.
func (c Clean) Record(owner Key, wrote bool, requeue time.Time) {
	if c == nil {
		return
	}
	if wrote {
		delete(c, owner)
	} else {
		c[owner] = requeue
	}
}

// Skip reports whether owner may be left alone at now: its last sync
// wrote nothing, no write since concerns it (d) and its requeue time
// (merge it into the Result) has not come.
func (c Clean) Skip(d Dirty, owner Key, now time.Time) (requeue time.Time, skip bool) {
	at, ok := c[owner]
	if !ok || d.Concerns(owner) || (!at.IsZero() && !now.Before(at)) {
		return time.Time{}, false
	}
	return at, true
}

// Forget drops the owners that are not in owners (gone).
func (c Clean) Forget(owners []map[string]any) {
	if len(c) == 0 {
		return
	}
	live := make(map[Key]bool, len(owners))
	for _, o := range owners {
		live[KeyOf(o)] = true
	}
	for k := range c {
		if !live[k] {
			delete(c, k)
		}
	}
}

// Dirty names what the writes given to an incremental sync concern:
// owners, every owner of a namespace, or every owner (All).
type Dirty struct {
	All    bool
	Owners map[Key]bool
	NS     map[string]bool
}

// NewDirty returns a Dirty that names nothing yet.
func NewDirty() Dirty { return Dirty{Owners: map[Key]bool{}, NS: map[string]bool{}} }

// Concerns reports whether the writes concern owner.
func (d Dirty) Concerns(owner Key) bool { return d.All || d.NS[owner[0]] || d.Owners[owner] }

// Empty reports that the writes concern no owner.
func (d Dirty) Empty() bool { return !d.All && len(d.NS) == 0 && len(d.Owners) == 0 }

// Namespaced marks what a write of k, a kind every controller's sync
// reads around its owners, concerns: a Namespace, its quotas and limit
// ranges (every owner of the namespace), an Event, named
// <involved object>.<hex time> (the owner it is about: its Events tell its
// back-off after a refused write). It reports whether k was of such a
// kind.
func (d Dirty) Namespaced(k controller.Key) bool {
	switch {
	case k.Group == "" && k.Kind == "Namespace":
		d.NS[k.Name] = true
	case k.Group == "" && (k.Kind == "ResourceQuota" || k.Kind == "LimitRange"):
		d.NS[k.Namespace] = true
	case k.Kind == "Event" && (k.Group == "" || k.Group == "events.k8s.io"):
		if i := strings.LastIndexByte(k.Name, '.'); i > 0 {
			d.Owners[Key{k.Namespace, k.Name[:i]}] = true
		}
	default:
		return false
	}
	return true
}

// Recorder is told the outcome of each owner's sync (a memory's Synced).
type Recorder interface {
	Synced(owner map[string]any, wrote bool, requeue time.Time)
}

// Loop is the reconcile step of a controller that syncs its owner
// objects one at a time, as upstream's work queue hands them out.
type Loop struct {
	// Name prefixes the errors ("daemonset").
	Name string
	// Component is the source of the controller's Events, which record
	// its refused writes and tell its back-off.
	Component string
	// Limiter is the work queue's rate limiter; the zero value is
	// event.DefaultLimiter.
	Limiter event.Limiter
	// Wait: an owner whose last sync failed waits for its back-off,
	// unless it was changed since (an update is queued at once).
	Wait bool
	// Scheduled: an owner's requeue time is also work due at its own
	// time (controller.Result.Scheduled), as a CronJob's next schedule.
	Scheduled bool
	// Memory, when not nil, is told each owner's outcome.
	Memory Recorder
	// Refused, when set, stands for the back-off (Wait, Limiter and
	// Component are not used): an error it reports is the API server's
	// refusal, which the owner's status and Events show and a later sync
	// retries; any other error is the controller's failure, as the sync
	// returned it (naming its owner), as the Deployment and ReplicaSet
	// controllers treat them.
	Refused func(error) bool
}

// Outcome is what one owner's sync did: wrote something, and the cluster
// time it has work due at (zero: none).
type Outcome struct {
	Changed bool
	Requeue time.Time
}

// Run syncs each of owners with sync, at cluster time now, and merges
// their results; the controller's own failures are joined into one
// error. A write that the client rate limit holds back
// (controller.ErrThrottled) ends the loop with that error: the owners
// after it wait for the controller's next sync.
func (l Loop) Run(ctx context.Context, c cluster.Interface, now time.Time, owners []map[string]any, sync func(ctx context.Context, owner map[string]any) (Outcome, error)) (controller.Result, error) {
	res, failures, err := l.Each(ctx, c, now, owners, sync)
	if err == nil && len(failures) > 0 {
		err = fmt.Errorf("%s: %w", l.Name, errors.Join(failures...))
	}
	return res, err
}

// Each is Run that returns the controller's failures, each named by its
// owner, for the caller to join with its own; err is an error that ended
// the loop (reading the Events failed).
func (l Loop) Each(ctx context.Context, c cluster.Interface, now time.Time, owners []map[string]any, sync func(ctx context.Context, owner map[string]any) (Outcome, error)) (res controller.Result, failures []error, err error) {
	lim := l.Limiter
	if lim == (event.Limiter{}) {
		lim = event.DefaultLimiter
	}
	for _, o := range owners {
		if l.Refused != nil {
			out, err := sync(ctx, o)
			res = res.Merge(controller.Result{Changed: out.Changed, RequeueAt: out.Requeue})
			if l.Memory != nil {
				l.Memory.Synced(o, out.Changed || err != nil, out.Requeue)
			}
			if controller.IsThrottled(err) {
				// The client waits for a token: the sync ends here.
				return res, failures, err
			}
			if err != nil && !l.Refused(err) {
				failures = append(failures, err)
			}
			continue
		}
		if l.Wait {
			until, waiting, err := lim.Waiting(ctx, c, o, l.Component, now)
			if err != nil {
				return res, failures, fmt.Errorf("%s: %w", l.Name, err)
			}
			if waiting {
				res = res.Merge(controller.Result{RequeueAt: until})
				if l.Memory != nil {
					l.Memory.Synced(o, false, until)
				}
				continue
			}
		}
		out, err := sync(ctx, o)
		r := controller.Result{Changed: out.Changed, RequeueAt: out.Requeue}
		if l.Scheduled {
			r.Scheduled = out.Requeue
		}
		res = res.Merge(r)
		if l.Memory != nil {
			l.Memory.Synced(o, out.Changed || err != nil, out.Requeue)
		}
		if controller.IsThrottled(err) {
			// The client waits for a token, which is no failure: the
			// sync ends here and goes on when the token comes.
			return res, failures, err
		}
		retry, failure, rerr := lim.AfterSync(ctx, c, o, l.Component, now, err)
		if rerr != nil {
			return res, failures, fmt.Errorf("%s: %w", l.Name, rerr)
		}
		res = res.Merge(controller.Result{RequeueAt: retry})
		if failure != nil {
			failures = append(failures, failure)
		}
	}
	return res, failures, nil
}
