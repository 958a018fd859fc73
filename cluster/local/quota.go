package local

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/value"
)

// ResourceQuota, as the admission plugin and kube-controller-manager's
// quota controller keep it together: a create or update that would take a
// namespace's usage past a quota's hard limit is refused with the API
// server's message, and every quota's status (hard, used) is recomputed
// before each transaction commits, for the namespaces it changed.

var resourceQuotaGK = groupKind{"", "ResourceQuota"}

// usageSet is how much of each quota resource something uses.
type usageSet map[string]resource.Quantity

func (u usageSet) add(name string, q resource.Quantity) {
	if v, ok := u[name]; ok {
		v.Add(q)
		u[name] = v
	} else {
		u[name] = q.DeepCopy()
	}
}

func (u usageSet) addInt(name string, n int64) {
	u.add(name, *resource.NewQuantity(n, resource.DecimalSI))
}

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
func (t *txn) objectUsage(gk groupKind, obj map[string]any) usageSet {
	u := usageSet{}
	if obj == nil {
		return u
	}
	u.addInt(t.quotaCountName(gk), 1)
	switch gk {
	case podGK:
		status, _ := obj["status"].(map[string]any)
		if p := str(status, "phase"); p == "Succeeded" || p == "Failed" {
			return usageSet{}
		}
		u.addInt("pods", 1)
		requests, limits := podResources(peek(obj, "spec"))
		addOverhead(peek(obj, "spec"), requests, limits)
		for _, r := range []string{"cpu", "memory", "ephemeral-storage"} {
			if q, ok := requests[r]; ok {
				u.add(r, q)
				u.add("requests."+r, q)
			}
			if q, ok := limits[r]; ok {
				u.add("limits."+r, q)
			}
		}
		for r, q := range requests {
			if strings.Contains(r, "/") && !strings.HasPrefix(r, "kubernetes.io/") {
				u.add("requests."+r, q)
			}
		}
	case serviceGK:
		u.addInt("services", 1)
		spec, _ := obj["spec"].(map[string]any)
		ports := int64(len(objectList(spec["ports"])))
		switch str(spec, "type") {
		case "NodePort":
			u.addInt("services.nodeports", ports)
		case "LoadBalancer":
			u.addInt("services.loadbalancers", 1)
			if spec["allocateLoadBalancerNodePorts"] != false {
				u.addInt("services.nodeports", ports)
			}
		}
	case pvcGK:
		u.addInt("persistentvolumeclaims", 1)
		spec, _ := obj["spec"].(map[string]any)
		storage, hasStorage := child(child(spec, "resources"), "requests")["storage"]
		if hasStorage {
			u.add("requests.storage", quantityOf(storage))
		}
		if sc := str(spec, "storageClassName"); sc != "" {
			u.addInt(sc+".storageclass.storage.k8s.io/persistentvolumeclaims", 1)
			if hasStorage {
				u.add(sc+".storageclass.storage.k8s.io/requests.storage", quantityOf(storage))
			}
		}
	case configMapGK:
		u.addInt("configmaps", 1)
	case groupKind{"", "Secret"}:
		u.addInt("secrets", 1)
	case groupKind{"", "ReplicationController"}:
		u.addInt("replicationcontrollers", 1)
	case resourceQuotaGK:
		u.addInt("resourcequotas", 1)
	}
	return u
}

// addOverhead adds a pod's RuntimeClass overhead (spec.overhead) to its
// requests, and to its limits where it has one, as the quota's pod
// evaluator counts a pod.
func addOverhead(spec map[string]any, requests, limits map[string]resource.Quantity) {
	for name, v := range peek(spec, "overhead") {
		q := quantityOf(v)
		r := requests[name]
		r.Add(q)
		requests[name] = r
		if l, ok := limits[name]; ok {
			l.Add(q)
			limits[name] = l
		}
	}
}

// peek returns the map at field of m, nil when there is none; unlike
// child it writes nothing into m (a quota must store a pod as it came).
func peek(m map[string]any, field string) map[string]any {
	c, _ := m[field].(map[string]any)
	return c
}

