// Package strategy holds the per-kind rules of kube-apiserver's registry
// strategies (k8s.io/kubernetes pkg/registry/*/strategy.go), as the
// embedded API server applies them: what a create resets and starts a
// kind's status with, what an update carries over from the stored object,
// how metadata.generation moves, what a status update may change, a
// kind's default deletion propagation. The registry (package local)
// calls them at kube-apiserver's steps of a write; they are functions of
// the objects alone.
package strategy

import (
	"slices"
	"strconv"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/cluster/local/internal/jsonobj"
	"github.com/konverge/konverge/cluster/local/internal/podres"
	"github.com/konverge/konverge/defaults"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/validate"
	"github.com/konverge/konverge/value"
)

var (
	namespaceGK = jsonobj.GroupKind{Kind: "Namespace"}
	podGK       = jsonobj.GroupKind{Kind: "Pod"}
	crdGK       = jsonobj.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}
)

// NamespaceFinalizer is the finalizer a Namespace's spec.finalizers
// starts with: the namespace controller's.
const NamespaceFinalizer = "kubernetes"

func kindOf(res cluster.Resource) jsonobj.GroupKind {
	return jsonobj.GroupKind{Group: res.GVK.Group, Kind: res.GVK.Kind}
}

// Short names for the object accessors.
var (
	str        = jsonobj.Str
	setString  = jsonobj.SetString
	metadata   = jsonobj.Metadata
	child      = jsonobj.Child
	peek       = jsonobj.Peek
	objectList = jsonobj.ObjectList
)

// Generation says how a kind's metadata.generation moves: set to 1 on
// create and bumped on every update that changes the object outside
// metadata and status (its spec, or template, webhooks...). Deployments
// also bump on annotation changes (they are copied to ReplicaSets), and
// EndpointSlices on label changes. Kinds not in the table keep whatever
// generation the client sent on create, and it never moves.
type Generation struct {
	annotations, labels bool
	// status: changes of status count too (custom resources without a
	// status subresource).
	status bool
	// never: set to 1 on create, then not bumped.
	never bool
}

var generations = map[jsonobj.GroupKind]Generation{
	{Group: "apps", Kind: "Deployment"}:                                               {annotations: true},
	{Group: "apps", Kind: "ReplicaSet"}:                                               {},
	{Group: "apps", Kind: "StatefulSet"}:                                              {},
	{Group: "apps", Kind: "DaemonSet"}:                                                {},
	{Group: "batch", Kind: "Job"}:                                                     {},
	{Group: "batch", Kind: "CronJob"}:                                                 {},
	{Group: "", Kind: "Pod"}:                                                          {},
	{Group: "", Kind: "PodTemplate"}:                                                  {},
	{Group: "", Kind: "ReplicationController"}:                                        {},
	{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}:                           {},
	{Group: "policy", Kind: "PodDisruptionBudget"}:                                    {},
	{Group: "networking.k8s.io", Kind: "Ingress"}:                                     {},
	{Group: "networking.k8s.io", Kind: "IngressClass"}:                                {},
	{Group: "networking.k8s.io", Kind: "NetworkPolicy"}:                               {},
	{Group: "discovery.k8s.io", Kind: "EndpointSlice"}:                                {labels: true},
	{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration"}:     {},
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration"}:   {},
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicy"}:        {},
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicyBinding"}: {},
	{Group: "admissionregistration.k8s.io", Kind: "MutatingAdmissionPolicy"}:          {},
	{Group: "admissionregistration.k8s.io", Kind: "MutatingAdmissionPolicyBinding"}:   {},
	{Group: "flowcontrol.apiserver.k8s.io", Kind: "FlowSchema"}:                       {},
	{Group: "flowcontrol.apiserver.k8s.io", Kind: "PriorityLevelConfiguration"}:       {},
	{Group: "resource.k8s.io", Kind: "DeviceClass"}:                                   {},
	{Group: "resource.k8s.io", Kind: "DeviceTaintRule"}:                               {},
	{Group: "resource.k8s.io", Kind: "ResourceSlice"}:                                 {},
	{Group: "scheduling.k8s.io", Kind: "PriorityClass"}:                               {never: true},
	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}:                 {},
}

// GenerationOf returns the rule of a kind (custom: a custom resource,
// statusSubresource: its resource has one); ok is false for the kinds
// whose generation the server does not keep. Custom resources all have
// generations, and without a status subresource their status is spec
// too.
func GenerationOf(gk jsonobj.GroupKind, custom, statusSubresource bool) (rule Generation, ok bool) {
	if r, ok := generations[gk]; ok {
		return r, true
	}
	if custom {
		return Generation{status: !statusSubresource}, true
	}
	return Generation{}, false
}

