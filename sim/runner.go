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
// # The split between requests and controllers
//
// As in a real cluster, the controllers act after the requests and their
// failures are theirs: a controller whose sync fails (an error, or a
// panic) has that sync's writes rolled back, is reported once through
// Warn, and the other controllers go on; the caller of the Runner gets an
// error only when the store itself fails. A controller's own failures of
// the API (a pod the API server refuses) are its business: Events,
// conditions, retries.
//
// # Bounded work
//
// A settle runs at most MaxRounds rounds, and one call of Settle,
// AdvanceTo or RunUntil does at most MaxWork units of work (a write or a
// round each): a controller that never converges, or a ReplicaSet of
// 100,000 pods, does bounded work per call and leaves the rest for the
// next one (Unsettled reports it). Catch-up costs what happens, never the
// length of the virtual time crossed: the clock jumps from one due time to
// the next.
//
// # Transactions
//
// With a *local.Store, the syncs of a call share one transaction,
// committed every few thousand writes and at the end, with the clock
// (a PersistentClock) in the same transaction: a kill at any instant
// leaves the cluster as it was at some cluster time, objects and clock
// together. When a sync fails, that shared transaction is rolled back and
// the call is run again with one transaction per sync, so that only the
// failing sync's writes are lost.
//
// # Client rate limits
//
// As kube-controller-manager gives each of its controllers a client of
// its own limited to 20 requests a second with a burst of 30, each
// controller's writes here take a token of its bucket in cluster time
// (ClientRate; the buckets are kept with the clock): the writes of a sync
// at time t are sent within the second of t, and one that finds no token
// by then is held back (controller.ErrThrottled). The sync's earlier
// writes stay, and the controller syncs again in the second of its next
// token, so that a ReplicaSet of 100,000 pods fills at the real pace,
// over more than an hour of cluster time, at a cost of what happens in
// the time crossed.
//
// # Determinism
//
// Controllers run in a fixed order and what they remember between syncs
// changes nothing they write, so the same objects and the same steps of
// the clock give the same writes.
//
// # Following the writes
//
// The list cache sees every write of the controllers (and the objects a
// cascading deletion removed, from the store's batch): an incremental
// controller (controller.Incremental) is given the objects written since
// its last sync instead of syncing everything, so that a round costs what
// changed, not the number of objects (the kubelet visits the pods written
// and those with work due, the garbage collector checks the dependents
// written). Any write the runner did not see (a command's own, another
// process's) or a rollback starts a new feed: the next sync of every
// controller is a full one, which rebuilds what it remembers from the
// stored objects alone.
package sim

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"time"

	"github.com/konverge/konverge/clock"
	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/controller"
	"github.com/konverge/konverge/controller/event"
	"github.com/konverge/konverge/schema"
)

// DefaultMaxRounds is how many rounds a settle runs at one cluster time,
// at most: a controller that still changes things then goes on a second
// later (as real controllers take time, a ReplicaSet of 100,000 pods
// fills over many seconds, and one that never converges makes a bounded
// number of objects per second).
const DefaultMaxRounds = 20

// DefaultMaxWork is how much work one call of the Runner does at most: a
// unit per write, per round, per 8 objects the controllers list, per 32
// Pods or Events read from the store and per 1,024 the list cache serves
// (a few seconds of work at most; a caller that wrote much gives more, see
// MaxWork).
const DefaultMaxWork = 20_000

// listedPerUnit is how many listed Pods or Events make a unit of work;
// cachedPerUnit, for those the list cache serves; otherPerUnit, for
// objects of other kinds. Pods and Events are the kinds whose numbers grow
// with a workload, and the controllers that list them every round only
// look them up (the ReplicaSet controller remembers what it read of each
// pod object, the others check a field), while an object of another kind
// (a ReplicaSet, a Service) costs a sync of its own in each controller
// that lists it.
const (
	listedPerUnit = 32
	cachedPerUnit = 1024
	otherPerUnit  = 8
)

// DefaultCatchUp is the window of a long catch-up run in full at each end:
// as long as an Event lives.
const DefaultCatchUp = time.Hour

// txWrites is how many writes a shared transaction holds before it is
// committed (at the end of a round).
const txWrites = 20_000

