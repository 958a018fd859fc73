package event

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/controller"
	"github.com/konverge/konverge/controller/internal/kobj"
)

// TTL is how long an Event lives after its last write: kube-apiserver's
// --event-ttl default.
const TTL = time.Hour

// TTLController deletes the Events whose time to live is over, as etcd's
// leases do for kube-apiserver, so that a cluster that runs for months
// keeps the last hour of Events, not all of them. It asks for no time of
// its own (an Event's expiry is no reason to wake the cluster): expired
// Events go at the next sync, whatever causes it. It remembers, in
// memory, the earliest time an Event may expire, and does nothing before
// (an Event written since expires later). The zero value is ready to use.
//
// It reads only the Events that may have expired: an Event named as Emit
// names them (`<object>.<hex nanoseconds of its first occurrence>`) lives
// at least an hour after that time, so its name alone says it cannot have
// expired yet; the others are read.
//
// It keeps that time with the cluster too, when the cluster offers to
// (GetMeta and PutMeta, as the embedded cluster's controller runner and
// store do), so that a new process does not read every Event's name
// first: no Event written later can expire before it (every Event lives
// an hour after it was created), and a full sync reads the names again
// once it has passed.
type TTLController struct {
	mu   sync.Mutex
	next time.Time
	// kept is the time kept with the cluster, as read or written last.
	kept string
}

// metaKey is where the TTL controller keeps, with the cluster, the
// earliest time an Event may expire.
const metaKey = "event-ttl-next"

// metaStore is what a cluster can offer to keep a little data with it.
type metaStore interface {
	GetMeta(ctx context.Context, key string) ([]byte, error)
	PutMeta(ctx context.Context, key string, value []byte) error
}

var _ controller.Controller = (*TTLController)(nil)

// Name implements controller.Controller.
func (*TTLController) Name() string { return "event-ttl" }

// Reset forgets when the first Event expires.
func (tc *TTLController) Reset() {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	tc.next, tc.kept = time.Time{}, ""
}

// nameSlack is how much earlier than the time its name carries an Event's
// first occurrence may be recorded: its timestamps have whole seconds,
// and a name taken moves to the next free nanoseconds.
const nameSlack = 2 * time.Second

// Sync deletes the expired Events.
func (tc *TTLController) Sync(ctx context.Context, c cluster.Interface, now time.Time) (controller.Result, error) {
	var res controller.Result
	tc.mu.Lock()
	defer tc.mu.Unlock()
	meta, _ := c.(metaStore)
	if tc.next.IsZero() && meta != nil {
		// A new process: the time kept with the cluster, if any.
		if v, err := meta.GetMeta(ctx, metaKey); err == nil && len(v) > 0 {
			if t, err := time.Parse(time.RFC3339Nano, string(v)); err == nil {
				tc.next, tc.kept = t, string(v)
			}
		}
	}
	if now.Before(tc.next) {
		return res, nil
	}
	if _, err := c.Mapper().ResourceFor(kobj.EventGVK); err != nil {
		return res, nil
	}
	// An Event written from now on expires an hour after at the earliest.
	next := now.Add(TTL - nameSlack)
	later := func(t time.Time) {
		if next.IsZero() || t.Before(next) {
			next = t
		}
	}
	// The Events that may have expired: those whose name does not say
	// they cannot have.
	type key struct{ ns, name string }
	var keys []key
	err := eventNames(ctx, c, func(ns, name string) error {
		if first, ok := nameTime(name); ok && !first.After(now) {
			if expires := first.Add(TTL - nameSlack); expires.After(now) {
				later(expires)
				return nil
			}
		}
		keys = append(keys, key{ns, name})
		return nil
	})
	if err != nil {
		return res, fmt.Errorf("event-ttl: list events: %w", err)
	}
	maybe := make([]cluster.Object, 0, len(keys))
	for _, k := range keys {
		ev, err := c.Get(ctx, kobj.EventGVK, k.ns, k.name)
		switch {
		case cluster.IsNotFound(err):
			continue
		case err != nil:
			return res, fmt.Errorf("event-ttl: get %s/%s: %w", k.ns, k.name, err)
		}
		maybe = append(maybe, ev)
	}
	// Times as the API writes them (RFC 3339, UTC) sort as strings: no
	// parsing for the Events that live on.
	cutoff := kobj.FormatTime(now.Add(-TTL))
	for _, ev := range maybe {
		if last := kobj.Str(ev, "lastTimestamp"); last > cutoff {
			later(kobj.ParseTime(last).Add(TTL))
			continue
		}
		if expires := lastWrite(ev).Add(TTL); expires.After(now) {
			later(expires)
			continue
		}
		err := c.Delete(ctx, kobj.EventGVK, kobj.Namespace(ev), kobj.Name(ev), cluster.Preconditions{UID: kobj.UID(ev)})
		if err != nil && !cluster.IsNotFound(err) && !cluster.IsConflict(err) {
			if refused(err) == nil {
				continue
			}
			return res, fmt.Errorf("event-ttl: delete %s/%s: %w", kobj.Namespace(ev), kobj.Name(ev), err)
		}
		res.Changed = true
	}
	tc.next = next
	if v := next.UTC().Format(time.RFC3339Nano); meta != nil && v != tc.kept {
		if err := meta.PutMeta(ctx, metaKey, []byte(v)); err == nil {
			tc.kept = v
		}
	}
	return res, nil
}

// eventNames calls fn with the namespace and name of every Event, in List
// order: from the cluster's Index, else from a List. fn must not call c.
func eventNames(ctx context.Context, c cluster.Interface, fn func(ns, name string) error) error {
	if x, ok := c.(Index); ok {
		return x.EventNames(ctx, fn)
	}
	l, err := c.List(ctx, kobj.EventGVK)
	if err != nil {
		return err
	}
	for _, ev := range l.Items {
		if err := fn(kobj.Namespace(ev), kobj.Name(ev)); err != nil {
			return err
		}
	}
	return nil
}

// nameTime is the time an Event's name carries, as Emit names them: the
// hex nanoseconds after its last dot.
func nameTime(name string) (time.Time, bool) {
	i := strings.LastIndexByte(name, '.')
	if i < 0 || len(name)-i-1 > 16 {
		return time.Time{}, false
	}
	n, err := strconv.ParseInt(name[i+1:], 16, 64)
	if err != nil || n <= 0 {
		return time.Time{}, false
	}
	return time.Unix(0, n).UTC(), true
}

// lastWrite is when an Event was last written, as far as it says: the
// latest of its timestamps.
func lastWrite(ev map[string]any) time.Time {
	var t time.Time
	for _, f := range []string{"lastTimestamp", "firstTimestamp", "eventTime"} {
		if x := kobj.ParseTime(kobj.Str(ev, f)); x.After(t) {
			t = x
		}
	}
	if x := kobj.ParseTime(kobj.Str(ev, "metadata", "creationTimestamp")); x.After(t) {
		t = x
	}
	if series, _ := ev["series"].(map[string]any); series != nil {
		if x := kobj.ParseTime(kobj.Str(series, "lastObservedTime")); x.After(t) {
			t = x
		}
	}
	return t
}
