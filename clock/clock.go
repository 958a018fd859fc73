// Package clock is the embedded cluster's virtual clock: the cluster time
// that the store stamps into objects and that the controllers and the
// simulated kubelet run on, kept in the state's meta bucket between
// commands.
//
// A clock has a mode. In wall mode (the default) the cluster time follows
// the wall clock: each command catches the cluster up to the wall time
// (package sim runs what was due on the way), and may run ahead of it
// after `konverge clock advance`, until the wall clock catches up. In
// manual mode the cluster time moves only when told to (`konverge clock
// advance`, or a command that waits for a condition), so that runs are
// reproducible; a new manual clock starts at Epoch unless told otherwise.
//
// The clock does no I/O of its own besides Load and Save, and never runs
// controllers: package sim moves it.
package clock

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"sync"
	"time"
)

// Mode is how the cluster time moves.
type Mode string

// The modes of a clock.
const (
	// Wall makes the cluster time catch up with the wall clock at the
	// start of every command.
	Wall Mode = "wall"
	// Manual moves the cluster time only on request.
	Manual Mode = "manual"
)

// ParseMode checks a mode as a user types it.
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case Wall, Manual:
		return Mode(s), nil
	}
	return "", fmt.Errorf("clock: unknown mode %q (want wall or manual)", s)
}

// Epoch is where a new manual clock starts: 2026-01-01T00:00:00Z.
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Min and Max bound the cluster time: Kubernetes names Events after the
// Unix time of their first occurrence in nanoseconds (an int64), which
// exists from 1970 (negative values make invalid names) up to
// 2262-04-11T23:47:16Z. A clock never moves past Max (Set saturates);
// commands refuse a start time or an advance outside [Min, Max] (see
// CheckRange).
var (
	Min = time.Unix(0, 0).UTC()
	Max = time.Unix(0, 1<<63-1).UTC().Truncate(time.Second)
)

// CheckRange returns an error when t lies outside [Min, Max].
func CheckRange(t time.Time) error {
	if t.Before(Min) || t.After(Max) {
		return fmt.Errorf("the cluster time must lie between %s and %s (Event names carry it in nanoseconds since 1970)",
			Min.Format(time.RFC3339), Max.Format(time.RFC3339))
	}
	return nil
}

// MetaKey is the key of the clock in the store's meta bucket.
const MetaKey = "clock"

// Meta is where a clock is persisted: cluster/local's Store satisfies it.
type Meta interface {
	GetMeta(ctx context.Context, key string) ([]byte, error)
	PutMeta(ctx context.Context, key string, value []byte) error
}

// Clock is the cluster time. It satisfies cluster/local's Clock. Its
// methods are safe for concurrent use.
type Clock struct {
	mu   sync.Mutex
	mode Mode
	now  time.Time
	// Settled is bookkeeping for package sim, kept with the clock: the
	// store revision and cluster time at which the controllers last
	// settled, and the earliest time they asked to run again.
	settled Settled
	// buckets are the clients' token buckets (see Take), by name: the
	// cluster time at which each would be full again; a bucket that is
	// full is not kept.
	buckets map[string]time.Time
}

// Settled records the last settle of the controllers, so that a command
// with nothing to do skips them.
type Settled struct {
	// Revision is the store's revision after the settle; At the cluster
	// time of it; Next the earliest RequeueAt it returned (zero: none).
	Revision uint64    `json:"revision,omitempty"`
	At       time.Time `json:"at,omitzero"`
	Next     time.Time `json:"next,omitzero"`
}

// state is the persisted form.
type state struct {
	Mode    Mode      `json:"mode"`
	Now     time.Time `json:"now"`
	Settled Settled   `json:"settled,omitzero"`
	// Buckets are the token buckets not full at Now (see Take).
	Buckets map[string]time.Time `json:"buckets,omitempty"`
}

// New returns a clock in mode at time now (UTC).
func New(mode Mode, now time.Time) *Clock {
	if mode == "" {
		mode = Wall
	}
	return &Clock{mode: mode, now: now.UTC()}
}

// Now returns the cluster time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Mode returns the clock's mode.
func (c *Clock) Mode() Mode {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mode
}

// Set moves the cluster time to t. Time never goes back: an earlier t is
// ignored; a t past Max moves the clock to Max.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(Max) {
		t = Max
	}
	if t.After(c.now) {
		c.now = t.UTC()
	}
}

// Settled returns the record of the last settle.
func (c *Clock) Settled() Settled {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.settled
}

// SetSettled records a settle.
func (c *Clock) SetSettled(s Settled) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.settled = s
}

// WallNow is the wall time a wall clock catches up to: time.Now in UTC,
// truncated to the second (the precision of every timestamp the cluster
// writes). Tests replace it.
var WallNow = func() time.Time { return time.Now().UTC().Truncate(time.Second) }

