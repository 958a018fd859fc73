package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/internal/printer"
)

// The -w/--watch behaviour of get: after the table, one row (without
// headers) per change of a listed object, as kubectl get -w prints them.
// On the embedded cluster nothing changes unless the clock moves, so the
// command moves it: it fast-forwards the virtual clock from one moment
// with due work to the next (as rollout status does), printing the rows
// of every write of the controllers in order, until --timeout of cluster
// time has passed or nothing is due any more.

// DefaultWatchTimeout is how much cluster time get -w watches by default
// (kubectl watches until interrupted; the embedded cluster's clock would
// never stop for a Deployment whose pods keep failing to pull).
const DefaultWatchTimeout = 10 * time.Minute

// watchFlags are get's --watch flags.
type watchFlags struct {
	watch   bool
	timeout time.Duration
}

func (w *watchFlags) addFlags(f *pflag.FlagSet) {
	f.BoolVarP(&w.watch, "watch", "w", false, "After listing/getting the requested object, watch for changes (on the embedded cluster: fast-forward its clock, see --timeout).")
	f.DurationVar(&w.timeout, "timeout", DefaultWatchTimeout, "With --watch on the embedded cluster: how much cluster time to watch; the watch also ends when nothing is due any more (konverge only).")
}

// runWatch follows the objects of reqs after their table was printed.
func (o *GetOptions) runWatch(ctx context.Context, sess *Session, reqs []resourceRequest, ns string, found []gotObject, popts printer.Options) error {
	if len(reqs) != 1 {
		return failOne(o.ErrOut, fmt.Errorf("watch is only supported on individual resources and resource collections, but %d resources were found", len(reqs)))
	}
	if o.Output != "" && o.Output != "wide" {
		return failOne(o.ErrOut, fmt.Errorf("konverge get --watch prints tables only (-o %s is not supported with --watch)", o.Output))
	}
	r := sess.Sim()
	if r == nil {
		return failOne(o.ErrOut, errors.New("--watch needs the embedded cluster's simulation"))
	}
	res := reqs[0].Resource
	names := map[string]bool{}
	for _, n := range reqs[0].Names {
		names[n] = true
	}
	var opts []cluster.ListOption
	if res.Namespaced && ns != "" {
		opts = append(opts, cluster.InNamespace(ns))
	}
	if o.Selector != "" {
		opts = append(opts, cluster.MatchingLabels(o.Selector))
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	watcher, err := sess.Cluster.Watch(wctx, res.GVK, opts...)
	if err != nil {
		return failOne(o.ErrOut, err)
	}
	defer watcher.Stop()

	// seen is the resourceVersion of every object listed so far.
	seen := map[string]string{}
	key := func(obj map[string]any) string {
		return printer.Str(obj, "metadata", "namespace") + "/" + printer.Str(obj, "metadata", "name")
	}
	for _, f := range found {
		seen[key(f.obj)] = printer.Str(f.obj, "metadata", "resourceVersion")
	}
	popts.NoHeaders = true
	printRow := func(obj map[string]any) {
		if len(names) > 0 && !names[printer.Str(obj, "metadata", "name")] {
			return
		}
		popts.Now = sess.now()
		tw := printer.NewTabWriter(o.Out)
		_ = printer.NewTable(res, []map[string]any{obj}, popts).Write(tw, popts)
		_ = tw.Flush()
	}
	// drain prints the events of the writes made so far: it knows from a
	// List which final resourceVersion of every changed object and which
	// deletions it must receive, and reads the watch until it has them
	// (events come in the order of the writes).
	drain := func(final bool) error {
		items, err := listRequest(ctx, sess.Cluster, res, ns, o.Selector)
		if err != nil {
			return err
		}
		want := map[string]string{} // key → resourceVersion; "" for a deletion
		now := map[string]string{}
		for _, it := range items {
			k, rv := key(it), printer.Str(it, "metadata", "resourceVersion")
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
				k := key(ev.Object)
				rv := printer.Str(ev.Object, "metadata", "resourceVersion")
				if w, ok := want[k]; ok && ((ev.Type == cluster.Deleted && w == "") || (ev.Type != cluster.Deleted && w == rv)) {
					delete(want, k)
				}
				printRow(ev.Object)
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
					printRow(ev.Object)
					continue
				case <-time.After(20 * time.Millisecond):
				}
				return nil
			}
		}
		return nil
	}
	timeout := o.watchOpts.timeout
	if timeout <= 0 {
		timeout = DefaultWatchTimeout
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
