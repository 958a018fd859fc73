package manifest

import (
	"fmt"
	"strings"

	"github.com/konverge/konverge/value"
)

// docResult is what one document of a file gave: objects and errors whose
// Sources lack the file and document number, filled in once the documents
// of the file are counted.
type docResult struct {
	line int
	objs []Object
	errs []*Error
	// sum is the digest of the document's bytes (see Object.Digest).
	sum uint64
}

func (r *docResult) fail(src Source, object, path string, err error) {
	r.errs = append(r.errs, &Error{Source: src, Object: object, Path: path, Err: err})
}

// objectName names an object in errors: "Kind/name", "Kind", or "".
func objectName(kind, name string) string {
	if kind == "" || name == "" {
		return kind
	}
	return kind + "/" + name
}

func stringField(m map[string]any, field string) string {
	s, _ := m[field].(string)
	return s
}

// isList reports whether obj is a List to flatten: a kind ending in "List"
// (List, v1 List, ConfigMapList, FooList of a CRD) with an items field.
func isList(obj map[string]any) bool {
	_, hasItems := obj["items"]
	return hasItems && strings.HasSuffix(stringField(obj, "kind"), "List")
}

// document turns the decoded value of one document into its objects: the
// document itself, or the items of a List. itemLines are the lines of the
// items of a top-level List, when known; text is the document's bytes.
func document(v any, line int, itemLines []int, text []byte) docResult {
	r := docResult{line: line, sum: digestText(text)}
	obj, ok := v.(map[string]any)
	if !ok {
		r.fail(Source{Line: line}, "", "", fmt.Errorf("a document must be a mapping (an object with apiVersion and kind), not a %s", value.TypeName(v)))
		return r
	}
	if !isList(obj) {
		r.check(obj, Source{Line: line})
		return r
	}
	// Flatten breadth first, as kubectl's FlattenListVisitor does: the
	// items of nested Lists come after the items of their parent.
	type entry struct {
		v    any
		line int
	}
	queue := []entry{{obj, line}}
	item := 0
	for i := 0; i < len(queue); i++ {
		e := queue[i]
		src := Source{Line: e.line}
		if i > 0 {
			item++
			src.Item = item
		}
		m, ok := e.v.(map[string]any)
		if !ok {
			r.fail(src, "", "", fmt.Errorf("a List item must be a mapping (an object with apiVersion and kind), not a %s", value.TypeName(e.v)))
			continue
		}
		if i > 0 && !isList(m) {
			r.check(m, src)
			continue
		}
		kind, apiVersion := stringField(m, "kind"), stringField(m, "apiVersion")
		items, ok := m["items"].([]any)
		if !ok && m["items"] != nil {
			r.fail(src, kind, "items", fmt.Errorf("must be a list, not a %s", value.TypeName(m["items"])))
			continue
		}
		for j, it := range items {
			// Typed lists (a PodList from kubectl get -o yaml) leave out
			// the items' kind and apiVersion; kubectl takes them from the
			// List.
			if im, ok := it.(map[string]any); ok && stringField(im, "kind") == "" && stringField(im, "apiVersion") == "" {
				im["kind"] = strings.TrimSuffix(kind, "List")
				im["apiVersion"] = apiVersion
			}
			l := e.line
			if i == 0 && j < len(itemLines) {
				l = itemLines[j]
			}
			queue = append(queue, entry{it, l})
		}
	}
	return r
}

// check adds obj to r when it has the fields every object needs, or the
// errors about those it lacks.
func (r *docResult) check(obj map[string]any, src Source) {
	kind, _ := obj["kind"].(string)
	meta, metaOK := obj["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	id := objectName(kind, name)
	n := len(r.errs)
	for _, f := range []string{"apiVersion", "kind"} {
		if err := requireString(obj, f); err != nil {
			r.fail(src, id, f, err)
		}
	}
	switch {
	case obj["metadata"] == nil:
		r.fail(src, id, "metadata.name", ErrRequired)
	case !metaOK:
		r.fail(src, id, "metadata", fmt.Errorf("must be a mapping, not a %s", value.TypeName(obj["metadata"])))
	default:
		nameErr := requireString(meta, "name")
		genErr := requireString(meta, "generateName")
		switch {
		case nameErr != nil && nameErr != ErrRequired:
			r.fail(src, id, "metadata.name", nameErr)
		case genErr != nil && genErr != ErrRequired:
			r.fail(src, id, "metadata.generateName", genErr)
		case nameErr != nil && genErr != nil:
			r.fail(src, id, "metadata.name", ErrRequired)
		}
	}
	if len(r.errs) == n {
		r.objs = append(r.objs, Object{Obj: obj, Source: src, Digest: itemDigest(r.sum, src.Item)})
	}
}

// requireString returns nil when m[field] is a non-empty string,
// ErrRequired when it is missing, null or "", and a type error otherwise.
func requireString(m map[string]any, field string) error {
	switch v := m[field].(type) {
	case string:
		if v != "" {
			return nil
		}
	case nil:
	default:
		return fmt.Errorf("must be a string, not a %s", value.TypeName(v))
	}
	return ErrRequired
}
