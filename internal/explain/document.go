package explain

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/konverge/konverge/openapi"
)

// served holds the definitions that kube-apiserver v1.37.1 serves
// (recorded by `go run ./internal/explain/internal/record`): they have the enums
// and "Possible enum values" that the documents of the Kubernetes
// repository (package openapi) lack.
//
//go:embed served.json.gz
var served []byte

// schemas returns the definitions explain reads, as JSON values: the
// served ones, and those of package openapi for the kinds of the groups
// a default kube-apiserver does not serve (alpha and beta versions).
// They are decoded once and shared (Render only reads them).
var schemas = sync.OnceValues(func() (map[string]any, error) {
	data, err := openapi.DefinitionsJSON()
	if err != nil {
		return nil, err
	}
	var defs map[string]any
	if err := json.Unmarshal(data, &defs); err != nil {
		return nil, fmt.Errorf("explain: definitions: %w", err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(served))
	if err != nil {
		return nil, fmt.Errorf("explain: served definitions: %w", err)
	}
	var fromServer map[string]any
	if err := json.NewDecoder(zr).Decode(&fromServer); err != nil {
		return nil, fmt.Errorf("explain: served definitions: %w", err)
	}
	for k, v := range fromServer {
		defs[k] = v
	}
	return defs, nil
})

// document returns a document of defs whose paths say that gvr serves
// the kind group/version/kind, as kube-apiserver's document of a group
// version does ("/apis/GROUP/VERSION/RESOURCE").
func document(defs map[string]any, gvr GVR, kind string) map[string]any {
	prefix := "/api"
	if gvr.Group != "" {
		prefix = "/apis/" + gvr.Group
	}
	path := prefix + "/" + gvr.Version + "/" + gvr.Resource
	gvk := map[string]any{"group": gvr.Group, "version": gvr.Version, "kind": kind}
	return map[string]any{
		"paths": map[string]any{
			path: map[string]any{"get": map[string]any{"x-kubernetes-group-version-kind": gvk}},
		},
		"components": map[string]any{"schemas": defs},
	}
}

// Builtin returns the document that explains a built-in kind served as
// gvr, from the OpenAPI documents of Kubernetes embedded in konverge
// (package openapi); ok is false when they do not define the kind in
// that group version.
func Builtin(gvr GVR, kind string) (doc map[string]any, ok bool, err error) {
	defs, err := schemas()
	if err != nil {
		return nil, false, err
	}
	for _, d := range defs {
		if hasGVK(d, gvr.Group, gvr.Version, kind) {
			return document(defs, gvr, kind), true, nil
		}
	}
	return nil, false, nil
}

// hasGVK reports whether a definition names the kind in its
// x-kubernetes-group-version-kind.
func hasGVK(def any, group, version, kind string) bool {
	m, _ := def.(map[string]any)
	list, _ := m["x-kubernetes-group-version-kind"].([]any)
	for _, e := range list {
		g, _ := e.(map[string]any)
		if g["group"] == group && g["version"] == version && g["kind"] == kind {
			return true
		}
	}
	return false
}

// CustomResource returns the document that explains the custom resources
// of a CustomResourceDefinition (apiextensions.k8s.io/v1, as JSON values)
// in one of its versions, built as kube-apiserver publishes it: the
// version's openAPIV3Schema with apiVersion, kind and metadata (described
// as for every object) set at its root and in the embedded resources
// (x-kubernetes-embedded-resource). ok is false when the CRD has no such
// version.
func CustomResource(crd map[string]any, version string) (doc map[string]any, ok bool, err error) {
	defs, err := schemas()
	if err != nil {
		return nil, false, err
	}
	spec, _ := crd["spec"].(map[string]any)
	group, _ := spec["group"].(string)
	names, _ := spec["names"].(map[string]any)
	kind, _ := names["kind"].(string)
	plural, _ := names["plural"].(string)
	versions, _ := spec["versions"].([]any)
	var root any
	found := false
	for _, v := range versions {
		vm, _ := v.(map[string]any)
		if vm["name"] != version {
			continue
		}
		found = true
		if s, ok := vm["schema"].(map[string]any); ok {
			root = s["openAPIV3Schema"]
		}
	}
	if !found || kind == "" {
		return nil, false, nil
	}
	if root == nil {
		if val, ok := spec["validation"].(map[string]any); ok {
			root = val["openAPIV3Schema"]
		}
	}
	typeMeta, _ := defs["io.k8s.api.core.v1.Pod"].(map[string]any)
	props, _ := typeMeta["properties"].(map[string]any)
	var def map[string]any
	if m, ok := deepCopy(root).(map[string]any); ok {
		def = m
		metadata, _ := props["metadata"].(map[string]any)
		setProperty(def, "metadata", objectMeta(metadata["description"]))
		setProperty(def, "apiVersion", props["apiVersion"])
		setProperty(def, "kind", props["kind"])
		addEmbedded(def, props)
	} else {
		def = map[string]any{"type": "object"}
	}
	def["x-kubernetes-group-version-kind"] = []any{map[string]any{"group": group, "version": version, "kind": kind}}
	all := make(map[string]any, len(defs)+1)
	for k, v := range defs {
		all[k] = v
	}
	all[modelName(group, version, kind)] = def
	return document(all, GVR{Group: group, Version: version, Resource: plural}, kind), true, nil
}

// objectMeta is a property that refers to ObjectMeta, as published.
func objectMeta(description any) map[string]any {
	return map[string]any{
		"description": description,
		"allOf":       []any{map[string]any{"$ref": openapi.RefPrefix + "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}},
	}
}

// addEmbedded sets apiVersion, kind and metadata in the embedded resources
// under s, as kube-apiserver does.
func addEmbedded(s map[string]any, typeMeta map[string]any) {
	if p, ok := s["properties"].(map[string]any); ok {
		for _, v := range p {
			if m, ok := v.(map[string]any); ok {
				addEmbedded(m, typeMeta)
			}
		}
	}
	if m, ok := s["items"].(map[string]any); ok {
		addEmbedded(m, typeMeta)
	}
	if m, ok := s["additionalProperties"].(map[string]any); ok {
		addEmbedded(m, typeMeta)
	}
	if s["x-kubernetes-embedded-resource"] != true {
		return
	}
	withDesc := func(p any, desc string) map[string]any {
		m, _ := deepCopy(p).(map[string]any)
		if m == nil {
			m = map[string]any{"type": "string"}
		}
		m["description"] = desc
		return m
	}
	setProperty(s, "apiVersion", withDesc(typeMeta["apiVersion"], "apiVersion defines the versioned schema of this representation of an object. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources"))
	setProperty(s, "kind", withDesc(typeMeta["kind"], "kind is a string value representing the type of this object. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"))
	metadata, _ := typeMeta["metadata"].(map[string]any)
	setProperty(s, "metadata", objectMeta(metadata["description"]))
	req, _ := s["required"].([]any)
	for _, f := range []string{"kind", "apiVersion"} {
		if !slices.Contains(req, any(f)) {
			req = append(req, f)
		}
	}
	s["required"] = req
}

func setProperty(s map[string]any, name string, v any) {
	p, ok := s["properties"].(map[string]any)
	if !ok {
		p = map[string]any{}
		s["properties"] = p
	}
	p[name] = v
}

// modelName is the definition name of a custom kind: its group reversed
// ("stable.example.com" → "com.example.stable.v1.CronTab").
func modelName(group, version, kind string) string {
	parts := strings.Split(group, ".")
	slices.Reverse(parts)
	return strings.Join(parts, ".") + "." + version + "." + kind
}

func deepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}
