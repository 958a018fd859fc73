package cli

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/internal/cli/flags"
	"github.com/konverge/konverge/internal/printer"
	"github.com/konverge/konverge/schema"
)

// GetOptions are the flags of konverge get.
type GetOptions struct {
	*Globals
	flags.FilenameFlags
	flags.PrintFlags

	Selector       string
	FieldSelector  string
	SortBy         string
	LabelColumns   []string
	ShowLabels     bool
	ShowKind       bool
	AllNamespaces  bool
	NoHeaders      bool
	IgnoreNotFound bool
	Subresource    string

	watchOpts watchFlags // -w, --watch-only, --output-watch-events: see watch.go
}

// NewGetCmd returns the get command.
func NewGetCmd(o *GetOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "get [(-o|--output=)json|yaml|name|go-template|go-template-file|template|templatefile|jsonpath|jsonpath-as-json|jsonpath-file|custom-columns|custom-columns-file|wide] (TYPE[.VERSION][.GROUP] [NAME | -l label] | TYPE[.VERSION][.GROUP]/NAME ...) [flags]",
		Short: "List objects, or print them in a chosen format",
		Long: `List objects, or print them, as kubectl get does: a table with kubectl's columns for
the kind (-o wide adds more; a custom resource gets its CRD's printer columns), or the
objects as JSON, YAML, names, a JSONPath or Go template, or custom columns.`,
		Example: `  konverge get deployments
  konverge get deploy nginx-deployment -o yaml
  konverge get pods -l app=nginx -o wide
  konverge get cm -o jsonpath='{.items[*].metadata.name}'
  konverge get deploy -o custom-columns=NAME:.metadata.name,IMAGES:.spec.template.spec.containers[*].image
  konverge get pods --sort-by=.metadata.creationTimestamp -L app
  konverge get deploy,rs -A`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.complete(cmd)
			return o.Run(cmd.Context(), args)
		},
	}
	f := cmd.Flags()
	o.PrintFlags.AddFlags(cmd, "Output format. One of: (json, yaml, name, go-template, go-template-file, template, templatefile, jsonpath, jsonpath-as-json, jsonpath-file, custom-columns, custom-columns-file, wide, kyaml).")
	o.FilenameFlags.AddFlags(f, "the objects to print")
	f.StringVarP(&o.Selector, "selector", "l", "", "Selector (label query) to filter on, supports '=', '==', '!=', 'in', 'notin'.(e.g. -l key1=value1,key2=value2). Matching objects must satisfy all of the specified label constraints.")
	f.StringVar(&o.FieldSelector, "field-selector", "", "Keep only objects whose fields match, e.g. status.phase=Running,spec.nodeName!=n1 (=, == and !=; each kind allows a few fields).")
	f.StringVar(&o.SortBy, "sort-by", "", "Order the list by the value at this JSONPath, e.g. '{.metadata.name}' (numbers, strings or quantities).")
	f.StringSliceVarP(&o.LabelColumns, "label-columns", "L", nil, "Add a column with the value of each of these labels (comma-separated or repeated).")
	f.BoolVar(&o.ShowLabels, "show-labels", false, "Add a LABELS column with every label of the object.")
	f.BoolVar(&o.ShowKind, "show-kind", false, "Print names as TYPE/NAME even when one type is listed.")
	f.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "Look in every namespace (the current one and --namespace are ignored).")
	f.BoolVar(&o.NoHeaders, "no-headers", false, "Leave out the header row of tables and custom columns.")
	f.BoolVar(&o.IgnoreNotFound, "ignore-not-found", false, "If set to true, suppresses NotFound error for specific objects that do not exist. Using this flag with commands that query for collections of resources has no effect when no resources are found.")
	flags.Subresource(f, &o.Subresource, "If specified, gets the subresource of the requested object.")
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
	// listed reports an object found by a list (not a named get).
	listed bool
}

