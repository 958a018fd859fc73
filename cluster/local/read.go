package local

import (
	"errors"
	"strconv"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/selector"
	"github.com/konverge/konverge/value"
)

// get is the Get verb.
func (t *txn) get(gvk schema.GVK, namespace, name string) (map[string]any, error) {
	res, err := t.resource(gvk)
	if err != nil {
		return nil, err
	}
	t.warnRequest(gkOf(res))
	obj, _, err := t.read(objKey{gk: gkOf(res), namespace: requestNamespace(res, namespace), name: name})
	if err != nil {
		return nil, err
	}
	if obj == nil {
		return nil, cluster.NewNotFound(res.GroupResource(), name)
	}
	obj["apiVersion"] = gvk.APIVersion()
	return obj, nil
}

// selection is a List's or Watch's filter.
type selection struct {
	namespace string
	labels    *selector.Labels
	fields    *fieldMatcher
}

// selectorError is the API server's BadRequest for a selector that does
// not parse.
func selectorError(err error) error {
	var se *selector.Error
	if errors.As(err, &se) {
		return cluster.NewBadRequest(se.Reason)
	}
	return cluster.NewBadRequest(err.Error())
}

func (t *txn) selection(res cluster.Resource, o cluster.ListOptions) (*selection, error) {
	sel := &selection{}
	if res.Namespaced {
		sel.namespace = o.Namespace
	}
	if o.LabelSelector != "" {
		m, err := selector.ParseLabels(o.LabelSelector)
		if err != nil {
			return nil, selectorError(err)
		}
		if !m.Empty() {
			sel.labels = &m
		}
	}
	if o.FieldSelector != "" {
		m, err := t.newFieldMatcher(res.GVK, o.FieldSelector)
		if err != nil {
			return nil, err
		}
		sel.fields = m
	}
	return sel, nil
}

// matches reports whether obj is selected; namespaces are chosen by the
// scan already.
func (s *selection) matches(obj map[string]any) bool {
	if s.labels != nil && !s.labels.Matches(stringMap(metadata(obj)["labels"])) {
		return false
	}
	if s.fields != nil && !s.fields.matches(obj) {
		return false
	}
	return true
}

func stringMap(v any) map[string]string {
	m, _ := v.(map[string]any)
	out := make(map[string]string, len(m))
	for k, x := range m {
		if s, ok := x.(string); ok {
			out[k] = s
		}
	}
	return out
}

// list is the List verb.
func (t *txn) list(gvk schema.GVK, o cluster.ListOptions) (*cluster.List, error) {
	res, err := t.resource(gvk)
	if err != nil {
		return nil, err
	}
	t.warnRequest(gkOf(res))
	sel, err := t.selection(res, o)
	if err != nil {
		return nil, err
	}
	out := &cluster.List{Items: []cluster.Object{}, ResourceVersion: strconv.FormatUint(t.rev, 10)}
	apiVersion := gvk.APIVersion()
	ro := ReadOptions{WithoutManagedFields: o.WithoutManagedFields}
	if o.WithoutManagedFields {
		// A caller that reads less (a table): the list's objects share
		// their common values and keep no text of their documents.
		ro.Interner = value.NewInterner(listShared, CommonPaths...)
	}
	err = t.scan(gkOf(res), sel.namespace, func(ns, name string, raw []byte) error {
		obj, err := decodeRead(raw, ro)
		if err != nil {
			return t.wrap("decode", objKey{gk: gkOf(res), namespace: ns, name: name}, err)
		}
		if !sel.matches(obj) {
			return nil
		}
		obj["apiVersion"] = apiVersion
		out.Items = append(out.Items, obj)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
