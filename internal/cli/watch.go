package cli

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/konverge/konverge/clock"
	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/internal/printer"
)

// The -w/--watch behaviour of get: the objects as get prints them, then
// one row (without headers, columns as wide as before) or object per
// change, until the command is interrupted or --request-timeout passes,
// as kubectl get -w does.
//
// A real cluster is watched with the API's watch. The embedded cluster is
// a file that one command at a time opens, so the watch holds it only
// for a moment every poll interval: each poll opens it (which, on a wall
// clock, runs the controllers and the simulated kubelet up to the wall
// time, as every command does), lists the objects and prints those whose
// resourceVersion changed, and those gone, in the order of their writes.
// Other konverge commands run between polls, and their writes show up as
// they happen. The watch never moves the cluster's clock ahead of the
// wall clock; on a manual clock, only other commands move it, unless
// --timeout asks the watch to move it itself (see watch_fastforward.go).

// watchPollInterval is how often the watch of the embedded cluster polls.
var watchPollInterval = time.Second

// watchFlags are get's --watch flags.
type watchFlags struct {
	watch          bool
	watchOnly      bool
	outputEvents   bool
	requestTimeout string
	// clusterTimeout is --timeout: how much cluster time to watch.
	clusterTimeout time.Duration
}

func (w *watchFlags) addFlags(f *pflag.FlagSet) {
	f.BoolVarP(&w.watch, "watch", "w", false, "Print the objects, then keep printing their changes.")
	f.BoolVar(&w.watchOnly, "watch-only", false, "Print only the changes that come, not the objects first.")
	f.BoolVar(&w.outputEvents, "output-watch-events", false, "Output watch event objects when --watch or --watch-only is used. Existing objects are output as initial ADDED events.")
	f.DurationVar(&w.clusterTimeout, "timeout", 0, "Watch for this much cluster time, then stop (konverge only; 0 watches until interrupted). On an embedded cluster with a manual clock, the watch moves the clock itself, from one change to the next, and also stops when nothing more is due.")
	f.StringVar(&w.requestTimeout, "request-timeout", "0", "How long one request to the server may take, with a unit (30s, 2m); 0 waits without limit.")
}

func (w *watchFlags) watching() bool { return w.watch || w.watchOnly }

// timeout parses --request-timeout as kubectl does: a duration, or a
// number of seconds; 0 means none.
func (w *watchFlags) timeout() (time.Duration, error) {
	if w.requestTimeout == "" || w.requestTimeout == "0" {
		return 0, nil
	}
	if n, err := strconv.ParseInt(w.requestTimeout, 10, 64); err == nil {
		return time.Duration(min(n, int64(time.Duration(1<<62)/time.Second))) * time.Second, nil
	}
	d, err := time.ParseDuration(w.requestTimeout)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("invalid timeout value. Timeout must be a single integer in seconds, or an integer followed by a corresponding time unit (e.g. 1s | 2m | 3h)")
	}
	return d, nil
}

// fromResourceVersion starts a Watch at a resourceVersion.
type fromResourceVersion string

func (r fromResourceVersion) ApplyToList(o *cluster.ListOptions) { o.ResourceVersion = string(r) }

// watchPrinter prints the objects and changes of a watch.
type watchPrinter struct {
	o     *GetOptions
	res   cluster.Resource
	out   io.Writer
	popts printer.Options
	cols  []printer.PrinterColumn
	obj   printer.ObjectPrinter
	// tw keeps the columns' widths from one row to the next.
	tw      interface{ Flush() error }
	w       io.Writer
	headers bool
	count   int
}

func (p *watchPrinter) print(obj map[string]any, event string, now time.Time) error {
	if p.obj != nil {
		var toPrint any = obj
		if p.o.watchOpts.outputEvents {
			toPrint = map[string]any{"type": event, "object": obj}
		}
		if p.o.Output == "yaml" && p.count > 0 {
			fmt.Fprintln(p.out, "---")
		}
		p.count++
		return p.obj.PrintObject(p.out, toPrint)
	}
	popts := p.popts
	popts.Now = now
	popts.NoHeaders = p.headers || p.o.NoHeaders
	popts.ServerColumns = p.cols
	t := printer.NewTable(p.res, []map[string]any{obj}, popts)
	if p.o.watchOpts.outputEvents {
		t.Columns = append([]printer.Column{{Name: "Event"}}, t.Columns...)
		for i := range t.Rows {
			t.Rows[i].Cells = append([]string{event}, t.Rows[i].Cells...)
		}
	}
	if err := t.Write(p.w, popts); err != nil {
		return err
	}
	p.headers = true
	return p.tw.Flush()
}

