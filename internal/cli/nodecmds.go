package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/konverge/konverge/apply"
	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/internal/cli/flags"
	"github.com/konverge/konverge/internal/printer"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

// The node commands of kubectl: cordon, uncordon and taint.

var nodeGVK = schema.GVK{Version: "v1", Kind: "Node"}

func newCordonCmd(g *Globals, cordon bool) *cobra.Command {
	use, short := "cordon NODE", "Keep new pods off a node (sets spec.unschedulable)"
	if !cordon {
		use, short = "uncordon NODE", "Let new pods onto a cordoned node again"
	}
	var selector, dryRun string
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCordon(cmd.Context(), g, cordon, args, selector, dryRun)
		},
	}
	cmd.Flags().StringVarP(&selector, "selector", "l", "", "Only the nodes whose labels match this selector (key=value, key!=value, key in (a,b))")
	flags.DryRun(cmd.Flags(), &dryRun)
	return cmd
}

// nodeTargets reads the nodes named, or those the selector picks.
func nodeTargets(ctx context.Context, sess *Session, args []string, selector string) ([]map[string]any, []error) {
	var out []map[string]any
	var errs []error
	if selector != "" {
		l, err := sess.Cluster.List(ctx, nodeGVK, cluster.MatchingLabels(selector))
		if err != nil {
			return nil, []error{err}
		}
		out = append(out, l.Items...)
		return out, nil
	}
	for _, a := range args {
		name := strings.TrimPrefix(strings.TrimPrefix(a, "node/"), "nodes/")
		n, err := sess.Cluster.Get(ctx, nodeGVK, "", name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, n)
	}
	return out, errs
}

