package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/konverge/konverge/apply"
	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/internal/cli/flags"
	"github.com/konverge/konverge/lastapplied"
	"github.com/konverge/konverge/manifest"
	"github.com/konverge/konverge/objref"
)

// WriteOptions are the flags of konverge create and replace, which write
// the objects of files as they are (no merge).
type WriteOptions struct {
	g *Globals
	flags.FilenameFlags

	// Replace makes the command replace existing objects instead of
	// creating new ones.
	Replace    bool
	SaveConfig bool
	DryRun     string
	Validate   string
	flags.PrintFlags
	// FieldManager is --field-manager.
	FieldManager string
	// Subresource is replace's --subresource (status).
	Subresource string
}

// NewCreateCmd returns konverge create.
func NewCreateCmd(o *WriteOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "create -f FILENAME",
		Short: "Create objects from manifest files or standard input",
		Long: `Create the objects of manifest files (or standard input), as kubectl create does.

JSON and YAML formats are accepted. An object that exists already is an error.
On the embedded cluster the objects are created all or none.`,
		Example: `  # Create a deployment and record its configuration for later applies
  konverge create -f deployment.yaml --save-config`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.g.complete(cmd)
			return o.Run(cmd.Context(), o.g.Out)
		},
	}
	o.addFlags(cmd, "to use to create the resource")
	return cmd
}

