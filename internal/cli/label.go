package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/konverge/konverge/apply"
	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/internal/cli/flags"
	"github.com/konverge/konverge/internal/printer"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

// LabelOptions are the flags of konverge label and konverge annotate,
// which differ only in the metadata field they change.
type LabelOptions struct {
	*Globals
	flags.FilenameFlags
	Overwrite       bool
	All             bool
	Selector        string
	ResourceVersion string
	FieldManager    string
	flags.PrintFlags
	DryRun string
	Local  bool
	List   bool
	// field is "labels" or "annotations".
	field string
}

// NewLabelCmd returns the label command, or the annotate command when
// o's field is "annotations".
func NewLabelCmd(o *LabelOptions) *cobra.Command {
	use, short, example := "label", "Update the labels on a resource",
		"  konverge label deployment nginx-deployment tier=web\n  konverge label --overwrite deploy/nginx-deployment tier=backend\n  konverge label deploy nginx-deployment tier-"
	if o.field == "annotations" {
		use, short, example = "annotate", "Update the annotations on a resource",
			"  konverge annotate deployment nginx-deployment description='my frontend'\n  konverge annotate deploy/nginx-deployment description-"
	}
	cmd := &cobra.Command{
		Use:     use + " [--overwrite] (-f FILENAME | TYPE NAME) KEY_1=VAL_1 ... KEY_N=VAL_N [--resource-version=version]",
		Short:   short,
		Example: example,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.complete(cmd)
			return o.Run(cmd.Context(), args)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.Overwrite, "overwrite", false, "If true, allow "+o.field+" to be overwritten, otherwise reject "+o.field+" updates that overwrite existing "+o.field+".")
	f.BoolVar(&o.All, "all", false, "Act on every object of the given types in the namespace")
	f.StringVarP(&o.Selector, "selector", "l", "", "Selector (label query) to filter on, supports '=', '==', '!=', 'in', 'notin'.(e.g. -l key1=value1,key2=value2).")
	f.StringVar(&o.ResourceVersion, "resource-version", "", "If non-empty, the "+strings.TrimSuffix(o.field, "s")+" update will only succeed if this is the current resource-version for the object. Only valid when specifying a single resource.")
	o.FilenameFlags.AddFlags(f, "the objects whose "+o.field+" to change")
	o.PrintFlags.AddFlags(cmd, "Output format. One of: (json, yaml, name, go-template, go-template-file, template, templatefile, jsonpath, jsonpath-as-json, jsonpath-file, kyaml).")
	flags.DryRun(f, &o.DryRun)
	f.BoolVar(&o.Local, "local", false, "If true, "+use+" will NOT contact api-server but run locally.")
	f.BoolVar(&o.List, "list", false, "If true, display the "+o.field+" for a given resource.")
	manager := managerLabel
	if o.field == "annotations" {
		manager = managerAnnotate
	}
	flags.FieldManager(f, &o.FieldManager, manager)
	return cmd
}

var labelValueRE = regexp.MustCompile(`^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`)

// splitPairs separates resource arguments from KEY=VALUE and KEY- ones, as
// kubectl's GetResourcesAndPairs.
func splitPairs(args []string, what string) (resources, pairs []string, err error) {
	for _, s := range args {
		isPair := (strings.Contains(s, "=") && s[0] != '=') || (strings.HasSuffix(s, "-") && s != "-")
		switch {
		case isPair:
			pairs = append(pairs, s)
		case len(pairs) > 0:
			return nil, nil, fmt.Errorf("all resources must be specified before %s changes: %s", what, s)
		default:
			resources = append(resources, s)
		}
	}
	return resources, pairs, nil
}

// parsePairs reads KEY=VALUE (set) and KEY- (remove) arguments.
func (o *LabelOptions) parsePairs(pairs []string) (map[string]string, []string, error) {
	set := map[string]string{}
	var remove []string
	kind := strings.TrimSuffix(o.field, "s")
	for _, s := range pairs {
		switch {
		case strings.Contains(s, "="):
			var k, v string
			if o.field == "labels" {
				parts := strings.Split(s, "=")
				if len(parts) != 2 {
					return nil, nil, fmt.Errorf("invalid label spec: %v", s)
				}
				k, v = parts[0], parts[1]
				if len(v) > 63 || !labelValueRE.MatchString(v) {
					return nil, nil, fmt.Errorf("invalid label value: %q: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')", s)
				}
			} else {
				parts := strings.SplitN(s, "=", 2)
				if parts[0] == "" {
					return nil, nil, fmt.Errorf("invalid annotation spec: %v", s)
				}
				k, v = parts[0], parts[1]
			}
			set[k] = v
		case strings.HasSuffix(s, "-"):
			remove = append(remove, strings.TrimSuffix(s, "-"))
		default:
			return nil, nil, fmt.Errorf("unknown %s spec: %v", kind, s)
		}
	}
	for _, r := range remove {
		if _, ok := set[r]; ok {
			return nil, nil, fmt.Errorf("can not both modify and remove %s in the same command", map[string]string{"labels": "a label", "annotations": "an annotation"}[o.field])
		}
	}
	if len(set) == 0 && len(remove) == 0 && !o.List {
		return nil, nil, fmt.Errorf("at least one %s update is required", kind)
	}
	return set, remove, nil
}

