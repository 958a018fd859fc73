// Package flags holds the flags that konverge's commands share, as
// kubectl spells them: output (-o, --template), files (-f, -R, -k),
// --dry-run, --validate, --field-manager and --subresource, each with the
// parsing of its value. A command registers the ones it takes and reads
// them back; what it does with them is its own.
package flags

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/konverge/konverge/apply"
	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/internal/kustomize"
	"github.com/konverge/konverge/internal/printer"
	"github.com/konverge/konverge/manifest"
	"github.com/konverge/konverge/selector"
)

// PrintFlags are kubectl's output flags: -o/--output, --template and
// --allow-missing-template-keys.
type PrintFlags struct {
	Output           string
	Template         string
	AllowMissingKeys bool
	// ShowManagedFields is --show-managed-fields: without it, managed
	// fields are left out of json and yaml output, as kubectl does.
	ShowManagedFields bool
}

// AddFlags registers the flags; usage is the help of -o.
func (p *PrintFlags) AddFlags(cmd *cobra.Command, usage string) {
	f := cmd.Flags()
	f.StringVarP(&p.Output, "output", "o", "", usage)
	f.StringVar(&p.Template, "template", "", "Template string or path to template file to use when -o=go-template, -o=go-template-file. The template format is golang templates [http://golang.org/pkg/text/template/#pkg-overview].")
	f.BoolVar(&p.AllowMissingKeys, "allow-missing-template-keys", true, "For go-template and jsonpath output, print nothing for a missing field instead of failing.")
	f.BoolVar(&p.ShowManagedFields, "show-managed-fields", false, "If true, keep the managedFields when printing objects in JSON or YAML format.")
}

// ToPrinter returns the printer of -o among allowed formats; operation
// is what -o name appends ("created"), noHeaders is for custom columns.
func (p *PrintFlags) ToPrinter(allowed []string, noHeaders bool, operation string) (printer.ObjectPrinter, error) {
	op, err := printer.NewObjectPrinter(printer.OutputOptions{
		Output: p.Output, Template: p.Template, AllowMissingKeys: p.AllowMissingKeys,
		NoHeaders: noHeaders, Operation: operation,
	}, allowed)
	if err != nil {
		return nil, err
	}
	// kubectl leaves managedFields out of JSON, YAML and KYAML only; jsonpath and
	// templates see them.
	if p.ShowManagedFields || (p.Output != "json" && p.Output != "yaml" && p.Output != "kyaml") {
		return op, nil
	}
	return managedFieldsStripper{op}, nil
}

// StripsManagedFields reports whether p leaves managedFields out of the
// objects it prints (whose caller must then strip what p cannot see,
// such as the items of a raw List).
func StripsManagedFields(p printer.ObjectPrinter) bool {
	_, ok := p.(managedFieldsStripper)
	return ok
}

// managedFieldsStripper leaves metadata.managedFields out of what it
// prints, as kubectl does unless --show-managed-fields.
type managedFieldsStripper struct{ printer.ObjectPrinter }

func (m managedFieldsStripper) PrintObject(w io.Writer, obj any) error {
	return m.ObjectPrinter.PrintObject(w, StripManagedFields(obj))
}

// StripManagedFields returns obj (or a list's items) without
// metadata.managedFields, copying only what changes.
func StripManagedFields(obj any) any {
	m, ok := obj.(map[string]any)
	if !ok {
		return obj
	}
	if items, ok := m["items"].([]any); ok {
		out := make([]any, len(items))
		changed := false
		for i, it := range items {
			out[i] = StripManagedFields(it)
			if !changed {
				if a, ok := it.(map[string]any); ok && hasManagedFields(a) {
					changed = true
				}
			}
		}
		if !changed {
			return obj
		}
		cp := make(map[string]any, len(m))
		for k, v := range m {
			cp[k] = v
		}
		cp["items"] = out
		return cp
	}
	if !hasManagedFields(m) {
		return obj
	}
	md := m["metadata"].(map[string]any)
	cpMD := make(map[string]any, len(md))
	for k, v := range md {
		if k != "managedFields" {
			cpMD[k] = v
		}
	}
	cp := make(map[string]any, len(m))
	for k, v := range m {
		cp[k] = v
	}
	cp["metadata"] = cpMD
	return cp
}

func hasManagedFields(m map[string]any) bool {
	md, ok := m["metadata"].(map[string]any)
	if !ok {
		return false
	}
	_, ok = md["managedFields"]
	return ok
}

// FilenameFlags are kubectl's -f/--filename, -R/--recursive and
// -k/--kustomize.
type FilenameFlags struct {
	Filenames []string
	Recursive bool
	// Kustomize is the kustomization directory of -k.
	Kustomize string
	// Warnings receives the kustomize library's warnings (deprecated
	// fields); nil means the process's standard error.
	Warnings io.Writer
}

