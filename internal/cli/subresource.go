package cli

import (
	"context"
	"fmt"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/internal/printer"
	"github.com/konverge/konverge/schema"
)

// subresourceClient is the cluster's access to subresources.
func subresourceClient(c cluster.Interface) (cluster.SubresourceReader, error) {
	sc, ok := c.(cluster.SubresourceReader)
	if !ok {
		return nil, fmt.Errorf("the cluster does not serve subresources")
	}
	return sc, nil
}

// getSubresources replaces objects by their subresource.
func getSubresources(ctx context.Context, c cluster.Interface, found []gotObject, sub string) ([]gotObject, []error) {
	sc, err := subresourceClient(c)
	if err != nil {
		return nil, []error{err}
	}
	var out []gotObject
	var errs []error
	for _, f := range found {
		md := printer.Map(f.obj, "metadata")
		obj, err := sc.GetSubresource(ctx, f.res.GVK, printer.Str(md, "namespace"), printer.Str(md, "name"), sub)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, gotObject{res: f.res, obj: obj, listed: f.listed})
	}
	return out, errs
}

// scalableKinds are the built-in kinds whose scale subresource
// kube-apiserver serves (an autoscaling/v1 Scale).
var scalableKinds = map[[2]string]bool{
	{"apps", "Deployment"}:        true,
	{"apps", "ReplicaSet"}:        true,
	{"apps", "StatefulSet"}:       true,
	{"", "ReplicationController"}: true,
}

// replaceSubresourceError is what kube-apiserver answers to kubectl
// replace --subresource=sub (other than status) with obj, of resource res,
// as the request body: the body of a PUT to the scale subresource must be
// a Scale, which no manifest kubectl can map is, so a scalable built-in
// kind is refused as undecodable and a custom resource whose CRD serves
// scale as a type the scheme does not know; a subresource the kind does
// not serve is NotFound. Such a replace never writes anything.
func replaceSubresourceError(ctx context.Context, c cluster.Interface, res cluster.Resource, obj map[string]any, sub string) error {
	gvk := res.GVK
	if sub == "scale" {
		if scalableKinds[[2]string{gvk.Group, gvk.Kind}] {
			return &cluster.StatusError{Code: 400, Reason: cluster.ReasonBadRequest,
				Message: fmt.Sprintf("%s in version %q cannot be handled as a Scale: converting (%s.%s) to (autoscaling.Scale): unknown conversion",
					gvk.Kind, gvk.Version, gvk.Version, gvk.Kind)}
		}
		if crdServesScale(ctx, c, res) {
			return &cluster.StatusError{Code: 400, Reason: cluster.ReasonBadRequest,
				Message: `no kind is registered for the type v1.Scale in scheme "pkg/runtime/scheme.go:111"`}
		}
	}
	return &cluster.StatusError{Code: 404, Reason: cluster.ReasonNotFound, Message: "the server could not find the requested resource"}
}

// crdServesScale reports whether res is a custom resource whose
// CustomResourceDefinition serves the scale subresource in res's version.
func crdServesScale(ctx context.Context, c cluster.Interface, res cluster.Resource) bool {
	if res.GVK.Group == "" || res.Plural == "" {
		return false
	}
	crd, err := c.Get(ctx, schema.GVK{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}, "", res.Plural+"."+res.GVK.Group)
	if err != nil {
		return false
	}
	versions := printer.List(crd, "spec", "versions")
	for _, v := range versions {
		vm, _ := v.(map[string]any)
		if printer.Str(vm, "name") != res.GVK.Version {
			continue
		}
		_, ok := printer.Map(vm, "subresources")["scale"].(map[string]any)
		return ok
	}
	return false
}
