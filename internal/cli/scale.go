package cli

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/internal/cli/flags"
	"github.com/konverge/konverge/internal/printer"
	"github.com/konverge/konverge/schema"
)

// ScaleOptions are the flags of konverge scale.
type ScaleOptions struct {
	*Globals
	flags.FilenameFlags
	Replicas        int
	CurrentReplicas int
	ResourceVersion string
	Selector        string
	All             bool
}

// scalable are the kinds whose spec.replicas scale sets.
var scalable = map[string]bool{"apps/Deployment": true, "apps/ReplicaSet": true, "apps/StatefulSet": true, "/ReplicationController": true}

// NewScaleCmd returns the scale command.
func NewScaleCmd(o *ScaleOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "scale [--resource-version=version] [--current-replicas=count] --replicas=COUNT (-f FILENAME | TYPE NAME)",
		Short: "Set a new size for a deployment, replica set, replication controller, or stateful set",
		Long: `Change the number of replicas of a workload that has them (deployments,
replica sets, replication controllers, stateful sets). The new size is written to spec.replicas with a merge patch; nothing else of the object
changes (its last-applied configuration stays as it is).`,
		Example: `  # Three replicas for deployment web
  konverge scale --replicas=3 deployment/web

  # The same, only if it has two now
  konverge scale --current-replicas=2 --replicas=3 deployment web`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.complete(cmd)
			return o.Run(cmd.Context(), args)
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.Replicas, "replicas", -1, "The number of replicas to set (required).")
	f.IntVar(&o.CurrentReplicas, "current-replicas", -1, "Precondition for current size. Requires that the current size of the resource match this value in order to scale. -1 (default) for no condition.")
	f.StringVar(&o.ResourceVersion, "resource-version", "", "Precondition for resource version. Requires that the current resource version match this value in order to scale.")
	f.StringVarP(&o.Selector, "selector", "l", "", "Selector (label query) to filter on, supports '=', '==', '!=', 'in', 'notin'.(e.g. -l key1=value1,key2=value2). Matching objects must satisfy all of the specified label constraints.")
	f.BoolVar(&o.All, "all", false, "Act on every object of the given types in the namespace")
	o.FilenameFlags.AddFlags(f, "the objects to scale")
	return cmd
}

// Run scales the objects args (or -f) name.
func (o *ScaleOptions) Run(ctx context.Context, args []string) error {
	if o.Replicas < 0 {
		//lint:ignore ST1005 kubectl's message, word for word (users and scripts match it)
		return failOne(o.ErrOut, fmt.Errorf("The --replicas=COUNT flag is required, and COUNT must be greater than or equal to 0"))
	}
	sess, err := o.openResourceSession(ctx)
	if err != nil {
		return failOne(o.ErrOut, err)
	}
	defer sess.Close(ctx)
	targets, errs := selectTargets(ctx, o.Globals, sess, o.FilenameFlags, args, o.Selector, o.All)
	if len(targets) == 0 && len(errs) == 0 {
		return failOne(o.ErrOut, fmt.Errorf("no objects passed to scale"))
	}
	for _, t := range targets {
		ref := objectRef(t.res, printer.Str(t.obj, "metadata", "name"))
		custom := !scalable[t.res.GVK.Group+"/"+t.res.GVK.Kind] && isCustomResource(ctx, sess.Cluster, t.res)
		if !scalable[t.res.GVK.Group+"/"+t.res.GVK.Kind] && !custom {
			errs = append(errs, fmt.Errorf("cannot scale %s: the server could not find the requested resource (the kind has no scale subresource)", ref))
			continue
		}
		patch := map[string]any{"spec": map[string]any{"replicas": o.Replicas}}
		if custom {
			// The server keeps a custom resource's replicas where its
			// CRD says: the preconditions are checked on its Scale, as
			// kubectl does for every kind.
			if o.CurrentReplicas >= 0 || o.ResourceVersion != "" {
				rv, err := o.scalePreconditions(ctx, sess.Cluster, t)
				if err != nil {
					errs = append(errs, err)
					continue
				}
				patch["metadata"] = map[string]any{"resourceVersion": rv}
			}
		} else {
			cur := printer.IntOr(t.obj, 1, "spec", "replicas")
			if o.CurrentReplicas >= 0 && int64(o.CurrentReplicas) != cur {
				//lint:ignore ST1005 kubectl's message, word for word (users and scripts match it)
				errs = append(errs, fmt.Errorf("Expected replicas to be %d, was %d", o.CurrentReplicas, cur))
				continue
			}
			if o.ResourceVersion != "" {
				patch["metadata"] = map[string]any{"resourceVersion": o.ResourceVersion}
			}
		}
		b, _ := json.Marshal(patch)
		md := printer.Map(t.obj, "metadata")
		if _, err := sess.Cluster.Patch(ctx, t.res.GVK, printer.Str(md, "namespace"), printer.Str(md, "name"), cluster.MergePatchType, b, cluster.FieldOwner(managerUserAgent), cluster.Subresource("scale")); err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(o.Out, "%s scaled\n", ref)
	}
	return reportErrors(o.ErrOut, errs)
}

// scalePreconditions reads the Scale of t and checks --current-replicas
// and --resource-version against it (kubectl's ScalePrecondition); it
// returns the Scale's resourceVersion, which the write then requires.
func (o *ScaleOptions) scalePreconditions(ctx context.Context, c cluster.Interface, t gotObject) (string, error) {
	sc, err := subresourceClient(c)
	if err != nil {
		return "", err
	}
	md := printer.Map(t.obj, "metadata")
	scale, err := sc.GetSubresource(ctx, t.res.GVK, printer.Str(md, "namespace"), printer.Str(md, "name"), "scale")
	if err != nil {
		return "", err
	}
	cur := printer.IntOr(scale, 0, "spec", "replicas")
	if o.CurrentReplicas >= 0 && int64(o.CurrentReplicas) != cur {
		//lint:ignore ST1005 kubectl's message, word for word (users and scripts match it)
		return "", fmt.Errorf("Expected replicas to be %d, was %d", o.CurrentReplicas, cur)
	}
	rv := printer.Str(scale, "metadata", "resourceVersion")
	if o.ResourceVersion != "" && o.ResourceVersion != rv {
		//lint:ignore ST1005 kubectl's message, word for word (users and scripts match it)
		return "", fmt.Errorf("Expected resource version to be %s, was %s", o.ResourceVersion, rv)
	}
	return rv, nil
}

// isCustomResource reports whether a CustomResourceDefinition serves res.
func isCustomResource(ctx context.Context, c cluster.Interface, res cluster.Resource) bool {
	if res.GVK.Group == "" || res.Plural == "" {
		return false
	}
	_, err := c.Get(ctx, schema.GVK{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}, "", res.Plural+"."+res.GVK.Group)
	return err == nil
}
