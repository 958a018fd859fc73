// Package sim runs the embedded cluster's controllers on its virtual
// clock: the Runner syncs every controller (deployment, replicaset,
// garbage collector, the simulated kubelet) until nothing changes, and
// moves the clock from one due time to the next, so that what would have
// happened between two commands happens, in order, at the right cluster
// times.
//
// It does not decide when time moves: the CLI catches a wall clock up at
// the start of a command, `konverge clock advance` moves a manual one, and
// waiting commands call RunUntil.
//
// # Determinism
//
// Controllers keep no state between syncs and run in a fixed order, each
// sync in one transaction of the embedded store, so the same objects and
// the same steps of the clock give the same writes.
package sim

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/konverge/konverge/clock"
	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/controller"
	"github.com/konverge/konverge/schema"
)

// DefaultMaxRounds is how many rounds Settle runs before it gives up on a
// controller that never stops changing things.
const DefaultMaxRounds = 1000

// Runner syncs controllers on a clock.
type Runner struct {
	// Cluster is what the controllers read and write. When it is a
	// *local.Store, each controller's sync in a round runs in one Batch.
	Cluster cluster.Interface
	// Clock is the cluster time; AdvanceTo and RunUntil move it.
	Clock *clock.Clock
	// Controllers run in this order in every round.
	Controllers []controller.Controller
	// MaxRounds bounds a settle; zero means DefaultMaxRounds.
	MaxRounds int

	// next is the earliest RequeueAt of the last settle.
	next time.Time
	// cache serves the controllers' Lists from one round to the next.
	cache listCache
}

// New returns a Runner of ctrls on c and clk.
func New(c cluster.Interface, clk *clock.Clock, ctrls ...controller.Controller) *Runner {
	return &Runner{Cluster: c, Clock: clk, Controllers: ctrls}
}

// NotSettledError reports controllers that still changed something after
// the maximum number of rounds.
type NotSettledError struct {
	// Rounds is how many rounds ran; Controllers names those that changed
	// something in the last one.
	Rounds      int
	Controllers []string
}

func (e *NotSettledError) Error() string {
	return fmt.Sprintf("sim: controllers did not settle after %d rounds: %s still changed something in the last round", e.Rounds, strings.Join(e.Controllers, ", "))
}

// Next returns the earliest RequeueAt of the last settle; zero means no
// work is due without a write.
func (r *Runner) Next() time.Time { return r.next }

// Settle syncs every controller at the clock's time, round after round,
// until a whole round changes nothing, and returns the earliest cluster
// time after now at which a controller has work due (zero: none).
func (r *Runner) Settle(ctx context.Context) (time.Time, error) {
	now := r.Clock.Now()
	limit := r.MaxRounds
	if limit <= 0 {
		limit = DefaultMaxRounds
	}
	for i := 0; i < limit; i++ {
		res, changed, err := r.round(ctx, now)
		if err != nil {
			return time.Time{}, err
		}
		if len(changed) == 0 {
			next := res.RequeueAt
			if !next.After(now) {
				next = time.Time{}
			}
			r.next = next
			return next, nil
		}
		if i == limit-1 {
			return time.Time{}, &NotSettledError{Rounds: limit, Controllers: changed}
		}
	}
	return time.Time{}, nil
}

// errNoWrites rolls back a round's transaction that wrote nothing, which
// costs no commit.
var errNoWrites = errors.New("sim: round wrote nothing")

// round syncs every controller once and returns the merged result and the
// names of the controllers that changed something.
func (r *Runner) round(ctx context.Context, now time.Time) (controller.Result, []string, error) {
	var res controller.Result
	var changed []string
	sync := func(ctrl controller.Controller, c cluster.Interface) (int, error) {
		w := &counting{Interface: c}
		out, err := ctrl.Sync(ctx, w, now)
		if err != nil {
			return w.writes, fmt.Errorf("sim: %s controller at %s: %w", ctrl.Name(), now.Format(time.RFC3339), err)
		}
		if out.Changed {
			changed = append(changed, ctrl.Name())
		}
		res = res.Merge(controller.Result{RequeueAt: out.RequeueAt})
		return w.writes, nil
	}
	st, ok := r.Cluster.(*local.Store)
	if !ok {
		for _, ctrl := range r.Controllers {
			if _, err := sync(ctrl, r.Cluster); err != nil {
				return res, changed, err
			}
		}
		return res, changed, nil
	}
	// Each controller's sync is one transaction: what it writes is one
	// valid state of the cluster, as between any two API writes, and a
	// transaction holds the encoded writes of one controller only, not of
	// a whole round (thousands of pods after a large apply).
	for _, ctrl := range r.Controllers {
		if err := r.cache.verify(); err != nil {
			return res, changed, err
		}
		err := st.Batch(ctx, func(c cluster.Interface) error {
			writes, err := sync(ctrl, r.cache.begin(st, c))
			if err == nil && writes == 0 {
				return errNoWrites
			}
			return err
		})
		if err != nil && !errors.Is(err, errNoWrites) {
			// The batch rolled back what the cache has seen.
			r.cache.kinds = nil
			return res, changed, err
		}
	}
	return res, changed, nil
}

