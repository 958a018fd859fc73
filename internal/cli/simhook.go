package cli

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/konverge/konverge/clock"
	"github.com/konverge/konverge/kubelet"
	"github.com/konverge/konverge/sim"
)

// The simulation hook: every command that opens the embedded cluster
// loads its virtual clock and simulation profile, catches the cluster up
// (wall mode: to the wall time, running the controllers at every due time
// on the way), and when the command closes the session, settles the
// controllers over what the command wrote and saves the clock. A command
// after which nothing was written and nothing is due does no controller
// work at all: the clock records the store revision and the next due time
// of the last settle.

// simSession is the simulation state of one open session.
type simSession struct {
	runner *sim.Runner
	// fresh reports a state that had no clock yet (never initialized).
	fresh bool
	// rev is the store's revision once caught up: what the command writes
	// after it gives the controllers more work to do at the end.
	rev uint64
}

// workPerWrite is how much controller work (see sim.Runner.MaxWork) each
// object a command writes allows at its end, on top of the default: an
// apply of 10,000 Deployments gets its ReplicaSets and pods made.
const workPerWrite = 30

var simSessions sync.Map // *Session → *simSession

// Sim returns the runner of the session's controllers, on its virtual
// clock: waiting commands (rollout status, wait) call
// Sim().RunUntil(ctx, cond, timeout) to fast-forward the cluster instead of
// sleeping. Nil for a real cluster.
func (s *Session) Sim() *sim.Runner {
	if v, ok := simSessions.Load(s); ok {
		return v.(*simSession).runner
	}
	return nil
}

type initClockKey struct{}

// withInitClock makes the next Open of a new state start its clock in
// mode at start (what cluster init asks for), so that even the objects
// created with the state carry the cluster time.
func withInitClock(ctx context.Context, mode clock.Mode, start time.Time) context.Context {
	return context.WithValue(ctx, initClockKey{}, clock.New(mode, start))
}

// newSessionClock is the clock a session opens the store with, before the
// persisted clock is loaded into it.
func newSessionClock(ctx context.Context) *clock.Clock {
	if c, ok := ctx.Value(initClockKey{}).(*clock.Clock); ok {
		return clock.New(c.Mode(), c.Now())
	}
	return clock.New(clock.Wall, clock.WallNow())
}

func simHook(ctx context.Context, g *Globals, s *Session) error {
	if s.Store == nil || s.Clock == nil {
		return nil
	}
	clk := s.Clock
	found, err := clk.Load(ctx, s.Store)
	if err != nil {
		return err
	}
	profile, err := kubelet.LoadProfile(ctx, s.Store)
	if err != nil {
		return err
	}
	r := sim.New(s.Store, clk, sim.Controllers(profile)...)
	r.Warn = func(msg string) {
		if g.ErrOut != nil {
			fmt.Fprintln(g.ErrOut, "warning:", msg)
		}
	}
	ss := &simSession{runner: r, fresh: !found}
	simSessions.Store(s, ss)
	s.OnClose(func(ctx context.Context) error {
		defer simSessions.Delete(s)
		return settleAndSave(context.WithoutCancel(ctx), s, ss)
	})
	defer func() {
		if rev, err := sim.Revision(ctx, s.Store); err == nil {
			ss.rev = rev
		}
	}()
	if !found {
		return nil
	}
	target := clk.Now()
	if clk.Mode() == clock.Wall {
		if w := clock.WallNow(); w.After(target) {
			target = w
		}
	}
	rev, err := sim.Revision(ctx, s.Store)
	if err != nil {
		return err
	}
	last := clk.Settled()
	if rev == last.Revision && !last.At.IsZero() && (last.Next.IsZero() || last.Next.After(target)) {
		// Nothing was written and nothing is due: the state is settled
		// at target already.
		clk.Set(target)
		clk.SetSettled(clock.Settled{Revision: rev, At: clk.Now(), Next: last.Next})
		return nil
	}
	// The runner records the settle in the clock, and commits the clock
	// with every write it makes; a controller's failure is a warning, so
	// an error here is the store's.
	if err := r.AdvanceTo(ctx, target); err != nil {
		return fmt.Errorf("catching the embedded cluster up to %s: %w", target.Format(time.RFC3339), err)
	}
	return nil
}

// settleAndSave settles the controllers over what the command wrote
// (unless it wrote nothing and nothing is due) and saves the clock.
func settleAndSave(ctx context.Context, s *Session, ss *simSession) error {
	if s.Store == nil {
		return nil
	}
	r := ss.runner
	rev, err := sim.Revision(ctx, s.Store)
	if err != nil {
		return err
	}
	last := s.Clock.Settled()
	now := s.Clock.Now()
	if rev != last.Revision || !last.At.Equal(now) {
		if rev > ss.rev {
			r.MaxWork = sim.DefaultMaxWork + int(min(rev-ss.rev, 1<<20))*workPerWrite
		}
		if _, err := r.Settle(ctx); err != nil {
			return fmt.Errorf("running the embedded cluster's controllers: %w", err)
		}
	}
	return s.Clock.Save(ctx, s.Store)
}
