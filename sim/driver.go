package sim

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/konverge/konverge/clock"
)

// ErrNothingDue ends a wait without a time limit (Until with a timeout of
// zero or less) when its condition does not hold and nothing is due in the
// cluster: no controller has work at any later time, so the clock would
// move forever without the condition ever holding.
var ErrNothingDue = errors.New("nothing is due in the embedded cluster: the condition cannot become true without a change")

// noLimit is how far a wait without a time limit may move the clock: far
// enough never to be reached, since ErrNothingDue stops it first.
const noLimit = 100 * 365 * 24 * time.Hour

// MaxIdle is the most cluster time one wait (Until) fast-forwards in which
// nothing is written to the cluster: a wait for something that never
// happens, with a --timeout of years, stops there (IdleError) instead of
// ageing every object by years in an instant. Each write of a controller
// (the simulated kubelet's too) starts the span again, except heartbeats
// (a node's Lease renewed), which time passing causes by itself; the work limit of one
// command (ErrWorkLimit) bounds the waits in which writes go on.
const MaxIdle = 24 * time.Hour

// IdleError ends a wait that MaxIdle stopped before its time limit.
type IdleError struct {
	// Waited is the cluster time the wait fast-forwarded in all.
	Waited time.Duration
	// Limit is the wait's time limit (zero: none).
	Limit time.Duration
}

func (e *IdleError) Error() string {
	limit := "no time limit"
	if e.Limit > 0 {
		limit = "a time limit of " + e.Limit.String()
	}
	return fmt.Sprintf("nothing changed in the embedded cluster for %s of cluster time, the most one wait fast-forwards without a change; stopped after %s of cluster time (of %s)", MaxIdle, e.Waited, limit)
}

// Until is RunUntil as a time driver of package wait (wait.Driver): it
// fast-forwards the cluster until cond holds (true), for at most timeout of
// cluster time (false when it passes; spans beyond a hundred years count
// as a hundred years); a timeout of zero or less means no limit, and then
// the wait ends with ErrNothingDue when nothing is due any more. At most
// MaxIdle of cluster time passes without a write to the cluster: the wait
// then ends with an *IdleError. An error of cond ends the wait with that
// error, after the cluster's progress so far is committed.
func (r *Runner) Until(ctx context.Context, cond func() (bool, error), timeout time.Duration) (bool, error) {
	limit := timeout
	if limit <= 0 || limit > noLimit {
		// Saturated: a longer span would overflow the clock.
		limit = noLimit
	}
	start := r.Clock.Now()
	end := start.Add(limit)
	if end.After(clock.Max) {
		end = clock.Max
	}
	lastWrites, lastChange := r.changes, start
	idleEnd := func() time.Time { return lastChange.Add(MaxIdle) }
	var stop error
	met, err := r.runUntil(ctx, func() (bool, error) {
		if r.changes != lastWrites {
			lastWrites, lastChange = r.changes, r.Clock.Now()
		}
		ok, err := cond()
		if err != nil || ok {
			// Stop here with the settles so far committed.
			stop = err
			return true, nil
		}
		if timeout <= 0 && r.Next().IsZero() {
			stop = ErrNothingDue
			return true, nil
		}
		return false, nil
	}, func() time.Time {
		if i := idleEnd(); i.Before(end) {
			return i
		}
		return end
	})
	switch {
	case err != nil:
		return false, err
	case stop != nil:
		return false, stop
	case !met && r.Clock.Now().Before(end):
		return false, &IdleError{Waited: r.Clock.Now().Sub(start), Limit: max(timeout, 0)}
	}
	return met, nil
}
