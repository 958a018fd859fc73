package cli

import (
	"bufio"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/konverge/konverge/internal/cli/flags"
	"github.com/konverge/konverge/internal/printer"
)

// kubectl set env: environment variables of pod templates, set, removed,
// listed, or taken from a config map or secret.

// envVar is one variable of a container's env, as JSON.
type envVar = map[string]any

var validEnvName = regexp.MustCompile("[^a-zA-Z0-9_]")

func newSetEnvCmd(g *Globals) *cobra.Command {
	s := &setFlags{g: g, op: "env updated", patchError: "failed to patch env update to pod template: %v"}
	var containers, from, prefix string
	var envs, keys []string
	var list, resolve, overwrite bool
	cmd := &cobra.Command{
		Use:   "env RESOURCE/NAME KEY_1=VAL_1 ... KEY_N=VAL_N",
		Short: "Change the environment variables of containers",
		Long: `Add, change or remove the environment variables of the containers of pods
and pod templates (Deployments, StatefulSets, Jobs and the other workloads),
or list them with --list. KEY=VALUE sets a variable, KEY- removes it;
--from copies the keys of a ConfigMap or Secret as references to them.
--containers picks the containers by name, with * as a wildcard.

With "--env -" the variables are read from standard input, one KEY=VALUE
a line.`,
		Example: `  # Give the containers of deployment web the variable LOG_LEVEL
  konverge set env deployment/web LOG_LEVEL=debug

  # Print the variables of deployment web
  konverge set env deployment/web --list

  # Reference every key of config map settings, named with the prefix APP_
  konverge set env deployment/web --from=configmap/settings --prefix=APP_

  # Drop LOG_LEVEL from the container named app of every deployment
  konverge set env deployments --all --containers=app LOG_LEVEL-

  # Change a file's object without a cluster and print the result
  konverge set env -f web.yaml LOG_LEVEL=info --local -o yaml`,
		RunE: func(cmd *cobra.Command, args []string) error {
			g.complete(cmd)
			if s.All && s.Selector != "" {
				return failOne(g.ErrOut, errors.New("cannot set --all and --selector at the same time"))
			}
			resArgs, envArgs, ok := splitEnvFromResources(args)
			if !ok {
				return failOne(g.ErrOut, fmt.Errorf("all resources must be specified before environment changes: %s", strings.Join(args, " ")))
			}
			dry, p, err := s.check()
			if err != nil {
				return failOne(g.ErrOut, err)
			}
			switch {
			case len(s.Filenames) == 0 && s.Kustomize == "" && len(resArgs) < 1:
				return failOne(g.ErrOut, errors.New("one or more resources must be specified as <resource> <name> or <resource>/<name>"))
			case list && s.Output != "":
				return failOne(g.ErrOut, errors.New("--list and --output may not be specified together"))
			case len(keys) > 0 && from == "":
				return failOne(g.ErrOut, errors.New("when specifying --keys, a configmap or secret must be provided with --from"))
			}
			env, remove, err := parseEnv(append(append([]string(nil), envs...), envArgs...), g.In)
			if err != nil {
				return failOne(g.ErrOut, err)
			}
			ctx := cmd.Context()
			if from != "" {
				fromEnv, err := envFrom(ctx, s, from, keys)
				if err != nil {
					return failOne(g.ErrOut, err)
				}
				env = append(env, fromEnv...)
			}
			if prefix != "" {
				for _, e := range env {
					e["name"] = prefix + printer.Str(e, "name")
				}
			}
			var listErr error
			mutate := func(obj map[string]any) error {
				spec, err := podSpecOf(obj)
				if err != nil {
					return err
				}
				var selected []map[string]any
				for _, c := range containersOf(spec, "containers") {
					if selectContainerName(printer.Str(c, "name"), containers) {
						selected = append(selected, c)
					}
				}
				for _, c := range containersOf(spec, "initContainers") {
					if selectContainerName(printer.Str(c, "name"), containers) {
						selected = append(selected, c)
					}
				}
				kind, name := printer.Str(obj, "kind"), printer.Str(obj, "metadata", "name")
				if len(selected) == 0 {
					printWarning(g.ErrOut, fmt.Sprintf("%s/%s does not have any containers matching %q", kind, name, containers))
					return nil
				}
				for _, c := range selected {
					existing := envOf(c)
					if !overwrite {
						for _, e := range env {
							if cur, ok := findEnv(existing, printer.Str(e, "name")); ok && printer.Str(cur, "value") != printer.Str(e, "value") {
								return fmt.Errorf("'%s' already has a value (%s), and --overwrite is false", printer.Str(cur, "name"), printer.Str(cur, "value"))
							}
						}
					}
					updated := updateEnv(existing, env, remove)
					if len(updated) == 0 {
						delete(c, "env")
					} else {
						l := make([]any, len(updated))
						for i, e := range updated {
							l[i] = e
						}
						c["env"] = l
					}
					if list {
						if err := listEnv(ctx, s, g.Out, g.ErrOut, kind, name, obj, c, updated, resolve); err != nil {
							listErr = err
						}
					}
				}
				return nil
			}
			if list {
				targets, sess, errs := s.targets(ctx, resArgs)
				for _, t := range targets {
					if err := mutate(t.obj); err != nil {
						errs = append(errs, err)
					}
				}
				if sess != nil {
					_ = sess.Close(ctx)
				}
				if listErr != nil {
					errs = append(errs, listErr)
				}
				return reportErrors(g.ErrOut, errs)
			}
			return s.run(ctx, resArgs, dry, p, mutate)
		},
	}
	s.addFlags(cmd, "env", true)
	fs := cmd.Flags()
	fs.StringVarP(&containers, "containers", "c", "*", "Which containers to change, by name; * matches any run of characters.")
	fs.StringVar(&from, "from", "", "A ConfigMap or Secret (TYPE/NAME) whose keys become variables that reference it.")
	fs.StringVar(&prefix, "prefix", "", "Put this in front of the name of every variable taken from --from.")
	fs.StringArrayVarP(&envs, "env", "e", nil, "A KEY=VALUE to set in each container (repeatable; - reads them from standard input).")
	fs.StringSliceVar(&keys, "keys", nil, "Take only these keys (comma-separated) of the --from object.")
	fs.BoolVar(&list, "list", false, "Print the variables (after the changes given, if any) instead of updating.")
	fs.BoolVar(&resolve, "resolve", false, "With --list, print the values that ConfigMap and Secret references resolve to.")
	fs.BoolVar(&overwrite, "overwrite", true, "Replace variables that exist already; with false, setting one that exists is an error.")
	return cmd
}

