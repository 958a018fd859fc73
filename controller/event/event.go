// Package event records Kubernetes Events (v1, kind Event) for the
// controllers of the embedded cluster, as client-go's event recorder and
// correlator leave them in the API server: one Event per involved object
// (and field path), type, reason, message and source, whose count and
// lastTimestamp grow when the same thing happens again; the spam filter
// that drops what a source says too often about one object (client-go's
// EventSourceObjectSpamFilter: a burst of 25, then one every 5 minutes),
// which Emit applies to the controllers' Events from the stored ones, and
// a SpamFilter for the kubelet to keep in memory;
// and the API server's time to live of Events (one hour after their last
// write), which the TTL controller carries out.
//
// Recording an Event never fails the recorder: an Event the API server
// refuses (its generated name too long for an object with a long name, a
// namespace being deleted) is dropped, as client-go's recorder drops it.
// Only a failure of the store itself is returned.
//
// As the correlator's aggregator does, once ten different messages of one
// reason about one object came within ten minutes of each other, one more
// Event "(combined from similar events): <message>" counts the further
// ones. The correlator's memory is read back from the stored Events rather
// than kept (the controllers keep no state).
//
// Names are upstream's, `<involved name>.<hex of the first occurrence's
// time in nanoseconds>`, on the cluster's clock (the next free nanosecond
// when two events come at one instant), so that names sort in the order
// the events happened and the same state and clock always give the same
// Events.
package event

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/controller/internal/kobj"
	"github.com/konverge/konverge/schema"
)

// The types of an Event.
const (
	Normal  = "Normal"
	Warning = "Warning"
)

// Event is one occurrence to record.
type Event struct {
	// Involved is the object the event is about (apiVersion, kind and
	// metadata are read).
	Involved map[string]any
	// FieldPath names a part of it: "spec.containers{nginx}".
	FieldPath string
	// Type is Normal or Warning; Reason and Message say what happened.
	Type, Reason, Message string
	// Component and Host are the source: "kubelet" on "node-1".
	Component, Host string
	// Time is the cluster time of the occurrence.
	Time time.Time
}

// Record writes an Event about involved (any object with apiVersion, kind
// and metadata) at cluster time now: created the first time, and on an
// identical repeat (same object, type, reason, message and component) its
// count incremented and lastTimestamp moved to now, as the client-go event
// correlator aggregates. See Emit.
func Record(ctx context.Context, c cluster.Interface, now time.Time, involved map[string]any, eventType, reason, message, component string) error {
	_, err := Emit(ctx, c, Event{Involved: involved, Type: eventType, Reason: reason, Message: message, Component: component, Time: now})
	return err
}

