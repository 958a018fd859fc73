package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/konverge/konverge/apply"
	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/internal/cli/flags"
	"github.com/konverge/konverge/internal/printer"
	"github.com/konverge/konverge/merge"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

// newSetCmd is konverge set, whose subcommands are listed in commands.go.
func newSetCmd(g *Globals) *cobra.Command {
	return &cobra.Command{
		Use:   "set SUBCOMMAND",
		Short: "Change one aspect of objects: images, resources, env, selector, service account",
		Long: `Change one aspect of objects, as kubectl set does. These commands change a
field of the live object with a strategic merge patch (or, with --local, of the
objects of -f files, printed without a cluster); the last-applied configuration
is left as it is.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			fmt.Fprint(g.ErrOut, cmd.UsageString())
			return &ExitError{Code: 1}
		},
	}
}

// setFlags are the flags every set subcommand shares, and the run that
// reads the objects, changes them and writes or prints them, as kubectl's
// set commands do.
type setFlags struct {
	g *Globals
	flags.PrintFlags
	flags.FilenameFlags
	Local        bool
	All          bool
	Selector     string
	DryRun       string
	FieldManager string

	// op is what the result line says ("image updated").
	op string
	// patchError wraps an error of the patch ("failed to patch image
	// update to pod template: %v").
	patchError string
	// writeUnchanged sends and prints objects the change left as they
	// were (set serviceaccount and selector do; the others skip them).
	writeUnchanged bool
	// stopOnError ends the command at the first object that cannot be
	// changed (set selector).
	stopOnError bool
}

func (s *setFlags) addFlags(cmd *cobra.Command, what string, selector bool) {
	fs := cmd.Flags()
	s.PrintFlags.AddFlags(cmd, "Output format. One of: (json, yaml, name, go-template, go-template-file, template, templatefile, jsonpath, jsonpath-as-json, jsonpath-file, kyaml).")
	s.FilenameFlags.AddFlags(fs, "the objects to change")
	fs.BoolVar(&s.All, "all", false, "Act on every object of the given types in the namespace")
	if selector {
		fs.StringVarP(&s.Selector, "selector", "l", "", "Selector (label query) to filter on, supports '=', '==', '!=', 'in', 'notin'.(e.g. -l key1=value1,key2=value2). Matching objects must satisfy all of the specified label constraints.")
	}
	fs.BoolVar(&s.Local, "local", false, "If true, set "+what+" will NOT contact api-server but run locally.")
	flags.DryRun(fs, &s.DryRun)
	flags.FieldManager(fs, &s.FieldManager, managerSet)
}

// mutateFunc changes obj (a copy) in place.
type mutateFunc func(obj map[string]any) error

// check validates the flags shared by every set command.
func (s *setFlags) check() (apply.DryRun, printer.ObjectPrinter, error) {
	dry, err := flags.ParseDryRun(s.DryRun)
	if err != nil {
		return "", nil, err
	}
	if s.Local && dry == apply.DryRunServer {
		return "", nil, errors.New("cannot specify --local and --dry-run=server - did you mean --dry-run=client?")
	}
	op := ""
	if s.Output == "" {
		op = s.op
		switch dry {
		case apply.DryRunClient:
			op += " (dry run)"
		case apply.DryRunServer:
			op += " (server dry run)"
		}
	}
	out := s.Output
	if out == "" {
		s.Output = "name"
	}
	p, err := s.PrintFlags.ToPrinter(createFormats, false, op)
	s.Output = out
	if err != nil {
		return "", nil, err
	}
	return dry, p, nil
}

// run reads the objects of resArgs or -f, applies mutate to each, and
// prints them (--local, --dry-run=client) or patches them and prints
// what the cluster stored. It returns the command's exit error.
func (s *setFlags) run(ctx context.Context, resArgs []string, dry apply.DryRun, p printer.ObjectPrinter, mutate mutateFunc) error {
	g := s.g
	targets, sess, errs := s.targets(ctx, resArgs)
	if sess != nil {
		defer sess.Close(ctx)
	}
	for _, t := range targets {
		after := value.DeepCopyObject(t.obj)
		if err := mutate(after); err != nil {
			if s.stopOnError {
				errs = append(errs, err)
				break
			}
			errs = append(errs, fmt.Errorf("%s %v", objectRef(t.res, printer.Str(t.obj, "metadata", "name")), err))
			continue
		}
		if !s.writeUnchanged && value.Equal(after, t.obj) {
			continue
		}
		if s.Local || dry == apply.DryRunClient {
			if err := p.PrintObject(g.Out, asTyped(after)); err != nil {
				errs = append(errs, err)
			}
			continue
		}
		got, err := s.patch(ctx, sess, t, after, dry)
		if err != nil {
			if s.patchError != "" {
				err = fmt.Errorf(s.patchError, err)
			}
			errs = append(errs, err)
			continue
		}
		if err := p.PrintObject(g.Out, asTyped(got)); err != nil {
			errs = append(errs, err)
		}
	}
	if sess != nil {
		if err := sess.Close(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return reportErrors(g.ErrOut, errs)
}

// targets reads the objects to change: those of -f (as the files hold
// them with --local, else as the cluster does), or of resArgs.
func (s *setFlags) targets(ctx context.Context, resArgs []string) ([]gotObject, *Session, []error) {
	g := s.g
	s.FilenameFlags.Warnings = g.ErrOut
	if s.Local {
		if !s.FilenameFlags.Given() {
			return nil, nil, []error{errors.New("one or more resources must be specified as <resource> <name> or <resource>/<name>")}
		}
		objs, err := s.FilenameFlags.Read(ctx, g.In)
		if err != nil {
			return nil, nil, []error{err}
		}
		var out []gotObject
		for _, mo := range objs {
			gvk := schema.ParseGVK(printer.Str(mo.Obj, "apiVersion"), printer.Str(mo.Obj, "kind"))
			out = append(out, gotObject{res: cluster.Resource{GVK: gvk, Strategic: true}, obj: mo.Obj})
		}
		return out, nil, nil
	}
	sess, err := g.openResourceSession(ctx)
	if err != nil {
		return nil, nil, []error{err}
	}
	targets, errs := selectTargets(ctx, g, sess, s.FilenameFlags, resArgs, s.Selector, s.All)
	return targets, sess, errs
}

// patch sends the change from t.obj to after as kubectl does: a
// strategic merge patch (a JSON merge patch for custom resources).
func (s *setFlags) patch(ctx context.Context, sess *Session, t gotObject, after map[string]any, dry apply.DryRun) (map[string]any, error) {
	sch := sess.Mapper().Schema(t.res.GVK)
	p, err := merge.ThreeWay(t.obj, after, t.obj, sch, merge.Options{})
	if err != nil {
		return nil, err
	}
	b, err := value.Encode(p)
	if err != nil {
		return nil, err
	}
	pt := cluster.StrategicMergePatchType
	if !t.res.Strategic {
		pt = cluster.MergePatchType
	}
	opts := []cluster.PatchOption{cluster.FieldOwner(s.FieldManager)}
	if dry == apply.DryRunServer {
		opts = append(opts, cluster.DryRunAll)
	}
	md := printer.Map(t.obj, "metadata")
	return sess.Cluster.Patch(ctx, t.res.GVK, printer.Str(md, "namespace"), printer.Str(md, "name"), pt, b, opts...)
}

// podSpecPath returns where the pod spec of a kind is: spec.template.spec
// for workloads, spec for a Pod, nil for kinds without one.
func podSpecPath(kind string) []string {
	switch kind {
	case "Pod":
		return []string{"spec"}
	case "Deployment", "ReplicaSet", "DaemonSet", "StatefulSet", "ReplicationController", "Job":
		return []string{"spec", "template", "spec"}
	case "CronJob":
		return []string{"spec", "jobTemplate", "spec", "template", "spec"}
	}
	return nil
}

// podSpecOf returns the pod spec of obj, creating the maps on its path,
// or kubectl's error for kinds without one.
func podSpecOf(obj map[string]any) (map[string]any, error) {
	kind := printer.Str(obj, "kind")
	p := podSpecPath(kind)
	if p == nil {
		version := printer.Str(obj, "apiVersion")
		if _, v, ok := strings.Cut(version, "/"); ok {
			version = v
		}
		return nil, fmt.Errorf("the object is not a pod or does not have a pod template: *%s.%s", version, kind)
	}
	cur := obj
	for _, k := range p {
		next, ok := cur[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			cur[k] = next
		}
		cur = next
	}
	return cur, nil
}

// containersOf returns the containers (maps) of a pod spec's list.
func containersOf(spec map[string]any, list string) []map[string]any {
	var out []map[string]any
	for _, c := range printer.List(spec, list) {
		if m, ok := c.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// selectContainerName reports whether kubectl set's --containers
// selector picks a container name: "*" picks every one, a selector without
// "*" the one name. Otherwise each piece between stars is searched for in
// turn, from where the piece before it was found (an offset that kubectl
// counts from the previous search's start, not the name's: its
// arithmetic, kept), and a selector that does not end in "*" needs its
// last piece at the end of the name.
func selectContainerName(name, selector string) bool {
	pieces := strings.Split(selector, "*")
	switch {
	case selector == "*":
		return true
	case len(pieces) == 1:
		return name == selector
	}
	from := 0
	for i, piece := range pieces {
		if piece == "" {
			continue
		}
		at := strings.Index(name[from:], piece)
		if at < from || (i == len(pieces)-1 && at+len(piece) != len(name)) {
			return false
		}
		from = at
	}
	return true
}

// resourcesAndPairs splits kubectl set's arguments: resources first, then
// KEY=VALUE or KEY- pairs.
func resourcesAndPairs(args []string, pairType string) (resources, pairs []string, err error) {
	found := false
	for _, s := range args {
		pair := (strings.Contains(s, "=") && s[0] != '=') || (strings.HasSuffix(s, "-") && s != "-")
		switch {
		case pair:
			found = true
			pairs = append(pairs, s)
		case found:
			return nil, nil, fmt.Errorf("all resources must be specified before %s changes: %s", pairType, s)
		default:
			resources = append(resources, s)
		}
	}
	return resources, pairs, nil
}