// AdvanceTo moves the clock to t one due time at a time: it settles, then
// repeatedly sets the clock to the next RequeueAt not after t and settles
// there, and finally sets it to t and settles. A t before the clock's time
// only settles.
func (r *Runner) AdvanceTo(ctx context.Context, t time.Time) error {
	next, err := r.Settle(ctx)
	if err != nil {
		return err
	}
	for !next.IsZero() && !next.After(t) {
		if err := ctx.Err(); err != nil {
			return err
		}
		r.Clock.Set(next)
		if next, err = r.Settle(ctx); err != nil {
			return err
		}
	}
	if t.After(r.Clock.Now()) {
		r.Clock.Set(t)
		if next.IsZero() || next.After(t) {
			// Nothing is due at t: the state is settled there already.
			return nil
		}
		_, err = r.Settle(ctx)
	}
	return err
}

// Advance moves the clock by d (see AdvanceTo).
func (r *Runner) Advance(ctx context.Context, d time.Duration) error {
	return r.AdvanceTo(ctx, r.Clock.Now().Add(d))
}

// RunUntil fast-forwards the cluster until cond holds: it settles, checks
// cond, and moves the clock to the next RequeueAt, until cond returns true
// (met) or timeout of cluster time has passed (met false, no error). It is
// what waiting commands (rollout status, wait) call instead of sleeping.
// cond reads the cluster through the Runner's Cluster (outside any batch).
func (r *Runner) RunUntil(ctx context.Context, cond func() (bool, error), timeout time.Duration) (met bool, err error) {
	deadline := r.Clock.Now().Add(timeout)
	next, err := r.Settle(ctx)
	if err != nil {
		return false, err
	}
	for {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		ok, err := cond()
		if err != nil || ok {
			return ok, err
		}
		now := r.Clock.Now()
		if !now.Before(deadline) {
			return false, nil
		}
		step := next
		if step.IsZero() || step.After(deadline) {
			step = deadline
		}
		r.Clock.Set(step)
		if next, err = r.Settle(ctx); err != nil {
			return false, err
		}
	}
}

// counting counts the writes made through it.
type counting struct {
	cluster.Interface
	writes int
}

func (c *counting) Create(ctx context.Context, obj cluster.Object, opts ...cluster.CreateOption) (cluster.Object, error) {
	c.writes++
	return c.Interface.Create(ctx, obj, opts...)
}

func (c *counting) Update(ctx context.Context, obj cluster.Object, opts ...cluster.UpdateOption) (cluster.Object, error) {
	c.writes++
	return c.Interface.Update(ctx, obj, opts...)
}

func (c *counting) UpdateStatus(ctx context.Context, obj cluster.Object, opts ...cluster.UpdateOption) (cluster.Object, error) {
	c.writes++
	return c.Interface.UpdateStatus(ctx, obj, opts...)
}

func (c *counting) Patch(ctx context.Context, gvk schema.GVK, namespace, name string, pt cluster.PatchType, patch []byte, opts ...cluster.PatchOption) (cluster.Object, error) {
	c.writes++
	return c.Interface.Patch(ctx, gvk, namespace, name, pt, patch, opts...)
}

func (c *counting) Delete(ctx context.Context, gvk schema.GVK, namespace, name string, opts ...cluster.DeleteOption) error {
	c.writes++
	return c.Interface.Delete(ctx, gvk, namespace, name, opts...)
}

// Revision returns the revision of an embedded store (0 when it has none
// yet): a write of any object moves it, so that the CLI can tell whether
// anything was written since the controllers last settled.
func Revision(ctx context.Context, st *local.Store) (uint64, error) {
	v, err := st.GetMeta(ctx, "revision")
	if err != nil {
		return 0, fmt.Errorf("sim: read the store revision: %w", err)
	}
	if len(v) != 8 {
		return 0, nil
	}
	return binary.BigEndian.Uint64(v), nil
}
