package wait

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/health"
	"github.com/konverge/konverge/objref"
)

// Driver moves time while a wait goes on: Until calls cond until it
// reports true (met) or an error, or until timeout has passed (met false,
// no error). A timeout of zero or less means no limit.
type Driver interface {
	Until(ctx context.Context, cond func() (bool, error), timeout time.Duration) (met bool, err error)
}

// DriverFunc adapts a function to a Driver: sim.Runner's RunUntil is one.
type DriverFunc func(ctx context.Context, cond func() (bool, error), timeout time.Duration) (bool, error)

// Until calls f.
func (f DriverFunc) Until(ctx context.Context, cond func() (bool, error), timeout time.Duration) (bool, error) {
	return f(ctx, cond, timeout)
}

// DefaultInterval is how often Poll checks when its Interval is zero.
const DefaultInterval = time.Second

// Poll is the Driver of a real cluster: it checks at once and then every
// Interval of wall time (DefaultInterval when zero).
type Poll struct {
	// Interval is the pause between two checks.
	Interval time.Duration
}

// Until checks cond every Interval until it holds, fails, ctx ends or
// timeout passes.
func (p Poll) Until(ctx context.Context, cond func() (bool, error), timeout time.Duration) (bool, error) {
	interval := p.Interval
	if interval <= 0 {
		interval = DefaultInterval
	}
	var deadline <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		deadline = t.C
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		ok, err := cond()
		if err != nil || ok {
			return ok, err
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-deadline:
			// One last look, so that a condition met at the deadline counts.
			return cond()
		case <-tick.C:
		}
	}
}

// ErrTimeout is the error of a wait whose time ran out; its message is
// kubectl's.
var ErrTimeout = errors.New("timed out waiting for the condition")

// Until waits with d (Poll{} when nil) until cond holds, for at most
// timeout (zero: no limit). It returns nil when cond held, cond's error,
// ctx's error, or ErrTimeout.
func Until(ctx context.Context, d Driver, timeout time.Duration, cond func() (bool, error)) error {
	if d == nil {
		d = Poll{}
	}
	met, err := d.Until(ctx, cond, timeout)
	switch {
	case err != nil:
		return err
	case !met:
		return ErrTimeout
	}
	return nil
}

// Options tune ForCurrent. The zero value polls every second of wall time
// with no deadline and stops at the first Failed object.
type Options struct {
	// Timeout bounds the wait (cluster time with a simulation's Driver);
	// zero means none.
	Timeout time.Duration
	// Driver moves time; nil means the cluster ForCurrent reads when it
	// is a Driver itself (a *sim.Cluster: the embedded cluster fast-
	// forwarded), Poll{} otherwise.
	Driver Driver
	// OnEvent is called with the first health of every object and each
	// time one changes (status, reason or message), in the order of the
	// refs, from the goroutine that called ForCurrent.
	OnEvent func(Event)
	// ContinueOnFailure keeps waiting when an object is Failed (it may
	// recover: a crash loop that a new image ends); by default the wait
	// stops with a *FailedError.
	ContinueOnFailure bool
	// Desired is the status waited for; "" means health.Current. Use
	// health.NotFound to wait for deletions.
	Desired health.Status
}

// Event is the health of one object at one check.
type Event struct {
	// Ref names the object.
	Ref objref.Ref
	// Health is its health at the check (NotFound when it does not exist).
	Health health.Result
}

// String prints "deployment.apps/web InProgress: Waiting for ...".
func (e Event) String() string { return e.Ref.String() + " " + e.Health.String() }

// TimeoutError is a wait whose time ran out: Pending are the objects
// that were not as desired, with their last health.
type TimeoutError struct {
	// Pending are the objects that were not as desired, in the order of
	// the refs.
	Pending []Event
}

// Error prints kubectl's message and the pending objects:
// "timed out waiting for the condition: deployment.apps/web InProgress: ...".
func (e *TimeoutError) Error() string {
	var b strings.Builder
	b.WriteString(ErrTimeout.Error())
	for i, p := range e.Pending {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(p.String())
	}
	return b.String()
}

