package defaults

import (
	"encoding/base64"
	"fmt"
	"sort"
	"sync"

	"github.com/konverge/konverge/value"
)

// Apply defaults obj in place as kube-apiserver 1.37 does when it decodes a
// request body (or a stored object): the object goes through its Go type
// (unknown fields dropped, nulls and empty omitempty fields removed,
// non-pointer structs filled in as {}, quantities and Secret data in
// canonical form), through the v1 conversion quirks (Secret stringData
// folded into data, StatefulSet volumeClaimTemplates stamped with
// apiVersion and kind) and through the SetDefaults_* functions of its kind
// and of everything it contains (pod templates included).
//
// Objects of other kinds are left alone and nil is returned; custom
// resources are defaulted with ApplyCustomResource. A value the kind's Go
// type cannot hold is a *DecodeError and leaves obj partly normalized; the
// API server answers such a request with 400 Bad Request.
func Apply(obj map[string]any) error {
	_, err := ApplyUnknown(obj)
	return err
}

// ApplyUnknown is Apply that also returns the paths of the unknown fields
// it dropped, sorted, as UnknownFields names them: what kube-apiserver
// reports with fieldValidation Warn, or refuses with Strict.
func ApplyUnknown(obj map[string]any) (unknown []string, err error) {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	st := kindStruct(apiVersion, kind)
	if st == nil {
		return nil, nil
	}
	if kind == "Secret" && apiVersion == "v1" {
		if err := foldStringData(obj); err != nil {
			return nil, err
		}
	}
	n := &typed{}
	var room [pathRoom]pathElem
	if err := n.object(obj, st, room[:0], true); err != nil {
		return nil, err
	}
	sort.Strings(n.unknown)
	if fn := kindDefaults[apiVersion+"/"+kind]; fn != nil {
		fn(obj)
	}
	// Encoding the defaulted Go value again drops what defaulting left
	// empty (an empty serviceAccount, say).
	return n.unknown, (&typed{stored: true}).object(obj, st, room[:0], true)
}

// UnknownFields returns the paths of the fields of obj that its kind's Go
// type does not have, sorted ("spec.replicaz",
// "spec.template.spec.containers[0].imagePullPolice"). Apply drops them;
// with fieldValidation=Strict (kubectl's default) kube-apiserver rejects
// the request instead: `strict decoding error: unknown field "spec.replicaz"`.
// It returns nil for kinds Apply does not know.
func UnknownFields(obj map[string]any) []string {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	st := kindStruct(apiVersion, kind)
	if st == nil {
		return nil
	}
	n := &typed{}
	cp := value.DeepCopy(obj).(map[string]any)
	_ = n.object(cp, st, nil, true)
	sort.Strings(n.unknown)
	return n.unknown
}

// Known reports whether Apply knows the kind apiVersion/kind.
func Known(apiVersion, kind string) bool { return kindStruct(apiVersion, kind) != nil }

// foldStringData is the v1 -> internal conversion of Secrets: stringData
// entries overwrite data entries (base64-encoded), and stringData is gone.
func foldStringData(obj map[string]any) error {
	sd, ok := obj["stringData"]
	if !ok {
		return nil
	}
	delete(obj, "stringData")
	m, ok := sd.(map[string]any)
	if !ok {
		if sd == nil {
			return nil
		}
		return &DecodeError{Field: "stringData", Msg: fmt.Sprintf("json: cannot unmarshal %s into Go struct field Secret.stringData of type map[string]string", jsonType(sd))}
	}
	if len(m) == 0 {
		return nil
	}
	data, _ := obj["data"].(map[string]any)
	if data == nil {
		data = map[string]any{}
		obj["data"] = data
	}
	for k, v := range m {
		s, ok := v.(string)
		if !ok && v != nil {
			return &DecodeError{Field: "stringData." + k, Msg: fmt.Sprintf("json: cannot unmarshal %s into Go struct field Secret.stringData of type string", jsonType(v))}
		}
		data[k] = base64.StdEncoding.EncodeToString([]byte(s))
	}
	return nil
}

