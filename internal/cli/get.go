package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/internal/printer"
)

func init() {
	commands = append(commands, func(g *Globals) *cobra.Command {
		return NewGetCmd(&GetOptions{Globals: g})
	})
}

// GetOptions are the flags of konverge get.
type GetOptions struct {
	*Globals
	Output         string
	Selector       string
	ShowLabels     bool
	AllNamespaces  bool
	NoHeaders      bool
	IgnoreNotFound bool
	ManagedFieldsFlags

	watchOpts watchFlags // -w, --timeout: see watch.go
}

// NewGetCmd returns the get command.
func NewGetCmd(o *GetOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "get (TYPE[.VERSION][.GROUP] [NAME ...] | TYPE[.VERSION][.GROUP]/NAME ...) [flags]",
		Short: "Display one or many resources",
		Long: `Display one or many resources, as kubectl get does: a table with kubectl's columns for
the kind (-o wide adds more), or the objects as YAML or JSON, or their names.`,
		Example: `  konverge get deployments
  konverge get deploy nginx-deployment -o yaml
  konverge get pods -l app=nginx -o wide
  konverge get deploy,rs -A`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.complete(cmd)
			return o.Run(cmd.Context(), args)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.Output, "output", "o", "", "Output format. One of: (json, yaml, name, wide).")
	f.StringVarP(&o.Selector, "selector", "l", "", "Selector (label query) to filter on, supports '=', '==', '!=', 'in', 'notin'.(e.g. -l key1=value1,key2=value2). Matching objects must satisfy all of the specified label constraints.")
	f.BoolVar(&o.ShowLabels, "show-labels", false, "When printing, show all labels as the last column (default hide labels column).")
	f.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "If present, list the requested object(s) across all namespaces. Namespace in current context is ignored even if specified with --namespace.")
	f.BoolVar(&o.NoHeaders, "no-headers", false, "When using the default or custom-column output format, don't print headers (default print headers).")
	f.BoolVar(&o.IgnoreNotFound, "ignore-not-found", false, "If set to true, suppresses NotFound error for specific objects that do not exist.")
	o.ManagedFieldsFlags.AddFlags(f)
	o.watchOpts.addFlags(f)
	return cmd
}

// allKinds is what "get all" lists, kubectl's "all" category in
// discovery order.
var allKinds = []string{"pods", "replicationcontrollers", "services", "daemonsets.apps", "deployments.apps",
	"replicasets.apps", "statefulsets.apps", "horizontalpodautoscalers.autoscaling", "cronjobs.batch", "jobs.batch"}

// gotObject is one object found, with its kind.
type gotObject struct {
	res cluster.Resource
	obj map[string]any
}

