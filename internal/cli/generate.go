package cli

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/konverge/konverge/apply"
	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/internal/cli/flags"
	"github.com/konverge/konverge/internal/printer"
	"github.com/konverge/konverge/lastapplied"
	"github.com/konverge/konverge/merge"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

// The generators of kubectl create (configmap, secret, deployment, ...),
// run and expose build an object from flags, in the Go types of
// k8s.io/api as kubectl does, and then print it (--dry-run=client) or
// create it and print what the cluster stored. generatorFlags holds what
// they share; each generator is a small file of its own.

// createFormats are the -o values of kubectl's generators.
var createFormats = []string{"go-template", "go-template-file", "json", "jsonpath", "jsonpath-as-json", "jsonpath-file",
	"kyaml", "name", "template", "templatefile", "yaml"}

// generatorFlags are the flags every generator has.
type generatorFlags struct {
	g *Globals
	flags.PrintFlags
	DryRun       string
	FieldManager string
	Validate     string
	SaveConfig   bool

	// cmd is the command, for usage errors ("See 'konverge create
	// configmap -h'").
	cmd *cobra.Command
	// verb is what the result line says: "created", "exposed".
	verb string
}

// addFlags registers the shared flags with the command's field manager.
func (f *generatorFlags) addFlags(cmd *cobra.Command, manager string) {
	f.cmd = cmd
	if f.verb == "" {
		f.verb = "created"
	}
	fs := cmd.Flags()
	f.PrintFlags.AddFlags(cmd, "Output format. One of: (json, yaml, name, go-template, go-template-file, template, templatefile, jsonpath, jsonpath-as-json, jsonpath-file, kyaml).")
	fs.BoolVar(&f.SaveConfig, "save-config", false, "Write the object into its last-applied annotation, so that a later apply can compute its changes; without it the annotation is left as it is.")
	flags.Validate(fs, &f.Validate)
	flags.DryRun(fs, &f.DryRun)
	flags.FieldManager(fs, &f.FieldManager, manager)
}

// namespace is the namespace a generated object names: -n when given
// (kubectl's enforced namespace), else none, so that the object goes to
// the default namespace without saying so.
func (f *generatorFlags) namespace() string {
	if f.g.NamespaceSet {
		return f.g.Ns()
	}
	return ""
}

// usageError is kubectl's usage error: the message and where help is.
func (f *generatorFlags) usageError(format string, args ...any) error {
	return fmt.Errorf("%s\nSee '%s -h' for help and examples", fmt.Sprintf(format, args...), f.cmd.CommandPath())
}

// oneName returns the NAME argument (the arguments before "--").
func (f *generatorFlags) oneName(args []string) (string, error) {
	n := f.cmd.ArgsLenAtDash()
	if n == -1 {
		n = len(args)
	}
	if n != 1 {
		return "", f.usageError("exactly one NAME is required, got %d", n)
	}
	return args[0], nil
}

// resultPrinter returns the printer of -o for the result of the write, and
// whether one was asked for.
func (f *generatorFlags) resultPrinter(dry apply.DryRun) (printer.ObjectPrinter, error) {
	op := ""
	if f.Output == "" {
		op = f.verb
	}
	switch {
	case op == "":
	case dry == apply.DryRunClient:
		op += " (dry run)"
	case dry == apply.DryRunServer:
		op += " (server dry run)"
	}
	if f.Output == "" {
		f.Output = "name"
		defer func() { f.Output = "" }()
	}
	return f.PrintFlags.ToPrinter(createFormats, false, op)
}

// check validates the flags every generator reads before it builds.
func (f *generatorFlags) check() (apply.DryRun, printer.ObjectPrinter, error) {
	dry, err := flags.ParseDryRun(f.DryRun)
	if err != nil {
		return "", nil, err
	}
	if _, err := flags.FieldValidation(f.Validate); err != nil {
		return "", nil, err
	}
	p, err := f.resultPrinter(dry)
	if err != nil {
		return "", nil, err
	}
	return dry, p, nil
}

