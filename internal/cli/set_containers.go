package cli

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/konverge/konverge/internal/printer"
)

// kubectl set image, resources, serviceaccount and selector.

func newSetImageCmd(g *Globals) *cobra.Command {
	s := &setFlags{g: g, op: "image updated", patchError: "failed to patch image update to pod template: %v"}
	cmd := &cobra.Command{
		Use:   "image (-f FILENAME | TYPE NAME) CONTAINER_NAME_1=CONTAINER_IMAGE_1 ... CONTAINER_NAME_N=CONTAINER_IMAGE_N",
		Short: "Change the images of containers",
		Long: `Change the images of containers, as kubectl set image does
(CONTAINER=* sets every container). The last-applied configuration is left as it
is: the next apply of the old file reverts the image.`,
		Example: `  konverge set image deployment/nginx-deployment nginx=nginx:1.16.1
  konverge set image deployment nginx-deployment '*=nginx:1.16.1'
  konverge set image -f deployment.yaml nginx=nginx:1.27 --local -o yaml`,
		RunE: func(cmd *cobra.Command, args []string) error {
			g.complete(cmd)
			resArgs, pairs, err := resourcesAndPairs(args, "image")
			if err != nil {
				return failOne(g.ErrOut, err)
			}
			images := map[string]string{}
			var order []string
			var bad []string
			for _, p := range pairs {
				name, img, ok := strings.Cut(p, "=")
				if !ok || strings.HasPrefix(p, "=") {
					bad = append(bad, p)
					continue
				}
				if _, dup := images[name]; !dup {
					order = append(order, name)
				}
				images[name] = img
			}
			if len(bad) > 0 {
				return failOne(g.ErrOut, fmt.Errorf("invalid image format: %s", strings.Join(bad, ", ")))
			}
			dry, p, err := s.check()
			var errs []error
			if s.All && s.Selector != "" {
				errs = append(errs, errors.New("cannot set --all and --selector at the same time"))
			}
			if len(resArgs) == 0 && !s.FilenameFlags.Given() {
				errs = append(errs, errors.New("one or more resources must be specified as <resource> <name> or <resource>/<name>"))
			}
			switch {
			case len(images) == 0:
				errs = append(errs, errors.New("at least one image update is required"))
			case len(images) > 1 && images["*"] != "":
				errs = append(errs, errors.New("all containers are already specified by *, but saw more than one container_name=container_image pairs"))
			}
			if err != nil {
				errs = append(errs, err)
			}
			if len(errs) > 0 {
				return reportErrors(g.ErrOut, errs)
			}
			var notFound []error
			err = s.run(cmd.Context(), resArgs, dry, p, func(obj map[string]any) error {
				spec, err := podSpecOf(obj)
				if err != nil {
					return err
				}
				for _, name := range order {
					found := false
					for _, list := range []string{"initContainers", "containers"} {
						for _, c := range containersOf(spec, list) {
							if name == "*" || printer.Str(c, "name") == name {
								c["image"] = images[name]
								found = true
							}
						}
					}
					if !found {
						notFound = append(notFound, fmt.Errorf("unable to find container named %q", name))
					}
				}
				return nil
			})
			if len(notFound) > 0 {
				_ = reportErrors(g.ErrOut, notFound)
				return &ExitError{Code: 1}
			}
			return err
		},
	}
	s.addFlags(cmd, "image", true)
	return cmd
}

func newSetResourcesCmd(g *Globals) *cobra.Command {
	s := &setFlags{g: g, op: "resource requirements updated", patchError: "failed to patch resources update to pod template %v"}
	var containers, limits, requests string
	cmd := &cobra.Command{
		Use:   "resources (-f FILENAME | TYPE NAME)  ([--limits=LIMITS & --requests=REQUESTS]",
		Short: "Change the resource requests and limits of containers",
		Long: `Change the CPU and memory requests and limits of the containers of pods and
pod templates, as kubectl set resources does. The last-applied configuration is
left as it is.`,
		Example: `  konverge set resources deployment/nginx-deployment -c=nginx --limits=cpu=200m,memory=512Mi
  konverge set resources deployment nginx-deployment --requests=cpu=100m`,
		RunE: func(cmd *cobra.Command, args []string) error {
			g.complete(cmd)
			if s.All && s.Selector != "" {
				return failOne(g.ErrOut, errors.New("cannot set --all and --selector at the same time"))
			}
			if limits == "" && requests == "" {
				return failOne(g.ErrOut, errors.New("you must specify an update to requests or limits (in the form of --requests/--limits)"))
			}
			lim, err := parseResourceList(limits)
			if err != nil {
				return failOne(g.ErrOut, err)
			}
			req, err := parseResourceList(requests)
			if err != nil {
				return failOne(g.ErrOut, err)
			}
			if len(args) == 0 && !s.FilenameFlags.Given() {
				return failOne(g.ErrOut, errors.New("one or more resources must be specified as <resource> <name> or <resource>/<name>"))
			}
			dry, p, err := s.check()
			if err != nil {
				return failOne(g.ErrOut, err)
			}
			var notFound bool
			err = s.run(cmd.Context(), args, dry, p, func(obj map[string]any) error {
				spec, err := podSpecOf(obj)
				if err != nil {
					return err
				}
				found := false
				for _, c := range append(containersOf(spec, "initContainers"), containersOf(spec, "containers")...) {
					if !selectContainerName(printer.Str(c, "name"), containers) {
						continue
					}
					found = true
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
						for k, v := range vals {
							m[k] = v
						}
						res[key] = m
					}
					set("limits", lim)
					set("requests", req)
					c["resources"] = res
				}
				if !found {
					notFound = true
				}
				return nil
			})
			if notFound {
				fmt.Fprintf(g.ErrOut, "error: unable to find container named %s\n", containers)
				return &ExitError{Code: 1}
			}
			return err
		},
	}
	s.addFlags(cmd, "resources", true)
	fs := cmd.Flags()
	fs.StringVarP(&containers, "containers", "c", "*", "Which containers to change, by name; * (the default) matches any run of characters.")
	fs.StringVar(&limits, "limits", "", "The limits to set, as resource=quantity pairs ('cpu=200m,memory=512Mi').")
	fs.StringVar(&requests, "requests", "", "The requests to set, as resource=quantity pairs ('cpu=100m,memory=256Mi'); admission (a LimitRange) may add more.")
	return cmd
}