// kindDefaults are the SetObjectDefaults_* of each kind.
var kindDefaults = map[string]func(map[string]any){
	"apps/v1/Deployment":  deployment,
	"apps/v1/ReplicaSet":  replicaSet,
	"apps/v1/StatefulSet": statefulSet,
	"apps/v1/DaemonSet":   daemonSet,
	"batch/v1/Job":        job,
	"batch/v1/CronJob":    cronJob,
	"v1/Pod":              pod,
	"v1/PodTemplate": func(obj map[string]any) {
		podTemplate(ensure(obj, "template"))
	},
	"v1/ReplicationController":                        replicationController,
	"v1/Service":                                      service,
	"v1/ConfigMap":                                    func(map[string]any) {}, // data = {} leaves no trace once encoded
	"v1/Secret":                                       func(obj map[string]any) { defaultString(obj, "type", "Opaque") },
	"v1/Namespace":                                    namespace,
	"v1/ServiceAccount":                               func(map[string]any) {},
	"v1/PersistentVolumeClaim":                        persistentVolumeClaim,
	"networking.k8s.io/v1/Ingress":                    func(map[string]any) {},
	"networking.k8s.io/v1/IngressClass":               ingressClass,
	"networking.k8s.io/v1/NetworkPolicy":              networkPolicy,
	"rbac.authorization.k8s.io/v1/Role":               func(map[string]any) {},
	"rbac.authorization.k8s.io/v1/ClusterRole":        func(map[string]any) {},
	"rbac.authorization.k8s.io/v1/RoleBinding":        roleBinding,
	"rbac.authorization.k8s.io/v1/ClusterRoleBinding": roleBinding,
}

// --- apps/v1 ---------------------------------------------------------------

func deployment(obj map[string]any) {
	spec := ensure(obj, "spec")
	defaultPtr(spec, "replicas", int64(1))
	strategy := ensure(spec, "strategy")
	defaultString(strategy, "type", "RollingUpdate")
	if str(strategy, "type") == "RollingUpdate" {
		ru := ensure(strategy, "rollingUpdate")
		defaultPtr(ru, "maxUnavailable", "25%")
		defaultPtr(ru, "maxSurge", "25%")
	}
	defaultPtr(spec, "revisionHistoryLimit", int64(10))
	defaultPtr(spec, "progressDeadlineSeconds", int64(600))
	podTemplate(ensure(spec, "template"))
}

func replicaSet(obj map[string]any) {
	spec := ensure(obj, "spec")
	defaultPtr(spec, "replicas", int64(1))
	podTemplate(ensure(spec, "template"))
}

func daemonSet(obj map[string]any) {
	spec := ensure(obj, "spec")
	us := ensure(spec, "updateStrategy")
	defaultString(us, "type", "RollingUpdate")
	if str(us, "type") == "RollingUpdate" {
		ru := ensure(us, "rollingUpdate")
		defaultPtr(ru, "maxUnavailable", int64(1))
		defaultPtr(ru, "maxSurge", int64(0))
	}
	defaultPtr(spec, "revisionHistoryLimit", int64(10))
	podTemplate(ensure(spec, "template"))
}

func statefulSet(obj map[string]any) {
	spec := ensure(obj, "spec")
	defaultString(spec, "podManagementPolicy", "OrderedReady")
	us := ensure(spec, "updateStrategy")
	if unsetString(us, "type") {
		us["type"] = "RollingUpdate"
		defaultPtr(us, "rollingUpdate", map[string]any{})
	}
	if str(us, "type") == "RollingUpdate" {
		if ru := child(us, "rollingUpdate"); ru != nil {
			defaultPtr(ru, "partition", int64(0))
			// MaxUnavailableStatefulSet is beta and on by default in 1.37.
			defaultPtr(ru, "maxUnavailable", int64(1))
		}
	}
	policy := ensure(spec, "persistentVolumeClaimRetentionPolicy")
	defaultString(policy, "whenDeleted", "Retain")
	defaultString(policy, "whenScaled", "Retain")
	defaultPtr(spec, "replicas", int64(1))
	defaultPtr(spec, "revisionHistoryLimit", int64(10))
	podTemplate(ensure(spec, "template"))
	for _, pvc := range objects(spec, "volumeClaimTemplates") {
		// apps/v1 conversion stamps the templates' TypeMeta (issue 87583).
		pvc["apiVersion"] = "v1"
		pvc["kind"] = "PersistentVolumeClaim"
		persistentVolumeClaim(pvc)
	}
}