// create prints obj, or creates it and prints what the cluster stored.
// wrap, when not nil, turns the cluster's error into the generator's own
// ("failed to create configmap: ...").
func (f *generatorFlags) create(ctx context.Context, obj runtime.Object, wrap func(error) error) error {
	if _, _, err := f.check(); err != nil {
		return failOne(f.g.ErrOut, err)
	}
	if f.SaveConfig {
		if err := setTypedLastApplied(obj); err != nil {
			return failOne(f.g.ErrOut, err)
		}
	}
	m, err := toValue(obj)
	if err != nil {
		return failOne(f.g.ErrOut, err)
	}
	return f.createValue(ctx, m, wrap)
}

// createWithOverrides is create with --overrides: a JSON merge patch
// applied to the generated object first.
func (f *generatorFlags) createWithOverrides(ctx context.Context, obj runtime.Object, overrides string) error {
	m, err := toValue(obj)
	if err != nil {
		return failOne(f.g.ErrOut, err)
	}
	patch, err := value.DecodeObject([]byte(overrides))
	if err != nil {
		return failOne(f.g.ErrOut, fmt.Errorf("unable to parse the overrides: %w", err))
	}
	m = merge.MergePatch(m, patch)
	if _, _, err := f.check(); err != nil {
		return failOne(f.g.ErrOut, err)
	}
	return f.createValue(ctx, m, nil)
}

// createValue prints m (as its Go type prints), or creates it and prints
// what the cluster stored.
func (f *generatorFlags) createValue(ctx context.Context, m map[string]any, wrap func(error) error) error {
	dry, p, err := f.check()
	if err != nil {
		return failOne(f.g.ErrOut, err)
	}
	if dry == apply.DryRunClient {
		return f.print(p, asTyped(m))
	}
	sess, err := f.g.openSession(ctx)
	if err != nil {
		return failOne(f.g.ErrOut, err)
	}
	defer sess.Close(ctx)
	if m, err = f.write(ctx, sess, m, dry); err != nil {
		if wrap != nil {
			err = wrap(err)
		}
		return failOne(f.g.ErrOut, err)
	}
	if err := sess.Close(ctx); err != nil {
		return failOne(f.g.ErrOut, err)
	}
	if flags.StripsManagedFields(p) {
		// The typed form below hides the map from the stripper.
		m, _ = flags.StripManagedFields(m).(map[string]any)
	}
	return f.print(p, asTyped(m))
}

// write creates m (in the request's namespace when it names none) and
// returns what the cluster stored.
func (f *generatorFlags) write(ctx context.Context, sess *Session, m map[string]any, dry apply.DryRun) (map[string]any, error) {
	validation, _ := flags.FieldValidation(f.Validate)
	opts := []cluster.CreateOption{validation, cluster.FieldOwner(f.FieldManager)}
	if dry == apply.DryRunServer {
		opts = append(opts, cluster.DryRunAll)
	}
	if md, ok := m["metadata"].(map[string]any); ok && printer.Str(md, "namespace") == "" {
		res, err := sess.Mapper().ResourceFor(schema.ParseGVK(printer.Str(m, "apiVersion"), printer.Str(m, "kind")))
		if err == nil && res.Namespaced {
			md["namespace"] = f.g.Ns()
		}
	}
	return sess.Cluster.Create(ctx, m, opts...)
}

// print writes obj with p; a failure is the command's error.
func (f *generatorFlags) print(p printer.ObjectPrinter, obj any) error {
	if err := p.PrintObject(f.g.Out, obj); err != nil {
		return failOne(f.g.ErrOut, err)
	}
	return nil
}

// setTypedLastApplied sets the last-applied annotation of a typed object
// as kubectl's CreateApplyAnnotation does: the object's JSON, as its Go
// type encodes it, without the annotation.
func setTypedLastApplied(obj runtime.Object) error {
	acc, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	annots := acc.GetAnnotations()
	if annots == nil {
		annots = map[string]string{}
	}
	delete(annots, lastapplied.Annotation)
	acc.SetAnnotations(annots)
	b, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	annots[lastapplied.Annotation] = string(b) + "\n"
	acc.SetAnnotations(annots)
	return nil
}
