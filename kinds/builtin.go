package kinds

import (
	"slices"
	"strings"
	"sync"

	"github.com/konverge/konverge/apimeta"
	"github.com/konverge/konverge/schema"
)

//go:generate go run ./internal/gen

// apiResource is a row of the generated table of resources.
type apiResource struct {
	group, version, kind, plural string
	namespaced, status           bool
}

// groupVersions is an API group and the versions of it that are served,
// preferred first.
type groupVersions struct {
	group    string
	versions []string
}

// servedByDefault lists the group versions kube-apiserver v1.37.1 serves
// without --runtime-config, in the order of discovery.
//
// The set is genericStableAPIGroupVersionsEnabledByDefault and
// stableAPIGroupVersionsEnabledByDefault of pkg/controlplane/instance.go,
// plus apiextensions.k8s.io/v1 (the CRD server) and apiregistration.k8s.io/v1
// (the aggregator). Every beta group version is in a
// ...DisabledByDefault list in v1.37.1, as every alpha one is.
//
// The order is kube-aggregator's: the core group first (/api), then
// apiregistration.k8s.io (priority 20001), then the groups by the
// GroupPriorityMinimum of cmd/kube-apiserver/app/aggregator.go and
// pkg/controlplane/apiserver/aggregator.go, highest first, ties by group
// name; versions by VersionPriority.
var servedByDefault = []groupVersions{
	{group: "", versions: []string{"v1"}},
	{group: "apiregistration.k8s.io", versions: []string{"v1"}},
	{group: "apps", versions: []string{"v1"}},
	{group: "events.k8s.io", versions: []string{"v1"}},
	{group: "authentication.k8s.io", versions: []string{"v1"}},
	{group: "authorization.k8s.io", versions: []string{"v1"}},
	{group: "autoscaling", versions: []string{"v2", "v1"}},
	{group: "batch", versions: []string{"v1"}},
	{group: "certificates.k8s.io", versions: []string{"v1"}},
	{group: "networking.k8s.io", versions: []string{"v1"}},
	{group: "policy", versions: []string{"v1"}},
	{group: "rbac.authorization.k8s.io", versions: []string{"v1"}},
	{group: "storage.k8s.io", versions: []string{"v1"}},
	{group: "admissionregistration.k8s.io", versions: []string{"v1"}},
	{group: "apiextensions.k8s.io", versions: []string{"v1"}},
	{group: "scheduling.k8s.io", versions: []string{"v1"}},
	{group: "coordination.k8s.io", versions: []string{"v1"}},
	{group: "node.k8s.io", versions: []string{"v1"}},
	{group: "discovery.k8s.io", versions: []string{"v1"}},
	{group: "resource.k8s.io", versions: []string{"v1"}},
	{group: "flowcontrol.apiserver.k8s.io", versions: []string{"v1"}},
	{group: "storagemigration.k8s.io", versions: []string{"v1"}},
}

// shortNames are the ShortNames() of the REST storages of kube-apiserver
// (pkg/registry/**/storage/storage.go, pkg/registry/core/componentstatus)
// and apiextensions-apiserver, by group resource. Discovery reports them
// for every version of the resource; `kubectl api-resources` shows them.
var shortNames = map[string][]string{
	"componentstatuses":      {"cs"},
	"configmaps":             {"cm"},
	"endpoints":              {"ep"},
	"events":                 {"ev"},
	"limitranges":            {"limits"},
	"namespaces":             {"ns"},
	"nodes":                  {"no"},
	"persistentvolumeclaims": {"pvc"},
	"persistentvolumes":      {"pv"},
	"pods":                   {"po"},
	"replicationcontrollers": {"rc"},
	"resourcequotas":         {"quota"},
	"serviceaccounts":        {"sa"},
	"services":               {"svc"},
	"customresourcedefinitions.apiextensions.k8s.io": {"crd", "crds"},
	"daemonsets.apps":                                {"ds"},
	"deployments.apps":                               {"deploy"},
	"replicasets.apps":                               {"rs"},
	"statefulsets.apps":                              {"sts"},
	"events.events.k8s.io":                           {"ev"},
	"horizontalpodautoscalers.autoscaling":           {"hpa"},
	"cronjobs.batch":                                 {"cj"},
	"certificatesigningrequests.certificates.k8s.io": {"csr"},
	"ingresses.networking.k8s.io":                    {"ing"},
	"ipaddresses.networking.k8s.io":                  {"ip"},
	"networkpolicies.networking.k8s.io":              {"netpol"},
	"poddisruptionbudgets.policy":                    {"pdb"},
	"priorityclasses.scheduling.k8s.io":              {"pc"},
	"storageclasses.storage.k8s.io":                  {"sc"},
	"volumeattributesclasses.storage.k8s.io":         {"vac"},
}

// builtin is Builtin's table, built once; Builtin hands out copies.
var builtin = sync.OnceValue(func() []apimeta.Resource {
	byGV := map[string][]apiResource{}
	for _, r := range openAPIResources {
		gv := r.group + "/" + r.version
		byGV[gv] = append(byGV[gv], r)
	}
	var out []apimeta.Resource
	for _, g := range servedByDefault {
		for _, v := range g.versions {
			// openAPIResources is sorted by plural, as discovery lists
			// the resources of a version.
			for _, r := range byGV[g.group+"/"+v] {
				out = append(out, r.resource())
			}
		}
	}
	return out
})

// resource returns the row as discovery reports it.
func (r apiResource) resource() apimeta.Resource {
	gr := r.plural
	if r.group != "" {
		gr += "." + r.group
	}
	return apimeta.Resource{
		GVK:        schema.GVK{Group: r.group, Version: r.version, Kind: r.kind},
		Plural:     r.plural,
		Singular:   strings.ToLower(r.kind),
		ShortNames: slices.Clone(shortNames[gr]),
		Namespaced: r.namespaced,
		Status:     r.status,
		Strategic:  true,
	}
}

// Builtin returns every resource kube-apiserver v1.37.1 serves by default,
// in the order of discovery: groups by priority (the core group, then
// apiregistration.k8s.io, apps, events.k8s.io, ...), the preferred version
// of each group first, resources of a version by plural. All accept
// strategic merge patches.
//
// Each call returns a new slice that the caller may change.
func Builtin() []apimeta.Resource {
	return cloneResources(builtin())
}

func cloneResources(rs []apimeta.Resource) []apimeta.Resource {
	out := slices.Clone(rs)
	for i := range out {
		out[i].ShortNames = slices.Clone(out[i].ShortNames)
	}
	return out
}