// Runner syncs controllers on a clock.
type Runner struct {
	// Cluster is what the controllers read and write. When it is a
	// *local.Store, syncs run in its transactions (see the package doc).
	Cluster cluster.Interface
	// Clock is the cluster time; AdvanceTo and RunUntil move it.
	Clock *clock.Clock
	// Controllers run in this order in every round.
	Controllers []controller.Controller
	// MaxRounds bounds a settle; zero means DefaultMaxRounds.
	MaxRounds int
	// MaxWork bounds the work of one call; zero means DefaultMaxWork.
	MaxWork int
	// Warn receives what went wrong inside a controller, each message
	// once per Runner; nil discards it.
	Warn func(msg string)
	// CatchUp is the window AdvanceTo runs in full at both ends of a long
	// span (see AdvanceTo); zero means DefaultCatchUp, negative: no
	// shortcut.
	CatchUp time.Duration
	// Rates gives the client rate limit of each controller (see
	// ClientRate); nil means ClientRate. A Rate without QPS does not
	// limit.
	Rates func(controller.Controller) clock.Rate

	// scheduled is the earliest Scheduled of the last settle: a long
	// catch-up does not jump over it.
	scheduled time.Time
	// next is the earliest RequeueAt of the last settle.
	next time.Time
	// cache serves the controllers' Lists from one round to the next.
	cache listCache
	// unsettled describes the work the last call left for later.
	unsettled *NotSettledError
	warned    map[string]bool
	// work is what the current call did.
	work int
	// stopped is the cluster time at which the last call's work ran out
	// before its target (zero: it did not).
	stopped time.Time
	// writes counts the controllers' writes since the Runner was made
	// (Until's measure of a change).
	writes int
	// changes counts the controllers' writes other than heartbeats since
	// the Runner was made (Until's measure of a change, see MaxIdle).
	changes int
	// waiting is set during RunUntil.
	waiting bool
	// synced is, by controller (in the order of Controllers), where in
	// the cache's feed its last sync began.
	synced []feedPos
}

// feedPos is a position in the list cache's feed of writes, and the
// controller whose sync began there.
type feedPos struct {
	epoch, pos int
	ok         bool
	ctrl       controller.Controller
}

// same reports whether a and b are the same controller (of a type that
// cannot be compared, the same type: such a controller remembers nothing
// of its own between syncs).
func same(a, b controller.Controller) bool {
	ta, tb := reflect.TypeOf(a), reflect.TypeOf(b)
	if ta != tb {
		return false
	}
	if !ta.Comparable() {
		return true
	}
	return a == b
}

// New returns a Runner of ctrls on c and clk.
func New(c cluster.Interface, clk *clock.Clock, ctrls ...controller.Controller) *Runner {
	return &Runner{Cluster: c, Clock: clk, Controllers: ctrls}
}

// NotSettledError describes work left for later: a settle that reached
// MaxRounds, or a call that reached MaxWork.
type NotSettledError struct {
	// Rounds is how many rounds the last settle ran; Controllers names
	// those that changed something in its last round.
	Rounds      int
	Controllers []string
	// Work is the work the call did.
	Work int
}

func (e *NotSettledError) Error() string {
	if len(e.Controllers) == 0 {
		return fmt.Sprintf("sim: the controllers stopped after %d units of work, with work left", e.Work)
	}
	return fmt.Sprintf("sim: controllers did not settle after %d rounds: %s still changed something in the last round", e.Rounds, strings.Join(e.Controllers, ", "))
}

// Work returns the work the last call did.
func (r *Runner) Work() int { return r.work }

// Unsettled reports the work the last call of Settle, AdvanceTo or
// RunUntil left for later; nil when it settled the cluster.
func (r *Runner) Unsettled() *NotSettledError { return r.unsettled }

// Stopped returns the cluster time at which the work of the last call of
// AdvanceTo ran out before its target (zero when it did not): the clock
// still moved to the target, and what was due in between was not run at
// its own time (a CronJob then sees its schedules of that stretch as
// missed and makes one Job for the latest).
func (r *Runner) Stopped() time.Time { return r.stopped }

// Next returns the earliest RequeueAt of the last settle; zero means no
// work is due without a write.
func (r *Runner) Next() time.Time { return r.next }

func (r *Runner) maxRounds() int {
	if r.MaxRounds > 0 {
		return r.MaxRounds
	}
	return DefaultMaxRounds
}

func (r *Runner) maxWork() int {
	w := DefaultMaxWork
	if r.MaxWork > 0 {
		w = r.MaxWork
	}
	if r.waiting {
		// A command that waits for a condition may do much more: its
		// user asked for the wait.
		w *= WaitFactor
	}
	return w
}

// WaitFactor is how many times MaxWork RunUntil may do: about 12,000 pods
// of a large rollout in one wait, while a wait on controllers that never
// converge still answers within well under a minute of CPU (the rest goes
// on with the next command).
const WaitFactor = 7