// --- batch/v1 --------------------------------------------------------------

func job(obj map[string]any) {
	spec := ensure(obj, "spec")
	jobSpec(spec)
	// Job labels default to the template's (before the registry adds the
	// generated selector labels to the template).
	if tl, ok := child(child(spec, "template"), "metadata")["labels"].(map[string]any); ok && mapLen(ensure(obj, "metadata"), "labels") == 0 {
		ensure(obj, "metadata")["labels"] = copyStringMap(tl)
	}
	podTemplate(ensure(spec, "template"))
}

// jobSpec applies SetDefaults_Job to a Job's spec (not to a CronJob's job
// template, which only gets the pod failure policy and pod spec defaults).
func jobSpec(spec map[string]any) {
	if unsetPtr(spec, "completions") && unsetPtr(spec, "parallelism") {
		spec["completions"] = int64(1)
		spec["parallelism"] = int64(1)
	}
	defaultPtr(spec, "parallelism", int64(1))
	if unsetPtr(spec, "backoffLimit") {
		if unsetPtr(spec, "backoffLimitPerIndex") {
			spec["backoffLimit"] = int64(6)
		} else {
			spec["backoffLimit"] = int64(2147483647)
		}
	}
	defaultPtr(spec, "completionMode", "NonIndexed")
	defaultPtr(spec, "suspend", false)
	if unsetPtr(spec, "podReplacementPolicy") {
		if unsetPtr(spec, "podFailurePolicy") {
			spec["podReplacementPolicy"] = "TerminatingOrFailed"
		} else {
			spec["podReplacementPolicy"] = "Failed"
		}
	}
	defaultPtr(spec, "manualSelector", false)
	podFailurePolicy(spec)
}

func podFailurePolicy(spec map[string]any) {
	for _, rule := range objects(child(spec, "podFailurePolicy"), "rules") {
		for _, c := range objects(rule, "onPodConditions") {
			defaultString(c, "status", "True")
		}
	}
}

func cronJob(obj map[string]any) {
	spec := ensure(obj, "spec")
	defaultString(spec, "concurrencyPolicy", "Allow")
	defaultPtr(spec, "suspend", false)
	defaultPtr(spec, "successfulJobsHistoryLimit", int64(3))
	defaultPtr(spec, "failedJobsHistoryLimit", int64(1))
	js := ensure(ensure(spec, "jobTemplate"), "spec")
	podFailurePolicy(js)
	podTemplate(ensure(js, "template"))
}

// --- core/v1 ---------------------------------------------------------------

func replicationController(obj map[string]any) {
	spec := ensure(obj, "spec")
	tmpl := child(spec, "template")
	if labels, ok := child(tmpl, "metadata")["labels"].(map[string]any); ok {
		if mapLen(spec, "selector") == 0 {
			spec["selector"] = copyStringMap(labels)
		}
		meta := ensure(obj, "metadata")
		if mapLen(meta, "labels") == 0 {
			meta["labels"] = copyStringMap(labels)
		}
	}
	defaultPtr(spec, "replicas", int64(1))
	if tmpl != nil {
		podTemplate(tmpl)
	}
}

func service(obj map[string]any) {
	spec := ensure(obj, "spec")
	defaultString(spec, "sessionAffinity", "None")
	switch str(spec, "sessionAffinity") {
	case "None":
		delete(spec, "sessionAffinityConfig")
	case "ClientIP":
		cfg := child(spec, "sessionAffinityConfig")
		ip := child(cfg, "clientIP")
		if ip == nil || unsetPtr(ip, "timeoutSeconds") {
			spec["sessionAffinityConfig"] = map[string]any{"clientIP": map[string]any{"timeoutSeconds": int64(10800)}}
		}
	}
	defaultString(spec, "type", "ClusterIP")
	for _, p := range objects(spec, "ports") {
		defaultString(p, "protocol", "TCP")
		switch tp := p["targetPort"].(type) {
		case nil, string, int64:
			if tp == nil || tp == "" || tp == int64(0) {
				if port, ok := p["port"]; ok {
					p["targetPort"] = port
				}
			}
		}
	}
	typ := str(spec, "type")
	externalIPs, _ := spec["externalIPs"].([]any)
	if typ == "LoadBalancer" || typ == "NodePort" || (typ == "ClusterIP" && len(externalIPs) > 0) {
		defaultString(spec, "externalTrafficPolicy", "Cluster")
	}
	if typ == "NodePort" || typ == "LoadBalancer" || typ == "ClusterIP" {
		defaultPtr(spec, "internalTrafficPolicy", "Cluster")
	}
	if typ == "LoadBalancer" {
		defaultPtr(spec, "allocateLoadBalancerNodePorts", true)
		for _, ing := range objects(child(child(obj, "status"), "loadBalancer"), "ingress") {
			if str(ing, "ip") != "" {
				defaultPtr(ing, "ipMode", "VIP")
			}
		}
	}
}

