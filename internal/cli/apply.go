package cli

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/spf13/cobra"

	"github.com/konverge/konverge/apply"
	"github.com/konverge/konverge/internal/cli/flags"
	"github.com/konverge/konverge/internal/printer"
	"github.com/konverge/konverge/manifest"
	"github.com/konverge/konverge/prune"
	"github.com/konverge/konverge/value"
)

// ApplyOptions are the flags of konverge apply.
type ApplyOptions struct {
	g *Globals
	flags.FilenameFlags

	DryRun string
	flags.PrintFlags
	Overwrite      bool
	FieldManager   string
	Force          bool
	ServerSide     bool
	ForceConflicts bool
	Subresource    string
	Validate       string

	Prune          bool
	Selector       string
	All            bool
	PruneAllowlist []string
	ApplySet       string

	Concurrency int
}

// NewApplyCmd returns konverge apply.
func NewApplyCmd(o *ApplyOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "apply (-f FILENAME | -k DIRECTORY)",
		Short: "Create or update objects to match manifest files",
		Long: `Make the objects of manifest files (or standard input) live, as kubectl apply does:
objects that do not exist are created, the others patched with the three-way merge
between their last-applied configuration, the file and the live object.

JSON and YAML formats are accepted. Nothing is written unless every object is valid.`,
		Example: `  # Apply the configuration in a directory
  konverge apply -f ./manifests/

  # Apply and delete the objects labelled app=nginx that are no longer in the directory
  konverge apply -f ./manifests/ --prune -l app=nginx`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.g.complete(cmd)
			return o.Run(cmd.Context(), o.g.Out)
		},
	}
	f := cmd.Flags()
	o.FilenameFlags.AddFlags(f, "to apply.")
	flags.DryRun(f, &o.DryRun)
	o.PrintFlags.AddFlags(cmd, writeFormatsUsage)
	f.BoolVar(&o.Overwrite, "overwrite", true, "On a patch conflict, keep the values of the manifest over the live ones")
	f.StringVar(&o.FieldManager, "field-manager", apply.FieldManagerClientSideApply, "Name of the manager used to track field ownership.")
	f.BoolVar(&o.Force, "force", false, "Delete at once, skipping graceful termination; pods may go on running on their node, so this asks for confirmation.")
	f.BoolVar(&o.ServerSide, "server-side", false, "Let the API server merge the manifest (server-side apply) instead of computing the patch here.")
	f.BoolVar(&o.ForceConflicts, "force-conflicts", false, "With --server-side, take over the fields other managers own instead of failing on the conflict.")
	f.StringVar(&o.Subresource, "subresource", "", "Apply to this subresource (status, scale...) of the objects; needs --server-side.")
	flags.Validate(f, &o.Validate)
	f.BoolVar(&o.Prune, "prune", false, "Delete the objects that an earlier apply (or create --save-config) made and the manifests no longer hold; give -l or --all to say which.")
	f.StringVarP(&o.Selector, "selector", "l", "", "Selector (label query) to filter on, supports '=', '==', '!=', 'in', 'notin'.(e.g. -l key1=value1,key2=value2). Matching objects must satisfy all of the specified label constraints.")
	f.BoolVar(&o.All, "all", false, "Act on every object of the given types in the namespace.")
	f.StringArrayVar(&o.PruneAllowlist, "prune-allowlist", nil, "The kinds --prune may delete, as group/version/kind (repeatable), instead of its default list")
	f.IntVar(&o.Concurrency, "concurrency", apply.DefaultConcurrency, "Requests in flight at once on a real cluster (reads, dry runs, writes, deletions).")
	f.StringVar(&o.ApplySet, "applyset", "", "The name of the ApplySet that tracks which resources are being managed, for the purposes of determining what to prune. Live resources that are part of the ApplySet but have been removed from the provided configs will be deleted. Format: [RESOURCE][.GROUP]/NAME. A Secret will be used if no resource or group is specified.")
	return cmd
}