func (r *Runner) exhausted() bool { return r.work >= r.maxWork() }

func (r *Runner) catchUp() time.Duration {
	if r.CatchUp != 0 {
		return r.CatchUp
	}
	return DefaultCatchUp
}

// Settle syncs every controller at the clock's time, round after round,
// until a whole round changes nothing, and returns the earliest cluster
// time after now at which a controller has work due (zero: none).
func (r *Runner) Settle(ctx context.Context) (time.Time, error) {
	var next time.Time
	err := r.call(ctx, false, func(s *session) error {
		var err error
		next, err = s.settle(ctx)
		return err
	})
	return next, err
}

// AdvanceTo moves the clock to t one due time at a time: it settles, then
// repeatedly sets the clock to the next RequeueAt not after t and settles
// there, and finally sets it to t and settles. A t before the clock's time
// only settles. When the call's work runs out, the clock still moves to t
// and the rest is left for later (Unsettled).
//
// Over a span longer than twice CatchUp, the first CatchUp and the last
// are run due time by due time and the middle is crossed at once (unless a
// controller has a Scheduled time before t, a CronJob's schedule: then
// every due time is run, since what happens at the schedule depends on all
// that came before): the
// cluster at t is the same (the kubelet's pods are a function of the
// time; the controllers act on them at t - CatchUp and on), what passed in
// the middle is not replayed (a crash loop's restarts are counted, not
// stepped through; Events live an hour anyway).
func (r *Runner) AdvanceTo(ctx context.Context, t time.Time) error {
	if t.After(clock.Max) {
		t = clock.Max // the clock goes no further
	}
	return r.call(ctx, false, func(s *session) error {
		start := r.Clock.Now()
		window := r.catchUp()
		jumped := window < 0
		next, err := s.settle(ctx)
		if err != nil {
			return err
		}
		for !next.IsZero() && !next.After(t) && !r.exhausted() {
			if err := ctx.Err(); err != nil {
				return err
			}
			if !jumped && next.Sub(start) > window && t.Sub(next) > window &&
				(r.scheduled.IsZero() || r.scheduled.After(t)) {
				// The middle of a long catch-up: go on from the last
				// window before t.
				jumped = true
				next = t.Add(-window)
			}
			r.Clock.Set(next)
			if next, err = s.settle(ctx); err != nil {
				return err
			}
		}
		if !t.After(r.Clock.Now()) {
			return nil
		}
		if r.exhausted() && !next.IsZero() && next.Before(t) {
			r.stopped = r.Clock.Now()
		}
		r.Clock.Set(t)
		if r.exhausted() {
			return nil
		}
		if next.IsZero() || next.After(t) {
			// Nothing is due at t: the state is settled there already.
			if st := r.Clock.Settled(); !st.At.IsZero() {
				st.At = r.Clock.Now()
				r.Clock.SetSettled(st)
			}
			return nil
		}
		_, err = s.settle(ctx)
		return err
	})
}

// Advance moves the clock by d (see AdvanceTo).
func (r *Runner) Advance(ctx context.Context, d time.Duration) error {
	return r.AdvanceTo(ctx, r.Clock.Now().Add(d))
}

// ErrWorkLimit is returned by RunUntil when the call's work ran out before
// the condition held or the timeout passed.
var ErrWorkLimit = errors.New("the embedded cluster's controllers reached the work limit of one command before the condition held (they go on with the next command)")

// RunUntil fast-forwards the cluster until cond holds: it settles, checks
// cond, and moves the clock to the next RequeueAt, until cond returns true
// (met) or timeout of cluster time has passed (met false, no error). It is
// what waiting commands (rollout status, wait) call instead of sleeping.
// cond reads the cluster through the Runner's Cluster: every settle is
// committed before it is called. When the call's work (WaitFactor times
// MaxWork) runs out first, RunUntil returns ErrWorkLimit.
func (r *Runner) RunUntil(ctx context.Context, cond func() (bool, error), timeout time.Duration) (met bool, err error) {
	deadline := r.Clock.Now().Add(timeout)
	if deadline.After(clock.Max) {
		deadline = clock.Max // the clock goes no further
	}
	return r.runUntil(ctx, cond, func() time.Time { return deadline })
}