// Emit writes ev: a new Event, or the count of an identical one
// incremented; from the tenth different message of one reason about one
// object within ten minutes, the combined Event instead (see the package
// documentation). It returns the Event's count after the write (0 when
// the API server refused it, which drops it). err is only a failure of
// the store.
func Emit(ctx context.Context, c cluster.Interface, ev Event) (count int64, err error) {
	ns := kobj.Namespace(ev.Involved)
	if ns == "" {
		ns = "default"
	}
	about, err := eventsAbout(ctx, c, ns, ev)
	if err != nil {
		return 0, refused(err)
	}
	if ev.Host == "" && !spamAllowed(about, ns, ev) {
		return 0, nil
	}
	mine := eventsOf(about, ns, ev)
	similar := mine[:0:0]
	for _, e := range mine {
		if kobj.Str(e, "type") == ev.Type && kobj.Str(e, "reason") == ev.Reason {
			similar = append(similar, e)
		}
	}
	// The aggregator: the similar events of the current streak (no gap
	// over the interval) and their distinct messages.
	streak := streakOf(similar, ev.Time)
	msgs := map[string]bool{}
	var combined map[string]any
	for _, e := range streak {
		m := kobj.Str(e, "message")
		if strings.HasPrefix(m, combinedPrefix) {
			if combined == nil || later(e, combined) {
				combined = e
			}
			continue
		}
		msgs[m] = true
	}
	msgs[ev.Message] = true
	var existing map[string]any
	msg := ev.Message
	// Once combined, the aggregator goes on combining every message it
	// does not hold (it holds at most ten; individual Events that
	// expired are no longer seen here).
	if len(msgs) >= aggregateMaxEvents || (combined != nil && !hasMessage(streak, ev.Message)) {
		msg = combinedPrefix + ev.Message
		existing = combined
	} else {
		for _, e := range similar {
			if kobj.Str(e, "message") == ev.Message {
				existing = e
				break
			}
		}
	}
	ts := kobj.FormatTime(ev.Time)
	if existing != nil {
		next := kobj.Copy(existing)
		count = kobj.IntOr(existing, 1, "count") + 1
		next["count"] = count
		next["lastTimestamp"] = ts
		next["message"] = msg
		_, err := c.Update(ctx, next)
		if err == nil {
			return count, nil
		}
		if !cluster.IsNotFound(err) && !cluster.IsConflict(err) {
			return 0, refused(err)
		}
	}
	// The first free name from the occurrence's nanosecond on (the names
	// of the Events about the object, read above, are taken: no need to
	// ask for them).
	taken := make(map[string]bool, len(about))
	for _, e := range about {
		if kobj.Namespace(e) == ns {
			taken[kobj.Name(e)] = true
		}
	}
	t := ev.Time.UnixNano()
	for range 1000 {
		if taken[nameAt(ev.Involved, t)] {
			t++
			continue
		}
		_, err := c.Get(ctx, kobj.EventGVK, ns, nameAt(ev.Involved, t))
		if cluster.IsNotFound(err) {
			break
		}
		if err != nil {
			return 0, refused(err)
		}
		t++
	}
	source := map[string]any{"component": ev.Component}
	if ev.Host != "" {
		source["host"] = ev.Host
	}
	obj := map[string]any{
		"apiVersion": "v1",
		"kind":       "Event",
		"metadata": map[string]any{
			"name":      nameAt(ev.Involved, t),
			"namespace": ns,
		},
		"involvedObject":     involvedRef(ev),
		"reason":             ev.Reason,
		"message":            msg,
		"source":             source,
		"firstTimestamp":     ts,
		"lastTimestamp":      ts,
		"count":              int64(1),
		"type":               ev.Type,
		"eventTime":          nil,
		"reportingComponent": ev.Component,
		"reportingInstance":  ev.Host,
	}
	for i := 0; i < 1000; i++ {
		_, err := c.Create(ctx, obj)
		if err == nil {
			return 1, nil
		}
		if !cluster.IsAlreadyExists(err) {
			return 0, refused(err)
		}
		// Taken since the List (a write of another component).
		t++
		obj["metadata"].(map[string]any)["name"] = nameAt(ev.Involved, t)
	}
	return 0, nil
}

// The correlator's aggregation (client-go's defaults): from the tenth
// different message of a reason about an object within the interval, the
// events are combined.
const (
	aggregateMaxEvents = 10
	aggregateInterval  = 600 * time.Second
	combinedPrefix     = "(combined from similar events): "
)

// Index is what a cluster.Interface can offer to read Events without
// listing them all (the embedded cluster's controller runner does).
type Index interface {
	// EventsAbout returns the Events of namespace about the object name
	// (any kind) whose uid is uid, among those named after it
	// ("<name>.<suffix>", as Emit names them), in name order.
	EventsAbout(ctx context.Context, namespace, name, uid string) ([]cluster.Object, error)
	// EventNames calls fn with the namespace and name of every Event, in
	// List order, without reading them; fn must not call the cluster.
	EventNames(ctx context.Context, fn func(namespace, name string) error) error
}

