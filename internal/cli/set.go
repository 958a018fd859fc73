package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"reflect"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/internal/printer"
	"github.com/konverge/konverge/quantity"
)

func init() {
	commands = append(commands, func(g *Globals) *cobra.Command {
		cmd := &cobra.Command{
			Use:   "set SUBCOMMAND",
			Short: "Set specific features on objects",
			Long: `Configure application resources, as kubectl set does. These commands change a
field of the live object with a strategic merge patch; its last-applied
configuration is left as it is.`,
		}
		cmd.AddCommand(newSetImageCmd(g), newSetResourcesCmd(g))
		return cmd
	})
}

// podSpecPath returns where the pod spec of obj is: spec.template.spec
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

// nestPatch wraps v under the keys of p.
func nestPatch(p []string, v map[string]any) map[string]any {
	for i := len(p) - 1; i >= 0; i-- {
		v = map[string]any{p[i]: v}
	}
	return v
}

// containerEdit changes one container (a copy) and reports whether it did.
type containerEdit func(c map[string]any) bool

// patchContainers applies edit to the containers of t chosen by match (and
// to its init containers when inits is set) and sends the strategic merge
// patch of the changed ones. It returns whether a container matched and
// whether anything changed.
func patchContainers(ctx context.Context, sess *Session, t gotObject, match func(name string) bool, inits bool, edit containerEdit, manager string) (found, changed bool, err error) {
	sp := podSpecPath(t.res.GVK.Kind)
	if sp == nil {
		return false, false, fmt.Errorf("%s/%s has no pod template", resourceString(t.res), printer.Str(t.obj, "metadata", "name"))
	}
	spec := printer.Map(t.obj, sp...)
	patchSpec := map[string]any{}
	lists := []string{"containers"}
	if inits {
		lists = []string{"initContainers", "containers"}
	}
	for _, list := range lists {
		var changedItems []any
		for _, it := range printer.List(spec, list) {
			c, ok := it.(map[string]any)
			if !ok || !match(printer.Str(c, "name")) {
				continue
			}
			found = true
			cp := deepCopyJSON(c)
			if edit(cp) && !reflect.DeepEqual(cp, c) {
				changedItems = append(changedItems, containerDelta(c, cp))
			}
		}
		if len(changedItems) > 0 {
			patchSpec[list] = changedItems
		}
	}
	if len(patchSpec) == 0 {
		return found, false, nil
	}
	b, err := json.Marshal(nestPatch(sp, patchSpec))
	if err != nil {
		return found, false, err
	}
	md := printer.Map(t.obj, "metadata")
	_, err = sess.Cluster.Patch(ctx, t.res.GVK, printer.Str(md, "namespace"), printer.Str(md, "name"), cluster.StrategicMergePatchType, b, cluster.FieldOwner(manager))
	return found, err == nil, err
}

// containerDelta is the strategic merge patch element of a container
// changed from old to new: its name and the top-level fields that differ.
func containerDelta(old, new map[string]any) map[string]any {
	d := map[string]any{"name": new["name"]}
	for k, v := range new {
		if !reflect.DeepEqual(old[k], v) {
			d[k] = v
		}
	}
	return d
}

// deepCopyJSON copies a JSON-like value, keeping its number types.
func deepCopyJSON(m map[string]any) map[string]any {
	return deepCopyValue(m).(map[string]any)
}

func deepCopyValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = deepCopyValue(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = deepCopyValue(e)
		}
		return out
	}
	return v
}

// --- set image --------------------------------------------------------