// runUntil is RunUntil with a deadline that may move: deadline is asked
// again after every check of cond, and the clock never passes it.
func (r *Runner) runUntil(ctx context.Context, cond func() (bool, error), deadlineOf func() time.Time) (met bool, err error) {
	r.waiting = true
	defer func() { r.waiting = false }()
	err = r.call(ctx, true, func(s *session) error {
		met = false
		next, err := s.settle(ctx)
		if err != nil {
			return err
		}
		for {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := s.commit(); err != nil {
				return err
			}
			ok, err := cond()
			if err != nil || ok {
				met = ok
				return err
			}
			now := r.Clock.Now()
			deadline := deadlineOf()
			if !now.Before(deadline) {
				return nil
			}
			if r.exhausted() {
				return ErrWorkLimit
			}
			step := next
			if step.IsZero() || step.After(deadline) {
				step = deadline
			}
			r.Clock.Set(step)
			if next, err = s.settle(ctx); err != nil {
				return err
			}
		}
	})
	return met, err
}

// errRetry unwinds a call whose shared transaction must be run again with
// one transaction per sync.
var errRetry = errors.New("sim: a sync failed in a shared transaction")

// call runs body in a session: with a *local.Store, in shared
// transactions first and, if a sync fails in one, again from where that
// transaction began with one transaction per sync.
func (r *Runner) call(ctx context.Context, commitEachStep bool, body func(s *session) error) error {
	r.work, r.unsettled, r.stopped = 0, nil, time.Time{}
	st, ok := r.Cluster.(*local.Store)
	if !ok {
		return body(&session{r: r})
	}
	s := &session{r: r, st: st, shared: true}
	err := body(s)
	if err == nil {
		err = s.commit()
	}
	if errors.Is(err, errRetry) {
		s.rollback()
		work := s.startWork
		s = &session{r: r, st: st, shared: false}
		r.work, r.unsettled, r.stopped = work, nil, time.Time{}
		err = body(s)
	}
	if err != nil {
		s.rollback()
		return err
	}
	return nil
}

// session is one call's transactions.
type session struct {
	r  *Runner
	st *local.Store // nil: syncs run on r.Cluster directly
	// shared: syncs join tx, committed every txWrites writes; else each
	// sync is its own transaction.
	shared   bool
	tx       *local.Txn
	txWrites int
	// snap is the clock when tx began; startWork the work done then.
	snap      clock.Snapshot
	startWork int
	// lastChanged names the controllers that changed something in the
	// last round.
	lastChanged []string
}

// begin opens the shared transaction if none is open.
func (s *session) begin(ctx context.Context) error {
	if s.tx != nil {
		return nil
	}
	// The controllers' requests, as kube-controller-manager's, show
	// their API warnings to no one.
	tx, err := s.st.Begin(local.WithoutWarnings(ctx))
	if err != nil {
		return err
	}
	s.tx, s.txWrites = tx, 0
	s.snap, s.startWork = s.r.Clock.Snapshot(), s.r.work
	return nil
}

// commit stores the shared transaction, if one is open.
func (s *session) commit() error {
	if s.tx == nil {
		return nil
	}
	tx := s.tx
	s.tx = nil
	if !tx.Wrote() {
		tx.Rollback()
		return nil
	}
	if err := tx.Commit(); err != nil {
		s.r.cache.reset()
		return err
	}
	return nil
}

// rollback drops the shared transaction, and sets the clock and what
// remembers the cluster back to where it began.
func (s *session) rollback() {
	if s.tx == nil {
		return
	}
	s.tx.Rollback()
	s.tx = nil
	s.r.Clock.Restore(s.snap)
	s.r.forget()
}

// forget drops what the runner and the controllers remember of the
// cluster, after writes were rolled back.
func (r *Runner) forget() {
	r.cache.reset()
	for _, c := range r.Controllers {
		if f, ok := c.(interface{ Reset() }); ok {
			f.Reset()
		}
	}
}

// settle runs rounds at the clock's time until one changes nothing, or a
// bound is reached; it records the outcome in the clock's Settled.
func (s *session) settle(ctx context.Context) (time.Time, error) {
	r := s.r
	now := r.Clock.Now()
	limit := r.maxRounds()
	for i := 0; ; i++ {
		if s.shared && s.txWrites >= txWrites {
			r.Clock.SetSettled(clock.Settled{})
			if err := s.commit(); err != nil {
				return time.Time{}, err
			}
		}
		if r.exhausted() {
			return s.leave(ctx, now, i, nil)
		}
		if i == limit {
			return s.leave(ctx, now, i, s.lastChanged)
		}
		r.work++
		res, changed, err := s.round(ctx, now)
		if err != nil {
			return time.Time{}, err
		}
		s.lastChanged = changed
		if len(changed) == 0 {
			next := res.RequeueAt
			if !next.After(now) {
				next = time.Time{}
			}
			r.scheduled = res.Scheduled
			if !r.scheduled.After(now) {
				r.scheduled = time.Time{}
			}
			r.next = next
			rev, err := s.revision(ctx)
			if err != nil {
				return time.Time{}, err
			}
			r.Clock.SetSettled(clock.Settled{Revision: rev, At: now, Next: next})
			return next, nil
		}
	}
}

