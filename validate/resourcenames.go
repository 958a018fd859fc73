package validate

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// The resource names of ResourceQuotas and LimitRanges, and the scopes of
// quotas, as kube-apiserver 1.37 checks them (asked of it, one name per
// dry-run create: storage is a standard resource but not one for quota;
// huge pages are both).

// quotaResourceName is validateResourceQuotaResourceName.
func quotaResourceName(p *path, name string) []Error {
	errs := resourceName(name, p)
	if !strings.Contains(name, "/") && !isStandardQuotaResource(name) {
		errs = append(errs, invalid(p, name, "must be a standard resource for quota"))
	}
	return errs
}

func isStandardQuotaResource(name string) bool {
	return name != "storage" && isStandardResourceName(name)
}

// limitResourceName is validateLimitRangeResourceName.
func limitResourceName(typ string, p *path, name string) []Error {
	if typ == "Pod" || typ == "Container" {
		return containerResourceName(name, p)
	}
	return resourceName(name, p)
}

// limitType is validateLimitRangeTypeName.
func limitType(p *path, typ string) []Error {
	var errs []Error
	for _, msg := range validation.IsQualifiedName(typ) {
		errs = append(errs, invalid(p, typ, msg))
	}
	if len(errs) > 0 {
		return errs
	}
	if !strings.Contains(typ, "/") && typ != "Pod" && typ != "Container" && typ != "PersistentVolumeClaim" {
		errs = append(errs, invalid(p, typ, "must be a standard limit type or fully qualified"))
	}
	return errs
}

// quotaScopes is validateResourceQuotaScopes: known scopes, each valid
// for every standard resource of the quota, no two that exclude each
// other. The value printed is the whole list.
func quotaScopes(spec obj, p *path) []Error {
	scopes := lget(spec, "scopes")
	if len(scopes) == 0 {
		return nil
	}
	hard := sortedKeys(mget(spec, "hard"))
	list := make([]any, len(scopes))
	copy(list, scopes)
	var errs []Error
	set := map[string]bool{}
	for _, x := range scopes {
		s, _ := x.(string)
		if !standardScopes[s] {
			errs = append(errs, invalid(p, list, "unsupported scope"))
		}
		for _, r := range hard {
			if isStandardQuotaResource(r) && !scopeValidFor(s, r) {
				errs = append(errs, invalid(p, list, "unsupported scope applied to resource"))
			}
		}
		set[s] = true
	}
	if (set["BestEffort"] && set["NotBestEffort"]) || (set["Terminating"] && set["NotTerminating"]) {
		errs = append(errs, invalid(p, list, "conflicting scopes"))
	}
	return errs
}

var standardScopes = map[string]bool{
	"Terminating": true, "NotTerminating": true, "BestEffort": true, "NotBestEffort": true,
	"PriorityClass": true, "CrossNamespacePodAffinity": true, "VolumeAttributesClass": true,
}

// scopeValidFor is IsResourceQuotaScopeValidForResource.
func scopeValidFor(scope, resource string) bool {
	podCompute := map[string]bool{"cpu": true, "memory": true, "limits.cpu": true, "limits.memory": true, "requests.cpu": true, "requests.memory": true}
	switch scope {
	case "Terminating", "NotTerminating", "NotBestEffort", "PriorityClass", "CrossNamespacePodAffinity":
		return resource == "pods" || podCompute[resource]
	case "BestEffort":
		return resource == "pods"
	case "VolumeAttributesClass":
		return resource == "persistentvolumeclaims" || resource == "requests.storage"
	}
	return true
}

// quotaScopeSelector is validateScopeSelector: each expression names a
// known scope that applies to every resource of the quota, with an
// operator that fits the scope and values that fit the operator; no two
// scopes that exclude each other. Paths name matchExpressions without an
// index, as kube-apiserver prints them.
func quotaScopeSelector(spec obj, p *path) []Error {
	sel, ok := spec["scopeSelector"].(map[string]any)
	if !ok {
		return nil
	}
	hard := sortedKeys(mget(spec, "hard"))
	mp := p.child("matchExpressions")
	var errs []Error
	set := map[string]bool{}
	for _, x := range lget(sel, "matchExpressions") {
		e := asObj(x)
		name, op := sget(e, "scopeName"), sget(e, "operator")
		values := lget(e, "values")
		if !standardScopes[name] {
			errs = append(errs, invalid(mp.child("scopeName"), name, "unsupported scope"))
		}
		for _, r := range hard {
			if isStandardQuotaResource(r) && !scopeValidFor(name, r) {
				errs = append(errs, invalid(mp, goValue(selectorGoValue(sel)), "unsupported scope applied to resource"))
			}
		}
		switch name {
		case "BestEffort", "NotBestEffort", "Terminating", "NotTerminating", "CrossNamespacePodAffinity":
			if op != "Exists" {
				errs = append(errs, invalid(mp.child("operator"), op, "must be 'Exists' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity"))
			}
		}
		switch op {
		case "In", "NotIn":
			if len(values) == 0 {
				errs = append(errs, required(mp.child("values"), "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector"))
			}
		case "Exists", "DoesNotExist":
			if len(values) != 0 {
				errs = append(errs, invalid(mp.child("values"), values, "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector"))
			}
		default:
			errs = append(errs, invalid(mp.child("operator"), op, "not a valid selector operator"))
		}
		set[name] = true
	}
	if (set["BestEffort"] && set["NotBestEffort"]) || (set["Terminating"] && set["NotTerminating"]) {
		errs = append(errs, invalid(mp, goValue("null"), "conflicting scopes"))
	}
	return errs
}

// selectorGoValue prints a scope selector as kube-apiserver prints its
// internal struct: {"MatchExpressions":[{"ScopeName":...,"Operator":...,"Values":...}]}.
func selectorGoValue(sel obj) string {
	var b strings.Builder
	b.WriteString(`{"MatchExpressions":`)
	exprs := lget(sel, "matchExpressions")
	if exprs == nil {
		b.WriteString("null}")
		return b.String()
	}
	b.WriteString("[")
	for i, x := range exprs {
		e := asObj(x)
		if i > 0 {
			b.WriteString(",")
		}
		values := "null"
		if vs := lget(e, "values"); vs != nil {
			values = formatValue(vs)
		}
		fmt.Fprintf(&b, `{"ScopeName":%s,"Operator":%s,"Values":%s}`, strconv.Quote(sget(e, "scopeName")), strconv.Quote(sget(e, "operator")), values)
	}
	b.WriteString("]}")
	return b.String()
}