// Bumps reports whether an update from old to obj moves the generation.
func (rule Generation) Bumps(obj, old map[string]any) bool {
	return !rule.never && specChanged(rule, obj, old)
}

// specChanged reports whether an update changes what bumps the generation.
func specChanged(rule Generation, obj, old map[string]any) bool {
	skip := func(field string) bool { return field == "metadata" || (field == "status" && !rule.status) }
	for k, v := range obj {
		if skip(k) {
			continue
		}
		if ov, ok := old[k]; !ok || !value.Equal(v, ov) {
			return true
		}
	}
	for k := range old {
		if _, ok := obj[k]; !ok && !skip(k) {
			return true
		}
	}
	md, _ := obj["metadata"].(map[string]any)
	omd, _ := old["metadata"].(map[string]any)
	if rule.annotations && !value.Equal(emptyAsNil(md["annotations"]), emptyAsNil(omd["annotations"])) {
		return true
	}
	if rule.labels && !value.Equal(emptyAsNil(md["labels"]), emptyAsNil(omd["labels"])) {
		return true
	}
	return false
}

func emptyAsNil(v any) any {
	if m, ok := v.(map[string]any); ok && len(m) == 0 {
		return nil
	}
	return v
}

// Create is what a create's strategy needs to know besides the object.
type Create struct {
	// NoLabels: the request's object had no labels (a Job's generated
	// selector then labels its template alone).
	NoLabels bool
	// Now is the store's clock, formatted.
	Now string
	// Custom: the object is a custom resource; Schema is its version's
	// openAPIV3Schema (nil when it has none).
	Custom bool
	Schema map[string]any
}

// PrepareForCreate resets what clients may not set on create, per kind
// (the strategies' PrepareForCreate): status for kinds with a status
// subresource, and the initial status some kinds start with.
func PrepareForCreate(res cluster.Resource, obj map[string]any, c Create) {
	gk := jsonobj.GroupKind{Group: res.GVK.Group, Kind: res.GVK.Kind}
	if c.Custom {
		if res.Status {
			delete(obj, "status")
			// kube-apiserver defaults what it reads from storage: the
			// defaults the schema declares for status (a Gateway's
			// "Waiting for controller" conditions) are in the object
			// from the first read on.
			if c.Schema != nil {
				_ = defaults.ApplyCustomResource(obj, c.Schema)
			}
		}
		return
	}
	switch gk {
	case namespaceGK:
		obj["status"] = map[string]any{"phase": "Active"}
		spec, _ := obj["spec"].(map[string]any)
		if spec == nil {
			spec = map[string]any{}
			obj["spec"] = spec
		}
		fs, _ := spec["finalizers"].([]any)
		if !slices.Contains(fs, any(NamespaceFinalizer)) {
			spec["finalizers"] = append(fs, NamespaceFinalizer)
		}
	case podGK:
		obj["status"] = map[string]any{"phase": "Pending", "qosClass": podres.QOSClass(obj)}
	case jsonobj.GroupKind{Group: "", Kind: "Node"}:
		// kubelets register nodes with their status.
	case jsonobj.GroupKind{Group: "", Kind: "PersistentVolume"}:
		obj["status"] = map[string]any{"phase": "Pending", "lastPhaseTransitionTime": c.Now}
	case jsonobj.GroupKind{Group: "", Kind: "PersistentVolumeClaim"}:
		obj["status"] = map[string]any{"phase": "Pending"}
	case jsonobj.GroupKind{Group: "", Kind: "Service"}:
		obj["status"] = map[string]any{"loadBalancer": map[string]any{}}
	case crdGK:
		obj["status"] = map[string]any{}
	case jsonobj.GroupKind{Group: "batch", Kind: "Job"}:
		generateJobSelector(obj, c.NoLabels)
		obj["status"] = map[string]any{}
	case jsonobj.GroupKind{Group: "apps", Kind: "DaemonSet"}:
		child(metadata(obj), "annotations")[daemonSetTemplateGeneration] = "1"
		obj["status"] = zeroStatus(res)
	default:
		if res.Status {
			obj["status"] = zeroStatus(res)
		}
	}
}

// zeroStatus is the status a kind's strategy resets on create: its Go
// type's zero value.
func zeroStatus(res cluster.Resource) map[string]any {
	if st, ok := defaults.ZeroStatus(res.GVK.APIVersion(), res.GVK.Kind); ok {
		return st
	}
	return map[string]any{}
}

