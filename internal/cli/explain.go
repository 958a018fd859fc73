package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/util/jsonpath"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/cluster/kube"
	"github.com/konverge/konverge/internal/explain"
	"github.com/konverge/konverge/schema"
)

// explainOptions are kubectl explain's flags.
type explainOptions struct {
	recursive  bool
	apiVersion string
	output     string
	maxDepth   int
}

// newExplainCmd is `konverge explain TYPE[.FIELD...]`: the documentation
// of a kind or field, printed by package explain from the cluster's
// OpenAPI documents: the embedded Kubernetes documents (and the schemas
// of the embedded cluster's CRDs), or the real server's.
func newExplainCmd(g *Globals) *cobra.Command {
	o := explainOptions{output: "plaintext"}
	cmd := &cobra.Command{
		Use:                   "explain TYPE [--recursive=FALSE|TRUE] [--api-version=api-version-group] [-o|--output=plaintext]",
		DisableFlagsInUseLine: true,
		Short:                 "Describe the fields of a resource type",
		Long: `Print the documentation of a resource type, or of one of its fields named
by a dotted path after the type:

        TYPE.FIELD[.FIELD...]

The text comes from the OpenAPI documents: those of Kubernetes v1.37.1
built into konverge (and a CRD's schema) for the embedded cluster, the
server's with --kubeconfig. "konverge api-resources" lists the types.`,
		Example: `  # What a pod is, and its top-level fields
  konverge explain pods

  # Every field of a pod, nested
  konverge explain pods --recursive

  # Deployments as the apps/v1 version describes them
  konverge explain deployments --api-version=apps/v1

  # One field and the fields below it
  konverge explain pods.spec.containers`,
		RunE: func(cmd *cobra.Command, args []string) error {
			g.complete(cmd)
			switch {
			case len(args) == 0:
				//lint:ignore ST1005 kubectl's message, word for word (users and scripts match it)
				return failOne(g.ErrOut, errors.New("You must specify the type of resource to explain. Use \"konverge api-resources\" for a complete list of supported resources.\n"))
			case len(args) > 1:
				//lint:ignore ST1005 kubectl's message, word for word (users and scripts match it)
				return failOne(g.ErrOut, errors.New("We accept only this format: explain RESOURCE\n"))
			case o.maxDepth > 0 && !o.recursive:
				return failOne(g.ErrOut, errors.New("--max-depth requires --recursive"))
			case o.maxDepth < 0:
				return failOne(g.ErrOut, errors.New("--max-depth must be non-negative"))
			}
			if o.output != "plaintext" {
				if o.output == "plaintext-openapiv2" {
					return failOne(g.ErrOut, errors.New("--output plaintext-openapiv2 is not available: konverge explains from OpenAPI v3 documents (--output plaintext)"))
				}
				return failOne(g.ErrOut, fmt.Errorf("unrecognized format: %s", o.output))
			}
			ctx := cmd.Context()
			s, err := g.openResourceSession(ctx)
			if err != nil {
				return fail(g.ErrOut, 1, err)
			}
			defer s.Close(ctx)
			if err := runExplain(ctx, g, s, o, args[0]); err != nil {
				var nm *noMatchError
				if errors.As(err, &nm) {
					// kubectl explain prints the mapper's error as is.
					fmt.Fprintln(g.ErrOut, nm.msg)
					return &ExitError{Code: 1}
				}
				return failOne(g.ErrOut, err)
			}
			return nil
		},
	}
	cmd.Flags().BoolVarP(&o.recursive, "recursive", "R", false, "Print the whole tree of fields below, names and types (see --max-depth).")
	cmd.Flags().StringVar(&o.apiVersion, "api-version", "", "Explain the type as this group/version serves it.")
	cmd.Flags().StringVarP(&o.output, "output", "o", "plaintext", "How to print the documentation (plaintext).")
	cmd.Flags().IntVar(&o.maxDepth, "max-depth", 0, "With --recursive, how many levels of fields to print (0: all).")
	return cmd
}

// runExplain explains arg (TYPE[.FIELD...]) as kubectl explain does.
func runExplain(ctx context.Context, g *Globals, s *Session, o explainOptions, arg string) error {
	res, fields, err := explainTarget(g.ErrOut, s.Mapper(), arg, o.apiVersion == "")
	if err != nil {
		return err
	}
	gvr := explain.GVR{Group: res.GVK.Group, Version: res.GVK.Version, Resource: res.Plural}
	kind := res.GVK.Kind
	if o.apiVersion != "" {
		group, version, ok := strings.Cut(o.apiVersion, "/")
		if !ok {
			group, version = "", o.apiVersion
		}
		if strings.Contains(version, "/") {
			return fmt.Errorf("unexpected GroupVersion string: %s", o.apiVersion)
		}
		gvr.Group, gvr.Version = group, version
	}
	var doc map[string]any
	if g.realCluster() {
		doc, err = serverDocument(g, gvr)
	} else {
		doc, err = embeddedDocument(ctx, s, gvr, kind)
	}
	if err != nil {
		return err
	}
	err = explain.Render(g.Out, doc, explain.Request{GVR: gvr, FieldPath: fields, Recursive: o.recursive, MaxDepth: o.maxDepth})
	var ee *explain.Error
	if errors.As(err, &ee) {
		return errors.New(ee.Msg)
	}
	return err
}

