package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/konverge/konverge/internal/printer"
	"github.com/konverge/konverge/objref"
	"github.com/konverge/konverge/value"
)

// errEditNoValidChanges is kubectl edit's error when the editor, reopened
// on an error, saved nothing new.
//
//lint:ignore ST1005 kubectl's message, word for word (users and scripts match it)
var errEditNoValidChanges = errors.New("Edit cancelled, no valid changes were saved.")

// editSubresource edits the subresource sub (other than status) of the
// object t as kubectl edit --subresource does: the object's subresource
// (an autoscaling/v1 Scale) is what the editor shows, and the edited file
// is read back as manifests are, by its kind, which the API serves only as
// a subresource: kubectl finds no resource for it. As kubectl, the editor
// opens again with the error in the header, until the edited file is left
// unchanged (the edit is then cancelled and the file kept) or the editor
// fails. Nothing is written.
func (o *EditOptions) editSubresource(ctx context.Context, t gotObject, sub string) error {
	obj, err := o.readSubresource(ctx, t, sub)
	if err != nil {
		return err
	}
	var body bytes.Buffer
	if err := printObjects(&body, obj, o.Output, o.ShowManagedFields); err != nil {
		return err
	}
	original := append([]byte(editHeader), body.Bytes()...)
	content := original
	var previous []byte // the edited file of the round that failed
	for round := 0; ; round++ {
		f, err := os.CreateTemp("", "konverge-edit-*."+o.Output)
		if err != nil {
			return err
		}
		path := f.Name()
		_, werr := f.Write(content)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			os.Remove(path)
			return werr
		}
		cmd := exec.Command("sh", "-c", editor()+" "+shellQuote(path))
		cmd.Stdin, cmd.Stdout, cmd.Stderr = o.In, o.Out, o.ErrOut
		if f, ok := o.In.(*os.File); !ok || f == nil {
			cmd.Stdin = os.Stdin
		}
		if err := cmd.Run(); err != nil {
			os.Remove(path)
			return fmt.Errorf("there was a problem with the editor %q: %w", editor(), err)
		}
		edited, err := os.ReadFile(path)
		if err != nil {
			os.Remove(path)
			return err
		}
		if round > 0 && bytes.Equal(stripComments(previous), stripComments(edited)) {
			fmt.Fprintf(o.ErrOut, "A copy of your changes has been stored to %q\n", path)
			return errEditNoValidChanges
		}
		if bytes.Equal(stripComments(original), stripComments(edited)) {
			os.Remove(path)
			fmt.Fprintln(o.ErrOut, "Edit cancelled, no changes made.")
			return nil
		}
		if len(bytes.TrimSpace(stripComments(edited))) == 0 {
			os.Remove(path)
			fmt.Fprintln(o.ErrOut, "Edit cancelled, saved file was empty.")
			return nil
		}
		os.Remove(path)
		reason, err := o.editedSubresourceError(ctx, edited)
		if err != nil {
			return err
		}
		var h strings.Builder
		h.WriteString(editHeader)
		h.WriteString("# " + strings.ReplaceAll(reason, "\n", "\n# ") + "\n#\n")
		content = append([]byte(h.String()), stripComments(edited)...)
		previous = edited
	}
}

// editedSubresourceError is why kubectl cannot take the edited file of a
// subresource back: its kind has no resource of its own.
func (o *EditOptions) editedSubresourceError(ctx context.Context, edited []byte) (string, error) {
	j, err := yaml.YAMLToJSON(stripComments(edited))
	if err != nil {
		return "The edited file had a syntax error: " + err.Error(), nil
	}
	obj, err := value.DecodeObject(j)
	if err != nil {
		return "The edited file had a syntax error: " + err.Error(), nil
	}
	ref := objref.Of(obj)
	ns := ref.Namespace
	if ns == "" {
		ns = o.Ns()
	}
	// The cluster is opened again for this look-up only: nothing is held
	// while the editor runs.
	sess, err := o.openResourceSession(ctx)
	if err != nil {
		return "", err
	}
	_, merr := sess.Mapper().ResourceFor(ref.GVK)
	if err := sess.Close(ctx); err != nil {
		return "", err
	}
	if merr != nil {
		return fmt.Sprintf("The edited file had a syntax error: resource mapping not found for name: %q namespace: %q from \"edited-file\": %v\nensure CRDs are installed first", ref.Name, ns, plainError(merr)), nil
	}
	return fmt.Sprintf("The edited file had a syntax error: the %s %q can only be written through its owner's %s subresource", ref.GVK.Kind, ref.Name, ref.GVK.Kind), nil
}

// readSubresource reads the subresource sub of t in a session of its own,
// closed before the editor starts.
func (o *EditOptions) readSubresource(ctx context.Context, t gotObject, sub string) (map[string]any, error) {
	sess, err := o.openResourceSession(ctx)
	if err != nil {
		return nil, err
	}
	sc, err := subresourceClient(sess.Cluster)
	if err != nil {
		_ = sess.Close(ctx)
		return nil, err
	}
	md := printer.Map(t.obj, "metadata")
	obj, err := sc.GetSubresource(ctx, t.res.GVK, printer.Str(md, "namespace"), printer.Str(md, "name"), sub)
	if cerr := sess.Close(ctx); err == nil {
		err = cerr
	}
	return obj, err
}