func newSetImageCmd(g *Globals) *cobra.Command {
	var sel, manager string
	var all bool
	var ff FilenameFlags
	cmd := &cobra.Command{
		Use:   "image (-f FILENAME | TYPE NAME) CONTAINER_NAME_1=CONTAINER_IMAGE_1 ... CONTAINER_NAME_N=CONTAINER_IMAGE_N",
		Short: "Update the image of a pod template",
		Long: `Update existing container image(s) of resources, as kubectl set image does
(CONTAINER=* sets every container). The last-applied configuration is left as it
is: the next apply of the old file reverts the image.`,
		Example: `  konverge set image deployment/nginx-deployment nginx=nginx:1.16.1
  konverge set image deployment nginx-deployment '*=nginx:1.16.1'`,
		RunE: func(cmd *cobra.Command, args []string) error {
			g.complete(cmd)
			return runSetImage(cmd.Context(), g, ff, args, sel, all, manager)
		},
	}
	fieldManagerFlag(cmd.Flags(), &manager, managerSet)
	cmd.Flags().StringVarP(&sel, "selector", "l", "", "Selector (label query) to filter on, supports '=', '==', '!=', 'in', 'notin'.")
	cmd.Flags().BoolVar(&all, "all", false, "Select all resources, in the namespace of the specified resource types")
	ff.AddFlags(cmd.Flags(), "identifying the resource to get from a server")
	return cmd
}

func runSetImage(ctx context.Context, g *Globals, ff FilenameFlags, args []string, sel string, all bool, manager string) error {
	var resArgs []string
	images := map[string]string{}
	var order []string
	for _, a := range args {
		if name, img, ok := strings.Cut(a, "="); ok && !strings.Contains(name, "/") {
			if _, dup := images[name]; !dup {
				order = append(order, name)
			}
			images[name] = img
			continue
		}
		resArgs = append(resArgs, a)
	}
	switch {
	case all && sel != "":
		return failOne(g.ErrOut, fmt.Errorf("cannot set --all and --selector at the same time"))
	case len(resArgs) == 0 && len(ff.Filenames) == 0:
		return failOne(g.ErrOut, fmt.Errorf("one or more resources must be specified as <resource> <name> or <resource>/<name>"))
	case len(images) == 0:
		return failOne(g.ErrOut, fmt.Errorf("at least one image update is required"))
	case len(images) > 1 && images["*"] != "":
		return failOne(g.ErrOut, fmt.Errorf("all containers are already specified by *, but saw more than one container_name=container_image pairs"))
	}
	sess, err := g.openResourceSession(ctx)
	if err != nil {
		return failOne(g.ErrOut, err)
	}
	defer sess.Close(ctx)
	targets, errs := selectTargets(ctx, g, sess, ff, resArgs, sel, all)
	for _, t := range targets {
		anyChanged := false
		var tErr error
		for _, name := range order {
			img := images[name]
			match := func(n string) bool { return name == "*" || n == name }
			found, changed, err := patchContainers(ctx, sess, t, match, true, func(c map[string]any) bool {
				c["image"] = img
				return true
			}, manager)
			if err != nil {
				tErr = fmt.Errorf("failed to patch image update to pod template: %v", err)
				break
			}
			if !found {
				errs = append(errs, fmt.Errorf("unable to find container named %q", name))
				continue
			}
			if changed {
				anyChanged = true
				// Later pairs act on the patched object.
				md := printer.Map(t.obj, "metadata")
				if t.obj, err = sess.Cluster.Get(ctx, t.res.GVK, printer.Str(md, "namespace"), printer.Str(md, "name")); err != nil {
					tErr = err
					break
				}
			}
		}
		if tErr != nil {
			errs = append(errs, tErr)
			continue
		}
		if anyChanged {
			fmt.Fprintf(g.Out, "%s image updated\n", objectRef(t.res, printer.Str(t.obj, "metadata", "name")))
		}
	}
	return reportErrors(g.ErrOut, errs)
}

// --- set resources ----------------------------------------------------