// eventsAbout returns Events that include those about ev's object that
// are named after it (Events a user named otherwise are not the
// recorder's: client-go's correlator knows only those it wrote): from the
// cluster's Index when it has one, else from a List of all.
func eventsAbout(ctx context.Context, c cluster.Interface, ns string, ev Event) ([]cluster.Object, error) {
	name := kobj.Name(ev.Involved)
	if x, ok := c.(Index); ok {
		return x.EventsAbout(ctx, ns, name, kobj.UID(ev.Involved))
	}
	l, err := c.List(ctx, kobj.EventGVK)
	if err != nil {
		return nil, err
	}
	var out []cluster.Object
	for _, e := range l.Items {
		if strings.HasPrefix(kobj.Name(e), name+".") {
			out = append(out, e)
		}
	}
	return out, nil
}

// eventsOf returns the Events of ns about ev's object (and field path)
// from ev's source.
func eventsOf(items []cluster.Object, ns string, ev Event) []map[string]any {
	uid, kind, name := kobj.UID(ev.Involved), kobj.Str(ev.Involved, "kind"), kobj.Name(ev.Involved)
	var out []map[string]any
	for _, e := range items {
		if kobj.Namespace(e) != ns || kobj.Str(e, "source", "component") != ev.Component || kobj.Str(e, "source", "host") != ev.Host {
			continue
		}
		io := kobj.Map(e, "involvedObject")
		if kobj.Str(io, "uid") != uid || kobj.Str(io, "kind") != kind || kobj.Str(io, "name") != name || kobj.Str(io, "fieldPath") != ev.FieldPath {
			continue
		}
		out = append(out, e)
	}
	return out
}

// streakOf returns the events whose last occurrence belongs to the run of
// occurrences ending at now with no gap longer than the aggregation
// interval.
func streakOf(events []map[string]any, now time.Time) []map[string]any {
	type occ struct {
		t time.Time
		e map[string]any
	}
	var occs []occ
	for _, e := range events {
		occs = append(occs, occ{kobj.ParseTime(kobj.Str(e, "lastTimestamp")), e})
		if f := kobj.ParseTime(kobj.Str(e, "firstTimestamp")); !f.IsZero() {
			occs = append(occs, occ{f, nil})
		}
	}
	sort.SliceStable(occs, func(i, j int) bool { return occs[i].t.After(occs[j].t) })
	var out []map[string]any
	prev := now
	for _, o := range occs {
		if prev.Sub(o.t) > aggregateInterval {
			break
		}
		prev = o.t
		if o.e != nil {
			out = append(out, o.e)
		}
	}
	return out
}

func hasMessage(events []map[string]any, msg string) bool {
	for _, e := range events {
		if kobj.Str(e, "message") == msg {
			return true
		}
	}
	return false
}

func later(a, b map[string]any) bool {
	return kobj.ParseTime(kobj.Str(a, "lastTimestamp")).After(kobj.ParseTime(kobj.Str(b, "lastTimestamp")))
}

// refused drops what the API server refused: only a failure of the store
// itself is an error.
func refused(err error) error {
	var se *cluster.StatusError
	if errors.As(err, &se) {
		return nil
	}
	return fmt.Errorf("event: %w", err)
}

// Name is the name of an Event about involved first seen at t: the
// involved object's name, a dot and t in nanoseconds in hex, as client-go
// names them (Emit takes the next nanosecond when that name is taken).
func Name(involved map[string]any, t time.Time) string { return nameAt(involved, t.UnixNano()) }

func nameAt(involved map[string]any, nanos int64) string {
	return kobj.Name(involved) + "." + strconv.FormatInt(nanos, 16)
}

func involvedRef(ev Event) map[string]any {
	o := ev.Involved
	ref := map[string]any{
		"kind":       kobj.Str(o, "kind"),
		"name":       kobj.Name(o),
		"uid":        kobj.UID(o),
		"apiVersion": kobj.Str(o, "apiVersion"),
	}
	if ns := kobj.Namespace(o); ns != "" {
		ref["namespace"] = ns
	}
	if rv := kobj.Str(o, "metadata", "resourceVersion"); rv != "" {
		ref["resourceVersion"] = rv
	}
	if ev.FieldPath != "" {
		ref["fieldPath"] = ev.FieldPath
	}
	return ref
}