// Run gets and prints the objects args name.
func (o *GetOptions) Run(ctx context.Context, args []string) error {
	objPrinter, err := o.objectPrinter()
	if err != nil {
		return failOne(o.ErrOut, err)
	}
	if err := flags.CheckSubresource(o.Subresource); err != nil {
		return failOne(o.ErrOut, err)
	}
	if len(args) == 0 && !o.FilenameFlags.Given() {
		fmt.Fprint(o.ErrOut, "You must specify the type of resource to get. Use \"konverge api-resources\" for a complete list of supported resources.\n\n")
		//lint:ignore ST1005 kubectl's message, word for word (users and scripts match it)
		return failOne(o.ErrOut, fmt.Errorf("Required resource not specified.\nUse \"konverge explain <resource>\" for a detailed description of that resource (e.g. konverge explain pods).\nSee 'konverge get -h' for help and examples"))
	}
	sess, err := o.openResourceSession(ctx)
	if err != nil {
		return failOne(o.ErrOut, err)
	}
	defer sess.Close(ctx)

	reqs, fileObjs, err := o.requests(ctx, sess, args)
	if err != nil {
		return err
	}
	if err := o.checkNamed(reqs); err != nil {
		return failOne(o.ErrOut, err)
	}
	ns := o.Ns()
	if o.AllNamespaces {
		ns = ""
	}
	if o.watchOpts.watching() {
		return o.runWatch(ctx, sess, reqs, ns)
	}

	var found []gotObject
	var errs []error
	if fileObjs != nil {
		found, errs = o.getFileObjects(ctx, sess, fileObjs)
	} else {
		var stop error
		found, errs, stop = o.listRequests(ctx, sess, reqs, ns)
		if stop != nil {
			return failOne(o.ErrOut, stop)
		}
	}
	if o.Subresource != "" && len(found) > 0 {
		var more []error
		found, more = getSubresources(ctx, sess.Cluster, found, o.Subresource)
		errs = append(errs, more...)
	}
	if objPrinter != nil {
		return o.printObjects(objPrinter, reqs, fileObjs, found, errs)
	}
	return o.printTables(ctx, sess, reqs, fileObjs, found, errs)
}

// objectPrinter is the printer of -o for a format that is not a table,
// nil for a table.
func (o *GetOptions) objectPrinter() (printer.ObjectPrinter, error) {
	if printer.IsTable(o.Output) {
		return nil, nil
	}
	return o.PrintFlags.ToPrinter(printer.GetFormats(), o.NoHeaders, "")
}

// requests resolves what get lists: the objects of -f files (fileObjs,
// not yet read from the cluster), "all", or the kinds and names of args.
// Its error has been reported already.
func (o *GetOptions) requests(ctx context.Context, sess *Session, args []string) (reqs []resourceRequest, fileObjs []gotObject, err error) {
	switch {
	case o.FilenameFlags.Given():
		o.FilenameFlags.Warnings = o.ErrOut
		if len(args) > 0 {
			return nil, nil, failOne(o.ErrOut, fmt.Errorf("when paths, URLs, or stdin is provided as input, you may not specify resource arguments as well"))
		}
		objs, err := o.FilenameFlags.Read(ctx, o.In)
		if err != nil {
			return nil, nil, fail(o.ErrOut, 1, err)
		}
		for _, mo := range objs {
			gvk := schema.ParseGVK(printer.Str(mo.Obj, "apiVersion"), printer.Str(mo.Obj, "kind"))
			res, err := sess.Mapper().ResourceFor(gvk)
			if err != nil {
				return nil, nil, failOne(o.ErrOut, fmt.Errorf("%s: resource mapping not found for name: %q namespace: %q from %q: %w\nensure CRDs are installed first",
					mo.Source.File, printer.Str(mo.Obj, "metadata", "name"), printer.Str(mo.Obj, "metadata", "namespace"), mo.Source.File, plainError(err)))
			}
			fileObjs = append(fileObjs, gotObject{res: res, obj: mo.Obj})
		}
		return nil, fileObjs, nil
	case len(args) == 1 && slices.Contains(strings.Split(args[0], ","), "all"):
		// The "all" category, alone or among other kinds (all,cm).
		for _, k := range strings.Split(args[0], ",") {
			if k == "" {
				continue
			}
			if k != "all" {
				r, err := resolveResourceArgs(sess.Mapper(), []string{k})
				if err != nil {
					return nil, nil, failOne(o.ErrOut, err)
				}
				reqs = append(reqs, r...)
				continue
			}
			for _, k := range allKinds {
				if res, err := sess.Mapper().Find(k); err == nil {
					reqs = append(reqs, resourceRequest{Resource: res})
				}
			}
		}
		return reqs, nil, nil
	}
	reqs, err = resolveResourceArgs(sess.Mapper(), args)
	if err != nil {
		return nil, nil, failOne(o.ErrOut, err)
	}
	warnShortNames(o.ErrOut, sess.Mapper(), args, reqs)
	return reqs, nil, nil
}

