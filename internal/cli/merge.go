package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/konverge/konverge/lastapplied"
	"github.com/konverge/konverge/manifest"
	"github.com/konverge/konverge/merge"
	"github.com/konverge/konverge/schema"
)

// MergeOptions are the flags of konverge merge.
type MergeOptions struct {
	Streams
	LastApplied string
	Config      string
	Live        string
	Output      string
	Patch       bool
	Overwrite   bool
}

// NewMergeCmd returns the merge command.
func NewMergeCmd(o *MergeOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "merge --config FILE --live FILE [--last-applied FILE]",
		Short: "Print what kubectl apply would make of a live object",
		Long: `Merge one object the way client-side kubectl apply does and print the result:
the live object as the API server would leave it, with the last-applied
configuration annotation set to the config, or with --patch the strategic
merge patch that apply sends.

Without --last-applied, the last-applied configuration is read from the live
object's annotation, as kubectl does. Kinds that konverge has no schema for
(custom resources) are merged with a JSON merge patch, as kubectl does.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.Run(cmd.Context(), o.Out)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.LastApplied, "last-applied", "", "file with the configuration of the previous apply (default: the live object's annotation)")
	fs.StringVar(&o.Config, "config", "", "file with the configuration to apply (required)")
	fs.StringVar(&o.Live, "live", "", "file with the live object (required)")
	fs.StringVarP(&o.Output, "output", "o", "", "output format: yaml or json (default yaml; json for --patch)")
	fs.BoolVar(&o.Patch, "patch", false, "print the patch instead of the merged object")
	fs.BoolVar(&o.Overwrite, "overwrite", true, "let the config win over changes made to live since the last apply; with --overwrite=false such conflicts are errors")
	_ = cmd.MarkFlagRequired("config")
	_ = cmd.MarkFlagRequired("live")
	return cmd
}

// Run merges and prints.
func (o *MergeOptions) Run(ctx context.Context, out io.Writer) error {
	config, err := readConfigFile(ctx, o.Config, o.In)
	if err != nil {
		return err
	}
	live, err := readObjectFile(o.Live, o.In)
	if err != nil {
		return fmt.Errorf("--live %w", err)
	}
	var last map[string]any
	if o.LastApplied != "" {
		if last, err = readObjectFile(o.LastApplied, o.In); err != nil {
			return fmt.Errorf("--last-applied %w", err)
		}
	} else if last, err = lastapplied.Get(live); err != nil {
		return fmt.Errorf("--live %s: %w", o.Live, err)
	}
	res, err := mergeObject(last, config, live, !o.Overwrite)
	if err != nil {
		var fe *merge.FieldError
		if errors.As(err, &fe) {
			return fmt.Errorf("--config %s: %w", o.Config, err)
		}
		return err
	}
	if o.Patch {
		format := o.Output
		if format == "" {
			format = "json"
		}
		return printValue(out, res.patch, format)
	}
	return printValue(out, res.result, o.Output)
}

// readConfigFile reads the one object of the config as apply reads a
// manifest, so that what apply refuses (no kind, no apiVersion, no name) is
// refused here with apply's error, naming the file and the document.
func readConfigFile(ctx context.Context, path string, stdin io.Reader) (map[string]any, error) {
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("--config %w", err)
	}
	objs, err := manifest.Parse(ctx, path, data)
	if err != nil {
		return nil, err
	}
	if len(objs) != 1 {
		return nil, fmt.Errorf("--config %s: holds %d objects; merge takes exactly one", path, len(objs))
	}
	return objs[0].Obj, nil
}

type mergeResult struct {
	patch, result map[string]any
}

// mergeObject does what client-side kubectl apply does to one object: the
// config gets live's namespace if it names none, then carries its own
// last-applied annotation, and is merged three-way with the previous
// configuration and live.
func mergeObject(last, config, live map[string]any, detectConflicts bool) (mergeResult, error) {
	config = inheritNamespace(config, live)
	modified, err := lastapplied.Set(config)
	if err != nil {
		return mergeResult{}, err
	}
	apiVersion, _ := config["apiVersion"].(string)
	kind, _ := config["kind"].(string)
	t := schema.Builtin().Lookup(schema.ParseGVK(apiVersion, kind))
	var patch, result map[string]any
	if t == nil {
		patch, err = merge.ThreeWayJSONMerge(last, modified, live)
		if err != nil {
			return mergeResult{}, err
		}
		result = merge.MergePatch(live, patch)
	} else {
		patch, err = merge.ThreeWay(last, modified, live, t, merge.Options{DetectConflicts: detectConflicts})
		if err != nil {
			return mergeResult{}, err
		}
		result, err = merge.Apply(live, patch, t)
		if err != nil {
			return mergeResult{}, err
		}
	}
	return mergeResult{patch: patch, result: result}, nil
}

// inheritNamespace sets the config's namespace to live's when the config
// names none: kubectl fills in the namespace it applies to before it records
// the configuration.
func inheritNamespace(config, live map[string]any) map[string]any {
	lmd, _ := live["metadata"].(map[string]any)
	ns, _ := lmd["namespace"].(string)
	if ns == "" {
		return config
	}
	md, _ := config["metadata"].(map[string]any)
	if s, _ := md["namespace"].(string); s != "" {
		return config
	}
	out := make(map[string]any, len(config))
	for k, v := range config {
		out[k] = v
	}
	newMD := make(map[string]any, len(md)+1)
	for k, v := range md {
		newMD[k] = v
	}
	newMD["namespace"] = ns
	out["metadata"] = newMD
	return out
}
