package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/internal/cli/flags"
	"github.com/konverge/konverge/internal/printer"
	"github.com/konverge/konverge/merge"
	"github.com/konverge/konverge/value"
)

// EditOptions are the flags of konverge edit.
type EditOptions struct {
	*Globals
	flags.FilenameFlags
	Output      string
	Validate    string
	Subresource string
	ManagedFieldsFlags
	FieldManager string
}

// NewEditCmd returns the edit command.
func NewEditCmd(o *EditOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "edit (RESOURCE/NAME | -f FILENAME)",
		Short: "Change objects in an editor",
		Long: `Open objects in an editor: $KUBE_EDITOR, else $EDITOR, else vi.
The object is written to a temporary file as YAML (or JSON with -o json); when the editor
exits, what was changed is sent as a patch, as kubectl edit does. Nothing is held while
the editor runs: changes made meanwhile to other fields are kept; if the object was
deleted meanwhile, or the patch conflicts, the edits are kept in a file. An unchanged
or empty file cancels the edit.`,
		Example: `  konverge edit deployment/nginx-deployment
  KUBE_EDITOR="nano" konverge edit svc web`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.complete(cmd)
			return o.Run(cmd.Context(), args)
		},
	}
	cmd.Flags().StringVarP(&o.Output, "output", "o", "yaml", "Output format. One of: (yaml, json).")
	o.ManagedFieldsFlags.AddFlags(cmd.Flags())
	flags.Validate(cmd.Flags(), &o.Validate)
	flags.Subresource(cmd.Flags(), &o.Subresource, "If specified, edit will operate on the subresource of the requested object.")
	flags.FieldManager(cmd.Flags(), &o.FieldManager, managerEdit)
	o.FilenameFlags.AddFlags(cmd.Flags(), "the objects to edit")
	return cmd
}

const editHeader = `# Please edit the object below. Lines beginning with a '#' will be ignored,
# and an empty file will abort the edit. If an error occurs while saving this file will be
# reopened with the relevant failures.
#
`

// editor returns the editor command line.
func editor() string {
	for _, env := range []string{"KUBE_EDITOR", "EDITOR"} {
		if e := strings.TrimSpace(os.Getenv(env)); e != "" {
			return e
		}
	}
	return "vi"
}

// Run edits the objects args name, one after the other. As kubectl edit,
// it holds nothing while the editor runs: the objects are read, the state
// released, and each edit sent afterwards as a patch of what the user
// changed (a strategic merge patch, or a JSON merge patch for kinds
// without a schema), in a session of its own. Changes made to other fields
// meanwhile are kept, as kubectl keeps them; a resourceVersion the user
// edited makes the patch a conflict if the object changed meanwhile.
func (o *EditOptions) Run(ctx context.Context, args []string) error {
	if o.Output != "yaml" && o.Output != "json" {
		return failOne(o.ErrOut, fmt.Errorf("the flag 'output' must be one of yaml|json"))
	}
	validation, err := flags.FieldValidation(o.Validate)
	if err != nil {
		return failOne(o.ErrOut, err)
	}
	sess, err := o.openResourceSession(ctx)
	if err != nil {
		return failOne(o.ErrOut, err)
	}
	targets, errs := selectTargets(ctx, o.Globals, sess, o.FilenameFlags, args, "", false)
	if err := sess.Close(ctx); err != nil {
		return failOne(o.ErrOut, err)
	}
	kept := false // a file of edits was kept for the user: exit 1
	for _, t := range targets {
		if o.Subresource != "" && o.Subresource != "status" {
			if err := o.editSubresource(ctx, t, o.Subresource); err != nil {
				errs = append(errs, err)
			}
			continue
		}
		name := printer.Str(t.obj, "metadata", "name")
		ref := objectRef(t.res, name)
		edited, path, cancelled, err := o.editOne(t.obj)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if cancelled != "" {
			fmt.Fprintln(o.ErrOut, cancelled)
			continue
		}
		werr := o.writeEdit(ctx, t, edited, validation)
		var se *cluster.StatusError
		switch {
		case werr == nil:
			os.Remove(path)
			fmt.Fprintf(o.Out, "%s edited\n", ref)
		case errors.As(werr, &se) && se.Code == 404:
			// Deleted while the editor was open: kubectl's words, and
			// the edits kept.
			fmt.Fprintf(o.ErrOut, "error: %s %q could not be found on the server\n", editResourceString(t.res), name)
			fmt.Fprintf(o.ErrOut, "The edits you made on deleted resources have been saved to %q\n", path)
			kept = true
		case errors.As(werr, &se) && se.Reason != cluster.ReasonInvalid:
			// Changed meanwhile (a conflict) or refused for another
			// reason that a later try may not meet.
			fmt.Fprintf(o.ErrOut, "error: %s %q could not be patched: %s\n", editResourceString(t.res), name, se.Message)
			fmt.Fprintf(o.ErrOut, "You can run `konverge replace -f %s` to try this update again.\n", path)
			kept = true
		default:
			os.Remove(path)
			errs = append(errs, werr)
		}
	}
	if err := reportErrors(o.ErrOut, errs); err != nil || !kept {
		return err
	}
	return &ExitError{Code: 1}
}

