package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/internal/cli/flags"
	"github.com/konverge/konverge/internal/printer"
	"github.com/konverge/konverge/schema"
)

// eventGVK is the core Event kind, the one kubectl events lists.
var eventGVK = schema.GVK{Version: "v1", Kind: "Event"}

// eventsOptions are kubectl events' flags.
type eventsOptions struct {
	flags.PrintFlags
	allNamespaces bool
	watch         bool
	forObject     string
	types         []string
	noHeaders     bool
	chunkSize     int64
}

// newEventsCmd is `konverge events`: the Events of a namespace (or of
// one object with --for), oldest first, as kubectl events prints them.
func newEventsCmd(g *Globals) *cobra.Command {
	o := &eventsOptions{}
	cmd := &cobra.Command{
		Use:                   "events [(-o|--output=)json|yaml|name|go-template|go-template-file|template|templatefile|jsonpath|jsonpath-as-json|jsonpath-file] [--for TYPE/NAME] [--watch] [--types=Normal,Warning]",
		DisableFlagsInUseLine: true,
		Short:                 "List events",
		Long: `Show the Events of the current namespace, of every namespace (-A), or of
one object (--for TYPE/NAME), oldest first, as a table of when each was
last seen, its type, its reason, the object it concerns and its message.`,
		Example: `  # The events of the current namespace
  konverge events

  # Every namespace's events
  konverge events -A

  # What happened to one pod, then keep printing what happens next
  konverge events --for pod/web-0 --watch

  # As YAML
  konverge events -o yaml

  # Only the warnings
  konverge events --types=Warning`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			g.complete(cmd)
			return runEvents(cmd.Context(), g, o)
		},
	}
	f := cmd.Flags()
	f.BoolVarP(&o.watch, "watch", "w", false, "Keep running after the list and print each new event as it comes.")
	f.BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "Show the events of every namespace (the current one and --namespace are ignored).")
	f.StringVar(&o.forObject, "for", "", "Show only the events about this object (TYPE/NAME).")
	f.StringSliceVar(&o.types, "types", nil, "Show only events of these types (Normal, Warning).")
	f.BoolVar(&o.noHeaders, "no-headers", false, "Leave out the header row of the table.")
	f.Int64Var(&o.chunkSize, "chunk-size", 500, "Return large lists in chunks rather than all at once. Pass 0 to disable. This flag is beta and may change in the future.")
	o.PrintFlags.AddFlags(cmd, "Output format. One of: (json, yaml, name, go-template, go-template-file, template, templatefile, jsonpath, jsonpath-as-json, jsonpath-file).")
	return cmd
}

func runEvents(ctx context.Context, g *Globals, o *eventsOptions) error {
	for _, t := range o.types {
		if !strings.EqualFold(t, "Normal") && !strings.EqualFold(t, "Warning") {
			return failOne(g.ErrOut, errors.New("valid --types are Normal or Warning"))
		}
	}
	s, err := g.openResourceSession(ctx)
	if err != nil {
		return fail(g.ErrOut, 1, err)
	}
	defer s.Close(ctx)
	ns := g.Ns()
	if o.allNamespaces {
		ns = ""
	}
	var opts []cluster.ListOption
	if ns != "" {
		opts = append(opts, cluster.InNamespace(ns))
	}
	if o.forObject != "" {
		kind, name, ok := strings.Cut(o.forObject, "/")
		if !ok {
			return failOne(g.ErrOut, errors.New("--for must be in resource/name form"))
		}
		if strings.Contains(name, "/") {
			return failOne(g.ErrOut, errors.New("arguments in resource/name form may not have more than one slash"))
		}
		res, err := s.Mapper().Find(strings.ToLower(kind))
		if err != nil {
			var se *cluster.StatusError
			if errors.As(err, &se) {
				// kubectl prints the mapper's error as is.
				fmt.Fprintln(g.ErrOut, se.Message)
				return &ExitError{Code: 1}
			}
			return failOne(g.ErrOut, err)
		}
		apiVersion := res.GVK.Version
		if res.GVK.Group != "" {
			apiVersion = res.GVK.Group + "/" + apiVersion
		}
		opts = append(opts, cluster.MatchingFields("involvedObject.kind="+res.GVK.Kind+
			",involvedObject.apiVersion="+apiVersion+",involvedObject.name="+name))
	}
	var op printer.ObjectPrinter
	if o.Output != "" {
		if op, err = o.PrintFlags.ToPrinter([]string{"json", "yaml", "name", "go-template", "go-template-file", "template", "templatefile", "jsonpath", "jsonpath-as-json", "jsonpath-file"}, o.noHeaders, ""); err != nil {
			return failOne(g.ErrOut, err)
		}
	}
	ep := &eventPrinter{out: printer.NewTabWriter(g.Out), noHeaders: o.noHeaders, allNamespaces: o.allNamespaces}
	if o.watch {
		return watchEvents(ctx, g, s, o, opts, op, ep)
	}
	list, err := s.Cluster.List(ctx, eventGVK, opts...)
	if err != nil {
		return fail(g.ErrOut, 1, err)
	}
	events := filterEventTypes(list.Items, o.types)
	if len(events) == 0 {
		if o.allNamespaces {
			fmt.Fprintln(g.ErrOut, "No events found.")
		} else {
			fmt.Fprintf(g.ErrOut, "No events found in %s namespace.\n", g.Ns())
		}
		return nil
	}
	sortEvents(events)
	if op != nil {
		if o.Output == "name" {
			// kubectl events prints nothing with -o name: its name
			// printer refuses the typed list, and the error is dropped.
			return nil
		}
		return printEventObject(g.Out, op, map[string]any{"apiVersion": "v1", "kind": "EventList", "metadata": map[string]any{}, "items": toAny(events)})
	}
	now := s.now()
	for _, e := range events {
		ep.print(e, now)
	}
	return ep.out.Flush()
}

