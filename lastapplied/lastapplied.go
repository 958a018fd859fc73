// Package lastapplied reads and writes the annotation in which client-side
// kubectl apply records the configuration it applied,
// kubectl.kubernetes.io/last-applied-configuration, byte for byte as kubectl
// does. The three-way merge (package merge) compares it with the next
// configuration to find the fields to delete.
//
// It does not merge, read files or talk to a cluster.
package lastapplied

import (
	"fmt"

	"github.com/konverge/konverge/value"
)

// Annotation is the key of the last-applied configuration annotation.
const Annotation = "kubectl.kubernetes.io/last-applied-configuration"

// Get returns the configuration recorded in obj's annotation, or nil when
// obj has none (an object created without apply, or with create without
// --save-config).
func Get(obj map[string]any) (map[string]any, error) {
	s, ok := annotations(obj)[Annotation].(string)
	if !ok || s == "" {
		return nil, nil
	}
	m, err := value.DecodeObject([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("lastapplied: annotation %s: %w", Annotation, err)
	}
	return m, nil
}

// Encode returns the annotation's value for config as kubectl writes it: the
// config with metadata.annotations present (empty if it had none or had
// null), a null annotation value turned into "" (kubectl reads annotations
// as strings before it writes them back; labels keep their nulls), and
// without the annotation itself, as compact JSON with sorted keys, followed
// by a newline.
func Encode(config map[string]any) (string, error) {
	stripped := withAnnotation(config, nil)
	b, err := value.Encode(stripped)
	if err != nil {
		return "", fmt.Errorf("lastapplied: %w", err)
	}
	return string(append(b, '\n')), nil
}

// Set returns a copy of config that carries its own last-applied annotation:
// the object that kubectl apply sends (the "modified" side of the three-way
// merge), with its null annotation values turned into "" as in Encode.
// config is not modified; the copy shares everything but metadata and its
// annotations with it.
func Set(config map[string]any) (map[string]any, error) {
	s, err := Encode(config)
	if err != nil {
		return nil, err
	}
	return withAnnotation(config, &s), nil
}

// Strip returns obj without the annotation (a copy of metadata and
// annotations; obj is not modified). Annotations that become empty stay as
// an empty map, as kubectl leaves them.
func Strip(obj map[string]any) map[string]any {
	if _, ok := annotations(obj)[Annotation]; !ok {
		return obj
	}
	return withAnnotation(obj, nil)
}

func annotations(obj map[string]any) map[string]any {
	md, _ := obj["metadata"].(map[string]any)
	a, _ := md["annotations"].(map[string]any)
	return a
}

// withAnnotation copies obj, its metadata and its annotations, with the
// annotation set to *v, or removed when v is nil. As kubectl's accessor
// (unstructured GetAnnotations/SetAnnotations), it writes a null value back
// as "".
func withAnnotation(obj map[string]any, v *string) map[string]any {
	out := make(map[string]any, len(obj)+1)
	for k, x := range obj {
		out[k] = x
	}
	md, _ := obj["metadata"].(map[string]any)
	newMD := make(map[string]any, len(md)+1)
	for k, x := range md {
		newMD[k] = x
	}
	old, _ := md["annotations"].(map[string]any)
	ann := make(map[string]any, len(old)+1)
	for k, x := range old {
		if k == Annotation {
			continue
		}
		if x == nil {
			x = ""
		}
		ann[k] = x
	}
	if v != nil {
		ann[Annotation] = *v
	}
	newMD["annotations"] = ann
	out["metadata"] = newMD
	return out
}