// runWatch prints the objects of reqs and then their changes.
func (o *GetOptions) runWatch(ctx context.Context, sess *Session, reqs []resourceRequest, ns string) error {
	if len(reqs) != 1 {
		return failOne(o.ErrOut, fmt.Errorf("watch is only supported on individual resources and resource collections, but %d resources were found", len(reqs)))
	}
	ctx, cancel, err := o.watchContext(ctx, sess)
	if err != nil {
		return failOne(o.ErrOut, err)
	}
	defer cancel()
	wt := watchTarget{res: reqs[0].Resource, names: reqs[0].Names, named: map[string]bool{}, ns: ns,
		sel: listSelectors{labels: o.Selector, fields: o.FieldSelector}}
	for _, n := range wt.names {
		wt.named[n] = true
	}
	p, err := o.newWatchPrinter(ctx, sess, wt.res)
	if err != nil {
		return failOne(o.ErrOut, err)
	}
	items, rv, err := o.watchList(ctx, sess, wt)
	if err != nil {
		return failOne(o.ErrOut, err)
	}
	if !o.watchOpts.watchOnly {
		if err := p.printInitial(items, sess.now()); err != nil {
			return failOne(o.ErrOut, err)
		}
	}
	if sess.Store == nil {
		return o.watchReal(ctx, sess, wt.res, ns, wt.sel, wt.named, rv, p)
	}
	if d := o.watchOpts.clusterTimeout; d > 0 {
		if sess.Clock != nil && sess.Clock.Mode() == clock.Manual {
			return o.fastForward(ctx, sess, wt.res, ns, wt.sel, wt.named, items, p, d)
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	return o.pollEmbedded(ctx, sess, wt, items, p)
}

// watchTarget is what get -w follows: the objects of one kind, named or
// selected.
type watchTarget struct {
	res cluster.Resource
	// names are the objects named, in order; named is the same as a set.
	names []string
	named map[string]bool
	ns    string
	sel   listSelectors
}

// watchContext is ctx ended by --request-timeout and, on a real cluster,
// by --timeout.
func (o *GetOptions) watchContext(ctx context.Context, sess *Session) (context.Context, context.CancelFunc, error) {
	timeout, err := o.watchOpts.timeout()
	if err != nil {
		return ctx, func() {}, err
	}
	var cancels []context.CancelFunc
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		cancels = append(cancels, cancel)
	}
	if d := o.watchOpts.clusterTimeout; d > 0 && sess.Store == nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		cancels = append(cancels, cancel)
	}
	return ctx, func() {
		for _, c := range cancels {
			c()
		}
	}, nil
}

// newWatchPrinter prints res's objects in -o's format or as table rows.
func (o *GetOptions) newWatchPrinter(ctx context.Context, sess *Session, res cluster.Resource) (*watchPrinter, error) {
	p := &watchPrinter{o: o, res: res, out: o.Out, cols: serverColumns(ctx, sess.Cluster, res)}
	if !printer.IsTable(o.Output) {
		op, err := o.PrintFlags.ToPrinter(printer.GetFormats(), o.NoHeaders, "")
		if err != nil {
			return nil, err
		}
		p.obj = op
		return p, nil
	}
	tw := printer.NewTabWriter(o.Out)
	p.tw, p.w = tw, tw
	p.popts = printer.Options{Wide: o.Output == "wide", ShowLabels: o.ShowLabels, LabelColumns: o.LabelColumns,
		WithNamespace: o.AllNamespaces, WithKind: o.ShowKind}
	return p, nil
}

// watchList reads the objects wt names, or lists those it selects with
// the list's resourceVersion.
func (o *GetOptions) watchList(ctx context.Context, s *Session, wt watchTarget) ([]map[string]any, string, error) {
	if len(wt.names) > 0 {
		var out []map[string]any
		for _, n := range wt.names {
			obj, err := s.Cluster.Get(ctx, wt.res.GVK, o.objectNamespace(wt.res), n)
			if err != nil {
				return nil, "", err
			}
			out = append(out, obj)
		}
		return out, "", nil
	}
	if err := checkListSelector(wt.res, wt.sel); err != nil {
		return nil, "", err
	}
	return listWithVersion(ctx, s.Cluster, wt.res, wt.ns, wt.sel)
}