// printEventObject prints an Event or an EventList with -o's printer.
func printEventObject(w io.Writer, op printer.ObjectPrinter, obj map[string]any) error {
	return op.PrintObject(w, obj)
}

func toAny(items []map[string]any) []any {
	out := make([]any, len(items))
	for i, it := range items {
		out[i] = it
	}
	return out
}

// filterEventTypes keeps the events of the given types (all without any),
// compared without case as kubectl does.
func filterEventTypes(items []map[string]any, types []string) []map[string]any {
	var out []map[string]any
	for _, e := range items {
		if eventTypeWanted(printer.Str(e, "type"), types) {
			out = append(out, e)
		}
	}
	return out
}

func eventTypeWanted(t string, types []string) bool {
	if len(types) == 0 {
		return true
	}
	for _, w := range types {
		if strings.EqualFold(w, t) {
			return true
		}
	}
	return false
}

// sortEvents orders events by their last time as kubectl events does
// (sort.Sort, on the list's order).
func sortEvents(events []map[string]any) {
	sort.Sort(byEventTime(events))
}

type byEventTime []map[string]any

func (l byEventTime) Len() int           { return len(l) }
func (l byEventTime) Swap(i, j int)      { l[i], l[j] = l[j], l[i] }
func (l byEventTime) Less(i, j int) bool { return eventLastTime(l[i]).Before(eventLastTime(l[j])) }

// eventLastTime is when an event last happened: its series' last
// observation, its lastTimestamp or its eventTime.
func eventLastTime(e map[string]any) time.Time {
	if t := printer.Str(e, "series", "lastObservedTime"); t != "" {
		return parseEventTime(t)
	}
	if t := parseEventTime(printer.Str(e, "lastTimestamp")); !t.IsZero() {
		return t
	}
	return parseEventTime(printer.Str(e, "eventTime"))
}

