// Package objref names Kubernetes objects and reads their metadata: the
// identity of an object (kind, namespace, name), printed the way kubectl
// prints it ("deployment.apps/nginx"), and accessors for the metadata fields
// of objects held as JSON values (map[string]any).
//
// It does not modify objects: setters return copies.
package objref

import (
	"maps"
	"strings"

	"github.com/konverge/konverge/schema"
)

// Ref identifies one object.
type Ref struct {
	schema.GVK
	Namespace string
	Name      string
}

// Of returns the identity of obj.
func Of(obj map[string]any) Ref {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	return Ref{GVK: schema.ParseGVK(apiVersion, kind), Namespace: Namespace(obj), Name: Name(obj)}
}

// KindGroup returns the kind and group as kubectl prints them in result
// lines: "deployment.apps", "service" for the core group.
func KindGroup(gvk schema.GVK) string {
	k := strings.ToLower(gvk.Kind)
	if gvk.Group == "" {
		return k
	}
	return k + "." + gvk.Group
}

// String returns kubectl's name for the object: "deployment.apps/nginx".
func (r Ref) String() string {
	return KindGroup(r.GVK) + "/" + r.Name
}

// Less orders refs by group, kind, namespace and name.
func (r Ref) Less(o Ref) bool {
	if r.Group != o.Group {
		return r.Group < o.Group
	}
	if r.Kind != o.Kind {
		return r.Kind < o.Kind
	}
	if r.Namespace != o.Namespace {
		return r.Namespace < o.Namespace
	}
	return r.Name < o.Name
}

// Metadata returns obj's metadata, or nil.
func Metadata(obj map[string]any) map[string]any {
	m, _ := obj["metadata"].(map[string]any)
	return m
}

func metaString(obj map[string]any, field string) string {
	s, _ := Metadata(obj)[field].(string)
	return s
}

// Name returns metadata.name.
func Name(obj map[string]any) string { return metaString(obj, "name") }

// Namespace returns metadata.namespace.
func Namespace(obj map[string]any) string { return metaString(obj, "namespace") }

// UID returns metadata.uid.
func UID(obj map[string]any) string { return metaString(obj, "uid") }

// ResourceVersion returns metadata.resourceVersion.
func ResourceVersion(obj map[string]any) string { return metaString(obj, "resourceVersion") }

// StringMap returns a map of strings in metadata (labels, annotations).
func StringMap(obj map[string]any, field string) map[string]string {
	m, _ := Metadata(obj)[field].(map[string]any)
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

// Labels returns metadata.labels.
func Labels(obj map[string]any) map[string]string { return StringMap(obj, "labels") }

// Annotations returns metadata.annotations.
func Annotations(obj map[string]any) map[string]string { return StringMap(obj, "annotations") }

// WithMetadata returns a copy of obj (sharing all but the top level and
// metadata) with metadata field set to v, or removed when v is nil.
func WithMetadata(obj map[string]any, field string, v any) map[string]any {
	// maps.Clone copies a small map's memory at once, where a loop of
	// inserts hashes every key again.
	out := maps.Clone(obj)
	if out == nil {
		out = make(map[string]any, 1)
	}
	newMD := maps.Clone(Metadata(obj))
	if newMD == nil {
		newMD = make(map[string]any, 1)
	}
	if v == nil {
		delete(newMD, field)
	} else {
		newMD[field] = v
	}
	out["metadata"] = newMD
	return out
}