// printInitial prints the objects found when the watch starts: a table
// with its header, as one flush, or each object as an ADDED event.
func (p *watchPrinter) printInitial(items []map[string]any, now time.Time) error {
	if p.obj != nil || len(items) == 0 {
		for _, it := range items {
			if err := p.print(it, "ADDED", now); err != nil {
				return err
			}
		}
		return nil
	}
	popts := p.popts
	popts.Now = now
	popts.NoHeaders = p.o.NoHeaders
	popts.ServerColumns = p.cols
	t := printer.NewTable(p.res, items, popts)
	if p.o.watchOpts.outputEvents {
		t.Columns = append([]printer.Column{{Name: "Event"}}, t.Columns...)
		for i := range t.Rows {
			t.Rows[i].Cells = append([]string{"ADDED"}, t.Rows[i].Cells...)
		}
	}
	_ = t.Write(p.w, popts)
	_ = p.tw.Flush()
	p.headers = true
	return nil
}

// pollEmbedded releases the embedded cluster and then, every poll
// interval, opens it, lists wt and prints what changed since items.
func (o *GetOptions) pollEmbedded(ctx context.Context, sess *Session, wt watchTarget, items []map[string]any, p *watchPrinter) error {
	seen := map[string]map[string]any{}
	for _, it := range items {
		seen[objectKey(it)] = it
	}
	if err := sess.Close(ctx); err != nil {
		return failOne(o.ErrOut, err)
	}
	// ended reports err, unless the watch ended meanwhile.
	ended := func(err error) error {
		if ctx.Err() != nil {
			return nil
		}
		return failOne(o.ErrOut, err)
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(watchPollInterval):
		}
		s, err := o.openResourceSession(ctx)
		if err != nil {
			return ended(err)
		}
		now := s.now()
		items, _, err := o.watchList(ctx, s, wt)
		closeErr := s.Close(context.WithoutCancel(ctx))
		if err != nil && !(len(wt.names) > 0 && cluster.IsNotFound(err)) {
			return ended(err)
		}
		if closeErr != nil {
			return failOne(o.ErrOut, closeErr)
		}
		changes, current := watchChanges(seen, items)
		for _, c := range changes {
			if err := p.print(c.obj, c.event, now); err != nil {
				return failOne(o.ErrOut, err)
			}
		}
		seen = current
	}
}

// watchChange is one event of a polled watch.
type watchChange struct {
	obj   map[string]any
	event string
}

// watchChanges compares the objects of a poll with those seen before (by
// objectKey): the objects added or modified, in the order of their
// writes, then those deleted, in key order. current is items by key.
func watchChanges(seen map[string]map[string]any, items []map[string]any) (changes []watchChange, current map[string]map[string]any) {
	current = map[string]map[string]any{}
	for _, it := range items {
		k := objectKey(it)
		current[k] = it
		prev, ok := seen[k]
		switch {
		case !ok:
			changes = append(changes, watchChange{it, "ADDED"})
		case printer.Str(prev, "metadata", "resourceVersion") != printer.Str(it, "metadata", "resourceVersion"):
			changes = append(changes, watchChange{it, "MODIFIED"})
		}
	}
	var gone []watchChange
	for k, prev := range seen {
		if _, ok := current[k]; !ok {
			gone = append(gone, watchChange{prev, "DELETED"})
		}
	}
	sort.SliceStable(changes, func(i, j int) bool {
		return resourceVersionOf(changes[i].obj) < resourceVersionOf(changes[j].obj)
	})
	sort.Slice(gone, func(i, j int) bool { return objectKey(gone[i].obj) < objectKey(gone[j].obj) })
	return append(changes, gone...), current
}

// watchReal follows a real cluster's watch from resourceVersion rv.
func (o *GetOptions) watchReal(ctx context.Context, sess *Session, res cluster.Resource, ns string, sel listSelectors,
	names map[string]bool, rv string, p *watchPrinter) error {
	opts := append([]cluster.ListOption{fromResourceVersion(rv)}, listOptions(res, ns, sel)...)
	w, err := sess.Cluster.Watch(ctx, res.GVK, opts...)
	if err != nil {
		return failOne(o.ErrOut, err)
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.ResultChan():
			if !ok {
				return nil
			}
			if len(names) > 0 && !names[printer.Str(ev.Object, "metadata", "name")] {
				continue
			}
			if err := p.print(ev.Object, string(ev.Type), sess.now()); err != nil {
				return failOne(o.ErrOut, err)
			}
		}
	}
}

// objectKey is "namespace/name".
func objectKey(obj map[string]any) string {
	return printer.Str(obj, "metadata", "namespace") + "/" + printer.Str(obj, "metadata", "name")
}

// resourceVersionOf reads an object's resourceVersion as a number (the
// embedded cluster's are).
func resourceVersionOf(obj map[string]any) uint64 {
	n, _ := strconv.ParseUint(printer.Str(obj, "metadata", "resourceVersion"), 10, 64)
	return n
}