// splitEnvFromResources splits set env's arguments: resources, then
// KEY=VALUE or KEY- arguments.
func splitEnvFromResources(args []string) (resources, envArgs []string, ok bool) {
	first := true
	for _, s := range args {
		isEnv := isEnvironmentArgument(s) || strings.HasSuffix(s, "-")
		switch {
		case isEnv:
			first = false
			envArgs = append(envArgs, s)
		case first:
			resources = append(resources, s)
		default:
			return nil, nil, false
		}
	}
	return resources, envArgs, true
}

var argumentEnvironment = regexp.MustCompile(`(?ms)^(.+)\=(.*)$`)

func isEnvironmentArgument(s string) bool { return argumentEnvironment.MatchString(s) }

// parseEnv reads KEY=VALUE, KEY- and "-" (standard input) as kubectl does.
func parseEnv(spec []string, stdin io.Reader) (env []envVar, remove []string, err error) {
	exists := map[string]bool{}
	for _, s := range spec {
		switch {
		case s == "-":
			if stdin == nil {
				return nil, nil, errors.New("when '-' is used, STDIN must be open")
			}
			sc := bufio.NewScanner(stdin)
			for sc.Scan() {
				line := sc.Text()
				if pos := strings.Index(line, "#"); pos != -1 {
					line = line[:pos]
				}
				if k, v, ok := strings.Cut(line, "="); ok {
					env = append(env, envVar{"name": k, "value": v})
				}
			}
		case strings.Contains(s, "="):
			k, v, _ := strings.Cut(s, "=")
			if errs := validation.IsEnvVarName(k); len(errs) != 0 {
				return nil, nil, fmt.Errorf("%q is not a valid key name: %s", k, strings.Join(errs, ";"))
			}
			exists[k] = true
			env = append(env, envVar{"name": k, "value": v})
		case strings.HasSuffix(s, "-"):
			remove = append(remove, s[:len(s)-1])
		default:
			return nil, nil, fmt.Errorf("unknown environment variable: %v", s)
		}
	}
	for _, r := range remove {
		if exists[r] {
			return nil, nil, errors.New("can not both modify and remove the same environment variable in the same command")
		}
	}
	return env, remove, nil
}

// envFrom returns the variables of --from: one per key of a config map
// or secret, each a reference to its key.
func envFrom(ctx context.Context, s *setFlags, from string, keys []string) ([]envVar, error) {
	g := s.g
	sess, err := g.openResourceSession(ctx)
	if err != nil {
		return nil, err
	}
	defer sess.Close(ctx)
	targets, errs := selectTargets(ctx, g, sess, flags.FilenameFlags{}, []string{from}, "", false)
	if len(errs) > 0 {
		return nil, errs[0]
	}
	var out []envVar
	for _, t := range targets {
		ref := ""
		switch {
		case t.res.GVK.Group == "" && t.res.GVK.Kind == "Secret":
			ref = "secretKeyRef"
		case t.res.GVK.Group == "" && t.res.GVK.Kind == "ConfigMap":
			ref = "configMapKeyRef"
		default:
			return nil, errors.New("unsupported resource specified in --from")
		}
		data := printer.Map(t.obj, "data")
		names := make([]string, 0, len(data))
		for k := range data {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			if len(keys) > 0 && !slices.Contains(keys, k) {
				continue
			}
			name := strings.ToUpper(validEnvName.ReplaceAllString(k, "_"))
			if name != k {
				printWarning(g.ErrOut, fmt.Sprintf("key %s transferred to %s", k, name))
			}
			out = append(out, envVar{"name": name, "valueFrom": map[string]any{
				ref: map[string]any{"key": k, "name": printer.Str(t.obj, "metadata", "name")},
			}})
		}
	}
	return out, nil
}

