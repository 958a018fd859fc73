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
	"maps"
	"slices"
	"sync"

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
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	b, err := AppendEncode((*bp)[:0], config)
	if err != nil {
		return "", err
	}
	if cap(b) <= 64<<10 {
		*bp = b
	}
	return string(b), nil
}

// AppendEncode appends Encode's value for config to dst: for a caller
// that compares it with an annotation it holds, or writes it on, without
// making a string of it.
func AppendEncode(dst []byte, config map[string]any) ([]byte, error) {
	b, _, err := AppendEncodeIn(dst, config, "")
	return b, err
}

// AppendEncodeIn is AppendEncode of config with metadata.namespace set to
// namespace (config as it is when namespace is empty), without making
// that copy of config: for a caller that settles an object's namespace
// only when it needs the object. It also reports whether every value it
// wrote (the annotation itself is not) decodes as itself (see
// value.AppendEncodeExact); a null annotation, written as "", does.
// config's metadata must be an object when namespace is not empty.
func AppendEncodeIn(dst []byte, config map[string]any, namespace string) ([]byte, bool, error) {
	exact := true
	b, err := appendStripped(dst, config, namespace, &exact)
	if err != nil {
		// The error as the whole value gives it, with its path.
		whole := withAnnotation(config, nil)
		if namespace != "" {
			whole["metadata"].(map[string]any)["namespace"] = namespace
		}
		if _, err = value.Encode(whole); err == nil {
			return AppendEncodeIn(dst, config, namespace)
		}
		return dst, false, fmt.Errorf("lastapplied: %w", err)
	}
	return append(b, '\n'), exact, nil
}

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// appendStripped appends the encoding of withAnnotation(obj, nil) to dst
// without building it: obj's members, with metadata's, with the
// annotations but the last-applied one (null ones as "").
// metadata.namespace is written as namespace when that is not empty;
// exact is cleared when a value written does not decode as itself.
func appendStripped(dst []byte, obj map[string]any, namespace string, exact *bool) ([]byte, error) {
	md, _ := obj["metadata"].(map[string]any)
	return appendMembers(dst, obj, "metadata", "", exact, func(dst []byte) ([]byte, error) {
		ann, _ := md["annotations"].(map[string]any)
		return appendMembers(dst, md, "annotations", namespace, exact, func(dst []byte) ([]byte, error) {
			return appendAnnotations(dst, ann, exact)
		})
	})
}

// appendValue is value.AppendEncode that clears *exact for a value that
// does not decode as itself.
func appendValue(dst []byte, v any, exact *bool) ([]byte, error) {
	dst, ok, err := value.AppendEncodeExact(dst, v)
	if !ok {
		*exact = false
	}
	return dst, err
}

// appendMembers appends the encoding of the object m with its member
// named special written by appendSpecial (present whether m has it or
// not), and when namespace is not empty a member "namespace" of that
// value (in place of m's); keys sorted as encoding/json sorts them.
func appendMembers(dst []byte, m map[string]any, special, namespace string, exact *bool, appendSpecial func([]byte) ([]byte, error)) ([]byte, error) {
	var buf [16]string
	keys := buf[:0]
	for k := range m {
		if k != special && (namespace == "" || k != "namespace") {
			keys = append(keys, k)
		}
	}
	keys = append(keys, special)
	if namespace != "" {
		keys = append(keys, "namespace")
	}
	slices.Sort(keys)
	dst = append(dst, '{')
	var err error
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		if dst, err = appendKey(dst, k, exact); err != nil {
			return dst, err
		}
		dst = append(dst, ':')
		switch {
		case k == special:
			dst, err = appendSpecial(dst)
		case namespace != "" && k == "namespace":
			dst, err = appendValue(dst, namespace, exact)
		default:
			dst, err = appendValue(dst, m[k], exact)
		}
		if err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

// appendKey appends the encoding of an object's key: quoted as it is
// when no byte of it needs an escape (printable ASCII but the quote, the
// backslash and the three characters encoding/json escapes for HTML, <, >
// and &), which spares boxing it for value.AppendEncode.
func appendKey(dst []byte, k string, exact *bool) ([]byte, error) {
	for i := 0; i < len(k); i++ {
		if c := k[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return appendValue(dst, k, exact)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, k...)
	return append(dst, '"'), nil
}

// appendAnnotations appends the annotations as Encode writes them.
func appendAnnotations(dst []byte, ann map[string]any, exact *bool) ([]byte, error) {
	var buf [16]string
	keys := buf[:0]
	for k := range ann {
		if k != Annotation {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	dst = append(dst, '{')
	var err error
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		if dst, err = appendKey(dst, k, exact); err != nil {
			return dst, err
		}
		dst = append(dst, ':')
		v := ann[k]
		if v == nil {
			v = ""
		}
		if dst, err = appendValue(dst, v, exact); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
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

// SetEncoded is Set for a caller that has Encode's result for config
// already: encoded must be Encode(config).
func SetEncoded(config map[string]any, encoded string) map[string]any {
	return withAnnotation(config, &encoded)
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
	// maps.Clone copies a small map's memory at once, where a loop of
	// inserts hashes every key again.
	out := maps.Clone(obj)
	if out == nil {
		out = make(map[string]any, 1)
	}
	md, _ := obj["metadata"].(map[string]any)
	newMD := maps.Clone(md)
	if newMD == nil {
		newMD = make(map[string]any, 1)
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