// editResourceString names a resource as kubectl edit's errors do: its
// plural, with its group after a dot.
func editResourceString(res cluster.Resource) string {
	if res.GVK.Group != "" {
		return res.Plural + "." + res.GVK.Group
	}
	return res.Plural
}

// writeEdit sends what the user changed in t's object, in a session of its
// own: the two-way patch from the object as shown to the edited one.
func (o *EditOptions) writeEdit(ctx context.Context, t gotObject, edited map[string]any, validation cluster.FieldValidation) error {
	for _, f := range []string{"apiVersion", "kind"} {
		if !value.Equal(t.obj[f], edited[f]) {
			return errEditIdentity
		}
	}
	if printer.Str(t.obj, "metadata", "name") != printer.Str(edited, "metadata", "name") {
		return errEditIdentity
	}
	sess, err := o.openResourceSession(ctx)
	if err != nil {
		return err
	}
	defer sess.Close(ctx)
	var patch map[string]any
	pt := cluster.StrategicMergePatchType
	if typ := sess.Mapper().Schema(t.res.GVK); typ != nil {
		patch, err = merge.ThreeWay(t.obj, edited, t.obj, typ, merge.Options{})
	} else {
		pt = cluster.MergePatchType
		patch, err = merge.ThreeWayJSONMerge(t.obj, edited, t.obj)
	}
	if err != nil {
		return err
	}
	b, err := value.Encode(patch)
	if err != nil {
		return err
	}
	opts := []cluster.PatchOption{cluster.FieldOwner(o.FieldManager)}
	if validation != "" {
		opts = append(opts, cluster.FieldValidation(validation))
	}
	if o.Subresource == "status" {
		opts = append(opts, cluster.Subresource("status"))
	}
	md := printer.Map(t.obj, "metadata")
	if _, err := sess.Cluster.Patch(ctx, t.res.GVK, printer.Str(md, "namespace"), printer.Str(md, "name"), pt, b, opts...); err != nil {
		return err
	}
	return sess.Close(ctx)
}

// errEditIdentity is kubectl edit's error when the edited file names
// another object.
//
//lint:ignore ST1005 kubectl's message, word for word (users and scripts match it)
var errEditIdentity = errors.New("At least one of apiVersion, kind and name was changed")

// editOne runs the editor on obj and returns the edited object and the
// file it was edited in (the caller removes it, or keeps it for the user
// when the edit cannot be written), or why the edit was cancelled.
func (o *EditOptions) editOne(obj map[string]any) (edited map[string]any, path, cancelled string, err error) {
	var buf bytes.Buffer
	buf.WriteString(editHeader)
	if err := printObjects(&buf, obj, o.Output, o.ShowManagedFields); err != nil {
		return nil, "", "", err
	}
	f, err := os.CreateTemp("", "konverge-edit-*."+o.Output)
	if err != nil {
		return nil, "", "", err
	}
	path = f.Name()
	original := buf.Bytes()
	_, werr := f.Write(original)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	keep := false
	defer func() {
		if !keep {
			os.Remove(path)
		}
	}()
	if werr != nil {
		return nil, "", "", werr
	}
	cmd := exec.Command("sh", "-c", editor()+" "+shellQuote(path))
	cmd.Stdin, cmd.Stdout, cmd.Stderr = o.In, o.Out, o.ErrOut
	if f, ok := o.In.(*os.File); !ok || f == nil {
		cmd.Stdin = os.Stdin
	}
	if err := cmd.Run(); err != nil {
		return nil, "", "", fmt.Errorf("there was a problem with the editor %q: %w", editor(), err)
	}
	after, err := os.ReadFile(path)
	if err != nil {
		return nil, "", "", err
	}
	if bytes.Equal(stripComments(after), stripComments(original)) {
		return nil, "", "Edit cancelled, no changes made.", nil
	}
	if len(bytes.TrimSpace(stripComments(after))) == 0 {
		return nil, "", "Edit cancelled, saved file was empty.", nil
	}
	j, err := yaml.YAMLToJSON(stripComments(after))
	if err != nil {
		return nil, "", "", fmt.Errorf("the edited file is not valid YAML: %w", err)
	}
	edited, err = value.DecodeObject(j)
	if err != nil {
		return nil, "", "", fmt.Errorf("the edited file is not a valid object: %w", err)
	}
	if value.Equal(edited, obj) {
		return nil, "", "Edit cancelled, no changes made.", nil
	}
	keep = true
	return edited, path, "", nil
}

// stripComments drops the lines that start with '#', as kubectl's edit.
func stripComments(b []byte) []byte {
	var out bytes.Buffer
	for _, l := range bytes.SplitAfter(b, []byte("\n")) {
		if bytes.HasPrefix(bytes.TrimSpace(l), []byte("#")) {
			continue
		}
		out.Write(l)
	}
	return out.Bytes()
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