// quotaMatches reports whether a quota's scopes select obj (scopes select
// only pods).
func quotaMatches(quota map[string]any, gk groupKind, obj map[string]any) bool {
	spec, _ := quota["spec"].(map[string]any)
	var scopes []map[string]any
	list, _ := spec["scopes"].([]any)
	for _, s := range list {
		if name, ok := s.(string); ok {
			scopes = append(scopes, map[string]any{"scopeName": name, "operator": "Exists"})
		}
	}
	scopes = append(scopes, objectList(child(spec, "scopeSelector")["matchExpressions"])...)
	if len(scopes) == 0 {
		return true
	}
	if gk != podGK {
		return false
	}
	pspec, _ := obj["spec"].(map[string]any)
	for _, s := range scopes {
		ok := false
		switch str(s, "scopeName") {
		case "Terminating":
			_, ok = pspec["activeDeadlineSeconds"]
		case "NotTerminating":
			_, has := pspec["activeDeadlineSeconds"]
			ok = !has
		case "BestEffort":
			ok = podQOSClass(obj) == "BestEffort"
		case "NotBestEffort":
			ok = podQOSClass(obj) != "BestEffort"
		case "PriorityClass":
			pc := str(pspec, "priorityClassName")
			values, _ := s["values"].([]any)
			switch str(s, "operator") {
			case "In":
				ok = pc != "" && containsAny(values, pc)
			case "NotIn":
				ok = pc == "" || !containsAny(values, pc)
			case "Exists":
				ok = pc != ""
			case "DoesNotExist":
				ok = pc == ""
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// nsQuotas is what a transaction knows of one namespace's quotas.
type nsQuotas struct {
	quotas []map[string]any
	// used is per quota (scopes differ), filled in by a recount.
	used []usageSet
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
	q := &nsQuotas{quotas: quotas, used: make([]usageSet, len(quotas))}
	for i := range q.used {
		q.used[i] = usageSet{}
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
		if old != nil && quotaMatches(quota, gk, old) {
			for name, v := range t.objectUsage(gk, old) {
				if _, ok := hard[name]; ok {
					v.Neg()
					q.used[i].add(name, v)
				}
			}
		}
		if obj != nil && quotaMatches(quota, gk, obj) {
			for name, v := range t.objectUsage(gk, obj) {
				if _, ok := hard[name]; ok {
					q.used[i].add(name, v)
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

// admitQuota refuses a create (old nil) or update that takes usage past a
// quota of the namespace.
func (t *txn) admitQuota(res cluster.Resource, obj, old map[string]any, name string) error {
	ns := metaString(obj, "namespace")
	if ns == "" || !res.Namespaced {
		return nil
	}
	q, err := t.quotasOf(ns)
	if err != nil || len(q.quotas) == 0 {
		return err
	}
	gk := gkOf(res)
	for i, quota := range q.quotas {
		if !quotaMatches(quota, gk, obj) {
			continue
		}
		hard := child(child(quota, "spec"), "hard")
		delta := t.objectUsage(gk, obj)
		if old != nil && quotaMatches(quota, gk, old) {
			for n, v := range t.objectUsage(gk, old) {
				v.Neg()
				delta.add(n, v)
			}
		}
		if gk == podGK && old == nil {
			if msg := podConstraints(obj, hard); msg != "" {
				return admissionForbidden(res, name, fmt.Sprintf("failed quota: %s: %s", metaString(quota, "name"), msg))
			}
		}
		var exceeded []string
		for n, d := range delta {
			h, tracked := hard[n]
			if !tracked || d.Sign() <= 0 {
				continue
			}
			total := q.used[i][n].DeepCopy()
			total.Add(d)
			if total.Cmp(quantityOf(h)) > 0 {
				exceeded = append(exceeded, n)
			}
		}
		if len(exceeded) == 0 {
			continue
		}
		sort.Strings(exceeded)
		var req, used, lim []string
		for _, n := range exceeded {
			d, u := delta[n], q.used[i][n]
			req = append(req, n+"="+d.String())
			used = append(used, n+"="+u.String())
			h := quantityOf(hard[n])
			lim = append(lim, n+"="+h.String())
		}
		return admissionForbidden(res, name, fmt.Sprintf("exceeded quota: %s, requested: %s, used: %s, limited: %s",
			metaString(quota, "name"), strings.Join(req, ","), strings.Join(used, ","), strings.Join(lim, ",")))
	}
	return nil
}

// podConstraints is the pod evaluator's requirement that every container
// asks for the cpu and memory a quota tracks.
func podConstraints(pod map[string]any, hard map[string]any) string {
	missing := map[string][]string{}
	spec := peek(pod, "spec")
	for _, field := range []string{"containers", "initContainers"} {
		for _, c := range objectList(spec[field]) {
			res := peek(c, "resources")
			for _, r := range []string{"cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory"} {
				if _, ok := hard[r]; !ok {
					continue
				}
				list, base := "requests", strings.TrimPrefix(r, "requests.")
				if b, ok := strings.CutPrefix(r, "limits."); ok {
					list, base = "limits", b
				}
				if _, ok := peek(res, list)[base]; !ok && !containsString(missing[r], str(c, "name")) {
					missing[r] = append(missing[r], str(c, "name"))
				}
			}
		}
	}
	if len(missing) == 0 {
		return ""
	}
	var parts []string
	for _, r := range sortedKeys(anyMap(missing)) {
		names := missing[r]
		sort.Strings(names)
		parts = append(parts, fmt.Sprintf("%s for: %s", r, strings.Join(names, ",")))
	}
	return "must specify " + strings.Join(parts, "; ")
}

func anyMap(m map[string][]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
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
