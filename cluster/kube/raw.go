package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/objref"
	kschema "github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

// The verbs but Watch go through a plain REST client: the request bodies
// are encoded and the responses decoded by package value, into the
// objects the rest of konverge works on, without client-go's unstructured
// JSON codec in between (a third of the client's time on a large apply).
// Errors are decoded by client-go, as the dynamic client decodes them.

// collection returns the path of a kind's collection in a namespace ("" for
// all namespaces, or a cluster-scoped kind) and how the kind is served.
func (c *Cluster) collection(gvk kschema.GVK, namespace string) ([]string, cluster.Resource, error) {
	res, err := c.mapper.ResourceFor(gvk)
	if err != nil {
		return nil, res, err
	}
	var p []string
	if gvk.Group == "" {
		p = []string{"/api", gvk.Version}
	} else {
		p = []string{"/apis", gvk.Group, gvk.Version}
	}
	if res.Namespaced && namespace != "" {
		p = append(p, "namespaces", namespace)
	}
	return append(p, res.Plural), res, nil
}

// item returns the path of one object, and of its subresource if any.
func (c *Cluster) item(gvk kschema.GVK, namespace, name string, subresource ...string) ([]string, error) {
	if name == "" {
		return nil, fmt.Errorf("resource name may not be empty")
	}
	p, _, err := c.collection(gvk, namespace)
	if err != nil {
		return nil, err
	}
	return append(append(p, name), subresource...), nil
}

// object decodes the object of a response.
func object(res rest.Result) (cluster.Object, error) {
	if err := res.Error(); err != nil {
		return nil, convert(err)
	}
	body, err := res.Raw()
	if err != nil {
		return nil, convert(err)
	}
	obj, err := value.DecodeObject(body)
	if err != nil {
		return nil, fmt.Errorf("decoding the server's answer: %w", err)
	}
	return obj, nil
}

func writeParams(r *rest.Request, dryRun bool, fieldManager, fieldValidation string) *rest.Request {
	if dryRun {
		r = r.Param("dryRun", metav1.DryRunAll)
	}
	if fieldManager != "" {
		r = r.Param("fieldManager", fieldManager)
	}
	if fieldValidation != "" {
		r = r.Param("fieldValidation", fieldValidation)
	}
	return r
}

// Get implements cluster.Reader.
func (c *Cluster) Get(ctx context.Context, gvk kschema.GVK, namespace, name string) (cluster.Object, error) {
	p, err := c.item(gvk, namespace, name)
	if err != nil {
		return nil, err
	}
	return object(c.rc.Get().AbsPath(p...).Do(ctx))
}

// List implements cluster.Reader.
func (c *Cluster) List(ctx context.Context, gvk kschema.GVK, opts ...cluster.ListOption) (*cluster.List, error) {
	o := cluster.CollectList(opts)
	p, _, err := c.collection(gvk, o.Namespace)
	if err != nil {
		return nil, err
	}
	r := c.rc.Get().AbsPath(p...)
	if o.LabelSelector != "" {
		r = r.Param("labelSelector", o.LabelSelector)
	}
	if o.FieldSelector != "" {
		r = r.Param("fieldSelector", o.FieldSelector)
	}
	if o.ResourceVersion != "" {
		r = r.Param("resourceVersion", o.ResourceVersion)
	}
	l, err := object(r.Do(ctx))
	if err != nil {
		return nil, err
	}
	// The items of a list carry no apiVersion and kind: they are the
	// list's.
	apiVersion, _ := l["apiVersion"].(string)
	kind, _ := l["kind"].(string)
	kind = strings.TrimSuffix(kind, "List")
	items, _ := l["items"].([]any)
	out := &cluster.List{Items: make([]cluster.Object, 0, len(items))}
	if md, ok := l["metadata"].(map[string]any); ok {
		out.ResourceVersion, _ = md["resourceVersion"].(string)
	}
	for _, it := range items {
		obj, ok := it.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("decoding the server's answer: an item of %s is not an object", kind+"List")
		}
		if _, ok := obj["apiVersion"]; !ok {
			obj["apiVersion"] = apiVersion
		}
		if _, ok := obj["kind"]; !ok {
			obj["kind"] = kind
		}
		out.Items = append(out.Items, obj)
	}
	return out, nil
}

// Create implements cluster.Writer.
func (c *Cluster) Create(ctx context.Context, obj cluster.Object, opts ...cluster.CreateOption) (cluster.Object, error) {
	o := cluster.CollectCreate(opts)
	p, _, err := c.collection(gvkOf(obj), objref.Namespace(obj))
	if err != nil {
		return nil, err
	}
	body, err := value.Encode(obj)
	if err != nil {
		return nil, err
	}
	r := writeParams(c.rc.Post().AbsPath(p...), o.DryRun, o.FieldManager, o.FieldValidation).Body(body)
	if o.MetadataOnly {
		return metadataOf(ctx, r, gvkOf(obj))
	}
	return object(r.Do(ctx))
}