// leave ends a settle that did not finish. After MaxRounds the
// controllers go on a second later (a next due time, which a later
// command at the same cluster time does not run again); when the call's
// work ran out, the state is not settled at all and the next call settles
// it first.
func (s *session) leave(ctx context.Context, now time.Time, rounds int, changed []string) (time.Time, error) {
	r := s.r
	r.unsettled = &NotSettledError{Rounds: rounds, Controllers: changed, Work: r.work}
	r.next = now.Add(time.Second)
	if r.exhausted() {
		r.Clock.SetSettled(clock.Settled{})
		return r.next, nil
	}
	rev, err := s.revision(ctx)
	if err != nil {
		return time.Time{}, err
	}
	r.Clock.SetSettled(clock.Settled{Revision: rev, At: now, Next: r.next})
	return r.next, nil
}

// revision is the store's revision as the session sees it (0 without a
// store).
func (s *session) revision(ctx context.Context) (uint64, error) {
	if s.st == nil {
		return 0, nil
	}
	if s.tx != nil {
		rev, _ := local.BatchRevision(s.tx.Cluster())
		return rev, nil
	}
	return Revision(ctx, s.st)
}

// round syncs every controller once and returns the merged result and the
// names of the controllers that changed something.
func (s *session) round(ctx context.Context, now time.Time) (controller.Result, []string, error) {
	var res controller.Result
	var changed []string
	s.r.trimFeed()
	for i, ctrl := range s.r.Controllers {
		out, err := s.sync(ctx, i, ctrl, now)
		if err != nil {
			return res, changed, err
		}
		if out.Changed {
			changed = append(changed, ctrl.Name())
		}
		res = res.Merge(controller.Result{RequeueAt: out.RequeueAt, Scheduled: out.Scheduled})
	}
	return res, changed, nil
}

// sync runs one controller's sync. A sync that fails has its writes
// rolled back and counts as one that changed nothing (and is reported);
// in a shared transaction that means running the call again (errRetry).
// The error returned is the store's or the context's.
func (s *session) sync(ctx context.Context, i int, ctrl controller.Controller, now time.Time) (controller.Result, error) {
	r := s.r
	if err := r.cache.verify(); err != nil {
		return controller.Result{}, err
	}
	if s.st == nil {
		out, _, err := r.runSync(ctx, i, ctrl, r.Cluster, now)
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return out, cerr
			}
			r.warn(ctrl, now, err)
			return controller.Result{}, nil
		}
		return out, nil
	}
	if s.shared {
		if err := s.begin(ctx); err != nil {
			return controller.Result{}, err
		}
		out, writes, err := r.runSync(ctx, i, ctrl, r.cache.begin(s.st, s.tx.Cluster()), now)
		s.txWrites += writes
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return out, cerr
			}
			if errors.Is(err, local.ErrUnusable) {
				return out, err
			}
			return out, errRetry
		}
		return out, nil
	}
	// The controllers' requests, as kube-controller-manager's, show
	// their API warnings to no one.
	tx, err := s.st.Begin(local.WithoutWarnings(ctx))
	if err != nil {
		return controller.Result{}, err
	}
	out, writes, err := r.runSync(ctx, i, ctrl, r.cache.begin(s.st, tx.Cluster()), now)
	if err != nil {
		tx.Rollback()
		r.forget()
		if cerr := ctx.Err(); cerr != nil {
			return out, cerr
		}
		if errors.Is(err, local.ErrUnusable) {
			// The state file, not the controller.
			return out, err
		}
		r.warn(ctrl, now, err)
		return controller.Result{}, nil
	}
	if writes == 0 || !tx.Wrote() {
		tx.Rollback()
		return out, nil
	}
	if err := tx.Commit(); err != nil {
		r.cache.reset()
		return out, err
	}
	return out, nil
}