// envOf returns a container's env.
func envOf(c map[string]any) []envVar {
	var out []envVar
	for _, e := range printer.List(c, "env") {
		if m, ok := e.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func findEnv(env []envVar, name string) (envVar, bool) {
	for _, e := range env {
		if printer.Str(e, "name") == name {
			return e, true
		}
	}
	return nil, false
}

// updateEnv is kubectl's: existing variables in place (replaced by new
// values, removed ones dropped), then the new ones.
func updateEnv(existing, env []envVar, remove []string) []envVar {
	var out []envVar
	covered := map[string]bool{}
	for _, r := range remove {
		covered[r] = true
	}
	for _, e := range existing {
		name := printer.Str(e, "name")
		if covered[name] {
			continue
		}
		if newer, ok := findEnv(env, name); ok {
			covered[name] = true
			out = append(out, newer)
			continue
		}
		out = append(out, e)
	}
	for _, e := range env {
		name := printer.Str(e, "name")
		if covered[name] {
			continue
		}
		covered[name] = true
		out = append(out, e)
	}
	return out
}

// listEnv prints a container's variables as set env --list does.
func listEnv(ctx context.Context, s *setFlags, out, errOut io.Writer, kind, name string, obj, c map[string]any, env []envVar, resolve bool) error {
	fmt.Fprintf(out, "# %s %s, container %s\n", kind, name, printer.Str(c, "name"))
	for _, e := range env {
		from := printer.Map(e, "valueFrom")
		if from == nil {
			fmt.Fprintf(out, "%s=%s\n", printer.Str(e, "name"), printer.Str(e, "value"))
			continue
		}
		if resolve {
			if v, ok := resolveEnvRef(ctx, s, obj, from); ok {
				fmt.Fprintf(out, "%s=%s\n", printer.Str(e, "name"), v)
				continue
			}
		}
		fmt.Fprintf(out, "# %s from %s\n", printer.Str(e, "name"), envRefString(from))
	}
	return nil
}

// envRefString describes a valueFrom as kubectl does.
func envRefString(from map[string]any) string {
	switch {
	case printer.Map(from, "configMapKeyRef") != nil:
		return fmt.Sprintf("configmap %s, key %s", printer.Str(from, "configMapKeyRef", "name"), printer.Str(from, "configMapKeyRef", "key"))
	case printer.Map(from, "secretKeyRef") != nil:
		return fmt.Sprintf("secret %s, key %s", printer.Str(from, "secretKeyRef", "name"), printer.Str(from, "secretKeyRef", "key"))
	case printer.Map(from, "fieldRef") != nil:
		return fmt.Sprintf("field path %s", printer.Str(from, "fieldRef", "fieldPath"))
	case printer.Map(from, "resourceFieldRef") != nil:
		p := ""
		if c := printer.Str(from, "resourceFieldRef", "containerName"); c != "" {
			p = c + "/"
		}
		return fmt.Sprintf("resource field %s%s", p, printer.Str(from, "resourceFieldRef", "resource"))
	}
	return "invalid valueFrom"
}

// resolveEnvRef reads the value a config map or secret reference points
// to (--resolve).
func resolveEnvRef(ctx context.Context, s *setFlags, obj, from map[string]any) (string, bool) {
	if s.Local {
		return "", false
	}
	kind, ref := "", map[string]any(nil)
	if ref = printer.Map(from, "configMapKeyRef"); ref != nil {
		kind = "configmap"
	} else if ref = printer.Map(from, "secretKeyRef"); ref != nil {
		kind = "secret"
	} else {
		return "", false
	}
	sess, err := s.g.openResourceSession(ctx)
	if err != nil {
		return "", false
	}
	defer sess.Close(ctx)
	res, err := sess.Mapper().Find(kind)
	if err != nil {
		return "", false
	}
	o, err := sess.Cluster.Get(ctx, res.GVK, printer.Str(obj, "metadata", "namespace"), printer.Str(ref, "name"))
	if err != nil {
		return "", false
	}
	v, ok := printer.Map(o, "data")[printer.Str(ref, "key")].(string)
	if !ok {
		return "", false
	}
	if kind == "secret" {
		if b, err := decodeBase64(v); err == nil {
			v = string(b)
		}
	}
	return v, true
}

func decodeBase64(s string) ([]byte, error) { return base64.StdEncoding.DecodeString(s) }
