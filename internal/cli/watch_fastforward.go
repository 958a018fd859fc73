package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/internal/printer"
)

// fastForward is get -w --timeout D on an embedded cluster with a manual
// clock: the command moves the virtual clock itself, from one moment with
// due work to the next (as rollout status does), printing the rows of
// every write of the controllers in order, until D of cluster time has
// passed or nothing is due any more. Demos and tests use it to watch a
// rollout deterministically.
func (o *GetOptions) fastForward(ctx context.Context, sess *Session, res cluster.Resource, ns string, sel listSelectors,
	names map[string]bool, found []map[string]any, p *watchPrinter, timeout time.Duration) error {
	r := sess.Sim()
	if r == nil {
		return failOne(o.ErrOut, errors.New("--timeout on a manual clock needs the embedded cluster's simulation"))
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	watcher, err := sess.Cluster.Watch(wctx, res.GVK, listOptions(res, ns, sel)...)
	if err != nil {
		return failOne(o.ErrOut, err)
	}
	defer watcher.Stop()

	// seen is the resourceVersion of every object listed so far.
	seen := map[string]string{}
	for _, f := range found {
		seen[objectKey(f)] = printer.Str(f, "metadata", "resourceVersion")
	}
	printRow := func(ev cluster.Event) error {
		if len(names) > 0 && !names[printer.Str(ev.Object, "metadata", "name")] {
			return nil
		}
		return p.print(ev.Object, string(ev.Type), sess.now())
	}
	// drain prints the events of the writes made so far: it knows from a
	// List which final resourceVersion of every changed object and which
	// deletions it must receive, and reads the watch until it has them
	// (events come in the order of the writes).
	drain := func(final bool) error {
		items, err := listRequest(ctx, sess.Cluster, res, ns, sel)
		if err != nil {
			return err
		}
		want := map[string]string{} // key → resourceVersion; "" for a deletion
		now := map[string]string{}
		for _, it := range items {
			k, rv := objectKey(it), printer.Str(it, "metadata", "resourceVersion")
			now[k] = rv
			if seen[k] != rv {
				want[k] = rv
			}
		}
		for k := range seen {
			if _, ok := now[k]; !ok {
				want[k] = ""
			}
		}
		for len(want) > 0 {
			select {
			case ev, ok := <-watcher.ResultChan():
				if !ok {
					return errors.New("the watch of the embedded cluster ended")
				}
				k := objectKey(ev.Object)
				rv := printer.Str(ev.Object, "metadata", "resourceVersion")
				if w, ok := want[k]; ok && ((ev.Type == cluster.Deleted && w == "") || (ev.Type != cluster.Deleted && w == rv)) {
					delete(want, k)
				}
				if err := printRow(ev); err != nil {
					return err
				}
			case <-time.After(5 * time.Second):
				return fmt.Errorf("the watch of the embedded cluster fell behind (%d changes not delivered)", len(want))
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		seen = now
		if final {
			// Objects created and deleted between two Lists.
			for {
				select {
				case ev := <-watcher.ResultChan():
					if err := printRow(ev); err != nil {
						return err
					}
					continue
				case <-time.After(20 * time.Millisecond):
				}
				return nil
			}
		}
		return nil
	}
	_, err = r.RunUntil(ctx, func() (bool, error) {
		if err := drain(false); err != nil {
			return true, err
		}
		return r.Next().IsZero(), nil
	}, timeout)
	if err == nil {
		err = drain(true)
	}
	if err != nil {
		return failOne(o.ErrOut, err)
	}
	return nil
}
