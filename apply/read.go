package apply

import (
	"context"
	"fmt"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/objref"
	"github.com/konverge/konverge/schema"
)

// listThreshold is how many objects of one kind in one namespace an input
// must hold for their live versions to be read with one List rather than
// one Get each.
const listThreshold = 3

// snapshot is the live state of the objects of an input, read once before
// anything is planned: live[i] is the live version of items[i] (nil when
// it does not exist), or err[i] why it could not be read.
type snapshot struct {
	live []map[string]any
	err  []error
	// From a Snapshot: slots[i] is the slot live[i] was found in (which
	// holds its identity), and other[i] is true when that slot holds the
	// object in another version than the one asked for (nil when none
	// does). err is nil: a Snapshot answers without errors.
	slots []*snapSlot
	other map[int]bool
	from  *Snapshot
}

// readKey groups the objects that one List reads.
type readKey struct {
	gvk       schema.GVK
	namespace string
}

// readLive reads the live versions of items, with up to workers requests
// in flight: one List per kind and namespace that holds listThreshold
// objects or more of the input, one Get for each other object. A List the
// server refuses (a role that may get but not list) falls back to Gets.
func readLive(ctx context.Context, c cluster.Reader, items []*item, workers int) snapshot {
	s := snapshot{live: make([]map[string]any, len(items))}
	if sr, ok := c.(sourceReader); ok {
		if snap, ok := sr.LiveSource.(*Snapshot); ok && ctx.Err() == nil {
			// Objects in memory: one lookup each, as Get finds them.
			snap.lookup(items, &s)
			s.from = snap
			return s
		}
	}
	s.err = make([]error, len(items))
	groups := map[readKey][]int{}
	var order []readKey
	for i, it := range items {
		k := readKey{it.ref.GVK, it.ref.Namespace}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], i)
	}
	// tasks are Lists (a group) or Gets (one index).
	type task struct {
		list  []int
		index int
	}
	var tasks []task
	for _, k := range order {
		idx := groups[k]
		if len(idx) >= listThreshold {
			tasks = append(tasks, task{list: idx})
			continue
		}
		for _, i := range idx {
			tasks = append(tasks, task{index: i})
		}
	}
	get := func(i int) {
		s.live[i], s.err[i] = get(ctx, c, items[i])
	}
	forEach(ctx, len(tasks), workers, func(t int) {
		tk := tasks[t]
		if tk.list == nil {
			get(tk.index)
			return
		}
		first := items[tk.list[0]]
		var opts []cluster.ListOption
		if first.ref.Namespace != "" {
			opts = append(opts, cluster.InNamespace(first.ref.Namespace))
		}
		l, err := c.List(ctx, first.ref.GVK, opts...)
		switch {
		case cluster.IsNotFound(err):
			// The kind is not served yet: its CRD comes with the input.
			return
		case err != nil:
			for _, i := range tk.list {
				get(i)
			}
			return
		}
		byName := make(map[string]map[string]any, len(l.Items))
		for _, obj := range l.Items {
			byName[objref.Name(obj)] = obj
		}
		for _, i := range tk.list {
			s.live[i] = byName[items[i].ref.Name]
		}
	})
	for i := range items {
		if s.live[i] == nil && s.err[i] == nil && ctx.Err() != nil {
			s.err[i] = fmt.Errorf("retrieving current configuration: %w", ctx.Err())
		}
	}
	return s
}
