package local

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/cluster/local/internal/jsonobj"
	"github.com/konverge/konverge/cluster/local/internal/strategy"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/selector"
)

// The registry's side of the per-kind strategies (package
// internal/strategy), and field selectors.

var (
	namespaceGK = groupKind{"", "Namespace"}
	podGK       = groupKind{"", "Pod"}
	crdGK       = groupKind{"apiextensions.k8s.io", "CustomResourceDefinition"}
)

// initialNamespaces exist in every cluster; Open recreates them.
var initialNamespaces = []string{"default", "kube-system", "kube-public", "kube-node-lease"}

// immortalNamespaces cannot be deleted (the NamespaceLifecycle admission
// plugin).
var immortalNamespaces = []string{"default", "kube-system", "kube-public"}

// Finalizers the store itself carries out.
const (
	finalizerOrphan     = "orphan"
	finalizerForeground = "foregroundDeletion"
	finalizerCRDCleanup = "customresourcecleanup.apiextensions.k8s.io"
	finalizerNamespace  = strategy.NamespaceFinalizer // in a Namespace's spec.finalizers
)

// generationRuleFor returns the generation rule of a kind (see
// strategy.GenerationOf).
func (t *txn) generationRuleFor(res cluster.Resource) (strategy.Generation, bool) {
	_, custom := t.api.crds[gkOf(res)]
	return strategy.GenerationOf(jsonobj.GroupKind(gkOf(res)), custom, res.Status)
}

// prepareForCreate is the kind's strategy on create (see
// strategy.PrepareForCreate).
func (t *txn) prepareForCreate(res cluster.Resource, obj map[string]any, noLabels bool) {
	c := strategy.Create{NoLabels: noLabels, Now: t.now()}
	if _, c.Custom = t.api.crds[gkOf(res)]; c.Custom {
		if v := t.crdVersion(res); v != nil {
			c.Schema = v.schema
		}
	}
	strategy.PrepareForCreate(res, obj, c)
}

func containsAny(list []any, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// fieldSelectors lists, per kind, the fields a field selector may name
// besides metadata.name and metadata.namespace, with the value an absent
// field has ("" unless the field is a number or a boolean).
var fieldSelectors = map[groupKind]map[string]string{
	{"", "Pod"}: {
		"spec.nodeName": "", "spec.restartPolicy": "", "spec.schedulerName": "",
		"spec.serviceAccountName": "", "spec.hostNetwork": "false", "status.phase": "",
		"status.podIP": "", "status.nominatedNodeName": "",
	},
	{"", "Node"}:                  {"spec.unschedulable": "false"},
	{"", "ReplicationController"}: {"status.replicas": "0"},
	{"", "Event"}: {
		"involvedObject.kind": "", "involvedObject.namespace": "", "involvedObject.name": "",
		"involvedObject.uid": "", "involvedObject.apiVersion": "", "involvedObject.resourceVersion": "",
		"involvedObject.fieldPath": "", "reason": "", "reportingComponent": "", "source": "", "type": "",
	},
	{"", "Namespace"}:      {"status.phase": ""},
	{"", "Secret"}:         {"type": ""},
	{"", "Service"}:        {"spec.clusterIP": "", "spec.type": ""},
	{"apps", "ReplicaSet"}: {"status.replicas": "0"},
	{"batch", "Job"}:       {"status.successful": "0"},
}

// fieldMatcher is a parsed field selector for one kind.
type fieldMatcher struct {
	reqs   []fieldRequirement
	absent map[string]string
}

// fieldRequirement is one term of a field selector.
type fieldRequirement struct {
	Field, Value string
	Not          bool
}

// fieldRequirements splits a field selector, parsed and printed in
// canonical form by package selector, into its terms.
func fieldRequirements(sel string) ([]fieldRequirement, error) {
	f, err := selector.ParseFields(sel)
	if err != nil {
		return nil, selectorError(err)
	}
	var reqs []fieldRequirement
	canonical := f.String()
	for len(canonical) > 0 {
		// A term runs to the next comma that is not escaped.
		end := len(canonical)
		for i := 0; i < len(canonical); i++ {
			if canonical[i] == '\\' {
				i++
			} else if canonical[i] == ',' {
				end = i
				break
			}
		}
		term := canonical[:end]
		canonical = strings.TrimPrefix(canonical[end:], ",")
		var r fieldRequirement
		if i := strings.Index(term, "!="); i >= 0 {
			r = fieldRequirement{Field: term[:i], Value: term[i+2:], Not: true}
		} else if i := strings.IndexByte(term, '='); i >= 0 {
			r = fieldRequirement{Field: term[:i], Value: term[i+1:]}
		} else {
			return nil, cluster.NewBadRequest(fmt.Sprintf("invalid selector: '%s'", sel))
		}
		r.Value = unescapeFieldValue(r.Value)
		reqs = append(reqs, r)
	}
	return reqs, nil
}

func unescapeFieldValue(v string) string {
	if !strings.Contains(v, "\\") {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) {
			i++
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

// newFieldMatcher parses a field selector and checks that the kind
// supports every field it names.
func (t *txn) newFieldMatcher(gvk schema.GVK, sel string) (*fieldMatcher, error) {
	reqs, err := fieldRequirements(sel)
	if err != nil || len(reqs) == 0 {
		return nil, err
	}
	gk := groupKind{gvk.Group, gvk.Kind}
	extra, builtinTable := fieldSelectors[gk]
	if crd, ok := t.api.crds[gk]; ok {
		extra = nil
		if v := crd.versions[gvk.Version]; v != nil {
			extra = v.selectable
		}
	}
	for _, r := range reqs {
		switch {
		case r.Field == "metadata.name":
		case r.Field == "metadata.namespace" && gk != groupKind{"", "Node"} && gk != namespaceGK:
		default:
			if _, ok := extra[r.Field]; ok {
				continue
			}
			if builtinTable {
				return nil, cluster.NewBadRequest("field label not supported: " + r.Field)
			}
			return nil, cluster.NewBadRequest(fmt.Sprintf("%q is not a known field selector: only %q, %q", r.Field, "metadata.name", "metadata.namespace"))
		}
	}
	return &fieldMatcher{reqs: reqs, absent: extra}, nil
}

// matches reports whether obj satisfies every requirement.
func (m *fieldMatcher) matches(obj map[string]any) bool {
	for _, r := range m.reqs {
		v := fieldValue(obj, r.Field, m.absent[r.Field])
		if (v == r.Value) == r.Not {
			return false
		}
	}
	return true
}

// fieldValue reads a dotted path of obj as a field selector sees it.
func fieldValue(obj map[string]any, path, absent string) string {
	if path == "source" { // Event: the component of its source
		path = "source.component"
	}
	var cur any = obj
	for _, f := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return absent
		}
		if cur, ok = m[f]; !ok {
			return absent
		}
	}
	switch v := cur.(type) {
	case string:
		return v
	case bool:
		return strconv.FormatBool(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case nil:
		return absent
	}
	return absent
}
