// Package fieldmgr is the embedded API server's field management: the
// managedFields every write records and server-side apply, as
// kube-apiserver's field manager (k8s.io/apimachinery's managedfields over
// structured-merge-diff) does them, on the store's JSON objects.
//
// TrackFast records an Update without the library's conversions (the
// store's hot path); Update and Apply go through the library's
// FieldManager (NewManager), with the store's clock for the times of the
// entries (Times). The registry (package local) decides who writes and
// when; this package knows nothing of storage.
package fieldmgr

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/cluster/local/internal/jsonobj"
	"github.com/konverge/konverge/openapi"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

// ResetFields are the fields a kind's strategy resets on writes through a
// subresource, which no manager owns: status on the main resource of kinds
// with a status subresource, everything else on the status subresource.
func ResetFields(res cluster.Resource, subresource string) map[fieldpath.APIVersion]fieldpath.Filter {
	var set *fieldpath.Set
	switch {
	case subresource == "status":
		set = fieldpath.NewSet(fieldpath.MakePathOrDie("spec"), fieldpath.MakePathOrDie("metadata"))
	case res.Status:
		set = fieldpath.NewSet(fieldpath.MakePathOrDie("status"))
	default:
		return nil
	}
	return map[fieldpath.APIVersion]fieldpath.Filter{
		fieldpath.APIVersion(res.GVK.APIVersion()): fieldpath.NewExcludeSetFilter(set),
	}
}

// relabel is the object conversion of the embedded cluster, which keeps
// one version of each object and relabels its apiVersion; it also creates
// the empty object of a kind (for built-in kinds, as their Go types encode
// it) and leaves defaulting to the write path.
type relabel struct{ builtin bool }

// Convert implements runtime.ObjectConvertor.
func (relabel) Convert(in, out, context any) error {
	return errors.New("local: conversion between objects is not supported")
}

// ConvertToVersion implements runtime.ObjectConvertor.
func (relabel) ConvertToVersion(in runtime.Object, target runtime.GroupVersioner) (runtime.Object, error) {
	u, ok := in.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("local: cannot convert %T", in)
	}
	gvk := u.GroupVersionKind()
	to, ok := target.KindForGroupVersionKinds([]runtimeschema.GroupVersionKind{gvk})
	if !ok {
		return nil, runtime.NewNotRegisteredErrForKind("local", gvk)
	}
	if to == gvk {
		return u, nil
	}
	c := &unstructured.Unstructured{Object: make(map[string]any, len(u.Object))}
	for k, v := range u.Object {
		c.Object[k] = v
	}
	c.SetGroupVersionKind(to)
	return c, nil
}

// ConvertFieldLabel implements runtime.ObjectConvertor.
func (relabel) ConvertFieldLabel(gvk runtimeschema.GroupVersionKind, label, value string) (string, string, error) {
	return label, value, nil
}

// Default implements runtime.ObjectDefaulter: the write path defaults.
func (relabel) Default(runtime.Object) {}

// New implements runtime.ObjectCreater.
func (r relabel) New(kind runtimeschema.GroupVersionKind) (runtime.Object, error) {
	obj, err := EmptyObject(schema.GVK{Group: kind.Group, Version: kind.Version, Kind: kind.Kind}, r.builtin)
	if err != nil {
		return nil, err
	}
	return &unstructured.Unstructured{Object: obj}, nil
}

// EmptyObject is the object a create is compared with: for built-in kinds
// the zero value of their Go types as kube-apiserver encodes it, for
// custom resources only apiVersion and kind.
func EmptyObject(gvk schema.GVK, builtin bool) (map[string]any, error) {
	obj := map[string]any{}
	if builtin {
		zero, ok, err := openapi.EmptyObject(gvk)
		if err != nil {
			return nil, err
		}
		if ok {
			obj = zero
		}
	}
	SetGVK(obj, gvk)
	return obj, nil
}

// NewManager is kube-apiserver's field manager of a resource and
// subresource: for a custom resource (storage, its CRD's storage version)
// the CRD field manager, else a built-in kind's.
func NewManager(tc managedfields.TypeConverter, res cluster.Resource, subresource, storage string) (*managedfields.FieldManager, error) {
	gv := runtimeschema.GroupVersion{Group: res.GVK.Group, Version: res.GVK.Version}
	kind := gv.WithKind(res.GVK.Kind)
	reset := ResetFields(res, subresource)
	if storage != "" {
		hub := runtimeschema.GroupVersion{Group: res.GVK.Group, Version: storage}
		return managedfields.NewDefaultCRDFieldManager(tc, relabel{}, relabel{}, relabel{}, kind, hub, subresource, reset)
	}
	hub := runtimeschema.GroupVersion{Group: res.GVK.Group, Version: runtime.APIVersionInternal}
	return managedfields.NewDefaultFieldManager(tc, relabel{}, relabel{}, relabel{builtin: true}, kind, hub, subresource, reset)
}

// Update records in obj's managedFields what manager changed from live
// through the library's FieldManager (UpdateNoErrors), with the store's
// clock (now) for the times: the reference TrackFast is tested against.
func Update(fm *managedfields.FieldManager, gvk schema.GVK, live, obj map[string]any, manager, now string) error {
	times := NewTimes(live, obj)
	liveU := &unstructured.Unstructured{Object: times.Shallow(live)}
	newU := &unstructured.Unstructured{Object: obj}
	times.Mark(newU.Object)
	SetGVK(liveU.Object, gvk)
	out := fm.UpdateNoErrors(liveU, newU, manager)
	u, ok := out.(*unstructured.Unstructured)
	if !ok {
		return fmt.Errorf("local: field manager returned %T", out)
	}
	jsonobj.Metadata(obj)["managedFields"] = jsonobj.Metadata(u.Object)["managedFields"]
	return times.Restore(obj, now)
}

// Apply merges a server-side apply patch into live (created: the object
// does not exist, and live is its EmptyObject) for manager, as
// kube-apiserver's field manager does, and returns the object to write,
// whose managedFields record the apply. Conflicts with other managers fail
// with a Conflict *cluster.StatusError listing them, unless force takes
// the fields over.
func Apply(fm *managedfields.FieldManager, gvk schema.GVK, live, patch map[string]any, manager string, force, created bool, now string) (map[string]any, error) {
	times := NewTimes(live, nil)
	liveU := &unstructured.Unstructured{Object: times.Shallow(live)}
	SetGVK(liveU.Object, gvk)
	out, err := fm.Apply(liveU, &unstructured.Unstructured{Object: patch}, manager, force)
	if err != nil {
		return nil, FromAPIError(err)
	}
	u, ok := out.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("local: field manager returned %T", out)
	}
	// The merged object shares values with live and the patch; bring it
	// to the store's own representation.
	data, err := value.Encode(u.Object)
	if err != nil {
		return nil, fmt.Errorf("local: encode applied object: %w", err)
	}
	obj, err := value.DecodeObject(data)
	if err != nil {
		return nil, fmt.Errorf("local: decode applied object: %w", err)
	}
	if created {
		// What the empty object held as null, kube-apiserver's Go types
		// drop.
		DropNulls(obj)
	}
	if err := times.Restore(obj, now); err != nil {
		return nil, err
	}
	return obj, nil
}
