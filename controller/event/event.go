// Package event records Kubernetes Events (v1, kind Event) for the
// controllers of the embedded cluster, as client-go's event recorder and
// correlator leave them in the API server: one Event per involved object
// (and field path), type, reason, message and source, whose count and
// lastTimestamp grow when the same thing happens again; a SpamFilter that
// drops what a source says too often about one object (client-go's
// EventSourceObjectSpamFilter: a burst of 25, then one every 5 minutes);
// and the API server's time to live of Events (one hour after their last
// write), which the TTL controller carries out.
//
// Recording an Event never fails the recorder: an Event the API server
// refuses (its generated name too long for an object with a long name, a
// namespace being deleted) is dropped, as client-go's recorder drops it.
// Only a failure of the store itself is returned.
//
// Names are deterministic (`<involved name>.<16 hex digits>` from a hash of
// what identifies the event) so that the same state and clock always give
// the same Events.
package event

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/controller/internal/kobj"
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
// incremented. It returns the Event's count after the write (0 when the
// API server refused it, which drops it). err is only a failure of the
// store.
func Emit(ctx context.Context, c cluster.Interface, ev Event) (count int64, err error) {
	ns := kobj.Namespace(ev.Involved)
	if ns == "" {
		ns = "default"
	}
	name := nameOf(ev)
	ts := kobj.FormatTime(ev.Time)
	old, err := c.Get(ctx, kobj.EventGVK, ns, name)
	switch {
	case err == nil:
		count = kobj.IntOr(old, 1, "count") + 1
		old["count"] = count
		old["lastTimestamp"] = ts
		old["involvedObject"] = involvedRef(ev)
		if _, err := c.Update(ctx, old); err != nil {
			return 0, refused(err)
		}
		return count, nil
	case !cluster.IsNotFound(err):
		return 0, refused(err)
	}
	source := map[string]any{"component": ev.Component}
	if ev.Host != "" {
		source["host"] = ev.Host
	}
	obj := map[string]any{
		"apiVersion": "v1",
		"kind":       "Event",
		"metadata": map[string]any{
			"name":      name,
			"namespace": ns,
		},
		"involvedObject":     involvedRef(ev),
		"reason":             ev.Reason,
		"message":            ev.Message,
		"source":             source,
		"firstTimestamp":     ts,
		"lastTimestamp":      ts,
		"count":              int64(1),
		"type":               ev.Type,
		"eventTime":          nil,
		"reportingComponent": ev.Component,
		"reportingInstance":  ev.Host,
	}
	if _, err := c.Create(ctx, obj); err != nil {
		return 0, refused(err)
	}
	return 1, nil
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

// Name is the name Record gives the Event: the involved object's name, a
// dot and 16 hex digits of a hash of what identifies the event.
func Name(involved map[string]any, eventType, reason, message, component string) string {
	return nameOf(Event{Involved: involved, Type: eventType, Reason: reason, Message: message, Component: component})
}

func nameOf(ev Event) string {
	h := fnv.New64a()
	for _, s := range []string{
		kobj.Str(ev.Involved, "kind"), kobj.Namespace(ev.Involved), kobj.Name(ev.Involved), kobj.UID(ev.Involved),
		ev.Type, ev.Reason, ev.Message, ev.Component,
	} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	if ev.FieldPath != "" || ev.Host != "" {
		h.Write([]byte(ev.FieldPath))
		h.Write([]byte{0})
		h.Write([]byte(ev.Host))
	}
	return fmt.Sprintf("%s.%016x", kobj.Name(ev.Involved), h.Sum64())
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