// checkNamed refuses a selector with names, and drops -A when objects are
// named: kubectl ignores it for them and looks in the namespace.
func (o *GetOptions) checkNamed(reqs []resourceRequest) error {
	named := slices.ContainsFunc(reqs, func(r resourceRequest) bool { return len(r.Names) > 0 })
	if named && o.Selector != "" {
		return fmt.Errorf("name cannot be provided when a selector is specified")
	}
	if named && o.AllNamespaces {
		o.AllNamespaces = false
	}
	return nil
}

// getFileObjects reads the live objects of -f files' objects.
func (o *GetOptions) getFileObjects(ctx context.Context, sess *Session, fileObjs []gotObject) ([]gotObject, []error) {
	var found []gotObject
	var errs []error
	for _, f := range fileObjs {
		fns := ""
		if f.res.Namespaced {
			fns = cmp.Or(printer.Str(f.obj, "metadata", "namespace"), o.Ns())
		}
		live, err := sess.Cluster.Get(ctx, f.res.GVK, fns, printer.Str(f.obj, "metadata", "name"))
		if err != nil {
			if !(o.IgnoreNotFound && cluster.IsNotFound(err)) {
				errs = append(errs, err)
			}
			continue
		}
		found = append(found, gotObject{res: f.res, obj: live})
	}
	return found, errs
}

// listRequests gets or lists the objects of reqs in ns; stop is an error
// that ends the command before anything is printed.
func (o *GetOptions) listRequests(ctx context.Context, sess *Session, reqs []resourceRequest, ns string) (found []gotObject, errs []error, stop error) {
	// A table, names, or JSON and YAML without managedFields need
	// none: the embedded cluster then does not even decode them.
	lean := !o.ShowManagedFields && slices.Contains([]string{"", "wide", "name", "json", "yaml", "kyaml"}, o.Output)
	return o.gatherObjects(ctx, sess.Cluster, reqs, ns, listSelectors{labels: o.Selector, fields: o.FieldSelector, withoutManagedFields: lean}, func(_ resourceRequest, _ string, err error) ([]gotObject, error) {
		if o.IgnoreNotFound && cluster.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	})
}

// printObjects prints found with a printer of -o that is not a table: one
// object named alone prints as itself, anything else as a List (kubectl's
// printGeneric).
func (o *GetOptions) printObjects(objPrinter printer.ObjectPrinter, reqs []resourceRequest, fileObjs []gotObject, found []gotObject, errs []error) error {
	single := (len(reqs) == 1 && len(reqs[0].Names) == 1) || len(fileObjs) == 1
	if len(found) == 0 && o.IgnoreNotFound {
		return reportErrors(o.ErrOut, errs)
	}
	var toPrint any
	switch {
	case single && len(found) == 1:
		toPrint = found[0].obj
	case single && len(errs) > 0:
		return reportErrors(o.ErrOut, errs)
	default:
		items, err := o.sortedItems(found)
		if err != nil {
			return failOne(o.ErrOut, err)
		}
		toPrint = printer.ListOf(items)
	}
	var buf bytes.Buffer
	perr := objPrinter.PrintObject(&buf, toPrint)
	_, _ = o.Out.Write(buf.Bytes())
	if perr != nil {
		errs = append(errs, perr)
	}
	return reportErrors(o.ErrOut, errs)
}