// Run gets and prints the objects args name.
func (o *GetOptions) Run(ctx context.Context, args []string) error {
	switch o.Output {
	case "", "wide", "yaml", "json", "name":
	default:
		return failOne(o.ErrOut, fmt.Errorf("unable to match a printer suitable for the output format %q, allowed formats are: json,name,wide,yaml", o.Output))
	}
	if len(args) == 0 {
		fmt.Fprint(o.ErrOut, "You must specify the type of resource to get. Use \"konverge api-resources\" for a complete list of supported resources.\n\n")
		return failOne(o.ErrOut, fmt.Errorf("Required resource not specified.\nUse \"konverge explain <resource>\" for a detailed description of that resource (e.g. konverge explain pods).\nSee 'konverge get -h' for help and examples"))
	}
	sess, err := o.openResourceSession(ctx)
	if err != nil {
		return failOne(o.ErrOut, err)
	}
	defer sess.Close(ctx)

	var reqs []resourceRequest
	if args[0] == "all" && len(args) == 1 {
		for _, k := range allKinds {
			if res, err := sess.Mapper().Find(k); err == nil {
				reqs = append(reqs, resourceRequest{Resource: res})
			}
		}
	} else {
		reqs, err = resolveResourceArgs(sess.Mapper(), args)
		if err != nil {
			return failOne(o.ErrOut, err)
		}
	}
	named := false
	for _, r := range reqs {
		if len(r.Names) > 0 {
			named = true
		}
	}
	if named && o.Selector != "" {
		return failOne(o.ErrOut, fmt.Errorf("name cannot be provided when a selector is specified"))
	}
	if named && o.AllNamespaces {
		// kubectl ignores -A for named objects and looks in the namespace.
		o.AllNamespaces = false
	}
	ns := o.Ns()
	if o.AllNamespaces {
		ns = ""
	}

	found, errs, stop := o.gatherObjects(ctx, sess.Cluster, reqs, ns, o.Selector, func(_ resourceRequest, _ string, err error) ([]gotObject, error) {
		if o.IgnoreNotFound && cluster.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	})
	if stop != nil {
		return failOne(o.ErrOut, stop)
	}

	single := len(reqs) == 1 && len(reqs[0].Names) == 1
	switch o.Output {
	case "yaml", "json":
		if single {
			if len(found) == 1 {
				if err := printObjects(o.Out, found[0].obj, o.Output, o.ShowManagedFields); err != nil {
					return failOne(o.ErrOut, err)
				}
			}
			return reportErrors(o.ErrOut, errs)
		}
		items := make([]any, len(found))
		for i, f := range found {
			items[i] = f.obj
		}
		list := map[string]any{"apiVersion": "v1", "kind": "List", "items": items,
			"metadata": map[string]any{"resourceVersion": ""}}
		if err := printObjects(o.Out, list, o.Output, o.ShowManagedFields); err != nil {
			return failOne(o.ErrOut, err)
		}
		return reportErrors(o.ErrOut, errs)
	case "name":
		for _, f := range found {
			fmt.Fprintln(o.Out, objectRef(f.res, printer.Str(f.obj, "metadata", "name")))
		}
		return reportErrors(o.ErrOut, errs)
	}

	popts := printer.Options{
		Wide:          o.Output == "wide",
		NoHeaders:     o.NoHeaders,
		ShowLabels:    o.ShowLabels,
		WithNamespace: o.AllNamespaces,
		WithKind:      multipleKinds(found),
		Now:           sess.now(),
	}
	written := writeTables(o.Out, found, popts)
	if o.watchOpts.watch && len(errs) == 0 {
		return o.runWatch(ctx, sess, reqs, ns, found, popts)
	}
	if !written && len(errs) == 0 && !o.IgnoreNotFound {
		if o.AllNamespaces {
			fmt.Fprintln(o.ErrOut, "No resources found")
		} else {
			fmt.Fprintf(o.ErrOut, "No resources found in %s namespace.\n", o.Ns())
		}
	}
	return reportErrors(o.ErrOut, errs)
}

// multipleKinds reports whether objects of more than one kind were found.
func multipleKinds(found []gotObject) bool {
	for _, f := range found[min(1, len(found)):] {
		if f.res.GVK != found[0].res.GVK {
			return true
		}
	}
	return false
}

// writeTables prints found as kubectl get's tables: one per run of
// objects of a kind, separated by an empty line. It reports whether it
// wrote anything.
func writeTables(w io.Writer, found []gotObject, opts printer.Options) bool {
	var out bytes.Buffer
	for i := 0; i < len(found); {
		j := i
		for j < len(found) && found[j].res.GVK == found[i].res.GVK {
			j++
		}
		objs := make([]map[string]any, 0, j-i)
		for _, f := range found[i:j] {
			objs = append(objs, f.obj)
		}
		var buf bytes.Buffer
		tw := printer.NewTabWriter(&buf)
		_ = printer.NewTable(found[i].res, objs, opts).Write(tw, opts)
		_ = tw.Flush()
		if buf.Len() > 0 {
			if out.Len() > 0 && !opts.NoHeaders {
				out.WriteByte('\n')
			}
			out.Write(buf.Bytes())
		}
		i = j
	}
	_, _ = w.Write(out.Bytes())
	return out.Len() > 0
}