// NewReplaceCmd returns konverge replace.
func NewReplaceCmd(o *WriteOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "replace -f FILENAME",
		Short: "Replace objects with those of manifest files or standard input",
		Long: `Put the objects of manifest files (or standard input) in place of the live ones,
as kubectl replace does: each is swapped whole for the file's version. It must exist.

JSON and YAML formats are accepted. On the embedded cluster the objects are
replaced all or none.`,
		Example: `  # Replace a deployment with the file's version
  konverge replace -f deployment.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.g.complete(cmd)
			return o.Run(cmd.Context(), o.g.Out)
		},
	}
	o.addFlags(cmd, "to replace.")
	return cmd
}

func (o *WriteOptions) addFlags(cmd *cobra.Command, usage string) {
	f := cmd.Flags()
	o.FilenameFlags.AddFlags(f, usage)
	f.BoolVar(&o.SaveConfig, "save-config", false, "Write the object into its last-applied annotation, so that a later apply can compute its changes; without it the annotation is left as it is.")
	flags.DryRun(f, &o.DryRun)
	o.PrintFlags.AddFlags(cmd, writeFormatsUsage)
	manager := managerCreate
	if o.Replace {
		manager = managerReplace
	}
	flags.FieldManager(f, &o.FieldManager, manager)
	flags.Validate(f, &o.Validate)
	if o.Replace {
		flags.Subresource(f, &o.Subresource, "If specified, replace will operate on the subresource of the requested object.")
	}
}

// fieldManager is --field-manager, or the command's default when the
// options were built without flags.
func (o *WriteOptions) fieldManager() string {
	switch {
	case o.FieldManager != "":
		return o.FieldManager
	case o.Replace:
		return managerReplace
	}
	return managerCreate
}

func (o *WriteOptions) verb() (ing, ed string) {
	if o.Replace {
		return "replacing", "replaced"
	}
	return "creating", "created"
}

// Run creates or replaces the objects of the files.
func (o *WriteOptions) Run(ctx context.Context, out io.Writer) error {
	errOut := o.g.ErrOut
	if !o.FilenameFlags.Given() {
		return fail(errOut, 1, errors.New("must specify one of -f and -k"))
	}
	p, err := resultPrinter(&o.PrintFlags)
	if err != nil {
		return fail(errOut, 1, err)
	}
	dry, err := flags.ParseDryRun(o.DryRun)
	if err != nil {
		return fail(errOut, 1, err)
	}
	validation, err := flags.FieldValidation(o.Validate)
	if err != nil {
		return fail(errOut, 1, err)
	}
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

	// Resolve every object before writing any.
	m := sess.Mapper()
	prepared := make([]map[string]any, len(objs))
	var errs []error
	for i, obj := range objs {
		p, err := o.prepare(m, obj)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		prepared[i] = p
	}
	if len(errs) > 0 {
		return fail(errOut, 1, errors.Join(errs...))
	}

	ing, ed := o.verb()
	var results []apply.Result
	run := func(c cluster.Interface) error {
		errs = nil
		results = results[:0]
		for i, obj := range prepared {
			var got map[string]any
			var err error
			switch {
			case dry == apply.DryRunClient:
				got = obj
			case o.Replace && o.Subresource != "" && o.Subresource != "status":
				res, rerr := m.ResourceFor(objref.Of(obj).GVK)
				if rerr != nil {
					err = rerr
					break
				}
				err = replaceSubresourceError(ctx, c, res, obj, o.Subresource)
			case o.Replace:
				uopts := []cluster.UpdateOption{validation, cluster.FieldOwner(o.fieldManager())}
				if dry == apply.DryRunServer {
					uopts = append(uopts, cluster.DryRunAll)
				}
				if o.Subresource == "status" {
					got, err = c.UpdateStatus(ctx, obj, uopts...)
				} else {
					got, err = c.Update(ctx, obj, uopts...)
				}
			default:
				copts := []cluster.CreateOption{validation, cluster.FieldOwner(o.fieldManager())}
				if dry == apply.DryRunServer {
					copts = append(copts, cluster.DryRunAll)
				}
				// As kubectl's: the resourceVersion of a manifest
				// exported from another cluster is cleared.
				got, err = c.Create(ctx, objref.WithMetadata(obj, "resourceVersion", nil), copts...)
			}
			if err != nil {
				errs = append(errs, sourceError{verb: ing, source: objs[i].Source.File, err: err})
				continue
			}
			results = append(results, apply.Result{Ref: objref.Of(got), Action: apply.Action(ed), DryRun: dry, Object: got, Source: objs[i].Source})
		}
		if len(errs) > 0 {
			return errors.Join(errs...)
		}
		return nil
	}
	var runErr error
	if b, ok := sess.Cluster.(apply.Batcher); ok && dry != apply.DryRunClient {
		// All or nothing: the batch commits only if every write succeeded.
		runErr = b.Batch(ctx, run)
		if runErr != nil {
			results = nil
		}
	} else {
		runErr = run(sess.Cluster)
	}
	if err := printResults(out, errOut, results, o.Output, p); err != nil && runErr == nil {
		runErr = err
	}
	if runErr != nil {
		if len(errs) > 0 {
			runErr = errors.Join(errs...)
		}
		return fail(errOut, 1, runErr)
	}
	if err := sess.Close(ctx); err != nil {
		return fail(errOut, 1, err)
	}
	return nil
}

// prepare resolves an object's kind and namespace and sets or refreshes its
// last-applied annotation as kubectl's CreateOrUpdateAnnotation does.
func (o *WriteOptions) prepare(m cluster.Mapper, in manifest.Object) (map[string]any, error) {
	obj := in.Obj
	ref := objref.Of(obj)
	res, err := m.ResourceFor(ref.GVK)
	if err != nil {
		return nil, fmt.Errorf("%s: resource mapping not found for name: %q namespace: %q: %w\nensure CRDs are installed first", in.Source, ref.Name, ref.Namespace, plainError(err))
	}
	ns := ref.Namespace
	switch {
	case !res.Namespaced:
		if ns != "" {
			obj = objref.WithMetadata(obj, "namespace", nil)
		}
	case ns == "":
		obj = objref.WithMetadata(obj, "namespace", o.g.Ns())
	case o.g.NamespaceSet && ns != o.g.Ns():
		//lint:ignore ST1005 kubectl's message, word for word (users and scripts match it)
		return nil, fmt.Errorf("%s: the namespace from the provided object %q does not match the namespace %q. You must pass '--namespace=%s' to perform this operation.", in.Source, ns, o.g.Ns(), ns)
	}
	had, err := lastapplied.Get(obj)
	if err != nil {
		had = map[string]any{}
	}
	if o.SaveConfig || had != nil {
		obj, err = lastapplied.Set(lastapplied.Strip(obj))
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", in.Source, ref, err)
		}
	}
	return obj, nil
}