// Run applies the files and prints a result line per object.
func (o *ApplyOptions) Run(ctx context.Context, out io.Writer) error {
	errOut := o.g.ErrOut
	if err := o.check(); err != nil {
		return fail(errOut, 1, err)
	}
	p, err := resultPrinter(&o.PrintFlags)
	if err != nil {
		return fail(errOut, 1, err)
	}
	dry, err := flags.ParseDryRun(o.DryRun)
	if err != nil {
		return fail(errOut, 1, err)
	}
	validation, _ := flags.FieldValidation(o.Validate)
	o.Warnings = errOut
	objs, err := o.Read(ctx, o.g.In)
	if err != nil {
		return fail(errOut, 1, err)
	}
	sess, err := o.g.openSession(ctx)
	if err != nil {
		return fail(errOut, 1, err)
	}
	defer sess.Close(ctx)

	opts := apply.Options{
		Namespace:        o.g.Ns(),
		EnforceNamespace: o.g.NamespaceSet,
		DryRun:           dry,
		FieldManager:     o.FieldManager,
		NoOverwrite:      !o.Overwrite,
		Force:            o.Force,
		ServerSide:       o.ServerSide,
		ForceConflicts:   o.ForceConflicts,
		Subresource:      o.Subresource,
		Selector:         o.Selector,
		Prune:            o.Prune,
		PruneAll:         o.All,
		ApplySet:         o.ApplySet,
		Concurrency:      o.Concurrency,
		Warn:             func(msg string) { printWarning(errOut, msg) },
		FieldValidation:  validation,
		// The objects read are this apply's alone.
		GiveObjects: true,
	}
	progress := &progressLine{}
	if sess.Store == nil {
		progress = newProgressLine(errOut)
		opts.Progress = progress.Update
		// Lines and names need no more of the objects written than
		// their metadata, which costs the API server less to send.
		opts.MetadataOnly = o.Output == "" || o.Output == "name"
	}
	defer progress.Close()
	if o.ServerSide && o.FieldManager == apply.FieldManagerClientSideApply {
		opts.FieldManager = apply.FieldManagerServerSideApply
	}
	if len(o.PruneAllowlist) > 0 {
		gvks, err := prune.ParseAllowlist(sess.Mapper(), o.PruneAllowlist)
		if err != nil {
			return fail(errOut, 1, plainError(err))
		}
		opts.PruneAllowlist = gvks
	}
	var lines *resultLines
	if sess.Store != nil && (o.Output == "" || o.Output == "name") {
		// The embedded cluster writes in one transaction: its results
		// come as each write is made, and the lines need nothing of their
		// objects, which then need not stay for the rest of the run.
		lines = newResultLines(objs)
		opts.OnResult = lines.add
		opts.LiveWithoutManagedFields = true
	}
	results, err := apply.New(sess.Cluster, opts).Apply(ctx, objs)
	progress.Close()
	if lines != nil {
		results = lines.results(err, o.ServerSide)
	}
	for i := range results {
		results[i] = results[i].Unmasked() // -o yaml prints Secrets as stored, as kubectl
	}
	// Results before an error are what was done (on a real cluster, a
	// write can fail after others succeeded): print them all.
	if perr := printApplied(out, errOut, results, o.Output, p); perr != nil && err == nil {
		err = perr
	}
	if err != nil {
		for _, line := range applyErrorLines(err, o.ServerSide) {
			fmt.Fprintln(errOut, line)
		}
		return &ExitError{Code: 1}
	}
	if err := sess.Close(ctx); err != nil {
		return fail(errOut, 1, err)
	}
	return nil
}

// check refuses what kubectl refuses before reading anything.
func (o *ApplyOptions) check() error {
	if !o.FilenameFlags.Given() {
		return fmt.Errorf("must specify one of -f and -k")
	}
	if _, err := flags.FieldValidation(o.Validate); err != nil {
		return err
	}
	return flags.CheckSelector(o.Selector)
}

// printApplied prints apply's results as kubectl apply does: a line per
// object (no -o) or its name (-o name); with another -o, the objects
// applied, after all of them, as one object or a List of several, then
// the pruned ones one by one. Warnings go to errOut first.
func printApplied(out, errOut io.Writer, results []apply.Result, format string, p printer.ObjectPrinter) error {
	if p == nil {
		return printResults(out, errOut, results, format, nil)
	}
	var applied []any
	var pruned []apply.Result
	for _, r := range results {
		for _, w := range r.Warnings {
			printWarning(errOut, w)
		}
		if r.Action == apply.Pruned {
			pruned = append(pruned, r)
			continue
		}
		applied = append(applied, r.Object)
	}
	switch len(applied) {
	case 0:
	case 1:
		if err := p.PrintObject(out, applied[0]); err != nil {
			return err
		}
	default:
		if flags.StripsManagedFields(p) {
			// The List is a Raw document, which the stripper does not
			// look into: its items are stripped here.
			for i, obj := range applied {
				applied[i] = flags.StripManagedFields(obj)
			}
		}
		list, err := appliedList(applied)
		if err != nil {
			return err
		}
		if err := p.PrintObject(out, list); err != nil {
			return err
		}
	}
	for _, r := range pruned {
		if err := p.PrintObject(out, r.Object); err != nil {
			return err
		}
	}
	return nil
}