// explainTarget splits TYPE[.FIELD...] into the resource and the field
// path as kubectl does: the first JSONPath field names the resource,
// and with matchPrefix (no --api-version) "deployments.apps.spec" is
// read as the resource deployments.apps.
func explainTarget(w io.Writer, m cluster.Mapper, in string, matchPrefix bool) (cluster.Resource, []string, error) {
	nodes, err := explainPath(in)
	if err != nil {
		return cluster.Resource{}, nil, err
	}
	first, ok := nodes[0].(*jsonpath.FieldNode)
	if !ok {
		return cluster.Resource{}, nil, errors.New("invalid jsonpath syntax, first node must be field node")
	}
	res, err := m.Find(first.Value)
	if err != nil {
		var se *cluster.StatusError
		if errors.As(err, &se) {
			return cluster.Resource{}, nil, &noMatchError{msg: se.Message}
		}
		return cluster.Resource{}, nil, err
	}
	if msg := shortNameWarning(m, first.Value, res); msg != "" {
		printWarning(w, msg)
	}
	rest := nodes[1:]
	if matchPrefix {
		gr := res.Plural
		if res.GVK.Group != "" {
			gr += "." + res.GVK.Group
		}
		if suffix, ok := strings.CutPrefix(in, gr); ok {
			rest = nil
			if suffix != "" {
				sn, err := explainPath(suffix)
				if err != nil {
					return cluster.Resource{}, nil, err
				}
				rest = sn[1:]
			}
		}
	}
	var fields []string
	for _, n := range rest {
		f, ok := n.(*jsonpath.FieldNode)
		if !ok {
			if matchPrefix {
				return cluster.Resource{}, nil, errors.New("invalid jsonpath syntax, first node must be field node")
			}
			return cluster.Resource{}, nil, errors.New("invalid jsonpath syntax, all nodes must be field nodes")
		}
		fields = append(fields, f.Value)
	}
	return res, fields, nil
}

// noMatchError is a resource type the cluster does not serve.
type noMatchError struct{ msg string }

func (e *noMatchError) Error() string { return e.msg }

// explainPath parses TYPE.FIELD... as kubectl explain does: a JSONPath
// "{.TYPE.FIELD...}" of one list of nodes.
func explainPath(in string) ([]jsonpath.Node, error) {
	in = strings.TrimSuffix(in, ".")
	p, err := jsonpath.Parse("user", "{."+in+"}")
	if err != nil {
		return nil, err
	}
	if len(p.Root.Nodes) != 1 {
		return nil, errors.New("must pass in 1 jsonpath string")
	}
	list, ok := p.Root.Nodes[0].(*jsonpath.ListNode)
	if !ok || len(list.Nodes) == 0 {
		return nil, errors.New("must pass in 1 jsonpath string")
	}
	return list.Nodes, nil
}

// embeddedDocument is the OpenAPI document of gvr on the embedded
// cluster: Kubernetes's own for built-in kinds, the CRD's schema for
// custom resources.
func embeddedDocument(ctx context.Context, s *Session, gvr explain.GVR, kind string) (map[string]any, error) {
	notFound := fmt.Errorf("couldn't find resource for %q", gvr.String())
	// The kind served in that group version under that resource name.
	found, servedGV := false, false
	for _, r := range s.Mapper().Resources() {
		if r.GVK.Group == gvr.Group && r.GVK.Version == gvr.Version {
			servedGV = true
			if r.Plural == gvr.Resource {
				kind, found = r.GVK.Kind, true
				break
			}
		}
	}
	if !found {
		if servedGV {
			// kubectl's template finds no path of the resource in the
			// group version's document.
			return nil, fmt.Errorf("GVR (%s) not found in OpenAPI schema", gvr.String())
		}
		return nil, notFound
	}
	doc, ok, err := explain.Builtin(gvr, kind)
	if err != nil || ok {
		return doc, err
	}
	crdGVK := schema.GVK{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}
	crd, err := s.Cluster.Get(ctx, crdGVK, "", gvr.Resource+"."+gvr.Group)
	if err != nil {
		if cluster.IsNotFound(err) {
			return nil, notFound
		}
		return nil, err
	}
	doc, ok, err = explain.CustomResource(crd, gvr.Version)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, notFound
	}
	return doc, nil
}

// serverDocument fetches the OpenAPI v3 document of gvr's group version
// from the real API server, as kubectl explain does.
func serverDocument(g *Globals, gvr explain.GVR) (map[string]any, error) {
	cfg, err := kube.RESTConfig(g.Kubeconfig, g.Context)
	if err != nil {
		return nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	paths, err := dc.OpenAPIV3().Paths()
	if err != nil {
		return nil, fmt.Errorf("failed to fetch list of groupVersions: %w", err)
	}
	path := "api/" + gvr.Version
	if gvr.Group != "" {
		path = "apis/" + gvr.Group + "/" + gvr.Version
	}
	gv, ok := paths[path]
	if !ok {
		return nil, fmt.Errorf("couldn't find resource for %q", gvr.String())
	}
	raw, err := gv.Schema("application/json")
	if err != nil {
		return nil, fmt.Errorf("failed to fetch openapi schema for %s: %w", path, err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("failed to parse openapi schema for %s: %w", path, err)
	}
	return doc, nil
}