// Run changes the labels or annotations of the objects args name.
func (o *LabelOptions) Run(ctx context.Context, args []string) error {
	kind := strings.TrimSuffix(o.field, "s")
	resArgs, pairs, err := splitPairs(args, kind)
	if err != nil {
		return failOne(o.ErrOut, err)
	}
	set, remove, err := o.parsePairs(pairs)
	if err != nil {
		return failOne(o.ErrOut, err)
	}
	dry, err := o.checkFlags(resArgs)
	if err != nil {
		return failOne(o.ErrOut, err)
	}
	var targets []gotObject
	var errs []error
	var sess *Session
	if o.Local {
		if targets, err = o.localTargets(ctx); err != nil {
			return fail(o.ErrOut, 1, err)
		}
	} else {
		sess, err = o.openResourceSession(ctx)
		if err != nil {
			return failOne(o.ErrOut, err)
		}
		defer sess.Close(ctx)
		targets, errs = selectTargets(ctx, o.Globals, sess, o.FilenameFlags, resArgs, o.Selector, o.All)
	}
	if len(targets) == 0 && len(errs) == 0 {
		if len(resArgs) > 0 && (o.All || o.Selector != "") {
			fmt.Fprintf(o.ErrOut, "No resources found in %s namespace.\n", o.Ns())
			return nil
		}
		return failOne(o.ErrOut, fmt.Errorf("one or more resources must be specified as <resource> <name> or <resource>/<name>"))
	}
	if o.ResourceVersion != "" && len(targets) > 1 {
		return failOne(o.ErrOut, fmt.Errorf("--resource-version may only be used with a single resource"))
	}
	for _, t := range targets {
		err, fatal := o.labelOne(ctx, sess, t, set, remove, dry)
		if fatal != nil {
			return failOne(o.ErrOut, fatal)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return reportErrors(o.ErrOut, errs)
}

// checkFlags refuses the flags that do not go together and returns
// --dry-run.
func (o *LabelOptions) checkFlags(resArgs []string) (apply.DryRun, error) {
	if o.List && o.Output != "" {
		return apply.DryRunNone, fmt.Errorf("--list and --output may not be specified together")
	}
	if o.All && o.Selector != "" {
		return apply.DryRunNone, fmt.Errorf("cannot set --all and --selector at the same time")
	}
	dry, err := flags.ParseDryRun(o.DryRun)
	if err != nil || !o.Local {
		return dry, err
	}
	switch {
	case dry == apply.DryRunServer:
		return apply.DryRunNone, fmt.Errorf("cannot specify --local and --dry-run=server - did you mean --dry-run=client?")
	case len(resArgs) > 0:
		return apply.DryRunNone, fmt.Errorf("can only use local files by -f %s or --filename=%s when --local=true is set", o.localExample("yaml"), o.localExample("json"))
	case !o.FilenameFlags.Given():
		return apply.DryRunNone, fmt.Errorf("one or more files must be specified as -f %s or --filename=%s", o.localExample("yaml"), o.localExample("json"))
	}
	return dry, nil
}

// localTargets are the objects of the -f files, for --local.
func (o *LabelOptions) localTargets(ctx context.Context) ([]gotObject, error) {
	objs, err := o.FilenameFlags.Read(ctx, o.In)
	if err != nil {
		return nil, err
	}
	var targets []gotObject
	for _, mo := range objs {
		gvk := schema.ParseGVK(printer.Str(mo.Obj, "apiVersion"), printer.Str(mo.Obj, "kind"))
		targets = append(targets, gotObject{res: cluster.Resource{GVK: gvk, Strategic: true}, obj: mo.Obj})
	}
	return targets, nil
}

// labelOne changes (or lists) the labels or annotations of one object and
// prints it. err is this object's failure; fatal ends the command.
func (o *LabelOptions) labelOne(ctx context.Context, sess *Session, t gotObject, set map[string]string, remove []string, dry apply.DryRun) (err, fatal error) {
	md := printer.Map(t.obj, "metadata")
	cur := printer.StringMap(md, o.field)
	if !o.Overwrite {
		if err := o.checkOverwrites(cur, set); err != nil {
			return err, nil
		}
	}
	change, added, removed := o.changes(cur, set, remove)
	after := value.DeepCopyObject(t.obj)
	applyMetadataChange(after, o.field, change)
	if o.List {
		for k, v := range printer.StringMap(after, "metadata", o.field) {
			fmt.Fprintf(o.Out, "%s=%s\n", k, v)
		}
		return nil, nil
	}
	local := o.Local || dry == apply.DryRunClient
	if !local && (len(change) > 0 || o.ResourceVersion != "") {
		pm := map[string]any{o.field: change}
		if o.ResourceVersion != "" {
			pm["resourceVersion"] = o.ResourceVersion
		}
		b, _ := json.Marshal(map[string]any{"metadata": pm})
		popts := []cluster.PatchOption{cluster.FieldOwner(o.FieldManager)}
		if dry == apply.DryRunServer {
			popts = append(popts, cluster.DryRunAll)
		}
		if _, err := sess.Cluster.Patch(ctx, t.res.GVK, printer.Str(md, "namespace"), printer.Str(md, "name"), cluster.MergePatchType, b, popts...); err != nil {
			return err, nil
		}
	}
	pf := o.PrintFlags
	msg := ""
	if pf.Output == "" {
		pf.Output = "name"
		msg = o.message(added, removed, dry)
	}
	p, err := pf.ToPrinter(createFormats, false, msg)
	if err != nil {
		return nil, err
	}
	return p.PrintObject(o.Out, after), nil
}

// changes is the merge patch of the object's labels or annotations (nil
// removes a key) and how many keys it adds or changes and removes. A label
// to remove that the object does not have is reported on the way.
func (o *LabelOptions) changes(cur, set map[string]string, remove []string) (change map[string]any, added, removed int) {
	change = map[string]any{}
	for _, k := range labelKeys(set) {
		if v, ok := cur[k]; !ok || v != set[k] {
			change[k] = set[k]
			added++
		}
	}
	for _, k := range remove {
		if _, ok := cur[k]; ok {
			change[k] = nil
			removed++
		} else if o.field == "labels" {
			fmt.Fprintf(o.Out, "label %q not found.\n", k)
		}
	}
	return change, added, removed
}

// applyMetadataChange applies change to obj's metadata field (labels or
// annotations), leaving out the field when it ends up empty.
func applyMetadataChange(obj map[string]any, field string, change map[string]any) {
	if len(change) == 0 {
		return
	}
	md, _ := obj["metadata"].(map[string]any)
	m, _ := md[field].(map[string]any)
	if m == nil {
		m = map[string]any{}
	}
	for k, v := range change {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	if len(m) == 0 {
		delete(md, field)
	} else {
		md[field] = m
	}
}

// message is kubectl's verb for what label or annotate did to an object.
func (o *LabelOptions) message(added, removed int, dry apply.DryRun) string {
	msg := "annotated"
	if o.field == "labels" {
		switch {
		case added > 0 && removed > 0:
			msg = "modified"
		case added > 0:
			msg = "labeled"
		case removed > 0:
			msg = "unlabeled"
		default:
			msg = "not labeled"
		}
	}
	switch dry {
	case apply.DryRunClient:
		msg += " (dry run)"
	case apply.DryRunServer:
		msg += " (server dry run)"
	}
	return msg
}

// localExample is the file kubectl's --local messages name.
func (o *LabelOptions) localExample(ext string) string {
	if o.field == "labels" {
		return "pod." + ext
	}
	return "rsrc." + ext
}

// checkOverwrites is kubectl's refusal to change an existing value
// without --overwrite.
func (o *LabelOptions) checkOverwrites(cur, set map[string]string) error {
	var msgs []string
	for _, k := range labelKeys(set) {
		if v, ok := cur[k]; ok && v != set[k] {
			if o.field == "annotations" && k == "kubernetes.io/change-cause" {
				continue
			}
			if o.field == "labels" {
				msgs = append(msgs, fmt.Sprintf("'%s' already has a value (%s), and --overwrite is false", k, v))
			} else {
				msgs = append(msgs, fmt.Sprintf("'%s' already has a value (%s)", k, v))
			}
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	if o.field == "annotations" {
		return fmt.Errorf("--overwrite is false but found the following declared annotation(s): %s", strings.Join(msgs, "; "))
	}
	if len(msgs) == 1 {
		return fmt.Errorf("%s", msgs[0])
	}
	return fmt.Errorf("[%s]", strings.Join(msgs, ", "))
}

func labelKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
