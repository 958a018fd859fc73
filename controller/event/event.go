// Package event records Kubernetes Events (v1, kind Event) for the
// controllers of the embedded cluster, as client-go's event recorder and
// correlator leave them in the API server: one Event per involved object,
// type, reason, message and source, whose count and lastTimestamp grow when
// the same thing happens again.
//
// Names are deterministic (`<involved name>.<16 hex digits>` from a hash of
// what identifies the event) so that the same state and clock always give
// the same Events.
package event

import (
	"context"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/controller/internal/kobj"
)

// The types of an Event.
const (
	Normal  = "Normal"
	Warning = "Warning"
)

// Record writes an Event about involved (any object with apiVersion, kind
// and metadata) at cluster time now: created the first time, and on an
// identical repeat (same object, type, reason, message and component) its
// count incremented and lastTimestamp moved to now, as the client-go event
// correlator aggregates.
func Record(ctx context.Context, c cluster.Interface, now time.Time, involved map[string]any, eventType, reason, message, component string) error {
	ns := kobj.Namespace(involved)
	if ns == "" {
		ns = "default"
	}
	name := Name(involved, eventType, reason, message, component)
	ts := kobj.FormatTime(now)
	ev := map[string]any{
		"apiVersion": "v1",
		"kind":       "Event",
		"metadata": map[string]any{
			"name":      name,
			"namespace": ns,
		},
		"involvedObject":     involvedRef(involved),
		"reason":             reason,
		"message":            message,
		"source":             map[string]any{"component": component},
		"firstTimestamp":     ts,
		"lastTimestamp":      ts,
		"count":              int64(1),
		"type":               eventType,
		"eventTime":          nil,
		"reportingComponent": component,
		"reportingInstance":  "",
	}
	_, err := c.Create(ctx, ev)
	if err == nil {
		return nil
	}
	if !cluster.IsAlreadyExists(err) {
		return fmt.Errorf("event: create %s/%s: %w", ns, name, err)
	}
	old, err := c.Get(ctx, kobj.EventGVK, ns, name)
	if err != nil {
		return fmt.Errorf("event: get %s/%s: %w", ns, name, err)
	}
	old["count"] = kobj.IntOr(old, 1, "count") + 1
	old["lastTimestamp"] = ts
	old["involvedObject"] = involvedRef(involved)
	if _, err := c.Update(ctx, old); err != nil {
		return fmt.Errorf("event: update %s/%s: %w", ns, name, err)
	}
	return nil
}

// Name is the name Record gives the Event: the involved object's name, a
// dot and 16 hex digits of a hash of what identifies the event.
func Name(involved map[string]any, eventType, reason, message, component string) string {
	h := fnv.New64a()
	for _, s := range []string{
		kobj.Str(involved, "kind"), kobj.Namespace(involved), kobj.Name(involved), kobj.UID(involved),
		eventType, reason, message, component,
	} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return fmt.Sprintf("%s.%016x", kobj.Name(involved), h.Sum64())
}

func involvedRef(o map[string]any) map[string]any {
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
	return ref
}