// sortedItems are the objects of found, in --sort-by's order when it is
// set.
func (o *GetOptions) sortedItems(found []gotObject) ([]any, error) {
	items := make([]any, len(found))
	for i, f := range found {
		items[i] = f.obj
	}
	if o.SortBy == "" || len(items) == 0 {
		return items, nil
	}
	order, err := printer.SortByField(items, o.SortBy)
	if err != nil {
		return nil, err
	}
	sorted := make([]any, len(items))
	for i, j := range order {
		sorted[i] = items[j]
	}
	return sorted, nil
}

// printTables prints found as kubectl get's tables, or says that nothing
// was found.
func (o *GetOptions) printTables(ctx context.Context, sess *Session, reqs []resourceRequest, fileObjs []gotObject, found []gotObject, errs []error) error {
	popts := printer.Options{
		Wide:          o.Output == "wide",
		NoHeaders:     o.NoHeaders,
		ShowLabels:    o.ShowLabels,
		LabelColumns:  o.LabelColumns,
		WithNamespace: o.AllNamespaces,
		WithKind:      multipleKinds(reqs, found) || o.ShowKind,
		Now:           sess.now(),
	}
	written, err := writeTables(ctx, o.Out, sess.Cluster, found, popts, o.SortBy)
	if err != nil {
		return failOne(o.ErrOut, err)
	}
	if !written && len(errs) == 0 && !o.IgnoreNotFound {
		if o.AllNamespaces || !allNamespaced(reqs, fileObjs) {
			fmt.Fprintln(o.ErrOut, "No resources found")
		} else {
			fmt.Fprintf(o.ErrOut, "No resources found in %s namespace.\n", o.Ns())
		}
	}
	return reportErrors(o.ErrOut, errs)
}

// allNamespaced reports whether every kind asked for is namespaced.
func allNamespaced(reqs []resourceRequest, objs []gotObject) bool {
	for _, r := range reqs {
		if !r.Resource.Namespaced {
			return false
		}
	}
	for _, f := range objs {
		if !f.res.Namespaced {
			return false
		}
	}
	return true
}

// multipleKinds reports whether get prints objects of several kinds, so
// that names get their kind ("service/web"), as kubectl decides it: over
// the kinds listed (found or not; "get all" lists several) and the kinds
// of the objects found.
func multipleKinds(reqs []resourceRequest, found []gotObject) bool {
	kinds := map[schema.GVK]bool{}
	for _, r := range reqs {
		if len(r.Names) == 0 {
			kinds[r.Resource.GVK] = true
		}
	}
	for _, f := range found {
		kinds[f.res.GVK] = true
	}
	return len(kinds) > 1
}

// serverColumns returns the printer columns of a custom resource's
// CRD, nil for a built-in kind (or when the CRD cannot be read).
func serverColumns(ctx context.Context, c cluster.Reader, res cluster.Resource) []printer.PrinterColumn {
	if res.Strategic {
		return nil
	}
	crdGVK := schema.GVK{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}
	crd, err := c.Get(ctx, crdGVK, "", res.Plural+"."+res.GVK.Group)
	if err != nil {
		return nil
	}
	return printer.PrinterColumns(crd, res.GVK.Version)
}

// writeTables prints found as kubectl get's tables: one per run of
// objects of a kind, separated by an empty line, each sorted by sortBy
// when it is set. It reports whether it wrote anything.
func writeTables(ctx context.Context, w io.Writer, c cluster.Reader, found []gotObject, opts printer.Options, sortBy string) (bool, error) {
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
		if sortBy != "" && len(objs) > 1 {
			items := make([]any, len(objs))
			for k, o := range objs {
				items[k] = o
			}
			order, err := printer.SortByField(items, sortBy)
			if err != nil {
				return false, err
			}
			sorted := make([]map[string]any, len(objs))
			for k, idx := range order {
				sorted[k] = objs[idx]
			}
			objs = sorted
		}
		topts := opts
		topts.ServerColumns = serverColumns(ctx, c, found[i].res)
		topts.FromList = found[i].listed
		var buf bytes.Buffer
		tw := printer.NewTabWriter(&buf)
		_ = printer.NewTable(found[i].res, objs, topts).Write(tw, topts)
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
	return out.Len() > 0, nil
}