func runCordon(ctx context.Context, g *Globals, cordon bool, args []string, selector, dryRun string) error {
	verb := "cordon"
	if !cordon {
		verb = "uncordon"
	}
	if len(args) == 0 && selector == "" {
		return failOne(g.ErrOut, fmt.Errorf("USAGE: %s NODE [flags]\nSee 'konverge %s -h' for help and examples", verb, verb))
	}
	dry, err := flags.ParseDryRun(dryRun)
	if err != nil {
		return failOne(g.ErrOut, err)
	}
	sess, err := g.openResourceSession(ctx)
	if err != nil {
		return failOne(g.ErrOut, err)
	}
	defer sess.Close(ctx)
	nodes, errs := nodeTargets(ctx, sess, args, selector)
	for _, n := range nodes {
		name := printer.Str(printer.Map(n, "metadata"), "name")
		if printer.Bool(n, "spec", "unschedulable") == cordon {
			fmt.Fprintf(g.Out, "node/%s already %sed%s\n", name, verb, dryRunSuffix(dry))
			continue
		}
		if dry != apply.DryRunClient {
			patch := `{"spec":{"unschedulable":true}}`
			if !cordon {
				patch = `{"spec":{"unschedulable":null}}`
			}
			var opts []cluster.PatchOption
			if dry == apply.DryRunServer {
				opts = append(opts, cluster.DryRunAll)
			}
			if _, err := sess.Cluster.Patch(ctx, nodeGVK, "", name, cluster.StrategicMergePatchType, []byte(patch), opts...); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		fmt.Fprintf(g.Out, "node/%s %sed%s\n", name, verb, dryRunSuffix(dry))
	}
	return reportErrors(g.ErrOut, errs)
}

func dryRunSuffix(dry apply.DryRun) string {
	switch dry {
	case apply.DryRunClient:
		return " (dry run)"
	case apply.DryRunServer:
		return " (server dry run)"
	}
	return ""
}

// taintSpec is one taint argument: key[=value]:effect to add, or
// key[:effect]- to remove.
type taintSpec struct {
	key, value, effect string
}

func (t taintSpec) object() map[string]any {
	m := map[string]any{"key": t.key, "effect": t.effect}
	if t.value != "" {
		m["value"] = t.value
	}
	return m
}

// parseTaints reads the taint arguments as kubectl does.
func parseTaints(specs []string) (add, remove []taintSpec, err error) {
	seen := map[string]bool{}
	for _, s := range specs {
		if strings.HasSuffix(s, "-") {
			body := strings.TrimSuffix(s, "-")
			key, effect, _ := strings.Cut(body, ":")
			if effect != "" {
				if err := validEffect(effect); err != nil {
					return nil, nil, err
				}
			}
			remove = append(remove, taintSpec{key: key, effect: effect})
			continue
		}
		kv, effect, ok := strings.Cut(s, ":")
		if !ok || effect == "" {
			return nil, nil, fmt.Errorf("invalid taint spec: %v", s)
		}
		if err := validEffect(effect); err != nil {
			return nil, nil, err
		}
		key, val, _ := strings.Cut(kv, "=")
		if errs := validation.IsQualifiedName(key); len(errs) > 0 {
			return nil, nil, fmt.Errorf("invalid taint spec: %v, %s", s, strings.Join(errs, "; "))
		}
		if val != "" {
			if errs := validation.IsValidLabelValue(val); len(errs) > 0 {
				return nil, nil, fmt.Errorf("invalid taint spec: %v, %s", s, strings.Join(errs, "; "))
			}
		}
		if seen[key+":"+effect] {
			return nil, nil, fmt.Errorf("duplicated taints with the same key and effect: %v", taintSpec{key: key, value: val, effect: effect}.object())
		}
		seen[key+":"+effect] = true
		add = append(add, taintSpec{key: key, value: val, effect: effect})
	}
	return add, remove, nil
}

func validEffect(e string) error {
	switch e {
	case "NoSchedule", "PreferNoSchedule", "NoExecute":
		return nil
	}
	return fmt.Errorf("invalid taint effect: %v, unsupported taint effect", e)
}

func newTaintCmd(g *Globals) *cobra.Command {
	var overwrite, all bool
	var selector, dryRun string
	cmd := &cobra.Command{
		Use:   "taint NODE NAME KEY_1=VAL_1:TAINT_EFFECT_1 ... KEY_N=VAL_N:TAINT_EFFECT_N",
		Short: "Add, change or remove the taints of nodes",
		Example: "  konverge taint nodes node-a dedicated=db:NoSchedule\n" +
			"  konverge taint nodes node-a dedicated:NoSchedule-\n  konverge taint nodes node-a dedicated-",
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTaint(cmd.Context(), g, args, selector, all, overwrite, dryRun)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&overwrite, "overwrite", false, "Replace a taint with the same key and effect instead of failing")
	f.BoolVar(&all, "all", false, "Act on every node")
	f.StringVarP(&selector, "selector", "l", "", "Only the nodes whose labels match this selector (key=value, key!=value, key in (a,b))")
	flags.DryRun(f, &dryRun)
	return cmd
}

func runTaint(ctx context.Context, g *Globals, args []string, selector string, all, overwrite bool, dryRun string) error {
	var names, specs []string
	if len(args) > 0 && strings.Contains(args[0], "/") {
		kind, name, _ := strings.Cut(args[0], "/")
		if kind != "node" && kind != "nodes" && kind != "no" {
			return failOne(g.ErrOut, fmt.Errorf("invalid resource type %s, only nodes are supported", kind))
		}
		names, specs = []string{name}, args[1:]
	} else if len(args) > 0 {
		if kind := args[0]; kind != "node" && kind != "nodes" && kind != "no" {
			return failOne(g.ErrOut, fmt.Errorf("invalid resource type %s, only nodes are supported", kind))
		}
		rest := args[1:]
		for len(rest) > 0 && !strings.Contains(rest[0], ":") && !strings.Contains(rest[0], "=") && !strings.HasSuffix(rest[0], "-") && !all && selector == "" {
			names = append(names, rest[0])
			rest = rest[1:]
		}
		specs = rest
	}
	if len(specs) == 0 {
		return failOne(g.ErrOut, errors.New("at least one taint update is required"))
	}
	add, remove, err := parseTaints(specs)
	if err != nil {
		return failOne(g.ErrOut, fmt.Errorf("%w\nSee 'konverge taint -h' for help and examples", err))
	}
	dry, err := flags.ParseDryRun(dryRun)
	if err != nil {
		return failOne(g.ErrOut, err)
	}
	sess, err := g.openResourceSession(ctx)
	if err != nil {
		return failOne(g.ErrOut, err)
	}
	defer sess.Close(ctx)
	if all && selector == "" {
		selector = " "
	}
	nodes, errs := nodeTargets(ctx, sess, names, strings.TrimSpace(selector))
	if all && len(names) == 0 && selector == " " {
		l, err := sess.Cluster.List(ctx, nodeGVK)
		if err != nil {
			return failOne(g.ErrOut, err)
		}
		nodes = l.Items
	}
	for _, n := range nodes {
		name := printer.Str(printer.Map(n, "metadata"), "name")
		old := printer.List(n, "spec", "taints")
		if !overwrite {
			var clash []string
			for _, a := range add {
				for _, o := range old {
					om, _ := o.(map[string]any)
					if printer.Str(om, "key") == a.key && printer.Str(om, "effect") == a.effect {
						clash = append(clash, a.key)
					}
				}
			}
			if len(clash) > 0 {
				errs = append(errs, fmt.Errorf("node %s already has %s taint(s) with same effect(s) and --overwrite is false", name, strings.Join(clash, ",")))
				continue
			}
		}
		// The new taints first, then the old ones they do not replace.
		var next []any
		for _, a := range add {
			next = append(next, a.object())
		}
		for _, o := range old {
			om, _ := o.(map[string]any)
			replaced := false
			for _, a := range add {
				if printer.Str(om, "key") == a.key && printer.Str(om, "effect") == a.effect {
					replaced = true
				}
			}
			if !replaced {
				next = append(next, value.DeepCopy(o))
			}
		}
		added := len(add) > 0
		deleted := false
		var notFound error
		for _, r := range remove {
			kept := next[:0]
			found := false
			for _, t := range next {
				tm, _ := t.(map[string]any)
				if printer.Str(tm, "key") == r.key && (r.effect == "" || printer.Str(tm, "effect") == r.effect) {
					found = true
					continue
				}
				kept = append(kept, t)
			}
			next = kept
			if !found {
				what := r.key
				if r.effect != "" {
					what += ":" + r.effect
				}
				notFound = fmt.Errorf("taint %q not found", what)
			} else {
				deleted = true
			}
		}
		if notFound != nil {
			errs = append(errs, notFound)
			continue
		}
		op := "untainted"
		switch {
		case added && deleted || overwrite:
			op = "modified"
		case added:
			op = "tainted"
		}
		if dry != apply.DryRunClient {
			var taints any = next
			if len(next) == 0 {
				taints = nil
			}
			b, _ := json.Marshal(map[string]any{"spec": map[string]any{"taints": taints}})
			var opts []cluster.PatchOption
			if dry == apply.DryRunServer {
				opts = append(opts, cluster.DryRunAll)
			}
			if _, err := sess.Cluster.Patch(ctx, nodeGVK, "", name, cluster.MergePatchType, b, opts...); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		fmt.Fprintf(g.Out, "node/%s %s%s\n", name, op, dryRunSuffix(dry))
	}
	return reportErrors(g.ErrOut, errs)
}