func namespace(obj map[string]any) {
	meta := ensure(obj, "metadata")
	// Nameless namespaces (generateName) get the label in the registry's
	// Canonicalize, once the name is known.
	if name := str(meta, "name"); name != "" {
		ensure(meta, "labels")["kubernetes.io/metadata.name"] = name
	}
	defaultString(ensure(obj, "status"), "phase", "Active")
}

func persistentVolumeClaim(obj map[string]any) {
	defaultString(ensure(obj, "status"), "phase", "Pending")
	pvcSpec(ensure(obj, "spec"))
	st := child(obj, "status")
	resourceList(st, "capacity")
	resourceList(st, "allocatedResources")
}

// --- networking.k8s.io/v1, rbac.authorization.k8s.io/v1 --------------------

func ingressClass(obj map[string]any) {
	if p := child(child(obj, "spec"), "parameters"); p != nil {
		defaultPtr(p, "scope", "Cluster")
	}
}

func networkPolicy(obj map[string]any) {
	spec := ensure(obj, "spec")
	if l, _ := spec["policyTypes"].([]any); len(l) == 0 {
		types := []any{"Ingress"}
		if e, _ := spec["egress"].([]any); len(e) > 0 {
			types = append(types, "Egress")
		}
		spec["policyTypes"] = types
	}
	for _, dir := range []string{"ingress", "egress"} {
		for _, rule := range objects(spec, dir) {
			for _, p := range objects(rule, "ports") {
				defaultPtr(p, "protocol", "TCP")
			}
		}
	}
}

func roleBinding(obj map[string]any) {
	defaultString(ensure(obj, "roleRef"), "apiGroup", "rbac.authorization.k8s.io")
	for _, s := range objects(obj, "subjects") {
		if unsetString(s, "apiGroup") {
			switch str(s, "kind") {
			case "User", "Group":
				s["apiGroup"] = "rbac.authorization.k8s.io"
			}
		}
	}
}

// zeroStatuses caches ZeroStatus per kind.
var zeroStatuses sync.Map

// ZeroStatus returns the status a built-in kind has when it is reset to
// its Go zero value, as the registry strategies of kube-apiserver reset it
// on create: the fields without omitempty, as encoding/json writes them
// (`{"replicas": 0, "availableReplicas": 0}` for a StatefulSet,
// `{"loadBalancer": {}}` for an Ingress, `{"desiredReplicas": 0,
// "currentMetrics": null}` for an autoscaling/v2 HorizontalPodAutoscaler).
// ok is false for kinds Apply does not know. The result is the caller's.
func ZeroStatus(apiVersion, kind string) (status map[string]any, ok bool) {
	key := apiVersion + "/" + kind
	if v, hit := zeroStatuses.Load(key); hit {
		return value.DeepCopyObject(v.(map[string]any)), true
	}
	st := kindStruct(apiVersion, kind)
	if st == nil {
		return nil, false
	}
	shell := map[string]any{"apiVersion": apiVersion, "kind": kind, "status": map[string]any{}}
	if err := (&typed{}).object(shell, st, nil, true); err != nil {
		return nil, false
	}
	status, _ = shell["status"].(map[string]any)
	if status == nil {
		status = map[string]any{}
	}
	zeroStatuses.Store(key, status)
	return value.DeepCopyObject(status), true
}