// runSync calls the controller, counting its writes, with a panic turned
// into an error.
//
// An incremental controller (controller.Incremental) whose last sync
// began in the current epoch of the list cache's feed is given what was
// written since; any other sync is a full one. i is the controller's place
// in Controllers.
func (r *Runner) runSync(ctx context.Context, i int, ctrl controller.Controller, c cluster.Interface, now time.Time) (out controller.Result, writes int, err error) {
	w := &counting{Interface: c, manager: fieldManager(ctrl)}
	if len(r.synced) != len(r.Controllers) {
		r.synced = make([]feedPos, len(r.Controllers))
	}
	if rate := r.rate(ctrl); rate.QPS > 0 {
		w.limit = &limit{clk: r.Clock, bucket: ctrl.Name(), rate: rate, now: now, until: nextSecond(now)}
		if at := r.Clock.TokenAt(ctrl.Name(), rate, now); !at.Before(w.limit.until) {
			// Its client still waits for a token: the sync happens when
			// it comes (an incremental controller then gets what was
			// written meanwhile).
			return controller.Result{RequeueAt: ceilSecond(at)}, 0, nil
		}
	}
	f := &r.cache.feed
	last := r.synced[i]
	_, following := c.(*cachedCluster)
	r.synced[i] = feedPos{epoch: f.epoch, pos: f.end(), ok: following, ctrl: ctrl}
	defer func() {
		if p := recover(); p != nil {
			err = &panicError{value: p, stack: stack()}
		}
		if err != nil {
			r.synced[i] = feedPos{}
		}
		writes = w.writes
		r.changes += w.changes
		r.writes += w.writes
		r.work += w.writes + w.listed/listedPerUnit + w.cached/cachedPerUnit + w.other/otherPerUnit
	}()
	if inc, ok := ctrl.(controller.Incremental); ok && following && last.ok && last.epoch == f.epoch && same(last.ctrl, ctrl) && !FullSyncs {
		changed := f.since(last.pos)
		w.listed += len(changed)
		out, err = inc.SyncChanged(ctx, w, now, changed)
	} else {
		out, err = ctrl.Sync(ctx, w, now)
	}
	if l := w.limit; l != nil && l.held && (err == nil || controller.IsThrottled(err)) {
		// The rate limit held a write back: what was sent stays, and the
		// controller goes on when the next token comes.
		if err != nil {
			// It stopped somewhere in its sync: the next is a full one.
			r.synced[i] = feedPos{}
			err = nil
			out = controller.Result{Changed: w.writes > 0}
		}
		out = out.Merge(controller.Result{RequeueAt: ceilSecond(l.next)})
	}
	return out, w.writes, err
}

// ClientRate is the client rate limit of a controller, as its real
// counterpart has it: kube-controller-manager gives each of its
// controllers a client of its own, limited by a token bucket of
// --kube-api-qps 20 and --kube-api-burst 30 (KubeControllerManagerRate);
// kube-apiserver's own work (the kubernetes Service, the Events' time to
// live) has no client, and the simulated kubelet is left unlimited (a
// real node's kubelet has 50 per second and a burst of 100, per node).
func ClientRate(ctrl controller.Controller) clock.Rate {
	switch ctrl.Name() {
	case "kubelet", "kubernetes-service", "event-ttl":
		return clock.Rate{}
	}
	return KubeControllerManagerRate
}

// KubeControllerManagerRate is the client rate limit of each controller
// of kube-controller-manager v1.37: the defaults of its --kube-api-qps
// and --kube-api-burst.
var KubeControllerManagerRate = clock.Rate{QPS: 20, Burst: 30}

func (r *Runner) rate(ctrl controller.Controller) clock.Rate {
	if r.Rates != nil {
		return r.Rates(ctrl)
	}
	return ClientRate(ctrl)
}

// nextSecond is the start of the second after the one of t: the writes of
// a sync at t are sent within the second of t (objects carry times to the
// second).
func nextSecond(t time.Time) time.Time { return t.Truncate(time.Second).Add(time.Second) }

// ceilSecond rounds t up to a whole second.
func ceilSecond(t time.Time) time.Time {
	if s := t.Truncate(time.Second); !s.Equal(t) {
		return s.Add(time.Second)
	}
	return t
}

// limit is a controller's client rate limit during one sync.
type limit struct {
	clk    *clock.Clock
	bucket string
	rate   clock.Rate
	// now is the time of the sync; a write is sent before until, or
	// held back.
	now, until time.Time
	// held: a write was held back; next is when the next token comes.
	held bool
	next time.Time
}

// take takes the token of one write, or returns an error wrapping
// controller.ErrThrottled (and so does every later write of the sync).
func (l *limit) take() error {
	if l == nil {
		return nil
	}
	if !l.held {
		at, ok := l.clk.Take(l.bucket, l.rate, l.now, l.until)
		if ok {
			return nil
		}
		l.held, l.next = true, at
	}
	return fmt.Errorf("%s controller: next token at %s: %w", l.bucket, l.next.UTC().Format(time.RFC3339Nano), controller.ErrThrottled)
}

