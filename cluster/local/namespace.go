package local

import (
	"fmt"
	"sort"
	"strings"

	"github.com/konverge/konverge/value"
)

// The namespace controller's report on a Terminating namespace whose
// content cannot go yet (objects held by finalizers, pods their kubelet
// has not stopped): the conditions kube-controller-manager writes, with
// its reasons and messages.

// namespaceConditionTypes are the conditions, in the order the controller
// writes them.
var namespaceConditionTypes = []struct{ typ, okReason, okMessage string }{
	{"NamespaceDeletionDiscoveryFailure", "ResourcesDiscovered", "All resources successfully discovered"},
	{"NamespaceDeletionGroupVersionParsingFailure", "ParsedGroupVersions", "All legacy kube types successfully parsed"},
	{"NamespaceDeletionContentFailure", "ContentDeleted", "All content successfully deleted, may be waiting on finalization"},
	{"NamespaceContentRemaining", "ContentRemoved", "All content successfully removed"},
	{"NamespaceFinalizersRemaining", "ContentHasNoFinalizers", "All content-preserving finalizers finished"},
}

// namespaceRemaining counts what is left in a namespace, by resource
// ("configmaps." , "deployments.apps") and by finalizer.
func (t *txn) namespaceRemaining(ns string) (byResource, byFinalizer map[string]int, err error) {
	byResource, byFinalizer = map[string]int{}, map[string]int{}
	for _, gk := range t.kinds() {
		err := t.scan(gk, ns, func(sns, name string, raw []byte) error {
			if sns != ns {
				return nil
			}
			byResource[t.resourceName(gk)]++
			obj, err := value.DecodeObject(raw)
			if err != nil {
				return t.wrap("decode", objKey{gk: gk, namespace: ns, name: name}, err)
			}
			for _, f := range finalizers(obj) {
				byFinalizer[f]++
			}
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
	}
	return byResource, byFinalizer, nil
}

// resourceName is "<plural>.<group>", as the namespace controller names
// a resource.
func (t *txn) resourceName(gk groupKind) string {
	for _, r := range t.api.mapper.Resources() {
		if r.GVK.Group == gk.Group && r.GVK.Kind == gk.Kind {
			return r.Plural + "." + gk.Group
		}
	}
	return strings.ToLower(gk.Kind) + "s." + gk.Group
}

// reportNamespaceContent writes the controller's conditions on a
// Terminating namespace whose content remains.
func (t *txn) reportNamespaceContent(k objKey, byResource, byFinalizer map[string]int) error {
	rec, err := t.load(k)
	if err != nil || rec == nil {
		return err
	}
	remaining := map[string][3]string{}
	if len(byResource) > 0 {
		var parts []string
		for r, n := range byResource {
			parts = append(parts, fmt.Sprintf("%s has %d resource instances", r, n))
		}
		sort.Strings(parts)
		remaining["NamespaceContentRemaining"] = [3]string{"True", "SomeResourcesRemain", "Some resources are remaining: " + strings.Join(parts, ", ")}
	}
	if len(byFinalizer) > 0 {
		var parts []string
		for f, n := range byFinalizer {
			parts = append(parts, fmt.Sprintf("%s in %d resource instances", f, n))
		}
		sort.Strings(parts)
		remaining["NamespaceFinalizersRemaining"] = [3]string{"True", "SomeFinalizersRemain", "Some content in the namespace has finalizers remaining: " + strings.Join(parts, ", ")}
	}
	obj := value.DeepCopyObject(rec.obj)
	status := child(obj, "status")
	now := t.now()
	for _, c := range namespaceConditionTypes {
		st, reason, msg := "False", c.okReason, c.okMessage
		if r, ok := remaining[c.typ]; ok {
			st, reason, msg = r[0], r[1], r[2]
		}
		setCondition(status, c.typ, st, reason, msg, now)
	}
	return t.save(k, obj, rec)
}