// AddFlags registers -f, -R and -k; usage says what the files hold ("the
// objects to delete").
func (f *FilenameFlags) AddFlags(fs *pflag.FlagSet, usage string) {
	fs.StringSliceVarP(&f.Filenames, "filename", "f", nil, "Manifest files, directories or URLs (- for standard input) with "+usage+".")
	fs.BoolVarP(&f.Recursive, "recursive", "R", false, "Read the directories of -f and their subdirectories.")
	fs.StringVarP(&f.Kustomize, "kustomize", "k", "", "Build a kustomization directory and use its objects (not with -f or -R).")
}

// Given reports whether -f or -k was given.
func (f *FilenameFlags) Given() bool { return len(f.Filenames) > 0 || f.Kustomize != "" }

// Read reads the objects of every -f path, or those the kustomization of
// -k builds (with the kustomize library, as kubectl -k does).
func (f *FilenameFlags) Read(ctx context.Context, stdin io.Reader) ([]manifest.Object, error) {
	if f.Kustomize != "" {
		if len(f.Filenames) > 0 || f.Recursive {
			return nil, errors.New("only one of -f or -k can be specified")
		}
		warn := f.Warnings
		if warn == nil {
			warn = os.Stderr
		}
		y, err := kustomize.Build(f.Kustomize, warn)
		if err != nil {
			return nil, err
		}
		return manifest.Parse(ctx, f.Kustomize, y)
	}
	return manifest.Read(ctx, f.Filenames, manifest.Options{Recursive: f.Recursive, Stdin: stdin})
}

// DryRun registers kubectl's --dry-run flag.
func DryRun(fs *pflag.FlagSet, p *string) {
	fs.StringVar(p, "dry-run", "none", `Must be "none", "server", or "client". If client strategy, only print the object that would be sent, without sending it. If server strategy, submit server-side request without persisting the resource.`)
	fs.Lookup("dry-run").NoOptDefVal = "unchanged"
}

// ParseDryRun reads a --dry-run value as kubectl's GetDryRunStrategy does.
func ParseDryRun(v string) (apply.DryRun, error) {
	switch v {
	case "", "none", "false":
		return apply.DryRunNone, nil
	case "client", "true":
		return apply.DryRunClient, nil
	case "server":
		return apply.DryRunServer, nil
	case "unchanged":
		//lint:ignore ST1005 kubectl's message, word for word (users and scripts match it)
		return "", errors.New(`--dry-run flag without a value was specified. A value must be set: "none", "server", or "client".`)
	}
	//lint:ignore ST1005 kubectl's message, word for word (users and scripts match it)
	return "", fmt.Errorf(`Invalid dry-run value (%s). Must be "none", "server", or "client".`, v)
}

// CheckSelector reports an invalid -l value before anything is read.
func CheckSelector(sel string) error {
	if sel == "" {
		return nil
	}
	if _, err := selector.ParseLabels(sel); err != nil {
		return err
	}
	return nil
}

// validateUsage is kubectl's help for --validate.
const validateUsage = `Must be one of: strict (or true), warn, ignore (or false). "true" or "strict" will use a schema to validate the input and fail the request if invalid. It will perform server side validation if ServerSideFieldValidation is enabled on the api-server, but will fall back to less reliable client-side validation if not. "warn" will warn about unknown or duplicate fields without blocking the request if server-side field validation is enabled on the API server, and behave as "ignore" otherwise. "false" or "ignore" will not perform any schema validation, silently dropping any unknown or duplicate fields.`

// Validate registers kubectl's --validate (default strict; alone,
// strict).
func Validate(fs *pflag.FlagSet, p *string) {
	fs.StringVar(p, "validate", "strict", validateUsage)
	fs.Lookup("validate").NoOptDefVal = "strict"
}

// FieldValidation is the fieldValidation a --validate value sends to the
// server: strict or true refuse unknown fields, warn reports them, ignore
// or false drops them silently.
func FieldValidation(v string) (cluster.FieldValidation, error) {
	switch v {
	case "strict", "true":
		return cluster.FieldValidationStrict, nil
	case "warn":
		return cluster.FieldValidationWarn, nil
	case "ignore", "false":
		return cluster.FieldValidationIgnore, nil
	}
	return "", fmt.Errorf(`invalid - validate option %q; must be one of: strict (or true), warn, ignore (or false)`, v)
}

// Subresource registers kubectl's --subresource.
func Subresource(fs *pflag.FlagSet, p *string, usage string) {
	fs.StringVar(p, "subresource", "", usage)
}

// CheckSubresource refuses what kubectl refuses.
func CheckSubresource(s string) error {
	switch s {
	case "", "status", "scale":
		return nil
	}
	return fmt.Errorf("invalid subresource value: %q. Must be one of [status scale]", s)
}

// FieldManager adds kubectl's --field-manager with the command's
// default manager. Commands that write take it and pass it to the cluster
// with cluster.FieldOwner.
func FieldManager(fs *pflag.FlagSet, p *string, def string) {
	fs.StringVar(p, "field-manager", def, "Name of the manager used to track field ownership.")
}