func newSetResourcesCmd(g *Globals) *cobra.Command {
	var sel, containers, limits, requests, manager string
	var all bool
	var ff FilenameFlags
	cmd := &cobra.Command{
		Use:   "resources (-f FILENAME | TYPE NAME) ([--limits=LIMITS & --requests=REQUESTS]",
		Short: "Update resource requests/limits on objects with pod templates",
		Long: `Specify compute resource requirements (CPU, memory) for any resource that defines a
pod template, as kubectl set resources does. The last-applied configuration is
left as it is.`,
		Example: `  konverge set resources deployment/nginx-deployment -c=nginx --limits=cpu=200m,memory=512Mi
  konverge set resources deployment nginx-deployment --requests=cpu=100m`,
		RunE: func(cmd *cobra.Command, args []string) error {
			g.complete(cmd)
			return runSetResources(cmd.Context(), g, ff, args, sel, all, containers, limits, requests, manager)
		},
	}
	f := cmd.Flags()
	fieldManagerFlag(f, &manager, managerSet)
	f.StringVarP(&sel, "selector", "l", "", "Selector (label query) to filter on, supports '=', '==', '!=', 'in', 'notin'.")
	f.BoolVar(&all, "all", false, "Select all resources, in the namespace of the specified resource types")
	f.StringVarP(&containers, "containers", "c", "*", "The names of containers in the selected pod templates to change, all containers are selected by default - may use wildcards")
	f.StringVar(&limits, "limits", "", "The resource requirement requests for this container.  For example, 'cpu=100m,memory=256Mi'.  Note that server side components may assign requests depending on the server configuration, such as limit ranges.")
	f.StringVar(&requests, "requests", "", "The resource requirement requests for this container.  For example, 'cpu=100m,memory=256Mi'.  Note that server side components may assign requests depending on the server configuration, such as limit ranges.")
	ff.AddFlags(f, "identifying the resource to get from a server")
	return cmd
}

// parseResourceList reads kubectl's "cpu=100m,memory=256Mi".
func parseResourceList(s string) (map[string]any, error) {
	out := map[string]any{}
	if s == "" {
		return out, nil
	}
	for _, stmt := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(stmt, "=")
		if !ok || k == "" || v == "" {
			return nil, fmt.Errorf("invalid argument syntax %v, expected <resource>=<value>", stmt)
		}
		q, err := quantity.Canonical(v)
		if err != nil {
			return nil, fmt.Errorf("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
		}
		out[k] = q
	}
	return out, nil
}

func runSetResources(ctx context.Context, g *Globals, ff FilenameFlags, args []string, sel string, all bool, containers, limits, requests, manager string) error {
	if all && sel != "" {
		return failOne(g.ErrOut, fmt.Errorf("cannot set --all and --selector at the same time"))
	}
	if limits == "" && requests == "" {
		return failOne(g.ErrOut, fmt.Errorf("you must specify an update to requests or limits (in the form of --requests/--limits)"))
	}
	lim, err := parseResourceList(limits)
	if err != nil {
		return failOne(g.ErrOut, err)
	}
	req, err := parseResourceList(requests)
	if err != nil {
		return failOne(g.ErrOut, err)
	}
	if len(args) == 0 && len(ff.Filenames) == 0 {
		return failOne(g.ErrOut, fmt.Errorf("one or more resources must be specified as <resource> <name> or <resource>/<name>"))
	}
	sess, err := g.openResourceSession(ctx)
	if err != nil {
		return failOne(g.ErrOut, err)
	}
	defer sess.Close(ctx)
	targets, errs := selectTargets(ctx, g, sess, ff, args, sel, all)
	for _, t := range targets {
		match := func(n string) bool {
			ok, _ := path.Match(containers, n)
			return ok
		}
		found, changed, err := patchContainers(ctx, sess, t, match, false, func(c map[string]any) bool {
			res, _ := c["resources"].(map[string]any)
			if res == nil {
				res = map[string]any{}
			}
			set := func(key string, vals map[string]any) {
				if len(vals) == 0 {
					return
				}
				m, _ := res[key].(map[string]any)
				if m == nil {
					m = map[string]any{}
				}
				keys := make([]string, 0, len(vals))
				for k := range vals {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				for _, k := range keys {
					m[k] = vals[k]
				}
				res[key] = m
			}
			set("limits", lim)
			set("requests", req)
			c["resources"] = res
			return true
		}, manager)
		if err != nil {
			errs = append(errs, fmt.Errorf("failed to patch resources update to pod template %v", err))
			continue
		}
		if !found {
			errs = append(errs, fmt.Errorf("unable to find container named %s", containers))
			continue
		}
		if changed {
			fmt.Fprintf(g.Out, "%s resource requirements updated\n", objectRef(t.res, printer.Str(t.obj, "metadata", "name")))
		}
	}
	return reportErrors(g.ErrOut, errs)
}
