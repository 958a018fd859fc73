package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/internal/printer"
	"github.com/konverge/konverge/value"
)

func init() {
	commands = append(commands, func(g *Globals) *cobra.Command {
		return NewEditCmd(&EditOptions{Globals: g})
	})
}

// EditOptions are the flags of konverge edit.
type EditOptions struct {
	*Globals
	FilenameFlags
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
		Short: "Edit a resource on the server",
		Long: `Edit a resource from the default editor: $KUBE_EDITOR, else $EDITOR, else vi.
The object is written to a temporary file as YAML (or JSON with -o json); when the editor
exits, the edited object replaces the live one (with its resourceVersion, so that a
concurrent change is a conflict). An unchanged or empty file cancels the edit.`,
		Example: `  konverge edit deployment/nginx-deployment
  KUBE_EDITOR="nano" konverge edit svc web`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.complete(cmd)
			return o.Run(cmd.Context(), args)
		},
	}
	cmd.Flags().StringVarP(&o.Output, "output", "o", "yaml", "Output format. One of: (yaml, json).")
	o.ManagedFieldsFlags.AddFlags(cmd.Flags())
	validateFlag(cmd.Flags(), &o.Validate)
	subresourceFlag(cmd.Flags(), &o.Subresource, "If specified, edit will operate on the subresource of the requested object.")
	fieldManagerFlag(cmd.Flags(), &o.FieldManager, managerEdit)
	o.FilenameFlags.AddFlags(cmd.Flags(), "to use to edit the resource")
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

// Run edits the objects args name, one after the other.
func (o *EditOptions) Run(ctx context.Context, args []string) error {
	if o.Output != "yaml" && o.Output != "json" {
		return failOne(o.ErrOut, fmt.Errorf("the flag 'output' must be one of yaml|json"))
	}
	validation, err := fieldValidation(o.Validate)
	if err != nil {
		return failOne(o.ErrOut, err)
	}
	sess, err := o.openResourceSession(ctx)
	if err != nil {
		return failOne(o.ErrOut, err)
	}
	defer sess.Close(ctx)
	targets, errs := selectTargets(ctx, o.Globals, sess, o.FilenameFlags, args, "", false)
	for _, t := range targets {
		if o.Subresource != "" && o.Subresource != "status" {
			if err := o.editSubresource(ctx, sess, t, o.Subresource); err != nil {
				errs = append(errs, err)
			}
			continue
		}
		ref := objectRef(t.res, printer.Str(t.obj, "metadata", "name"))
		edited, cancelled, err := o.editOne(t.obj)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if cancelled != "" {
			fmt.Fprintln(o.ErrOut, cancelled)
			continue
		}
		update := sess.Cluster.Update
		if o.Subresource == "status" {
			update = sess.Cluster.UpdateStatus
		}
		if _, err := update(ctx, edited, validation, cluster.FieldOwner(o.FieldManager)); err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(o.Out, "%s edited\n", ref)
	}
	return reportErrors(o.ErrOut, errs)
}

// editOne runs the editor on obj and returns the edited object, or why
// the edit was cancelled.
func (o *EditOptions) editOne(obj map[string]any) (map[string]any, string, error) {
	var buf bytes.Buffer
	buf.WriteString(editHeader)
	if err := printObjects(&buf, obj, o.Output, o.ShowManagedFields); err != nil {
		return nil, "", err
	}
	dir, err := os.MkdirTemp("", "konverge-edit-")
	if err != nil {
		return nil, "", err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "edit."+o.Output)
	original := buf.Bytes()
	if err := os.WriteFile(path, original, 0o600); err != nil {
		return nil, "", err
	}
	cmd := exec.Command("sh", "-c", editor()+" "+shellQuote(path))
	cmd.Stdin, cmd.Stdout, cmd.Stderr = o.In, o.Out, o.ErrOut
	if f, ok := o.In.(*os.File); !ok || f == nil {
		cmd.Stdin = os.Stdin
	}
	if err := cmd.Run(); err != nil {
		return nil, "", fmt.Errorf("there was a problem with the editor %q: %w", editor(), err)
	}
	after, err := os.ReadFile(path)
	if err != nil {
		return nil, "", err
	}
	if bytes.Equal(stripComments(after), stripComments(original)) {
		return nil, "Edit cancelled, no changes made.", nil
	}
	if len(bytes.TrimSpace(stripComments(after))) == 0 {
		return nil, "Edit cancelled, saved file was empty.", nil
	}
	j, err := yaml.YAMLToJSON(stripComments(after))
	if err != nil {
		return nil, "", fmt.Errorf("the edited file is not valid YAML: %w", err)
	}
	edited, err := value.DecodeObject(j)
	if err != nil {
		return nil, "", fmt.Errorf("the edited file is not a valid object: %w", err)
	}
	if value.Equal(edited, obj) {
		return nil, "Edit cancelled, no changes made.", nil
	}
	return edited, "", nil
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
