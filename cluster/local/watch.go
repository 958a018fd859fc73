package local

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

// historySize is how many recent events the store keeps in memory for
// watches that start from a resourceVersion.
const historySize = 10000

// hub delivers the events of committed transactions to the watchers of
// this Store, and keeps the recent ones.
type hub struct {
	mu sync.Mutex
	// history holds the recent events in revision order; every event after
	// floor is in it.
	history []event
	floor   uint64
	// last is the last revision published.
	last     uint64
	watchers map[*watcher]struct{}
	closed   bool
}

func newHub(rev uint64) *hub {
	return &hub{floor: rev, last: rev, watchers: map[*watcher]struct{}{}}
}

// publish records the events of a commit that left the revision at rev
// and hands them to the watchers.
func (h *hub) publish(evs []event, rev uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, e := range evs {
		h.history = append(h.history, e)
		for w := range h.watchers {
			w.enqueue(e)
		}
	}
	if n := len(h.history); n > 2*historySize {
		h.floor = h.history[n-historySize-1].rev
		h.history = append([]event(nil), h.history[n-historySize:]...)
	}
	if rev > h.last {
		h.last = rev
	}
}

func (h *hub) close() {
	h.mu.Lock()
	h.closed = true
	ws := make([]*watcher, 0, len(h.watchers))
	for w := range h.watchers {
		ws = append(ws, w)
	}
	h.mu.Unlock()
	for _, w := range ws {
		w.Stop()
	}
}

func (h *hub) remove(w *watcher) {
	h.mu.Lock()
	delete(h.watchers, w)
	h.mu.Unlock()
}

// watcher is one Watch: a queue without bound (writers never wait for
// readers) drained by a goroutine into the result channel.
type watcher struct {
	h          *hub
	gk         groupKind
	apiVersion string
	sel        *selection
	// after is the revision the watch starts after.
	after uint64

	mu    sync.Mutex
	queue []event
	wake  chan struct{}

	ch       chan cluster.Event
	stop     chan struct{}
	stopOnce sync.Once

	// pending counts the events queued and not yet handed out or
	// dropped; delivered the events handed out on ch.
	pending, delivered atomic.Int64
}

func (w *watcher) ResultChan() <-chan cluster.Event { return w.ch }

// Progress reports how many events the watch has handed out on its result
// channel and how many it holds that it has not handed out (or dropped,
// not matching its selectors) yet. Every change committed before the call
// counts in one or the other, so a reader that has received delivered
// events when pending is 0 has seen every change made so far: tests use it
// to wait for a watch deterministically.
func (w *watcher) Progress() (delivered, pending int64) {
	pending = w.pending.Load()
	return w.delivered.Load(), pending
}

// Stop ends the watch; the result channel is then closed.
func (w *watcher) Stop() { w.stopOnce.Do(func() { close(w.stop) }) }

// enqueue queues an event of the watched kind; the hub's lock is held.
func (w *watcher) enqueue(e event) {
	if e.rev <= w.after || e.key.gk != w.gk || (w.sel.namespace != "" && e.key.namespace != w.sel.namespace) {
		return
	}
	w.mu.Lock()
	w.queue = append(w.queue, e)
	w.pending.Add(1)
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *watcher) run(ctx context.Context) {
	defer close(w.ch)
	defer w.h.remove(w)
	for {
		w.mu.Lock()
		batch := w.queue
		w.queue = nil
		w.mu.Unlock()
		for _, e := range batch {
			ev, ok := w.convert(e)
			if !ok {
				w.pending.Add(-1)
				continue
			}
			select {
			case w.ch <- ev:
				w.delivered.Add(1)
				w.pending.Add(-1)
			case <-w.stop:
				return
			case <-ctx.Done():
				return
			}
		}
		if len(batch) > 0 {
			continue
		}
		select {
		case <-w.wake:
		case <-w.stop:
			return
		case <-ctx.Done():
			return
		}
	}
}

// convert makes the event this watcher reports, if any: with selectors,
// an object that starts matching is ADDED and one that stops matching is
// DELETED (as it was, at the event's resourceVersion).
func (w *watcher) convert(e event) (cluster.Event, bool) {
	obj, err := value.DecodeObject(e.data)
	if err != nil {
		return cluster.Event{}, false
	}
	obj["apiVersion"] = w.apiVersion
	rv := strconv.FormatUint(e.rev, 10)
	if e.typ == cluster.Deleted {
		metadata(obj)["resourceVersion"] = rv
	}
	now := w.sel.matches(obj)
	if e.typ != cluster.Modified || (w.sel.labels == nil && w.sel.fields == nil) {
		return cluster.Event{Type: e.typ, Object: obj}, now
	}
	old, err := value.DecodeObject(e.old)
	if err != nil {
		return cluster.Event{}, false
	}
	before := w.sel.matches(old)
	switch {
	case now && before:
		return cluster.Event{Type: cluster.Modified, Object: obj}, true
	case now:
		return cluster.Event{Type: cluster.Added, Object: obj}, true
	case before:
		old["apiVersion"] = w.apiVersion
		metadata(old)["resourceVersion"] = rv
		return cluster.Event{Type: cluster.Deleted, Object: old}, true
	}
	return cluster.Event{}, false
}

// watch starts a Watch: from now, after a resourceVersion still in the
// history, or ("0") with an ADDED event for every object that exists.
func (s *Store) watch(ctx context.Context, gvk schema.GVK, o cluster.ListOptions) (cluster.Watcher, error) {
	var sel *selection
	var res cluster.Resource
	err := s.view(ctx, func(t *txn) (err error) {
		if res, err = t.resource(gvk); err != nil {
			return err
		}
		sel, err = t.selection(res, o)
		return err
	})
	if err != nil {
		return nil, err
	}
	w := &watcher{
		gk: gkOf(res), apiVersion: gvk.APIVersion(), sel: sel,
		wake: make(chan struct{}, 1), ch: make(chan cluster.Event), stop: make(chan struct{}),
	}
	h := s.hub
	w.h = h
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, fmt.Errorf("local: watch %s: the store is closed", kindGroup(gvk))
	}
	var after uint64
	switch o.ResourceVersion {
	case "":
		after = h.last
	case "0":
		// The current objects, then what changes after them.
		err := s.view(ctx, func(t *txn) error {
			after = t.rev
			return t.scan(w.gk, sel.namespace, func(ns, name string, raw []byte) error {
				w.queue = append(w.queue, event{typ: cluster.Added, key: objKey{gk: w.gk, namespace: ns, name: name}, data: bytes.Clone(raw)})
				w.pending.Add(1)
				return nil
			})
		})
		if err != nil {
			return nil, err
		}
	default:
		rv, err := strconv.ParseUint(o.ResourceVersion, 10, 64)
		if err != nil {
			return nil, cluster.NewBadRequest(fmt.Sprintf("invalid resource version %q", o.ResourceVersion))
		}
		if rv < h.floor {
			return nil, &cluster.StatusError{Code: 410, Reason: cluster.ReasonGone,
				Message: fmt.Sprintf("too old resource version: %d (%d)", rv, h.floor+1)}
		}
		if rv > h.last {
			return nil, &cluster.StatusError{Code: 504, Reason: cluster.ReasonTimeout,
				Message: fmt.Sprintf("Timeout: Too large resource version: %d, current: %d", rv, h.last)}
		}
		after = rv
	}
	w.after = after
	for _, e := range h.history {
		w.enqueue(e)
	}
	h.watchers[w] = struct{}{}
	go w.run(ctx)
	return w, nil
}
