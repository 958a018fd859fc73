package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/konverge/konverge/apply"
	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/internal/cli/flags"
	"github.com/konverge/konverge/internal/printer"
	"github.com/konverge/konverge/merge"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

// PatchOptions are the flags of konverge patch.
type PatchOptions struct {
	*Globals
	flags.FilenameFlags
	Patch        string
	PatchFile    string
	Type         string
	FieldManager string
	Subresource  string
	flags.PrintFlags
	DryRun string
}

// NewPatchCmd returns the patch command.
func NewPatchCmd(o *PatchOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "patch (-f FILENAME | TYPE NAME) [-p PATCH|--patch-file FILE]",
		Short: "Change fields of objects with a patch",
		Long: `Change fields of live objects with a patch: a strategic merge patch (the default;
built-in kinds only), a JSON merge patch or a JSON patch (--type). The patch is JSON or YAML.`,
		Example: `  konverge patch deployment nginx-deployment -p '{"spec":{"replicas":2}}'
  konverge patch deploy/nginx-deployment --type=json -p '[{"op":"replace","path":"/spec/replicas","value":4}]'`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.complete(cmd)
			return o.Run(cmd.Context(), args)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.Patch, "patch", "p", "", "The patch, as JSON or YAML.")
	f.StringVar(&o.PatchFile, "patch-file", "", "Read the patch from this file.")
	f.StringVar(&o.Type, "type", "strategic", "The type of patch being provided; one of [json merge strategic]")
	o.FilenameFlags.AddFlags(f, "the objects to patch")
	o.PrintFlags.AddFlags(cmd, "Output format. One of: (json, yaml, name, go-template, go-template-file, template, templatefile, jsonpath, jsonpath-as-json, jsonpath-file, kyaml).")
	flags.DryRun(f, &o.DryRun)
	flags.FieldManager(f, &o.FieldManager, managerPatch)
	f.StringVar(&o.Subresource, "subresource", "", "If specified, patch will operate on the subresource of the requested object. Must be one of [status scale]. This flag is beta and may change in the future.")
	return cmd
}

// patchLocally applies a patch to obj without a cluster
// (--dry-run=client).
func patchLocally(obj map[string]any, pt cluster.PatchType, patch []byte, sch *schema.Type) (map[string]any, error) {
	switch pt {
	case cluster.JSONPatchType:
		return merge.JSONPatch(obj, patch)
	}
	p, err := value.DecodeObject(patch)
	if err != nil {
		return nil, err
	}
	if pt == cluster.MergePatchType {
		return merge.MergePatch(value.DeepCopyObject(obj), p), nil
	}
	return merge.Apply(obj, p, sch)
}

// Run patches the object args (or -f) name.
func (o *PatchOptions) Run(ctx context.Context, args []string) error {
	var pt cluster.PatchType
	switch o.Type {
	case "strategic":
		pt = cluster.StrategicMergePatchType
	case "merge":
		pt = cluster.MergePatchType
	case "json":
		pt = cluster.JSONPatchType
	default:
		return failOne(o.ErrOut, fmt.Errorf("--type must be one of [json merge strategic], not %q", o.Type))
	}
	dry, err := flags.ParseDryRun(o.DryRun)
	if err != nil {
		return failOne(o.ErrOut, err)
	}
	if o.Patch != "" && o.PatchFile != "" {
		return failOne(o.ErrOut, fmt.Errorf("cannot specify --patch and --patch-file together"))
	}
	text := o.Patch
	if o.PatchFile != "" {
		b, err := os.ReadFile(o.PatchFile)
		if err != nil {
			return failOne(o.ErrOut, fmt.Errorf("unable to read patch file: %w", err))
		}
		text = string(b)
	}
	if text == "" {
		return failOne(o.ErrOut, fmt.Errorf("must specify --patch or --patch-file containing the contents of the patch"))
	}
	patch, err := yaml.YAMLToJSON([]byte(text))
	if err != nil {
		return failOne(o.ErrOut, fmt.Errorf("unable to parse %q: %w", text, err))
	}
	if _, err := value.Decode(patch); err != nil {
		return failOne(o.ErrOut, fmt.Errorf("unable to parse %q: %w", text, err))
	}
	sess, err := o.openResourceSession(ctx)
	if err != nil {
		return failOne(o.ErrOut, err)
	}
	defer sess.Close(ctx)
	targets, errs := selectTargets(ctx, o.Globals, sess, o.FilenameFlags, args, "", false)
	if len(targets) == 0 && len(errs) == 0 {
		return failOne(o.ErrOut, fmt.Errorf("no objects passed to patch"))
	}
	for _, t := range targets {
		md := printer.Map(t.obj, "metadata")
		ref := objectRef(t.res, printer.Str(md, "name"))
		if pt == cluster.StrategicMergePatchType && !t.res.Strategic {
			errs = append(errs, &cluster.StatusError{Code: 415, Reason: cluster.ReasonUnsupportedMedia,
				Message: "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"})
			continue
		}
		var after map[string]any
		changed := true
		if dry == apply.DryRunClient {
			after, err = patchLocally(t.obj, pt, patch, sess.Mapper().Schema(t.res.GVK))
			changed = err == nil && !value.Equal(after, t.obj)
		} else {
			popts := []cluster.PatchOption{cluster.FieldOwner(o.FieldManager), cluster.Subresource(o.Subresource)}
			if dry == apply.DryRunServer {
				popts = append(popts, cluster.DryRunAll)
			}
			after, err = sess.Cluster.Patch(ctx, t.res.GVK, printer.Str(md, "namespace"), printer.Str(md, "name"), pt, patch, popts...)
			if err == nil && dry != apply.DryRunServer {
				changed = printer.Str(after, "metadata", "resourceVersion") != printer.Str(md, "resourceVersion")
			}
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		_ = ref
		op := "patched"
		if !changed {
			op = "patched (no change)"
		}
		switch {
		case dry == apply.DryRunClient:
			op += " (dry run)"
		case dry == apply.DryRunServer:
			op += " (server dry run)"
		}
		pf := o.PrintFlags
		if pf.Output == "" {
			pf.Output = "name"
		} else {
			op = ""
		}
		p, err := pf.ToPrinter(createFormats, false, op)
		if err != nil {
			return failOne(o.ErrOut, err)
		}
		if err := p.PrintObject(o.Out, after); err != nil {
			errs = append(errs, err)
		}
	}
	return reportErrors(o.ErrOut, errs)
}