// FullSyncs makes every sync a full one (controller.Controller's Sync,
// never SyncChanged): tests compare the two.
var FullSyncs = false

// trimFeed drops the part of the list cache's feed that no controller
// needs any more.
func (r *Runner) trimFeed() {
	f := &r.cache.feed
	low := f.end()
	for _, p := range r.synced {
		if p.ok && p.epoch == f.epoch && p.pos < low {
			low = p.pos
		}
	}
	f.trim(low)
}

type panicError struct {
	value any
	stack string
}

func (e *panicError) Error() string { return fmt.Sprintf("panic: %v [%s]", e.value, e.stack) }

// stack is where a panic happened: the first frames of ours.
func stack() string {
	pcs := make([]uintptr, 32)
	n := runtime.Callers(4, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	var out []string
	for {
		f, more := frames.Next()
		if strings.Contains(f.Function, "konverge/") && !strings.Contains(f.Function, "/sim.") {
			out = append(out, fmt.Sprintf("%s:%d", f.File[strings.LastIndex(f.File, "/")+1:], f.Line))
			if len(out) == 3 {
				break
			}
		}
		if !more {
			break
		}
	}
	return strings.Join(out, " < ")
}

// warn reports a failed sync, each message once.
func (r *Runner) warn(ctrl controller.Controller, now time.Time, err error) {
	msg := fmt.Sprintf("the embedded cluster's %s controller failed at %s; its changes of that sync were rolled back and the other controllers went on: %v",
		ctrl.Name(), now.UTC().Format(time.RFC3339), err)
	key := ctrl.Name() + "\x00" + err.Error()
	if r.warned[key] {
		return
	}
	if r.warned == nil {
		r.warned = map[string]bool{}
	}
	r.warned[key] = true
	if r.Warn != nil {
		r.Warn(msg)
	}
}

// The field managers the controllers write as (managedFields), as their
// real counterparts do: kube-apiserver takes the name from the client's
// user agent.
const (
	managerControllers = "kube-controller-manager"
	managerKubelet     = "kubelet"
)

// fieldManager is the manager a controller writes as: "kubelet" for the
// simulated kubelet, "kube-controller-manager" for the others.
func fieldManager(ctrl controller.Controller) string {
	if ctrl.Name() == "kubelet" {
		return managerKubelet
	}
	return managerControllers
}

// counting counts the writes made through it and the objects listed, and
// names the controller's field manager in its writes (a FieldOwner of the
// controller's own wins).
type counting struct {
	cluster.Interface
	manager string
	// limit is the controller's client rate limit (nil: none).
	limit *limit
	// listed: Pods and Events listed from the store; cached: from the
	// list cache; other: objects of other kinds.
	writes, listed, cached, other int
	// changes counts the writes that are not heartbeats (Until's measure
	// of a change, see MaxIdle).
	changes int
}

// heartbeat reports whether a write of the kind is a heartbeat, which
// time passing causes by itself (a node's Lease renewed), rather than a
// change.
func heartbeat(apiVersion, kind string) bool {
	return kind == "Lease" && strings.HasPrefix(apiVersion, "coordination.k8s.io/")
}

// count counts one write of the kind (apiVersion: at least the group and
// a slash).
func (c *counting) count(apiVersion, kind string) {
	c.writes++
	if !heartbeat(apiVersion, kind) {
		c.changes++
	}
}

func objKind(obj cluster.Object) (apiVersion, kind string) {
	apiVersion, _ = obj["apiVersion"].(string)
	kind, _ = obj["kind"].(string)
	return apiVersion, kind
}

func (c *counting) List(ctx context.Context, gvk schema.GVK, opts ...cluster.ListOption) (*cluster.List, error) {
	cc, _ := c.Interface.(*cachedCluster)
	grows := gvk.Group == "" && (gvk.Kind == "Pod" || gvk.Kind == "Event")
	cached := cc != nil && len(opts) == 0 && cc.lc.kinds[gvk] != nil
	l, err := c.Interface.List(ctx, gvk, opts...)
	switch {
	case l == nil:
	case !grows:
		c.other += len(l.Items)
	case cached:
		c.cached += len(l.Items)
	default:
		c.listed += len(l.Items)
	}
	return l, err
}

func (c *counting) Create(ctx context.Context, obj cluster.Object, opts ...cluster.CreateOption) (cluster.Object, error) {
	if err := c.limit.take(); err != nil {
		return nil, err
	}
	c.count(objKind(obj))
	return c.Interface.Create(ctx, obj, append([]cluster.CreateOption{cluster.FieldOwner(c.manager)}, opts...)...)
}

func (c *counting) Update(ctx context.Context, obj cluster.Object, opts ...cluster.UpdateOption) (cluster.Object, error) {
	if err := c.limit.take(); err != nil {
		return nil, err
	}
	c.count(objKind(obj))
	return c.Interface.Update(ctx, obj, append([]cluster.UpdateOption{cluster.FieldOwner(c.manager)}, opts...)...)
}

func (c *counting) UpdateStatus(ctx context.Context, obj cluster.Object, opts ...cluster.UpdateOption) (cluster.Object, error) {
	if err := c.limit.take(); err != nil {
		return nil, err
	}
	c.count(objKind(obj))
	return c.Interface.UpdateStatus(ctx, obj, append([]cluster.UpdateOption{cluster.FieldOwner(c.manager)}, opts...)...)
}

func (c *counting) Patch(ctx context.Context, gvk schema.GVK, namespace, name string, pt cluster.PatchType, patch []byte, opts ...cluster.PatchOption) (cluster.Object, error) {
	if err := c.limit.take(); err != nil {
		return nil, err
	}
	c.count(gvk.Group+"/", gvk.Kind)
	return c.Interface.Patch(ctx, gvk, namespace, name, pt, patch, append([]cluster.PatchOption{cluster.FieldOwner(c.manager)}, opts...)...)
}

func (c *counting) Delete(ctx context.Context, gvk schema.GVK, namespace, name string, opts ...cluster.DeleteOption) error {
	if err := c.limit.take(); err != nil {
		return err
	}
	c.count(gvk.Group+"/", gvk.Kind)
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

// Read counts objects a controller read from its memory as listed ones
// (see controller.Meter).
func (c *counting) Read(n int) { c.other += n }

// GetShared passes the cache's objects on (see controller.SharedGetter).
func (c *counting) GetShared(ctx context.Context, gvk schema.GVK, namespace, name string) (cluster.Object, error) {
	return controller.GetShared(ctx, c.Interface, gvk, namespace, name)
}

// EventsAbout passes the cache's index of Events on (see event.Index).
func (c *counting) EventsAbout(ctx context.Context, namespace, name, uid string) ([]cluster.Object, error) {
	if x, ok := c.Interface.(event.Index); ok {
		l, err := x.EventsAbout(ctx, namespace, name, uid)
		c.listed += len(l)
		return l, err
	}
	l, err := c.List(ctx, eventGVK)
	if err != nil {
		return nil, err
	}
	var out []cluster.Object
	for _, e := range l.Items {
		if k := keyOf(e); k.namespace == namespace && strings.HasPrefix(k.name, name+".") && involvedUID(e) == uid {
			out = append(out, e)
		}
	}
	return out, nil
}

// EventNames passes the store's names of Events on (see event.Index).
func (c *counting) EventNames(ctx context.Context, fn func(namespace, name string) error) error {
	x, ok := c.Interface.(event.Index)
	if !ok {
		return listNames(ctx, c, fn)
	}
	n := 0
	err := x.EventNames(ctx, func(namespace, name string) error {
		n++
		return fn(namespace, name)
	})
	c.cached += n
	return err
}

// metaStore is what the controllers may keep with the cluster (see
// controller/event's TTLController).
type metaStore interface {
	GetMeta(ctx context.Context, key string) ([]byte, error)
	PutMeta(ctx context.Context, key string, value []byte) error
}

// GetMeta passes the meta bucket of the store on.
func (c *counting) GetMeta(ctx context.Context, key string) ([]byte, error) {
	if m, ok := c.Interface.(metaStore); ok {
		return m.GetMeta(ctx, key)
	}
	return nil, errNoMeta
}

// PutMeta passes the meta bucket of the store on.
func (c *counting) PutMeta(ctx context.Context, key string, value []byte) error {
	if m, ok := c.Interface.(metaStore); ok {
		return m.PutMeta(ctx, key, value)
	}
	return errNoMeta
}

// Owned passes the store's index of owners on (see controller.OwnerIndex),
// counting the objects it lists as cached ones.
func (c *counting) Owned(ctx context.Context, fn func(group, kind, namespace, name string) error) error {
	x, ok := c.Interface.(controller.OwnerIndex)
	if !ok {
		return errNoOwnerIndex
	}
	n := 0
	err := x.Owned(ctx, func(group, kind, namespace, name string) error {
		n++
		return fn(group, kind, namespace, name)
	})
	c.cached += n
	return err
}
