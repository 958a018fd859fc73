// Package usage is the ResourceQuota evaluation the embedded API server
// shares between its admission plugin (may this create or update go
// through?) and its storage (every quota's status.used, recounted as
// objects come and go): what one object uses of each quota resource, and
// which objects a quota's scopes select.
package usage

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/konverge/konverge/cluster/local/internal/jsonobj"
	"github.com/konverge/konverge/cluster/local/internal/podres"
)

// Set is how much of each quota resource something uses.
type Set map[string]resource.Quantity

// Add adds q to the usage of name.
func (u Set) Add(name string, q resource.Quantity) {
	if v, ok := u[name]; ok {
		v.Add(q)
		u[name] = v
	} else {
		u[name] = q.DeepCopy()
	}
}

func (u Set) addInt(name string, n int64) {
	u.Add(name, *resource.NewQuantity(n, resource.DecimalSI))
}

var (
	podGK     = jsonobj.GroupKind{Kind: "Pod"}
	serviceGK = jsonobj.GroupKind{Kind: "Service"}
	pvcGK     = jsonobj.GroupKind{Kind: "PersistentVolumeClaim"}
)

// Of is what one object uses, as the quota evaluators count it; countName
// is the kind's object-count resource ("count/deployments.apps").
func Of(countName string, gk jsonobj.GroupKind, obj map[string]any) Set {
	u := Set{}
	if obj == nil {
		return u
	}
	u.addInt(countName, 1)
	switch gk {
	case podGK:
		if p := jsonobj.Str(jsonobj.Peek(obj, "status"), "phase"); p == "Succeeded" || p == "Failed" {
			return Set{}
		}
		u.addInt("pods", 1)
		requests, limits := podres.Totals(jsonobj.Peek(obj, "spec"))
		addOverhead(jsonobj.Peek(obj, "spec"), requests, limits)
		for _, r := range []string{"cpu", "memory", "ephemeral-storage"} {
			if q, ok := requests[r]; ok {
				u.Add(r, q)
				u.Add("requests."+r, q)
			}
			if q, ok := limits[r]; ok {
				u.Add("limits."+r, q)
			}
		}
		for r, q := range requests {
			if strings.Contains(r, "/") && !strings.HasPrefix(r, "kubernetes.io/") {
				u.Add("requests."+r, q)
			}
		}
	case serviceGK:
		u.addInt("services", 1)
		spec := jsonobj.Peek(obj, "spec")
		ports := int64(len(jsonobj.ObjectList(spec["ports"])))
		switch jsonobj.Str(spec, "type") {
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
		spec := jsonobj.Peek(obj, "spec")
		storage, hasStorage := jsonobj.Peek(jsonobj.Peek(spec, "resources"), "requests")["storage"]
		if hasStorage {
			u.Add("requests.storage", jsonobj.Quantity(storage))
		}
		if sc := jsonobj.Str(spec, "storageClassName"); sc != "" {
			u.addInt(sc+".storageclass.storage.k8s.io/persistentvolumeclaims", 1)
			if hasStorage {
				u.Add(sc+".storageclass.storage.k8s.io/requests.storage", jsonobj.Quantity(storage))
			}
		}
	case jsonobj.GroupKind{Kind: "ConfigMap"}:
		u.addInt("configmaps", 1)
	case jsonobj.GroupKind{Kind: "Secret"}:
		u.addInt("secrets", 1)
	case jsonobj.GroupKind{Kind: "ReplicationController"}:
		u.addInt("replicationcontrollers", 1)
	case jsonobj.GroupKind{Kind: "ResourceQuota"}:
		u.addInt("resourcequotas", 1)
	}
	return u
}

// addOverhead adds a pod's RuntimeClass overhead (spec.overhead) to its
// requests, and to its limits where it has one, as the quota's pod
// evaluator counts a pod.
func addOverhead(spec map[string]any, requests, limits podres.List) {
	for name, v := range jsonobj.Peek(spec, "overhead") {
		q := jsonobj.Quantity(v)
		r := requests[name]
		r.Add(q)
		requests[name] = r
		if l, ok := limits[name]; ok {
			l.Add(q)
			limits[name] = l
		}
	}
}

// Selects reports whether a quota's scopes select obj (scopes select
// only pods).
func Selects(quota map[string]any, gk jsonobj.GroupKind, obj map[string]any) bool {
	spec := jsonobj.Peek(quota, "spec")
	var scopes []map[string]any
	list, _ := spec["scopes"].([]any)
	for _, s := range list {
		if name, ok := s.(string); ok {
			scopes = append(scopes, map[string]any{"scopeName": name, "operator": "Exists"})
		}
	}
	scopes = append(scopes, jsonobj.ObjectList(jsonobj.Peek(spec, "scopeSelector")["matchExpressions"])...)
	if len(scopes) == 0 {
		return true
	}
	if gk != podGK {
		return false
	}
	pspec := jsonobj.Peek(obj, "spec")
	for _, s := range scopes {
		ok := false
		switch jsonobj.Str(s, "scopeName") {
		case "Terminating":
			_, ok = pspec["activeDeadlineSeconds"]
		case "NotTerminating":
			_, has := pspec["activeDeadlineSeconds"]
			ok = !has
		case "BestEffort":
			ok = podres.QOSClass(obj) == "BestEffort"
		case "NotBestEffort":
			ok = podres.QOSClass(obj) != "BestEffort"
		case "PriorityClass":
			pc := jsonobj.Str(pspec, "priorityClassName")
			values, _ := s["values"].([]any)
			named := pc != "" && slices.Contains(values, any(pc))
			switch jsonobj.Str(s, "operator") {
			case "In":
				ok = named
			case "NotIn":
				ok = !named
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
