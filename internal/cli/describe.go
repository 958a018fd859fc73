package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/internal/describe"
	"github.com/konverge/konverge/internal/printer"
)

// describeLocation is the time zone describe prints timestamps in; nil
// means time.Local (tests pin it).
var describeLocation *time.Location

// DescribeOptions are the flags of konverge describe.
type DescribeOptions struct {
	*Globals
	Selector      string
	AllNamespaces bool
	ShowEvents    bool
	showEventsSet bool
}

// NewDescribeCmd returns the describe command.
func NewDescribeCmd(o *DescribeOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "describe (TYPE[.VERSION][.GROUP] [NAME_PREFIX | -l label] | TYPE[.VERSION][.GROUP]/NAME)",
		Short: "Print a detailed, readable account of objects and their events",
		Long: `Print objects as readable reports, in kubectl describe's layout, each followed by
the events about it. "describe TYPE NAME_PREFIX" describes the object named
NAME_PREFIX, or else every object whose name starts with it.`,
		Example: `  konverge describe deployment nginx-deployment
  konverge describe pods -l app=nginx`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.complete(cmd)
			o.showEventsSet = cmd.Flags().Changed("show-events")
			return o.Run(cmd.Context(), args)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.Selector, "selector", "l", "", "Selector (label query) to filter on, supports '=', '==', '!=', 'in', 'notin'.(e.g. -l key1=value1,key2=value2). Matching objects must satisfy all of the specified label constraints.")
	f.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "Look in every namespace (the current one and --namespace are ignored).")
	f.BoolVar(&o.ShowEvents, "show-events", true, "If true, display events related to the described object.")
	return cmd
}

// Run describes the objects args name.
func (o *DescribeOptions) Run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		//lint:ignore ST1005 kubectl's message, word for word (users and scripts match it)
		return failOne(o.ErrOut, fmt.Errorf("You must specify the type of resource to describe. Use \"konverge api-resources\" for a complete list of supported resources."))
	}
	sess, err := o.openResourceSession(ctx)
	if err != nil {
		return failOne(o.ErrOut, err)
	}
	defer sess.Close(ctx)
	reqs, err := resolveResourceArgs(sess.Mapper(), args)
	if err != nil {
		return failOne(o.ErrOut, err)
	}
	warnShortNames(o.ErrOut, sess.Mapper(), args, reqs)
	ns := o.Ns()
	if o.AllNamespaces {
		ns = ""
	}
	found, errs, stop := o.gatherObjects(ctx, sess.Cluster, reqs, ns, listSelectors{labels: o.Selector}, func(r resourceRequest, n string, err error) ([]gotObject, error) {
		// kubectl describe TYPE PREFIX: the objects whose names start with
		// PREFIX, when none is named PREFIX.
		if !cluster.IsNotFound(err) || len(args) != 2 || strings.Contains(args[0], ",") {
			return nil, err
		}
		items, lerr := listRequest(ctx, sess.Cluster, r.Resource, o.objectNamespace(r.Resource), listSelectors{})
		if lerr != nil {
			return nil, err
		}
		var matched []gotObject
		for _, it := range items {
			if strings.HasPrefix(printer.Str(it, "metadata", "name"), n) {
				matched = append(matched, gotObject{res: r.Resource, obj: it, listed: true})
			}
		}
		if len(matched) == 0 {
			return nil, err
		}
		return matched, nil
	})
	if stop != nil {
		return failOne(o.ErrOut, stop)
	}
	showEvents := o.ShowEvents
	if (len(errs) > 0 || len(found) > 1) && !o.showEventsSet {
		showEvents = false
	}
	for i, f := range found {
		s, err := describe.Describe(ctx, sess.Cluster, f.res, f.obj, describe.Options{
			Now: sess.now(), HideEvents: !showEvents, Location: describeLocation,
		})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if i > 0 {
			fmt.Fprint(o.Out, "\n\n")
		}
		fmt.Fprint(o.Out, s)
	}
	if len(found) == 0 && len(errs) == 0 {
		if o.AllNamespaces {
			fmt.Fprintln(o.ErrOut, "No resources found")
		} else {
			fmt.Fprintf(o.ErrOut, "No resources found in %s namespace.\n", o.Ns())
		}
	}
	return reportErrors(o.ErrOut, errs)
}