// The spam filter's rate: client-go's defaults.
const (
	SpamBurst    = 25
	SpamInterval = 5 * time.Minute // one more token per interval
)

// SpamFilter drops what one source says about one object (and type) beyond
// a burst of SpamBurst, refilled by one every SpamInterval of cluster
// time, as client-go's EventSourceObjectSpamFilter. It keeps its buckets
// in memory (as a real component does, until it restarts); the zero value
// is ready to use. Not safe for concurrent use.
type SpamFilter struct {
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	last   time.Time
}

// maxBuckets bounds the filter's memory, as client-go's LRU of 4096
// entries: beyond it, the filter forgets everything.
const maxBuckets = 4096

// Allow reports whether ev may be recorded, taking a token if so.
func (f *SpamFilter) Allow(ev Event) bool {
	key := strings.Join([]string{ev.Component, ev.Host, kobj.Str(ev.Involved, "kind"), kobj.Namespace(ev.Involved),
		kobj.Name(ev.Involved), kobj.UID(ev.Involved), kobj.Str(ev.Involved, "apiVersion"), ev.Type}, "\x00")
	if f.buckets == nil || len(f.buckets) >= maxBuckets {
		f.buckets = map[string]*bucket{}
	}
	b := f.buckets[key]
	if b == nil {
		b = &bucket{tokens: SpamBurst, last: ev.Time}
		f.buckets[key] = b
	}
	if ev.Time.After(b.last) {
		b.tokens += float64(ev.Time.Sub(b.last)) / float64(SpamInterval)
		if b.tokens > SpamBurst {
			b.tokens = SpamBurst
		}
		b.last = ev.Time
	}
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// Reset forgets every bucket.
func (f *SpamFilter) Reset() { f.buckets = nil }

// spamAllowed is the spam filter of a controller's Events (those without
// a Host; the kubelet keeps a SpamFilter of its own), read from the
// stored Events rather than kept, as the aggregator's memory: the bucket
// of the source, object and type started full at the first occurrence
// of its Events still stored and gave a token to each occurrence since
// (their counts). That is client-go's bucket as long as it did not fill
// up again in between; one that did would allow a little more than this.
func spamAllowed(about []cluster.Object, ns string, ev Event) bool {
	uid, kind, name := kobj.UID(ev.Involved), kobj.Str(ev.Involved, "kind"), kobj.Name(ev.Involved)
	var used int64
	var first time.Time
	for _, e := range about {
		if kobj.Namespace(e) != ns || kobj.Str(e, "type") != ev.Type ||
			kobj.Str(e, "source", "component") != ev.Component || kobj.Str(e, "source", "host") != "" {
			continue
		}
		io := kobj.Map(e, "involvedObject")
		if kobj.Str(io, "uid") != uid || kobj.Str(io, "kind") != kind || kobj.Str(io, "name") != name {
			continue
		}
		used += kobj.IntOr(e, 1, "count")
		if f := kobj.ParseTime(kobj.Str(e, "firstTimestamp")); first.IsZero() || (!f.IsZero() && f.Before(first)) {
			first = f
		}
	}
	if used < SpamBurst {
		return true
	}
	refilled := int64(ev.Time.Sub(first) / SpamInterval)
	return SpamBurst-used+refilled >= 1
}

// RecordedSince reports whether an Event of component about involved with
// this type, reason and message was last recorded at or after since: a
// controller that acts on a schedule uses it to say a thing once per
// scheduled time, as a controller woken only at those times does.
func RecordedSince(ctx context.Context, c cluster.Interface, involved map[string]any, eventType, reason, message, component string, since time.Time) (bool, error) {
	ns := kobj.Namespace(involved)
	if ns == "" {
		ns = "default"
	}
	ev := Event{Involved: involved, Component: component}
	about, err := eventsAbout(ctx, c, ns, ev)
	if err != nil {
		return false, fmt.Errorf("event: list events: %w", err)
	}
	for _, e := range eventsOf(about, ns, ev) {
		if kobj.Str(e, "type") != eventType || kobj.Str(e, "reason") != reason {
			continue
		}
		m := kobj.Str(e, "message")
		if m != message && m != combinedPrefix+message {
			continue
		}
		if !kobj.ParseTime(kobj.Str(e, "lastTimestamp")).Before(since) {
			return true, nil
		}
	}
	return false, nil
}

// Backoff is how long a controller's work queue waits before retrying
// what failed for the n-th time in a row: client-go's default rate
// limiter, 5ms doubling up to 1000s, in whole seconds of cluster time (the
// precision of an Event's timestamps), at least one.
func Backoff(n int64) time.Duration { return DefaultLimiter.Backoff(n) }

// Limiter is a controller's work-queue rate limiter: Base doubling up to
// Max with each failure in a row.
type Limiter struct {
	Base, Max time.Duration
	// PerSync counts the failures of one sync once: the Events of one
	// second that happened once each (a Job refused several pods in one
	// sync) are one failure.
	PerSync bool
}

// DefaultLimiter is client-go's default controller rate limiter.
var DefaultLimiter = Limiter{Base: 5 * time.Millisecond, Max: 1000 * time.Second}

// Backoff is how long the limiter waits after the n-th failure in a row,
// in whole seconds of cluster time (the precision of an Event's
// timestamps), at least one.
func (l Limiter) Backoff(n int64) time.Duration {
	d := l.Max
	if n >= 1 && n < 40 && l.Base > 0 {
		if shifted := l.Base << (n - 1); shifted > 0 && shifted>>(n-1) == l.Base {
			d = min(shifted, l.Max)
		}
	}
	return max(d.Round(time.Second), time.Second)
}

// RetryAt is when a controller may retry what failed and was recorded as
// ev (its Time is ignored): the Event's lastTimestamp plus the Backoff of
// its count. Zero when there is no such Event (retry now).
func RetryAt(ctx context.Context, c cluster.Interface, ev Event) (time.Time, error) {
	ns := kobj.Namespace(ev.Involved)
	if ns == "" {
		ns = "default"
	}
	about, err := eventsAbout(ctx, c, ns, ev)
	if err != nil {
		return time.Time{}, refused(err)
	}
	// The Event of that message, or the combined one that counts it.
	var last map[string]any
	for _, e := range eventsOf(about, ns, ev) {
		m := kobj.Str(e, "message")
		if kobj.Str(e, "type") != ev.Type || kobj.Str(e, "reason") != ev.Reason || (m != ev.Message && !strings.HasPrefix(m, combinedPrefix)) {
			continue
		}
		if last == nil || later(e, last) {
			last = e
		}
	}
	at := kobj.ParseTime(kobj.Str(last, "lastTimestamp"))
	if last == nil || at.IsZero() {
		return time.Time{}, nil
	}
	return at.Add(Backoff(kobj.IntOr(last, 1, "count"))), nil
}

// LastRecorded is the latest lastTimestamp of the Events component
// recorded about involved (any type, reason and message); zero when there
// is none. A controller woken on a period reads from it whether the
// current period was already carried out.
func LastRecorded(ctx context.Context, c cluster.Interface, involved map[string]any, component string) (time.Time, error) {
	ns := kobj.Namespace(involved)
	if ns == "" {
		ns = "default"
	}
	ev := Event{Involved: involved, Component: component}
	about, err := eventsAbout(ctx, c, ns, ev)
	if err != nil {
		return time.Time{}, fmt.Errorf("event: list events: %w", err)
	}
	var last time.Time
	for _, e := range eventsOf(about, ns, ev) {
		if t := kobj.ParseTime(kobj.Str(e, "lastTimestamp")); t.After(last) {
			last = t
		}
	}
	return last, nil
}

// Find returns the stored Event of ev's object, source, type, reason and
// message (nil when there is none): a stateless recorder reads its
// count and times from it.
func Find(ctx context.Context, c cluster.Interface, ev Event) (map[string]any, error) {
	ns := kobj.Namespace(ev.Involved)
	if ns == "" {
		ns = "default"
	}
	about, err := eventsAbout(ctx, c, ns, ev)
	if err != nil {
		return nil, fmt.Errorf("event: list events: %w", err)
	}
	for _, e := range eventsOf(about, ns, ev) {
		if kobj.Str(e, "type") == ev.Type && kobj.Str(e, "reason") == ev.Reason && kobj.Str(e, "message") == ev.Message {
			return e, nil
		}
	}
	return nil, nil
}

// FailureRetryAt is when a controller may sync involved again after a sync
// that failed: when the latest Event component recorded about involved is
// a Warning whose reason starts with "Failed" (FailedCreate, FailedDelete,
// ...), its lastTimestamp plus the Backoff of the failures the living
// Events of the component about involved count (client-go's rate
// limiter; a later Event of the component, such as a SuccessfulCreate,
// means a sync went through and the back-off is forgotten). Zero when
// there is nothing to wait for.
func FailureRetryAt(ctx context.Context, c cluster.Interface, involved map[string]any, component string) (time.Time, error) {
	_, retry, err := lastFailure(ctx, c, involved, component, DefaultLimiter)
	return retry, err
}

// lastFailure returns when the failure FailureRetryAt reads happened and
// when it may be retried (zero times: none).
func lastFailure(ctx context.Context, c cluster.Interface, involved map[string]any, component string, lim Limiter) (at, retry time.Time, err error) {
	ns := kobj.Namespace(involved)
	if ns == "" {
		ns = "default"
	}
	ev := Event{Involved: involved, Component: component}
	about, err := eventsAbout(ctx, c, ns, ev)
	if err != nil {
		return time.Time{}, time.Time{}, refused(err)
	}
	failed := func(e map[string]any) bool {
		return kobj.Str(e, "type") == Warning && strings.HasPrefix(kobj.Str(e, "reason"), "Failed")
	}
	var last map[string]any
	var failures int64
	once := map[string]bool{}
	for _, e := range eventsOf(about, ns, ev) {
		// Of two Events of the same second, the one written last.
		if last == nil || later(e, last) || (!later(last, e) && resourceVersion(e) > resourceVersion(last)) {
			last = e
		}
		if !failed(e) {
			continue
		}
		n := max(kobj.IntOr(e, 1, "count"), 1)
		if lim.PerSync && n == 1 {
			t := kobj.Str(e, "lastTimestamp")
			if once[t] {
				continue
			}
			once[t] = true
		}
		failures += n
	}
	if last == nil || !failed(last) {
		return time.Time{}, time.Time{}, nil
	}
	at = kobj.ParseTime(kobj.Str(last, "lastTimestamp"))
	if at.IsZero() {
		return time.Time{}, time.Time{}, nil
	}
	// The failures the Events still count (messages that name a new pod
	// each time are different Events): the rate limiter's count.
	return at, at.Add(lim.Backoff(failures)), nil
}

// RetryAfter is when a controller retries involved after its sync at now
// failed with err, a refusal of the API server: FailureRetryAt of the
// Event that recorded it; a second later for a Conflict (a stale read);
// the longest back-off when no Event says so (the Event was refused too,
// as in a terminating namespace).
func RetryAfter(ctx context.Context, c cluster.Interface, involved map[string]any, component string, now time.Time, err error) (time.Time, error) {
	return DefaultLimiter.RetryAfter(ctx, c, involved, component, now, err)
}

// RetryAfter is RetryAfter with the limiter l.
func (l Limiter) RetryAfter(ctx context.Context, c cluster.Interface, involved map[string]any, component string, now time.Time, err error) (time.Time, error) {
	if cluster.IsConflict(err) {
		return now.Add(time.Second), nil
	}
	_, retry, rerr := lastFailure(ctx, c, involved, component, l)
	if rerr != nil {
		return time.Time{}, rerr
	}
	if !retry.After(now) {
		retry = now.Add(l.Backoff(1 << 20))
	}
	return retry, nil
}

// AfterSync sorts out how a controller's sync of involved at now ended
// with err: nil, nothing; a refusal of the API server, which the
// controller's Events record already (FailedCreate, FailedDelete, ...) as
// upstream records it, is retried at RetryAfter (requeue); any other
// error is the controller's own failure, named by the object (failure).
// rerr is an error reading the Events.
func AfterSync(ctx context.Context, c cluster.Interface, involved map[string]any, component string, now time.Time, err error) (requeue time.Time, failure, rerr error) {
	return DefaultLimiter.AfterSync(ctx, c, involved, component, now, err)
}

// AfterSync is AfterSync with the limiter l.
func (l Limiter) AfterSync(ctx context.Context, c cluster.Interface, involved map[string]any, component string, now time.Time, err error) (requeue time.Time, failure, rerr error) {
	switch {
	case err == nil:
		return time.Time{}, nil, nil
	case cluster.IsStatus(err):
		requeue, rerr = l.RetryAfter(ctx, c, involved, component, now, err)
		return requeue, nil, rerr
	}
	return time.Time{}, fmt.Errorf("%s/%s: %w", kobj.Namespace(involved), kobj.Name(involved), err), nil
}

func resourceVersion(obj map[string]any) uint64 {
	n, _ := strconv.ParseUint(kobj.Str(obj, "metadata", "resourceVersion"), 10, 64)
	return n
}

// Waiting reports whether a controller should leave involved alone at
// now, and until when: its last sync failed (FailureRetryAt) and nobody
// changed the object since (an update is queued at once, as upstream's
// informers do; a write of its status subresource is the controller's
// own and does not count).
func Waiting(ctx context.Context, c cluster.Interface, involved map[string]any, component string, now time.Time) (until time.Time, waiting bool, err error) {
	return DefaultLimiter.Waiting(ctx, c, involved, component, now)
}

// Waiting is Waiting with the limiter l.
func (l Limiter) Waiting(ctx context.Context, c cluster.Interface, involved map[string]any, component string, now time.Time) (until time.Time, waiting bool, err error) {
	at, retry, err := lastFailure(ctx, c, involved, component, l)
	if err != nil || !now.Before(retry) {
		return time.Time{}, false, err
	}
	if updatedSince(involved, at) {
		return time.Time{}, false, nil
	}
	if _, ok := kobj.Map(involved, "metadata")["managedFields"]; !ok {
		// A cached object, without its managed fields: the stored one
		// says who wrote it when.
		gvk := schema.ParseGVK(kobj.Str(involved, "apiVersion"), kobj.Str(involved, "kind"))
		stored, err := c.Get(ctx, gvk, kobj.Namespace(involved), kobj.Name(involved))
		if err != nil && !cluster.IsNotFound(err) {
			return time.Time{}, false, refused(err)
		}
		if stored != nil && kobj.UID(stored) == kobj.UID(involved) && updatedSince(stored, at) {
			return time.Time{}, false, nil
		}
	}
	return retry, true, nil
}

// updatedSince reports whether a manager wrote obj, other than its
// status, after t (managedFields times, in seconds: a write in the
// second of the failure is taken for one before it, or every round of
// that second would retry at once).
func updatedSince(obj map[string]any, t time.Time) bool {
	for _, e := range kobj.Slice(obj, "metadata", "managedFields") {
		m, _ := e.(map[string]any)
		if kobj.Str(m, "subresource") == "status" {
			continue
		}
		if at := kobj.ParseTime(kobj.Str(m, "time")); at.After(t) {
			return true
		}
	}
	return false
}
