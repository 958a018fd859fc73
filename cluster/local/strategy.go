package local

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/cluster/local/internal/podres"
	"github.com/konverge/konverge/defaults"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/selector"
	"github.com/konverge/konverge/validate"
	"github.com/konverge/konverge/value"
)

// The per-kind rules of kube-apiserver's registry strategies
// (k8s.io/kubernetes pkg/registry/*/strategy.go), as data.

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
	finalizerNamespace  = "kubernetes" // in a Namespace's spec.finalizers
)

// generationRule says how a kind's metadata.generation moves: set to 1 on
// create and bumped on every update that changes the object outside
// metadata and status (its spec, or template, webhooks...). Deployments
// also bump on annotation changes (they are copied to ReplicaSets), and
// EndpointSlices on label changes. Kinds not in the table keep whatever
// generation the client sent on create, and it never moves.
type generationRule struct {
	annotations, labels bool
	// status: changes of status count too (custom resources without a
	// status subresource).
	status bool
	// never: set to 1 on create, then not bumped.
	never bool
}

var generationRules = map[groupKind]generationRule{
	{"apps", "Deployment"}:                     {annotations: true},
	{"apps", "ReplicaSet"}:                     {},
	{"apps", "StatefulSet"}:                    {},
	{"apps", "DaemonSet"}:                      {},
	{"batch", "Job"}:                           {},
	{"batch", "CronJob"}:                       {},
	{"", "Pod"}:                                {},
	{"", "PodTemplate"}:                        {},
	{"", "ReplicationController"}:              {},
	{"autoscaling", "HorizontalPodAutoscaler"}: {},
	{"policy", "PodDisruptionBudget"}:          {},
	{"networking.k8s.io", "Ingress"}:           {},
	{"networking.k8s.io", "IngressClass"}:      {},
	{"networking.k8s.io", "NetworkPolicy"}:     {},
	{"discovery.k8s.io", "EndpointSlice"}:      {labels: true},
	{"admissionregistration.k8s.io", "MutatingWebhookConfiguration"}:     {},
	{"admissionregistration.k8s.io", "ValidatingWebhookConfiguration"}:   {},
	{"admissionregistration.k8s.io", "ValidatingAdmissionPolicy"}:        {},
	{"admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"}: {},
	{"admissionregistration.k8s.io", "MutatingAdmissionPolicy"}:          {},
	{"admissionregistration.k8s.io", "MutatingAdmissionPolicyBinding"}:   {},
	{"flowcontrol.apiserver.k8s.io", "FlowSchema"}:                       {},
	{"flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"}:       {},
	{"resource.k8s.io", "DeviceClass"}:                                   {},
	{"resource.k8s.io", "DeviceTaintRule"}:                               {},
	{"resource.k8s.io", "ResourceSlice"}:                                 {},
	{"scheduling.k8s.io", "PriorityClass"}:                               {never: true},
	{"apiextensions.k8s.io", "CustomResourceDefinition"}:                 {},
}

// generationRuleFor returns the rule of a kind; custom resources all have
// generations, and without a status subresource their status is spec too.
func (t *txn) generationRuleFor(res cluster.Resource) (generationRule, bool) {
	gk := gkOf(res)
	if r, ok := generationRules[gk]; ok {
		return r, true
	}
	if _, ok := t.api.crds[gk]; ok {
		return generationRule{status: !res.Status}, true
	}
	return generationRule{}, false
}

