package cli

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/konverge/konverge/apply"
	"github.com/konverge/konverge/diff"
	"github.com/konverge/konverge/internal/cli/flags"
	"github.com/konverge/konverge/prune"
)

// DiffOptions are the flags of konverge diff.
type DiffOptions struct {
	g *Globals
	flags.FilenameFlags

	Output            string
	Color             string
	ShowSecret        bool
	ShowManagedFields bool
	FieldManager      string
	ServerSide        bool
	ForceConflicts    bool
	Prune             bool
	Selector          string
	PruneAllowlist    []string
	ApplySet          string
	Concurrency       int
}

// NewDiffCmd returns konverge diff.
func NewDiffCmd(o *DiffOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "diff -f FILENAME",
		Short: "Show what applying the manifests would change",
		Long: `Compare each object of the manifests (files or standard input) as it is live
with what it would be after an apply.

The output is a unified diff per object, between live/<name> and merged/<name>.
Secret values are masked unless --show-secret is given. KONVERGE_EXTERNAL_DIFF,
or else KUBECTL_EXTERNAL_DIFF, names a program to run on two directories
instead, as KUBECTL_EXTERNAL_DIFF does for kubectl.

Exit status: 0 no differences were found; 1 differences were found; 2 (> 1)
konverge or the diff program failed.`,
		Example: `  # Diff resources included in a directory
  konverge diff -f ./manifests/

  # Machine-readable
  konverge diff -f ./manifests/ -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.g.complete(cmd)
			return o.Run(cmd.Context(), o.g.Out)
		},
	}
	f := cmd.Flags()
	o.FilenameFlags.AddFlags(f, "to diff.")
	f.StringVarP(&o.Output, "output", "o", "", "Output format: the unified diff (default) or json, one element per object.")
	f.StringVar(&o.Color, "color", "auto", "Color the unified diff: auto (when standard output is a terminal), always or never.")
	f.BoolVar(&o.ShowSecret, "show-secret", false, "If true, include Secret data values in diff output.")
	f.BoolVar(&o.ShowManagedFields, "show-managed-fields", false, "If true, include managed fields in the diff.")
	f.StringVar(&o.FieldManager, "field-manager", apply.FieldManagerClientSideApply, "Name of the manager used to track field ownership.")
	f.BoolVar(&o.ServerSide, "server-side", false, "Let the API server merge the manifest (server-side apply) instead of computing the patch here.")
	f.BoolVar(&o.ForceConflicts, "force-conflicts", false, "With --server-side, take over the fields other managers own instead of failing on the conflict.")
	f.BoolVar(&o.Prune, "prune", false, "Also show the objects --prune would delete (with -l, those it selects).")
	f.StringVarP(&o.Selector, "selector", "l", "", "Selector (label query) to filter on, supports '=', '==', '!=', 'in', 'notin'.(e.g. -l key1=value1,key2=value2). Matching objects must satisfy all of the specified label constraints.")
	f.StringArrayVar(&o.PruneAllowlist, "prune-allowlist", nil, "The kinds --prune may delete, as group/version/kind (repeatable), instead of its default list")
	f.StringVar(&o.ApplySet, "applyset", "", "The ApplySet the objects were applied with (apply --applyset): they are diffed as its members, and with --prune its members that left the input show as deletions. Not in kubectl.")
	f.IntVar(&o.Concurrency, "concurrency", apply.DefaultConcurrency, "Requests in flight at once on a real cluster.")
	return cmd
}

// Run diffs the files against the cluster. Its ExitError carries kubectl
// diff's status: 1 when there are differences, 2 on errors.
func (o *DiffOptions) Run(ctx context.Context, out io.Writer) error {
	errOut := o.g.ErrOut
	const errCode = 2
	if !o.FilenameFlags.Given() {
		return fail(errOut, errCode, fmt.Errorf("must specify one of -f and -k"))
	}
	switch o.Output {
	case "", "json":
	default:
		return fail(errOut, errCode, fmt.Errorf("unknown output format %q (want json, or nothing for a unified diff)", o.Output))
	}
	color, err := o.useColor(out)
	if err != nil {
		return fail(errOut, errCode, err)
	}
	if err := flags.CheckSelector(o.Selector); err != nil {
		return fail(errOut, errCode, err)
	}
	o.Warnings = errOut
	objs, err := o.Read(ctx, o.g.In)
	if err != nil {
		return fail(errOut, errCode, err)
	}
	sess, err := o.g.openSession(ctx)
	if err != nil {
		return fail(errOut, errCode, err)
	}
	defer sess.Close(ctx)

	opts := diff.Options{
		Options: apply.Options{
			Namespace:        o.g.Ns(),
			EnforceNamespace: o.g.NamespaceSet,
			FieldManager:     o.FieldManager,
			ServerSide:       o.ServerSide,
			ForceConflicts:   o.ForceConflicts,
			Selector:         o.Selector,
			Prune:            o.Prune,
			ApplySet:         o.ApplySet,
			Concurrency:      o.Concurrency,
		},
		ShowSecrets:       o.ShowSecret,
		ShowManagedFields: o.ShowManagedFields,
	}
	progress := &progressLine{}
	if sess.Store == nil {
		progress = newProgressLine(errOut)
		opts.Options.Progress = progress.Update
	}
	defer progress.Close()
	if o.ServerSide && o.FieldManager == apply.FieldManagerClientSideApply {
		opts.Options.FieldManager = apply.FieldManagerServerSideApply
	}
	if len(o.PruneAllowlist) > 0 {
		gvks, err := prune.ParseAllowlist(sess.Mapper(), o.PruneAllowlist)
		if err != nil {
			return fail(errOut, errCode, plainError(err))
		}
		opts.Options.PruneAllowlist = gvks
	}
	prog := os.Getenv(diff.EnvExternalDiff)
	if prog == "" {
		prog = os.Getenv(diff.EnvKubectlExternalDiff)
	}
	differ := diff.New(sess.Cluster, opts)
	if o.Output == "" && prog == "" {
		// The unified diff is rendered as the dry run goes, keeping the
		// text of each object instead of the objects.
		u, err := differ.RunUnified(ctx, objs, diff.RenderOptions{Color: color})
		if err := o.diffDone(ctx, sess, progress, err); err != nil {
			return err
		}
		for _, w := range u.Warnings() {
			printWarning(errOut, w)
		}
		if _, err := u.WriteTo(out); err != nil {
			return fail(errOut, errCode, err)
		}
		return exitStatus(u.ExitCode())
	}
	report, err := differ.Run(ctx, objs)
	if err := o.diffDone(ctx, sess, progress, err); err != nil {
		return err
	}
	for _, e := range report.Entries {
		for _, w := range e.Warnings {
			printWarning(errOut, w)
		}
	}
	if o.Output == "json" {
		if err := report.WriteJSON(out); err != nil {
			return fail(errOut, errCode, err)
		}
		return exitStatus(diff.ExitCode(report, nil))
	}
	code, err := report.RunExternal(prog, out, errOut)
	if err != nil {
		return fail(errOut, errCode, err)
	}
	return exitStatus(code)
}

// diffDone ends the progress line and the session after the diff's dry
// run, and prints the dry run's error (err) kubectl's way.
func (o *DiffOptions) diffDone(ctx context.Context, sess *Session, progress *progressLine, err error) error {
	progress.Close()
	if err != nil {
		for _, line := range diffErrorLines(err, o.ServerSide) {
			fmt.Fprintln(o.g.ErrOut, line)
		}
		return &ExitError{Code: diff.ExitCode(nil, err)}
	}
	if err := sess.Close(ctx); err != nil {
		return fail(o.g.ErrOut, 2, err)
	}
	return nil
}

// useColor decides --color: auto colors when out is a terminal.
func (o *DiffOptions) useColor(out io.Writer) (bool, error) {
	switch o.Color {
	case "always":
		return true, nil
	case "never":
		return false, nil
	case "auto", "":
		return isTerminal(out), nil
	}
	return false, fmt.Errorf("invalid --color %q (want auto, always or never)", o.Color)
}

// isTerminal reports whether w is a character device (a terminal), the
// way kubectl decides to color its output. NO_COLOR turns it off.
func isTerminal(w io.Writer) bool {
	if os.Getenv("NO_COLOR") != "" {
		return false
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// exitStatus is the error that ends a command with code, nil for 0.
func exitStatus(code int) error {
	if code == 0 {
		return nil
	}
	return &ExitError{Code: code}
}