// daemonSetTemplateGeneration is the annotation in which apps/v1 keeps a
// DaemonSet's spec.templateGeneration: 1 on create, one more on every
// update that changes the pod template.
const daemonSetTemplateGeneration = "deprecated.daemonset.template.generation"

// prepareDaemonSetUpdate carries the template generation over, one more
// when the template changes.
func prepareDaemonSetUpdate(obj, old map[string]any) {
	var gen int64
	if a, ok := peek(peek(old, "metadata"), "annotations")[daemonSetTemplateGeneration].(string); ok {
		gen, _ = strconv.ParseInt(a, 10, 64)
	}
	spec, _ := obj["spec"].(map[string]any)
	ospec, _ := old["spec"].(map[string]any)
	if !value.Equal(spec["template"], ospec["template"]) {
		gen++
	}
	child(metadata(obj), "annotations")[daemonSetTemplateGeneration] = strconv.FormatInt(gen, 10)
}

// generateJobSelector labels a Job's pod template with the Job's name and
// uid and selects its pods by the uid, unless spec.manualSelector is set
// (validate.GenerateJobSelector, which apply's plans run too).
func generateJobSelector(job map[string]any, noLabels bool) {
	validate.GenerateJobSelector(job, noLabels)
}

// DefaultPropagation is a kind's deletion propagation when neither the
// request nor the object's finalizers choose one: orphan for the kinds
// whose v1 API promised it.
func DefaultPropagation(gk jsonobj.GroupKind) cluster.Propagation {
	switch gk {
	case jsonobj.GroupKind{Group: "", Kind: "ReplicationController"}, jsonobj.GroupKind{Group: "batch", Kind: "Job"}:
		return cluster.Orphan
	}
	return cluster.Background
}

// PrepareForUpdate carries over what an update of the main resource may
// not change: system metadata, status for kinds with a status subresource,
// and a Namespace's spec.finalizers (changed only through its finalize
// subresource).
func PrepareForUpdate(res cluster.Resource, obj, old map[string]any) {
	md, omd := metadata(obj), metadata(old)
	if str(md, "uid") == "" {
		setString(md, "uid", str(omd, "uid"))
	}
	setString(md, "creationTimestamp", str(omd, "creationTimestamp"))
	if dt := str(omd, "deletionTimestamp"); dt != "" {
		md["deletionTimestamp"] = dt
	}
	if g, ok := omd["deletionGracePeriodSeconds"]; ok {
		if _, set := md["deletionGracePeriodSeconds"]; !set {
			md["deletionGracePeriodSeconds"] = g
		}
	}
	delete(md, "selfLink")
	if res.Status {
		if st, ok := old["status"]; ok {
			obj["status"] = value.DeepCopy(st)
		} else {
			delete(obj, "status")
		}
	}
	if kindOf(res) == (jsonobj.GroupKind{Group: "apps", Kind: "DaemonSet"}) {
		prepareDaemonSetUpdate(obj, old)
	}
	if kindOf(res) == namespaceGK {
		if spec, ok := old["spec"]; ok {
			obj["spec"] = value.DeepCopy(spec)
		}
	}
}

// PreparePVStatusUpdate sets a PersistentVolume's
// status.lastPhaseTransitionTime to now when a status update changes its
// phase without moving the time, and keeps the old time when the phase
// stays and the update leaves the time out (the status strategy of
// kube-apiserver).
func PreparePVStatusUpdate(obj, old map[string]any, now string) {
	st, _ := obj["status"].(map[string]any)
	ost, _ := old["status"].(map[string]any)
	if st == nil {
		return
	}
	t, set := st["lastPhaseTransitionTime"]
	switch {
	case st["phase"] == ost["phase"] && !set:
		if ot, ok := ost["lastPhaseTransitionTime"]; ok {
			st["lastPhaseTransitionTime"] = ot
		}
	case st["phase"] != ost["phase"] && (!set || value.Equal(t, ost["lastPhaseTransitionTime"])):
		st["lastPhaseTransitionTime"] = now
	}
}

// StatusDefaultsAlone reports the built-in kinds whose status defaults
// depend on nothing but the status (a Service's do not: its
// loadBalancer ingress ipMode depends on spec.type).
func StatusDefaultsAlone(res cluster.Resource) bool {
	switch res.GVK {
	case schema.GVK{Version: "v1", Kind: "Pod"},
		schema.GVK{Group: "apps", Version: "v1", Kind: "ReplicaSet"},
		schema.GVK{Group: "apps", Version: "v1", Kind: "Deployment"}:
		return true
	}
	return false
}