// specChanged reports whether an update changes what bumps the generation.
func specChanged(rule generationRule, obj, old map[string]any) bool {
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

// prepareForCreate resets what clients may not set on create, per kind
// (the strategies' PrepareForCreate): status for kinds with a status
// subresource, and the initial status some kinds start with.
func (t *txn) prepareForCreate(res cluster.Resource, obj map[string]any, noLabels bool) {
	gk := groupKind{res.GVK.Group, res.GVK.Kind}
	if _, custom := t.api.crds[gk]; custom {
		if res.Status {
			delete(obj, "status")
			// kube-apiserver defaults what it reads from storage: the
			// defaults the schema declares for status (a Gateway's
			// "Waiting for controller" conditions) are in the object
			// from the first read on.
			if v := t.crdVersion(res); v != nil && v.schema != nil {
				_ = defaults.ApplyCustomResource(obj, v.schema)
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
		if !containsAny(fs, finalizerNamespace) {
			spec["finalizers"] = append(fs, finalizerNamespace)
		}
	case podGK:
		obj["status"] = map[string]any{"phase": "Pending", "qosClass": podres.QOSClass(obj)}
	case groupKind{"", "Node"}:
		// kubelets register nodes with their status.
	case groupKind{"", "PersistentVolume"}:
		obj["status"] = map[string]any{"phase": "Pending", "lastPhaseTransitionTime": t.now()}
	case groupKind{"", "PersistentVolumeClaim"}:
		obj["status"] = map[string]any{"phase": "Pending"}
	case groupKind{"", "Service"}:
		obj["status"] = map[string]any{"loadBalancer": map[string]any{}}
	case crdGK:
		obj["status"] = map[string]any{}
	case groupKind{"batch", "Job"}:
		generateJobSelector(obj, noLabels)
		obj["status"] = map[string]any{}
	case groupKind{"apps", "DaemonSet"}:
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
	if a, ok := metaMap(old, "annotations")[daemonSetTemplateGeneration].(string); ok {
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

func containsAny(list []any, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// defaultPropagation is a kind's deletion propagation when neither the
// request nor the object's finalizers choose one: orphan for the kinds
// whose v1 API promised it.
func defaultPropagation(gk groupKind) cluster.Propagation {
	switch gk {
	case groupKind{"", "ReplicationController"}, groupKind{"batch", "Job"}:
		return cluster.Orphan
	}
	return cluster.Background
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

// dropTypeDependentFields is the Service strategy's cleanup when an
// update changes the type: what the old type needed and the new one does
// not goes, unless the update changed it (cluster IPs for ExternalName,
// node ports below NodePort, the health check port, the load balancer's
// settings, the external traffic policy), and only LoadBalancers keep a
// load balancer status.
func dropTypeDependentFields(svc, old map[string]any) {
	spec, _ := svc["spec"].(map[string]any)
	ospec, _ := old["spec"].(map[string]any)
	if spec == nil || ospec == nil {
		return
	}
	typ, otyp := str(spec, "type"), str(ospec, "type")
	needsNodePort := func(t string) bool { return t == "NodePort" || t == "LoadBalancer" }
	if otyp != "ExternalName" && typ == "ExternalName" {
		if value.Equal(spec["clusterIP"], ospec["clusterIP"]) && value.Equal(spec["clusterIPs"], ospec["clusterIPs"]) {
			delete(spec, "clusterIP")
			delete(spec, "clusterIPs")
		}
		if value.Equal(spec["ipFamilies"], ospec["ipFamilies"]) {
			delete(spec, "ipFamilies")
		}
		if value.Equal(spec["ipFamilyPolicy"], ospec["ipFamilyPolicy"]) {
			delete(spec, "ipFamilyPolicy")
		}
	}
	if needsNodePort(otyp) && !needsNodePort(typ) {
		old := map[any]bool{}
		for _, p := range objectList(ospec["ports"]) {
			if n, ok := p["nodePort"]; ok {
				old[n] = true
			}
		}
		same := true
		for _, p := range objectList(spec["ports"]) {
			if n, ok := p["nodePort"]; ok && !old[n] {
				same = false
			}
		}
		if same {
			for _, p := range objectList(spec["ports"]) {
				delete(p, "nodePort")
			}
		}
	}
	needsHC := func(s map[string]any) bool {
		return str(s, "type") == "LoadBalancer" && str(s, "externalTrafficPolicy") == "Local"
	}
	if needsHC(ospec) && !needsHC(spec) && value.Equal(spec["healthCheckNodePort"], ospec["healthCheckNodePort"]) {
		delete(spec, "healthCheckNodePort")
	}
	if otyp == "LoadBalancer" && typ != "LoadBalancer" {
		if a, ok := spec["allocateLoadBalancerNodePorts"]; ok && value.Equal(a, ospec["allocateLoadBalancerNodePorts"]) {
			delete(spec, "allocateLoadBalancerNodePorts")
		}
		if value.Equal(spec["loadBalancerClass"], ospec["loadBalancerClass"]) {
			delete(spec, "loadBalancerClass")
		}
	}
	external := func(s map[string]any) bool {
		t := str(s, "type")
		ips, _ := s["externalIPs"].([]any)
		return t == "LoadBalancer" || t == "NodePort" || len(ips) > 0
	}
	if external(ospec) && !external(spec) && value.Equal(spec["externalTrafficPolicy"], ospec["externalTrafficPolicy"]) {
		delete(spec, "externalTrafficPolicy")
	}
	if typ != "LoadBalancer" {
		if st, ok := svc["status"].(map[string]any); ok {
			st["loadBalancer"] = map[string]any{}
		}
	}
}