// Is makes errors.Is(err, ErrTimeout) true.
func (e *TimeoutError) Is(target error) bool { return target == ErrTimeout }

// FailedError is a wait that met Failed objects.
type FailedError struct {
	// Failed are the Failed objects, in the order of the refs.
	Failed []Event
}

// Error prints the failed objects and their reasons.
func (e *FailedError) Error() string {
	parts := make([]string, len(e.Failed))
	for i, f := range e.Failed {
		parts[i] = f.String()
	}
	return "wait: " + strings.Join(parts, "; ")
}

// ForCurrent waits until every object refs names is Current (or
// Options.Desired), reading them from c after each step of the Driver. It
// returns the last health of each object, in the order of refs, and nil,
// a *TimeoutError, a *FailedError, or the error of a read (a missing
// object is NotFound, not an error).
func ForCurrent(ctx context.Context, c cluster.Reader, refs []objref.Ref, opts Options) ([]Event, error) {
	desired := opts.Desired
	if desired == "" {
		desired = health.Current
	}
	last := make([]Event, len(refs))
	seen := make([]bool, len(refs))
	var failed []Event
	cond := func() (bool, error) {
		all := true
		failed = failed[:0]
		for i, ref := range refs {
			if seen[i] && last[i].Health.Status == desired && desired != health.NotFound {
				// Objects that got there are not read again.
				continue
			}
			obj, err := c.Get(ctx, ref.GVK, ref.Namespace, ref.Name)
			if cluster.IsNotFound(err) {
				obj, err = nil, nil
			}
			if err != nil {
				return false, fmt.Errorf("wait: %s: %w", ref, err)
			}
			h := health.Assess(obj)
			ev := Event{Ref: ref, Health: h}
			if !seen[i] || last[i].Health != h {
				seen[i], last[i] = true, ev
				if opts.OnEvent != nil {
					opts.OnEvent(ev)
				}
			}
			if h.Status != desired {
				all = false
			}
			if h.Status == health.Failed {
				failed = append(failed, ev)
			}
		}
		if len(failed) > 0 && !opts.ContinueOnFailure && desired != health.Failed {
			return false, &FailedError{Failed: append([]Event(nil), failed...)}
		}
		return all, nil
	}
	d := opts.Driver
	if d == nil {
		d, _ = c.(Driver)
	}
	err := Until(ctx, d, opts.Timeout, cond)
	if errors.Is(err, ErrTimeout) {
		te := &TimeoutError{}
		for _, ev := range last {
			if ev.Health.Status != desired {
				te.Pending = append(te.Pending, ev)
			}
		}
		return last, te
	}
	return last, err
}

// ConditionMet reports whether obj has a condition of type typ (compared
// without case) with status want (without case: "True", "False",
// "Unknown"), as kubectl wait --for=condition=typ[=want] decides: a
// condition whose observedGeneration (or, without one, the object's
// status.observedGeneration) is behind metadata.generation is not met.
func ConditionMet(obj map[string]any, typ, want string) bool {
	st, _ := obj["status"].(map[string]any)
	conds, _ := st["conditions"].([]any)
	for _, c := range conds {
		cm, _ := c.(map[string]any)
		t, _ := cm["type"].(string)
		status, hasStatus := cm["status"].(string)
		if !strings.EqualFold(t, typ) || !hasStatus {
			continue
		}
		md, _ := obj["metadata"].(map[string]any)
		if gen, ok := asInt(md["generation"]); ok {
			observed, found := asInt(cm["observedGeneration"])
			if !found {
				observed, found = asInt(st["observedGeneration"])
			}
			if found && observed < gen {
				return false
			}
		}
		return strings.EqualFold(status, want)
	}
	return false
}

func asInt(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case float64:
		return int64(n), true
	case int:
		return int64(n), true
	}
	return 0, false
}
