package validate

import (
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
