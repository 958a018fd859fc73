package cli

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
)

// generator is one subcommand of create that builds an object from its
// flags: each create_*.go constructor fills one in, the object itself is
// made by package generate, and newGeneratorCmd does the rest the same way
// for all of them (the NAME argument, the shared flags, creating or
// printing the object).
type generator struct {
	use, short, example string
	aliases             []string
	// failure wraps the cluster's error in the generator's message
	// ("failed to create deployment: %v"); "" leaves it as it is.
	failure string
	// flags registers the generator's own flags, after the shared ones.
	flags func(cmd *cobra.Command)
	// build makes the object named name; command is what follows "--".
	build func(ctx context.Context, f *generatorFlags, name string, command []string) (runtime.Object, error)
}

// newGeneratorCmd is the command of gen.
func newGeneratorCmd(g *Globals, gen generator) *cobra.Command {
	f := &generatorFlags{g: g}
	cmd := &cobra.Command{
		Use:     gen.use,
		Aliases: gen.aliases,
		Short:   gen.short,
		Example: gen.example,
		RunE: func(cmd *cobra.Command, args []string) error {
			g.complete(cmd)
			name, err := f.oneName(args)
			if err != nil {
				return failOne(g.ErrOut, err)
			}
			obj, err := gen.build(cmd.Context(), f, name, args[1:])
			if err != nil {
				return failOne(g.ErrOut, err)
			}
			var wrap func(error) error
			if gen.failure != "" {
				wrap = wrapError(gen.failure)
			}
			return f.create(cmd.Context(), obj, wrap)
		},
	}
	f.addFlags(cmd, managerCreate)
	if gen.flags != nil {
		gen.flags(cmd)
	}
	return cmd
}

// wrapError returns a wrapper of the cluster's error in a generator's
// message, as kubectl prints it (the API error's text, without
// "Error from server").
func wrapError(format string) func(error) error {
	return func(err error) error { return fmt.Errorf(format, err) }
}

// mapStringString is a flag of "key=value" pairs separated by commas,
// as kubectl's --aggregation-rule.
type mapStringString struct {
	m           *map[string]string
	initialized bool
}

func newMapStringString(m *map[string]string) *mapStringString { return &mapStringString{m: m} }

func (f *mapStringString) String() string {
	if f == nil || f.m == nil {
		return ""
	}
	var pairs []string
	for k, v := range *f.m {
		pairs = append(pairs, k+"="+v)
	}
	sort.Strings(pairs)
	return strings.Join(pairs, ",")
}

func (f *mapStringString) Set(value string) error {
	if !f.initialized || *f.m == nil {
		*f.m = map[string]string{}
		f.initialized = true
	}
	for _, s := range strings.Split(value, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		k, v, ok := strings.Cut(s, "=")
		if !ok {
			return fmt.Errorf("malformed pair, expect string=string")
		}
		(*f.m)[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return nil
}

func (f *mapStringString) Type() string { return "mapStringString" }