func parseEventTime(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

// eventPrinter prints events as kubectl events' table: LAST SEEN, TYPE,
// REASON, OBJECT, MESSAGE (NAMESPACE first with -A).
type eventPrinter struct {
	out interface {
		io.Writer
		Flush() error
	}
	noHeaders, allNamespaces bool
	headersPrinted           bool
}

func (p *eventPrinter) print(e map[string]any, now time.Time) {
	if !p.noHeaders && !p.headersPrinted {
		if p.allNamespaces {
			fmt.Fprint(p.out, "NAMESPACE\t")
		}
		fmt.Fprint(p.out, "LAST SEEN\tTYPE\tREASON\tOBJECT\tMESSAGE\n")
		p.headersPrinted = true
	}
	if p.allNamespaces {
		fmt.Fprintf(p.out, "%s\t", printer.Str(e, "metadata", "namespace"))
	}
	fmt.Fprintf(p.out, "%s\t%s\t%s\t%s/%s\t%s\n", eventInterval(e, now),
		escapeTerminal(printer.Str(e, "type")), escapeTerminal(printer.Str(e, "reason")),
		escapeTerminal(printer.Str(e, "involvedObject", "kind")), escapeTerminal(printer.Str(e, "involvedObject", "name")),
		escapeTerminal(strings.TrimSpace(printer.Str(e, "message"))))
}

// eventInterval is kubectl events' LAST SEEN: the age of the event, or
// "AGE (xCOUNT over FIRST)" for a repeated one.
func eventInterval(e map[string]any, now time.Time) string {
	since := func(s string) string {
		t := parseEventTime(s)
		if t.IsZero() {
			return "<unknown>"
		}
		return printer.HumanDuration(now.Sub(t))
	}
	first := since(printer.Str(e, "eventTime"))
	if parseEventTime(printer.Str(e, "eventTime")).IsZero() {
		first = since(printer.Str(e, "firstTimestamp"))
	}
	if series, ok := e["series"].(map[string]any); ok {
		return fmt.Sprintf("%s (x%d over %s)", since(printer.Str(series, "lastObservedTime")), int64Of(series["count"]), first)
	}
	if n := int64Of(e["count"]); n > 1 {
		return fmt.Sprintf("%s (x%d over %s)", since(printer.Str(e, "lastTimestamp")), n, first)
	}
	return first
}

func int64Of(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case int:
		return int64(n)
	case float64:
		return int64(n)
	case int32:
		return int64(n)
	}
	return 0
}

// escapeTerminal replaces the control characters of s as kubectl's
// printers.EscapeTerminal does.
func escapeTerminal(s string) string {
	return strings.NewReplacer("\x1b", "^[", "\r", "\\r").Replace(s)
}

// watchEvents prints the events and then every new or changed one, as
// kubectl events --watch does (it skips deletions: Events expire).
func watchEvents(ctx context.Context, g *Globals, s *Session, o *eventsOptions, opts []cluster.ListOption, op printer.ObjectPrinter, ep *eventPrinter) error {
	emit := func(e map[string]any, now time.Time) error {
		if !eventTypeWanted(printer.Str(e, "type"), o.types) {
			return nil
		}
		if op != nil {
			if o.Output == "name" {
				return nil
			}
			return printEventObject(g.Out, op, e)
		}
		ep.print(e, now)
		return ep.out.Flush()
	}
	if s.Store == nil {
		w, err := s.Cluster.Watch(ctx, eventGVK, opts...)
		if err != nil {
			return fail(g.ErrOut, 1, err)
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
				if ev.Type == cluster.Deleted {
					continue
				}
				if err := emit(ev.Object, s.now()); err != nil {
					return failOne(g.ErrOut, err)
				}
			}
		}
	}
	// The embedded cluster: list, release it, and poll as get -w does.
	seen := map[string]string{}
	poll := func(s *Session) error {
		list, err := s.Cluster.List(ctx, eventGVK, opts...)
		if err != nil {
			return err
		}
		var changed []map[string]any
		for _, e := range list.Items {
			k, rv := objectKey(e), printer.Str(e, "metadata", "resourceVersion")
			if seen[k] != rv {
				seen[k] = rv
				changed = append(changed, e)
			}
		}
		sort.SliceStable(changed, func(i, j int) bool { return resourceVersionOf(changed[i]) < resourceVersionOf(changed[j]) })
		now := s.now()
		for _, e := range changed {
			if err := emit(e, now); err != nil {
				return err
			}
		}
		return nil
	}
	if err := poll(s); err != nil {
		return fail(g.ErrOut, 1, err)
	}
	if err := s.Close(ctx); err != nil {
		return failOne(g.ErrOut, err)
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(watchPollInterval):
		}
		s, err := g.openResourceSession(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return failOne(g.ErrOut, err)
		}
		err = poll(s)
		closeErr := s.Close(context.WithoutCancel(ctx))
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fail(g.ErrOut, 1, err)
		}
		if closeErr != nil {
			return failOne(g.ErrOut, closeErr)
		}
	}
}
