package event

import (
	"context"
	"fmt"
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
// memory, when the first Event it saw expires, and does nothing before
// (an Event written since expires later). The zero value is ready to use.
type TTLController struct {
	mu   sync.Mutex
	next time.Time
}

var _ controller.Controller = (*TTLController)(nil)

// Name implements controller.Controller.
func (*TTLController) Name() string { return "event-ttl" }

// Reset forgets when the first Event expires.
func (tc *TTLController) Reset() {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	tc.next = time.Time{}
}

// Sync deletes the expired Events.
func (tc *TTLController) Sync(ctx context.Context, c cluster.Interface, now time.Time) (controller.Result, error) {
	var res controller.Result
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if now.Before(tc.next) {
		return res, nil
	}
	if _, err := c.Mapper().ResourceFor(kobj.EventGVK); err != nil {
		return res, nil
	}
	l, err := c.List(ctx, kobj.EventGVK)
	if err != nil {
		return res, fmt.Errorf("event-ttl: list events: %w", err)
	}
	// Times as the API writes them (RFC 3339, UTC) sort as strings: no
	// parsing for the Events that live on.
	cutoff := kobj.FormatTime(now.Add(-TTL))
	first := ""
	for _, ev := range l.Items {
		if last := kobj.Str(ev, "lastTimestamp"); last > cutoff {
			if first == "" || last < first {
				first = last
			}
			continue
		}
		if lastWrite(ev).Add(TTL).After(now) {
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
	tc.next = time.Time{}
	if first != "" {
		tc.next = kobj.ParseTime(first).Add(TTL)
	}
	return res, nil
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