// acceptMetadata asks the server for the metadata of the object it
// answers with, as a PartialObjectMetadata (the server's errors are
// Status objects as always).
const acceptMetadata = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"

// metadataOf sends r asking for the metadata of its answer alone, and
// returns it as an object of kind gvk that has only metadata.
func metadataOf(ctx context.Context, r *rest.Request, gvk kschema.GVK) (cluster.Object, error) {
	obj, err := object(r.SetHeader("Accept", acceptMetadata).Do(ctx))
	if err != nil {
		return nil, err
	}
	obj["apiVersion"], obj["kind"] = gvk.APIVersion(), gvk.Kind
	return obj, nil
}

// Update implements cluster.Writer.
func (c *Cluster) Update(ctx context.Context, obj cluster.Object, opts ...cluster.UpdateOption) (cluster.Object, error) {
	return c.update(ctx, obj, nil, opts)
}

// UpdateStatus implements cluster.Writer.
func (c *Cluster) UpdateStatus(ctx context.Context, obj cluster.Object, opts ...cluster.UpdateOption) (cluster.Object, error) {
	return c.update(ctx, obj, []string{"status"}, opts)
}

func (c *Cluster) update(ctx context.Context, obj cluster.Object, sub []string, opts []cluster.UpdateOption) (cluster.Object, error) {
	o := cluster.CollectUpdate(opts)
	p, err := c.item(gvkOf(obj), objref.Namespace(obj), objref.Name(obj), sub...)
	if err != nil {
		return nil, err
	}
	body, err := value.Encode(obj)
	if err != nil {
		return nil, err
	}
	return object(writeParams(c.rc.Put().AbsPath(p...), o.DryRun, o.FieldManager, o.FieldValidation).Body(body).Do(ctx))
}

// Patch implements cluster.Writer.
func (c *Cluster) Patch(ctx context.Context, gvk kschema.GVK, namespace, name string, pt cluster.PatchType, patch []byte, opts ...cluster.PatchOption) (cluster.Object, error) {
	o := cluster.CollectPatch(opts)
	var sub []string
	if o.Subresource != "" {
		sub = []string{o.Subresource}
	}
	p, err := c.item(gvk, namespace, name, sub...)
	if err != nil {
		return nil, err
	}
	r := writeParams(c.rc.Patch(types.PatchType(pt)).AbsPath(p...), o.DryRun, o.FieldManager, o.FieldValidation)
	if pt == cluster.ApplyPatchType {
		r = r.Param("force", fmt.Sprint(o.Force))
	}
	r = r.Body(patch)
	if o.MetadataOnly && o.Subresource == "" {
		return metadataOf(ctx, r, gvk)
	}
	return object(r.Do(ctx))
}

// deleteOptions is the body of a deletion.
type deleteOptions struct {
	metav1.TypeMeta `json:",inline"`
	metav1.DeleteOptions
}

// Delete implements cluster.Writer.
func (c *Cluster) Delete(ctx context.Context, gvk kschema.GVK, namespace, name string, opts ...cluster.DeleteOption) error {
	o := cluster.CollectDelete(opts)
	p, err := c.item(gvk, namespace, name)
	if err != nil {
		return err
	}
	body, err := json.Marshal(deleteOptionsOf(o))
	if err != nil {
		return err
	}
	return convert(c.rc.Delete().AbsPath(p...).Body(body).Do(ctx).Error())
}

// deleteOptionsOf is the meta/v1 DeleteOptions of a Delete (or of an
// Eviction's deleteOptions).
func deleteOptionsOf(o cluster.DeleteOptions) deleteOptions {
	do := deleteOptions{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "DeleteOptions"}}
	do.DryRun = dryRun(o.DryRun)
	do.GracePeriodSeconds = o.GracePeriodSeconds
	if o.PropagationPolicy != "" {
		pp := metav1.DeletionPropagation(o.PropagationPolicy)
		do.PropagationPolicy = &pp
	}
	if o.UID != "" || o.ResourceVersion != "" {
		do.Preconditions = &metav1.Preconditions{}
		if o.UID != "" {
			uid := types.UID(o.UID)
			do.Preconditions.UID = &uid
		}
		if o.ResourceVersion != "" {
			rv := o.ResourceVersion
			do.Preconditions.ResourceVersion = &rv
		}
	}
	return do
}