// appliedList is the List kubectl apply prints several objects in: its
// own fields in their declared order (kind first), the items as decoded.
func appliedList(items []any) (printer.Raw, error) {
	var b bytes.Buffer
	b.WriteString(`{"kind":"List","apiVersion":"v1","metadata":{},"items":[`)
	for i, it := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		enc, err := value.Encode(it)
		if err != nil {
			return nil, fmt.Errorf("printing the applied objects: %w", err)
		}
		b.Write(enc)
	}
	b.WriteString("]}")
	return printer.Raw(b.Bytes()), nil
}

// writeFormatsUsage is the help of -o of the commands that write the
// objects of files (apply, create, replace).
const writeFormatsUsage = "Output format. One of: (json, yaml, kyaml, name, go-template, go-template-file, template, templatefile, jsonpath, jsonpath-as-json, jsonpath-file)."

// resultPrinter returns the printer of -o for the objects a command wrote
// from files, nil for the result lines (no -o) and -o name, which print
// the results rather than the objects; an -o that kubectl's commands do
// not have is kubectl's error.
func resultPrinter(p *flags.PrintFlags) (printer.ObjectPrinter, error) {
	if p.Output == "" || p.Output == "name" {
		return nil, nil
	}
	return p.ToPrinter(createFormats, false, "")
}

// printResults prints results as kubectl apply does: a line per object,
// or their names with -o name, or the objects with p (yaml documents
// separated by "---"); warnings go to errOut before the object they
// concern.
func printResults(out, errOut io.Writer, results []apply.Result, format string, p printer.ObjectPrinter) error {
	// One write per line is a system call per object: the lines are
	// buffered, and flushed before each warning so that the two streams
	// keep their order on a terminal.
	bw := bufio.NewWriterSize(out, 64<<10)
	defer bw.Flush()
	out = bw
	for i, r := range results {
		if len(r.Warnings) > 0 {
			if err := bw.Flush(); err != nil {
				return err
			}
		}
		for _, w := range r.Warnings {
			printWarning(errOut, w)
		}
		switch {
		case format == "":
			fmt.Fprintln(out, r.String())
		case format == "name":
			fmt.Fprintln(out, r.Ref.String())
		default:
			if i > 0 && format == "yaml" {
				fmt.Fprintln(out, "---")
			}
			if err := p.PrintObject(out, r.Object); err != nil {
				return err
			}
		}
	}
	return bw.Flush()
}

// resultLines keeps what the lines of an apply need of each result as
// Options.OnResult hands them over (in the order of the writes), and
// returns them in input order, as Apply returns its results.
type resultLines struct {
	at   map[manifest.Source]int // an input object's position
	kept []apply.Result
	pos  []int
}

func newResultLines(objs []manifest.Object) *resultLines {
	at := make(map[manifest.Source]int, len(objs))
	for i, o := range objs {
		at[o.Source] = i
	}
	return &resultLines{at: at}
}

func (l *resultLines) add(r apply.Result) {
	i, ok := l.at[r.Source]
	if !ok || r.Action == apply.Pruned {
		i = len(l.at) // after the input (the pruned objects come last)
	}
	r.Object, r.Live, r.Patch = nil, nil, nil
	l.kept = append(l.kept, r)
	l.pos = append(l.pos, i)
}

// results returns the results kept, in input order, or what Apply
// returns with err: on the embedded cluster a failed apply is undone and
// returns none, but with server-side apply the objects the server took
// stay when others were refused (apply.Errors).
func (l *resultLines) results(err error, serverSide bool) []apply.Result {
	var objErrs apply.Errors
	if err != nil && (!serverSide || !errors.As(err, &objErrs)) {
		return nil
	}
	order := make([]int, len(l.kept))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(l.pos[a], l.pos[b]) })
	out := make([]apply.Result, len(order))
	for i, j := range order {
		out[i] = l.kept[j]
	}
	return out
}
