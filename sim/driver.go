package sim

import (
	"context"
	"errors"
	"time"
)

// ErrNothingDue ends a wait without a time limit (Until with a timeout of
// zero or less) when its condition does not hold and nothing is due in the
// cluster: no controller has work at any later time, so the clock would
// move forever without the condition ever holding.
var ErrNothingDue = errors.New("nothing is due in the embedded cluster: the condition cannot become true without a change")

// noLimit is how far a wait without a time limit may move the clock: far
// enough never to be reached, since ErrNothingDue stops it first.
const noLimit = 100 * 365 * 24 * time.Hour

// Until is RunUntil as a time driver of package wait (wait.Driver): it
// fast-forwards the cluster until cond holds (true), for at most timeout of
// cluster time (false when it passes; spans beyond a hundred years count
// as a hundred years); a timeout of zero or less means no limit, and then the wait ends with ErrNothingDue when nothing is due any
// more. An error of cond ends the wait with that error, after the cluster's
// progress so far is committed.
func (r *Runner) Until(ctx context.Context, cond func() (bool, error), timeout time.Duration) (bool, error) {
	limit := timeout
	if limit <= 0 || limit > noLimit {
		// Saturated: a longer span would overflow the clock.
		limit = noLimit
	}
	var stop error
	met, err := r.RunUntil(ctx, func() (bool, error) {
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
	}, limit)
	switch {
	case err != nil:
		return false, err
	case stop != nil:
		return false, stop
	}
	return met, nil
}
