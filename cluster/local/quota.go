package local

import (
	"sort"
	"strings"

	"github.com/konverge/konverge/cluster/local/internal/jsonobj"
	"github.com/konverge/konverge/cluster/local/internal/usage"
	"github.com/konverge/konverge/value"
)

// ResourceQuota, as the admission plugin and kube-controller-manager's
// quota controller keep it together: a create or update that would take a
// namespace's usage past a quota's hard limit is refused with the API
// server's message, and every quota's status (hard, used) is recomputed
// before each transaction commits, for the namespaces it changed.

var resourceQuotaGK = groupKind{"", "ResourceQuota"}

// quotaResourceName is "count/<plural>[.<group>]", the object-count name
// of a kind.
func (t *txn) quotaCountName(gk groupKind) string {
	for _, r := range t.api.mapper.Resources() {
		if r.GVK.Group == gk.Group && r.GVK.Kind == gk.Kind {
			return "count/" + r.GroupResource()
		}
	}
	return "count/" + strings.ToLower(gk.Kind) + "s"
}

// objectUsage is what one object uses, as the quota evaluators count it.
func (t *txn) objectUsage(gk groupKind, obj map[string]any) usage.Set {
	return usage.Of(t.quotaCountName(gk), jsonobj.GroupKind(gk), obj)
}

// nsQuotas is what a transaction knows of one namespace's quotas.
type nsQuotas struct {
	quotas []map[string]any
	// used is per quota (scopes differ), filled in by a recount.
	used []usage.Set
}

// quotasOf loads the quotas of a namespace and counts their usage, once
// per transaction; puts and removes keep the counts current.
func (t *txn) quotasOf(ns string) (*nsQuotas, error) {
	if q, ok := t.quotas[ns]; ok {
		return q, nil
	}
	quotas, err := t.objectsIn(resourceQuotaGK, ns)
	if err != nil {
		return nil, err
	}
	q := &nsQuotas{quotas: quotas, used: make([]usage.Set, len(quotas))}
	for i := range q.used {
		q.used[i] = usage.Set{}
	}
	if len(quotas) > 0 {
		for _, gk := range t.kinds() {
			err := t.scan(gk, ns, func(sns, name string, raw []byte) error {
				if sns != ns {
					return nil
				}
				obj, err := value.DecodeObject(raw)
				if err != nil {
					return t.wrap("decode", objKey{gk: gk, namespace: ns, name: name}, err)
				}
				q.charge(t, gk, nil, obj)
				return nil
			})
			if err != nil {
				return nil, err
			}
		}
	}
	if t.quotas == nil {
		t.quotas = map[string]*nsQuotas{}
	}
	t.quotas[ns] = q
	return q, nil
}

// charge moves the counts from what old used to what obj uses.
func (q *nsQuotas) charge(t *txn, gk groupKind, old, obj map[string]any) {
	for i, quota := range q.quotas {
		hard := child(child(quota, "spec"), "hard")
		if old != nil && usage.Selects(quota, jsonobj.GroupKind(gk), old) {
			for name, v := range t.objectUsage(gk, old) {
				if _, ok := hard[name]; ok {
					v.Neg()
					q.used[i].Add(name, v)
				}
			}
		}
		if obj != nil && usage.Selects(quota, jsonobj.GroupKind(gk), obj) {
			for name, v := range t.objectUsage(gk, obj) {
				if _, ok := hard[name]; ok {
					q.used[i].Add(name, v)
				}
			}
		}
	}
}

// quotaChanged keeps the counts of a namespace current after a put or
// remove, and marks its quotas for a status update.
func (t *txn) quotaChanged(k objKey, old, obj map[string]any) {
	if k.namespace == "" {
		return
	}
	if k.gk == resourceQuotaGK {
		// The set of quotas changed: count again when needed.
		delete(t.quotas, k.namespace)
	} else if q, ok := t.quotas[k.namespace]; ok {
		if len(q.quotas) == 0 {
			return
		}
		q.charge(t, k.gk, old, obj)
	} else if !t.hasQuotas(k.namespace) {
		return
	}
	if t.quotaDirty == nil {
		t.quotaDirty = map[string]bool{}
	}
	t.quotaDirty[k.namespace] = true
}

// syncQuotaStatus writes the status of the quotas of every namespace the
// transaction changed: hard as the spec says, used as counted.
func (t *txn) syncQuotaStatus() error {
	for len(t.quotaDirty) > 0 {
		dirty := t.quotaDirty
		t.quotaDirty = nil
		names := make([]string, 0, len(dirty))
		for ns := range dirty {
			names = append(names, ns)
		}
		sort.Strings(names)
		for _, ns := range names {
			if !t.hasQuotas(ns) {
				continue
			}
			q, err := t.quotasOf(ns)
			if err != nil {
				return err
			}
			for i, quota := range q.quotas {
				k := objKey{gk: resourceQuotaGK, namespace: ns, name: metaString(quota, "name")}
				rec, err := t.load(k)
				if err != nil || rec == nil {
					return err
				}
				hard := child(child(rec.obj, "spec"), "hard")
				status := map[string]any{}
				if len(hard) > 0 {
					h, u := map[string]any{}, map[string]any{}
					for n, v := range hard {
						h[n] = v
						used := q.used[i][n]
						u[n] = used.String()
					}
					status["hard"], status["used"] = h, u
				}
				if value.Equal(rec.obj["status"], status) {
					continue
				}
				obj := value.DeepCopyObject(rec.obj)
				obj["status"] = status
				if err := t.save(k, obj, rec); err != nil {
					return err
				}
				q.quotas[i] = obj
			}
		}
		// Writing a status changes no usage: the loop ends.
		for ns := range t.quotaDirty {
			if dirty[ns] {
				delete(t.quotaDirty, ns)
			}
		}
	}
	return nil
}

// hasQuotas reports whether a namespace holds a ResourceQuota.
func (t *txn) hasQuotas(ns string) bool {
	if q, ok := t.quotas[ns]; ok {
		return len(q.quotas) > 0
	}
	b, _ := t.kindBucket(resourceQuotaGK, false)
	if b == nil {
		return false
	}
	prefix := nameKey(ns, "")
	k, _ := b.Cursor().Seek(prefix)
	return k != nil && strings.HasPrefix(string(k), string(prefix))
}