// Load reads the clock from m into c. found is false when the state has
// no clock yet (c is then left as it was).
func (c *Clock) Load(ctx context.Context, m Meta) (found bool, err error) {
	data, err := m.GetMeta(ctx, MetaKey)
	if err != nil {
		return false, fmt.Errorf("clock: load: %w", err)
	}
	if data == nil {
		return false, nil
	}
	var st state
	if err := json.Unmarshal(data, &st); err != nil {
		return false, fmt.Errorf("clock: load: decode %q: %w", MetaKey, err)
	}
	if _, err := ParseMode(string(st.Mode)); err != nil {
		return false, fmt.Errorf("clock: load: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mode, c.now, c.settled = st.Mode, st.Now.UTC(), st.Settled
	c.buckets = st.Buckets
	return true, nil
}

// Save writes the clock to m.
func (c *Clock) Save(ctx context.Context, m Meta) error {
	_, data, err := c.Persisted()
	if err != nil {
		return err
	}
	if err := m.PutMeta(ctx, MetaKey, data); err != nil {
		return fmt.Errorf("clock: save: %w", err)
	}
	return nil
}

// Persisted returns the clock as Save stores it, under MetaKey: what
// cluster/local writes in every transaction that changes an object, so
// that the clock and the objects stamped with it are committed together.
func (c *Clock) Persisted() (key string, value []byte, err error) {
	c.mu.Lock()
	// A bucket full by now needs no record.
	for name, full := range c.buckets {
		if !full.After(c.now) {
			delete(c.buckets, name)
		}
	}
	data, err := json.Marshal(state{Mode: c.mode, Now: c.now, Settled: c.settled, Buckets: c.buckets})
	c.mu.Unlock()
	if err != nil {
		return "", nil, fmt.Errorf("clock: save: %w", err)
	}
	return MetaKey, data, nil
}

// Snapshot is a clock's whole state, to go back to with Restore.
type Snapshot struct {
	mode    Mode
	now     time.Time
	settled Settled
	buckets map[string]time.Time
}

// Snapshot returns the clock's state.
func (c *Clock) Snapshot() Snapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	return Snapshot{mode: c.mode, now: c.now, settled: c.settled, buckets: maps.Clone(c.buckets)}
}

// Restore sets the clock back to a snapshot, even backwards: for a runner
// whose writes since the snapshot were rolled back.
func (c *Clock) Restore(s Snapshot) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mode, c.now, c.settled = s.mode, s.now, s.settled
	c.buckets = maps.Clone(s.buckets)
}

// Reset sets mode and time outright, even backwards, and forgets the last
// settle: for `konverge cluster init --force`.
func (c *Clock) Reset(mode Mode, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mode, c.now, c.settled = mode, now.UTC(), Settled{}
	c.buckets = nil
}

// Rate is a client's rate limit, as client-go's token bucket
// (flowcontrol.NewTokenBucketRateLimiter) applies it to every request:
// QPS requests per second on average, Burst at once after a quiet spell.
type Rate struct {
	QPS   float64
	Burst int
}

// interval is the time between two tokens (at least a nanosecond).
func (r Rate) interval() time.Duration {
	if r.QPS <= 0 {
		return 0
	}
	return max(time.Duration(float64(time.Second)/r.QPS), 1)
}

// Take takes a token of the bucket name, of rate r, for a request made at
// cluster time now that may be sent until (not at) cluster time until: a
// request that finds the bucket empty waits for the next token, as
// client-go's limiter makes it wait. It returns when the request is sent
// and true, or, when the next token comes at until or later, that time and
// false (nothing is taken). The bucket starts full; a Rate without QPS
// never limits. The buckets are kept with the clock (Persisted, Snapshot),
// so that the pace holds across commands and rollbacks.
//
// The bucket is the generic cell rate algorithm's form of a token bucket:
// one time, at which the bucket is full again; each token moves it one
// interval later, and a token is there when that time is less than
// Burst-1 intervals ahead of the request.
func (c *Clock) Take(name string, r Rate, now, until time.Time) (time.Time, bool) {
	step := r.interval()
	if step == 0 {
		return now, true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	sent := c.tokenAt(name, r, now)
	if !sent.Before(until) {
		return sent, false
	}
	full := c.buckets[name]
	if full.Before(sent) {
		full = sent
	}
	if c.buckets == nil {
		c.buckets = map[string]time.Time{}
	}
	c.buckets[name] = full.Add(step)
	return sent, true
}

// TokenAt returns when a request made at now through the bucket name, of
// rate r, would be sent (now when a token is there): Take without taking.
func (c *Clock) TokenAt(name string, r Rate, now time.Time) time.Time {
	if r.interval() == 0 {
		return now
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tokenAt(name, r, now)
}

// tokenAt is TokenAt with c.mu held: the bucket must be full again at
// most Burst-1 intervals after the request is sent.
func (c *Clock) tokenAt(name string, r Rate, now time.Time) time.Time {
	at := c.buckets[name].Add(-time.Duration(max(r.Burst, 1)-1) * r.interval())
	if at.After(now) {
		return at
	}
	return now
}
