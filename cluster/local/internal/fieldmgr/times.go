package fieldmgr

import (
	"fmt"
	"sort"
	"time"

	"github.com/konverge/konverge/cluster/local/internal/jsonobj"
	"github.com/konverge/konverge/schema"
)

// SetGVK labels obj with a kind's apiVersion and kind.
func SetGVK(obj map[string]any, gvk schema.GVK) {
	obj["apiVersion"], obj["kind"] = gvk.APIVersion(), gvk.Kind
}

// Times stands in for the times of managedFields while the field
// manager works: it stamps the entries it changes with the wall clock,
// while the embedded cluster stamps them with its own. Before the call,
// every time is replaced by a marker early in 1970 that keeps the order of
// the times (the field manager orders entries, and merges the oldest, by
// time); after, a marker goes back to its time and any other time is one
// the field manager set, which becomes the store's now.
type Times struct {
	toMarker map[string]string
	toTime   map[string]string
}

var markerBase = time.Unix(0, 0).UTC()

// NewTimes collects the times of the managedFields of the objects.
func NewTimes(objs ...map[string]any) *Times {
	var times []string
	for _, obj := range objs {
		for _, e := range ManagedEntries(obj) {
			if s, ok := e["time"].(string); ok && s != "" {
				times = append(times, s)
			}
		}
	}
	m := &Times{toMarker: map[string]string{}, toTime: map[string]string{}}
	if len(times) == 0 {
		return m
	}
	sort.Slice(times, func(i, j int) bool { return unixOf(times[i]) < unixOf(times[j]) })
	rank, last := 0, int64(-1)
	for _, s := range times {
		if _, ok := m.toMarker[s]; ok {
			continue
		}
		if u := unixOf(s); u != last {
			rank, last = rank+1, u
		}
		marker := formatTime(markerBase.Add(time.Duration(rank) * time.Second))
		m.toMarker[s] = marker
		if _, ok := m.toTime[marker]; !ok {
			m.toTime[marker] = s
		}
	}
	return m
}

func unixOf(s string) int64 {
	tm, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return 0
	}
	return tm.Unix()
}

func ManagedEntries(obj map[string]any) []map[string]any {
	md, _ := obj["metadata"].(map[string]any)
	list, _ := md["managedFields"].([]any)
	out := make([]map[string]any, 0, len(list))
	for _, x := range list {
		if e, ok := x.(map[string]any); ok {
			out = append(out, e)
		}
	}
	return out
}

// Shallow returns obj with its own metadata and managedFields, marked.
func (m *Times) Shallow(obj map[string]any) map[string]any {
	c := make(map[string]any, len(obj))
	for k, v := range obj {
		c[k] = v
	}
	if md, ok := obj["metadata"].(map[string]any); ok {
		mdc := make(map[string]any, len(md))
		for k, v := range md {
			mdc[k] = v
		}
		c["metadata"] = mdc
	}
	m.Mark(c)
	return c
}

// Mark replaces the times of obj's managedFields (entries copied) by their
// markers.
func (m *Times) Mark(obj map[string]any) {
	md, _ := obj["metadata"].(map[string]any)
	list, ok := md["managedFields"].([]any)
	if !ok || len(m.toMarker) == 0 {
		return
	}
	out := make([]any, len(list))
	for i, x := range list {
		e, ok := x.(map[string]any)
		if !ok {
			out[i] = x
			continue
		}
		if s, ok := e["time"].(string); ok {
			if marker, ok := m.toMarker[s]; ok {
				c := make(map[string]any, len(e))
				for k, v := range e {
					c[k] = v
				}
				c["time"] = marker
				e = c
			}
		}
		out[i] = e
	}
	md["managedFields"] = out
}

// Restore gives obj's managedFields their times back (now for those the
// field manager stamped), in kube-apiserver's order, in the store's
// representation.
func (m *Times) Restore(obj map[string]any, now string) error {
	md, _ := obj["metadata"].(map[string]any)
	raw, ok := md["managedFields"]
	if !ok || raw == nil {
		delete(md, "managedFields")
		return nil
	}
	// The field manager encodes entries as maps of strings, fieldsV1 as
	// maps of maps: the store's representation already. The entries are
	// the field manager's own, or marked copies.
	list, ok := raw.([]any)
	if !ok {
		return fmt.Errorf("local: managedFields are a %T", raw)
	}
	if len(list) == 0 {
		delete(md, "managedFields")
		return nil
	}
	list = append([]any(nil), list...)
	for _, x := range list {
		e, ok := x.(map[string]any)
		if !ok {
			continue
		}
		s, ok := e["time"].(string)
		if !ok {
			continue
		}
		if orig, ok := m.toTime[s]; ok {
			e["time"] = orig
		} else {
			e["time"] = now
		}
	}
	sortManagedFields(list)
	md["managedFields"] = list
	return nil
}

// sortManagedFields orders entries as kube-apiserver encodes them: by
// operation, time, manager, apiVersion and subresource.
func sortManagedFields(list []any) {
	sort.SliceStable(list, func(i, j int) bool {
		p, _ := list[i].(map[string]any)
		q, _ := list[j].(map[string]any)
		if a, b := jsonobj.Str(p, "operation"), jsonobj.Str(q, "operation"); a != b {
			return a < b
		}
		if a, b := unixOf(jsonobj.Str(p, "time")), unixOf(jsonobj.Str(q, "time")); a != b {
			return a < b
		}
		for _, f := range []string{"manager", "apiVersion", "subresource"} {
			if a, b := jsonobj.Str(p, f), jsonobj.Str(q, f); a != b {
				return a < b
			}
		}
		return false
	})
}

// DropNulls removes the null fields of the objects in v.
func DropNulls(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if e == nil {
				delete(x, k)
			} else {
				DropNulls(e)
			}
		}
	case []any:
		for _, e := range x {
			DropNulls(e)
		}
	}
}

// formatTime is how the store writes a time: RFC 3339, UTC, seconds.
func formatTime(tm time.Time) string { return tm.UTC().Truncate(time.Second).Format(time.RFC3339) }
