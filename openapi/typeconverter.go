package openapi

import (
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/konverge/konverge/schema"
)

// TypeConverter returns the converter between objects of the built-in kinds
// and structured-merge-diff typed values that server-side apply merges
// with: the one kube-apiserver builds from the same definitions
// (managedfields.NewTypeConverter with preserveUnknownFields false), from
// the schema converted ahead of time. Objects must be
// *unstructured.Unstructured; a kind without a definition fails with an
// error that runtime.IsNotRegisteredError recognises, as kube-apiserver's
// does for a version it does not serve.
func TypeConverter() (managedfields.TypeConverter, error) {
	t, err := smd()
	if err != nil {
		return nil, err
	}
	return &typeConverter{t: t}, nil
}

// Type returns the structured-merge-diff type of a built-in kind; ok is
// false when no definition names the kind.
func Type(gvk schema.GVK) (typed.ParseableType, bool, error) {
	t, err := smd()
	if err != nil {
		return typed.ParseableType{}, false, err
	}
	name, ok := t.byGVK[gvk]
	if !ok {
		return typed.ParseableType{}, false, nil
	}
	return t.parser.Type(name), true, nil
}

type typeConverter struct {
	t     *smdTables
	mu    sync.Mutex
	types map[schema.GVK]*typed.ParseableType
}

func (c *typeConverter) typeOf(gvk schema.GVK) *typed.ParseableType {
	c.mu.Lock()
	defer c.mu.Unlock()
	if pt, ok := c.types[gvk]; ok {
		return pt
	}
	var pt *typed.ParseableType
	if name, ok := c.t.byGVK[gvk]; ok {
		p := c.t.parser.Type(name)
		pt = &p
	}
	if c.types == nil {
		c.types = map[schema.GVK]*typed.ParseableType{}
	}
	c.types[gvk] = pt
	return pt
}

// ObjectToTyped implements managedfields.TypeConverter.
func (c *typeConverter) ObjectToTyped(obj runtime.Object, opts ...typed.ValidationOptions) (*typed.TypedValue, error) {
	return objectToTyped(obj, c.typeOf, opts)
}

// TypedToObject implements managedfields.TypeConverter.
func (c *typeConverter) TypedToObject(v *typed.TypedValue) (runtime.Object, error) {
	return typedToObject(v)
}

func objectToTyped(obj runtime.Object, typeOf func(schema.GVK) *typed.ParseableType, opts []typed.ValidationOptions) (*typed.TypedValue, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("openapi: convert %T: only *unstructured.Unstructured objects can be converted", obj)
	}
	gvk := u.GroupVersionKind()
	pt := typeOf(schema.GVK{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind})
	if pt == nil {
		return nil, runtime.NewNotRegisteredErrForKind("openapi", runtimeschema.GroupVersionKind(gvk))
	}
	return pt.FromUnstructured(u.UnstructuredContent(), opts...)
}

func typedToObject(v *typed.TypedValue) (runtime.Object, error) {
	u := v.AsValue().Unstructured()
	m, ok := u.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("openapi: typed value is a %T, not an object", u)
	}
	return &unstructured.Unstructured{Object: m}, nil
}