// parseResourceList reads kubectl's "cpu=100m,memory=256Mi", quantities
// in their canonical form.
func parseResourceList(s string) (map[string]any, error) {
	out := map[string]any{}
	if s == "" {
		return out, nil
	}
	for _, stmt := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(stmt, "=")
		if !ok || strings.Contains(v, "=") {
			return nil, fmt.Errorf("invalid argument syntax %v, expected <resource>=<value>", stmt)
		}
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return nil, err
		}
		out[k] = q.String()
	}
	return out, nil
}

func newSetServiceAccountCmd(g *Globals) *cobra.Command {
	s := &setFlags{g: g, op: "serviceaccount updated", patchError: "failed to patch ServiceAccountName %v", writeUnchanged: true}
	cmd := &cobra.Command{
		Use:     "serviceaccount (-f FILENAME | TYPE NAME) SERVICE_ACCOUNT",
		Aliases: []string{"sa"},
		Short:   "Change the service account of pods",
		Example: `  # Run the pods of deployment web as service account builder
  konverge set serviceaccount deployment web builder

  # Change a file's deployment without a cluster and print it
  konverge set sa -f web.yaml builder --local -o yaml`,
		RunE: func(cmd *cobra.Command, args []string) error {
			g.complete(cmd)
			dry, p, err := s.check()
			if err != nil {
				return failOne(g.ErrOut, err)
			}
			if len(args) == 0 {
				return failOne(g.ErrOut, errors.New("serviceaccount is required"))
			}
			sa := args[len(args)-1]
			return s.run(cmd.Context(), args[:len(args)-1], dry, p, func(obj map[string]any) error {
				spec, err := podSpecOf(obj)
				if err != nil {
					return err
				}
				spec["serviceAccountName"] = sa
				return nil
			})
		},
	}
	s.addFlags(cmd, "serviceaccount", false)
	return cmd
}

func newSetSelectorCmd(g *Globals) *cobra.Command {
	s := &setFlags{g: g, op: "selector updated", writeUnchanged: true, stopOnError: true}
	var resourceVersion string
	cmd := &cobra.Command{
		Use:   "selector (-f FILENAME | TYPE NAME) EXPRESSIONS [--resource-version=version]",
		Short: "Replace the selector of an object",
		Long: `Replace the selector of an object with the key=value pairs given; whatever
selector it had goes. Keys and values follow the rules of labels (letters,
digits, '-', '_' and '.', at most 63 characters, starting and ending with
a letter or digit). --resource-version makes the update conditional on
that version. Only Services take a selector this way.`,
		Example: `  # Make a headless service and point it at the pods labelled env=qa
  konverge create service clusterip qa --clusterip="None" -o yaml --dry-run=client | konverge set selector --local -f - 'env=qa' -o yaml | konverge create -f -`,
		RunE: func(cmd *cobra.Command, args []string) error {
			g.complete(cmd)
			dry, p, err := s.check()
			if err != nil {
				return failOne(g.ErrOut, err)
			}
			if len(args) == 0 {
				return failOne(g.ErrOut, errors.New("one selector is required"))
			}
			sel, err := metav1.ParseToLabelSelector(args[len(args)-1])
			if err != nil {
				return failOne(g.ErrOut, err)
			}
			return s.run(cmd.Context(), args[:len(args)-1], dry, p, func(obj map[string]any) error {
				if len(sel.MatchExpressions) > 0 {
					return fmt.Errorf("match expression %v not supported on this object", sel.MatchExpressions)
				}
				if printer.Str(obj, "kind") != "Service" || printer.Str(obj, "apiVersion") != "v1" {
					return errors.New("setting a selector is only supported for Services")
				}
				m := map[string]any{}
				keys := make([]string, 0, len(sel.MatchLabels))
				for k := range sel.MatchLabels {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				for _, k := range keys {
					m[k] = sel.MatchLabels[k]
				}
				spec, _ := obj["spec"].(map[string]any)
				if spec == nil {
					spec = map[string]any{}
					obj["spec"] = spec
				}
				spec["selector"] = m
				if resourceVersion != "" {
					if md, ok := obj["metadata"].(map[string]any); ok {
						md["resourceVersion"] = resourceVersion
					}
				}
				return nil
			})
		},
	}
	s.addFlags(cmd, "selector", true)
	cmd.Flags().StringVar(&resourceVersion, "resource-version", "", "If non-empty, the selectors update will only succeed if this is the current resource-version for the object. Only valid when specifying a single resource.")
	return cmd
}
