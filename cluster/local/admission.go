package local

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strings"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/value"
)

// The admission plugins of a default kube-apiserver 1.37 (those of
// --enable-admission-plugins' defaults that act on what a user applies),
// run by create and update as the API server runs them: the mutating ones
// after defaulting and before the registry strategy, the validating ones
// after validation and before the write.
//
// Mutating: LimitRanger, ServiceAccount, Priority, DefaultTolerationSeconds,
// RuntimeClass, DefaultStorageClass, StorageObjectInUseProtection.
// Validating: LimitRanger, RuntimeClass, Priority (PriorityClasses),
// ResourceQuota.
// NamespaceLifecycle is admitNamespace.

var (
	serviceAccountGK = groupKind{"", "ServiceAccount"}
	priorityClassGK  = groupKind{"scheduling.k8s.io", "PriorityClass"}
	storageClassGK   = groupKind{"storage.k8s.io", "StorageClass"}
	limitRangeGK     = groupKind{"", "LimitRange"}
	pvcGK            = groupKind{"", "PersistentVolumeClaim"}
	pvGK             = groupKind{"", "PersistentVolume"}
	configMapGK      = groupKind{"", "ConfigMap"}
)

// Names the ServiceAccount admission plugin uses.
const (
	defaultServiceAccount      = "default"
	tokenVolumePrefix          = "kube-api-access-"
	tokenMountPath             = "/var/run/secrets/kubernetes.io/serviceaccount"
	mirrorPodAnnotation        = "kubernetes.io/config.mirror"
	defaultClassAnnotation     = "storageclass.kubernetes.io/is-default-class"
	betaDefaultClassAnnotation = "storageclass.beta.kubernetes.io/is-default-class"
)

// admissionForbidden is admission.NewForbidden: the resource and the name
// the request gave (the generateName prefix when it gave none).
func admissionForbidden(res cluster.Resource, name string, why string) *cluster.StatusError {
	return forbidden(res, name, why)
}

// mutateCreate runs the mutating admission plugins on an object to be
// created; name is how errors name it.
func (t *txn) mutateCreate(res cluster.Resource, obj map[string]any, name string) error {
	switch gkOf(res) {
	case podGK:
		if err := t.limitRangerMutate(obj); err != nil {
			return err
		}
		if err := t.admitServiceAccount(res, obj, name); err != nil {
			return err
		}
		if err := t.admitPriority(res, obj, name); err != nil {
			return err
		}
		defaultTolerationSeconds(obj)
		if err := t.admitRuntimeClass(res, obj, name); err != nil {
			return err
		}
	case pvcGK:
		if err := t.defaultStorageClass(obj); err != nil {
			return err
		}
		addFinalizer(obj, "kubernetes.io/pvc-protection")
	case pvGK:
		addFinalizer(obj, "kubernetes.io/pv-protection")
	}
	return nil
}

// mutateUpdate runs the mutating admission plugins on an update.
func (t *txn) mutateUpdate(res cluster.Resource, obj, old map[string]any) {
	if gkOf(res) != podGK {
		return
	}
	// Priority keeps the priority it computed on create.
	spec, _ := obj["spec"].(map[string]any)
	ospec, _ := old["spec"].(map[string]any)
	if spec == nil || ospec == nil {
		return
	}
	for _, f := range []string{"priority", "preemptionPolicy"} {
		if _, ok := spec[f]; !ok {
			if v, ok := ospec[f]; ok {
				spec[f] = v
			}
		}
	}
}

// validateCreate runs the validating admission plugins on an object to be
// created.
func (t *txn) validateCreate(res cluster.Resource, obj map[string]any, name string) error {
	switch gkOf(res) {
	case podGK, pvcGK:
		if err := t.limitRangerValidate(res, obj, name); err != nil {
			return err
		}
		if gkOf(res) == podGK {
			if err := t.validateRuntimeClass(res, obj, name); err != nil {
				return err
			}
		}
	case priorityClassGK:
		if err := t.validatePriorityClass(res, obj, nil, name); err != nil {
			return err
		}
	}
	return t.admitQuota(res, obj, nil, name)
}

// validateUpdate runs the validating admission plugins on an update.
func (t *txn) validateUpdate(res cluster.Resource, obj, old map[string]any) error {
	name := metaString(obj, "name")
	if gkOf(res) == priorityClassGK {
		if err := t.validatePriorityClass(res, obj, old, name); err != nil {
			return err
		}
	}
	return t.admitQuota(res, obj, old, name)
}

func addFinalizer(obj map[string]any, f string) {
	fs := finalizers(obj)
	if !containsString(fs, f) {
		setFinalizers(obj, append(fs, f))
	}
}

// objectsIn decodes the objects of a kind in a namespace ("" for
// cluster-scoped kinds), in name order.
func (t *txn) objectsIn(gk groupKind, ns string) ([]map[string]any, error) {
	var out []map[string]any
	err := t.scan(gk, ns, func(sns, name string, raw []byte) error {
		if sns != ns {
			return nil
		}
		obj, err := value.DecodeObject(raw)
		if err != nil {
			return t.wrap("decode", objKey{gk: gk, namespace: sns, name: name}, err)
		}
		out = append(out, obj)
		return nil
	})
	return out, err
}

// --- ServiceAccount --------------------------------------------------------

// admitServiceAccount is the ServiceAccount plugin: the pod runs as its
// namespace's default ServiceAccount unless it names one, which must
// exist; it mounts the account's token (a projected kube-api-access-*
// volume in every container) unless automounting is off, and takes the
// account's imagePullSecrets when it has none.
func (t *txn) admitServiceAccount(res cluster.Resource, pod map[string]any, name string) error {
	md := metadata(pod)
	if ann, _ := md["annotations"].(map[string]any); ann != nil {
		if _, mirror := ann[mirrorPodAnnotation]; mirror {
			return nil
		}
	}
	spec := child(pod, "spec")
	if str(spec, "serviceAccountName") == "" {
		spec["serviceAccountName"] = defaultServiceAccount
		spec["serviceAccount"] = defaultServiceAccount
	}
	ns := str(md, "namespace")
	saName := str(spec, "serviceAccountName")
	sa, _, err := t.read(objKey{gk: serviceAccountGK, namespace: ns, name: saName})
	if err != nil {
		return err
	}
	if sa == nil {
		return admissionForbidden(res, name, fmt.Sprintf("error looking up service account %s/%s: serviceaccount %q not found", ns, saName, saName))
	}
	automount := true
	if v, ok := spec["automountServiceAccountToken"].(bool); ok {
		automount = v
	} else if v, ok := sa["automountServiceAccountToken"].(bool); ok {
		automount = v
	}
	if automount {
		mountServiceAccountToken(pod)
	}
	if l, _ := spec["imagePullSecrets"].([]any); len(l) == 0 {
		var secrets []any
		for _, s := range objectList(sa["imagePullSecrets"]) {
			secrets = append(secrets, map[string]any{"name": str(s, "name")})
		}
		if len(secrets) > 0 {
			spec["imagePullSecrets"] = secrets
		} else {
			delete(spec, "imagePullSecrets")
		}
	}
	return nil
}

// mountServiceAccountToken adds the token volume and its read-only mount
// in every container (init containers first) that mounts nothing at the
// token's path.
func mountServiceAccountToken(pod map[string]any) {
	spec := child(pod, "spec")
	volumes := objectList(spec["volumes"])
	volName, hasVolume := "", false
	for _, v := range volumes {
		if n := str(v, "name"); strings.HasPrefix(n, tokenVolumePrefix) {
			volName, hasVolume = n, true
			break
		}
	}
	if volName == "" {
		volName = tokenVolumePrefix + tokenVolumeSuffix(pod)
	}
	needed := false
	for _, field := range []string{"initContainers", "containers"} {
		for _, c := range objectList(spec[field]) {
			mounts, _ := c["volumeMounts"].([]any)
			mounted := false
			for _, m := range objectList(mounts) {
				if str(m, "mountPath") == tokenMountPath {
					mounted = true
					break
				}
			}
			if !mounted {
				c["volumeMounts"] = append(mounts, map[string]any{"name": volName, "readOnly": true, "mountPath": tokenMountPath})
				needed = true
			}
		}
	}
	if hasVolume || !needed {
		return
	}
	list, _ := spec["volumes"].([]any)
	spec["volumes"] = append(list, map[string]any{
		"name": volName,
		"projected": map[string]any{
			"defaultMode": int64(0o644),
			"sources": []any{
				map[string]any{"serviceAccountToken": map[string]any{"path": "token", "expirationSeconds": int64(3607)}},
				map[string]any{"configMap": map[string]any{"name": rootCAConfigMap, "items": []any{map[string]any{"key": "ca.crt", "path": "ca.crt"}}}},
				map[string]any{"downwardAPI": map[string]any{"items": []any{map[string]any{
					"path": "namespace", "fieldRef": map[string]any{"apiVersion": "v1", "fieldPath": "metadata.namespace"},
				}}}},
			},
		},
	})
}

// tokenVolumeSuffix is the five characters that end the token volume's
// name: random on a real API server; here a hash of the pod's namespace and
// name (its uid is random already), so that tests of named pods are
// repeatable.
func tokenVolumeSuffix(pod map[string]any) string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	h := fnv.New64a()
	h.Write([]byte(metaString(pod, "namespace") + "/" + metaString(pod, "name")))
	n := h.Sum64()
	b := make([]byte, 5)
	for i := range b {
		b[i] = alphabet[n%uint64(len(alphabet))]
		n /= uint64(len(alphabet))
	}
	return string(b)
}

// objectList returns the objects of a JSON list, skipping other values.
func objectList(v any) []map[string]any {
	l, _ := v.([]any)
	out := make([]map[string]any, 0, len(l))
	for _, x := range l {
		if m, ok := x.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// --- Priority --------------------------------------------------------------

// admitPriority is the Priority plugin on a pod create: the priority and
// preemption policy come from the PriorityClass the pod names (which must
// exist), else from the global default class, else 0 and
// PreemptLowerPriority.
func (t *txn) admitPriority(res cluster.Resource, pod map[string]any, name string) error {
	spec := child(pod, "spec")
	className := str(spec, "priorityClassName")
	var priority int64
	preemption := "PreemptLowerPriority"
	if className == "" {
		def, err := t.defaultPriorityClass()
		if err != nil {
			return err
		}
		if def != nil {
			className = metaString(def, "name")
			priority, _ = def["value"].(int64)
			preemption = str(def, "preemptionPolicy")
		}
	} else {
		pc, _, err := t.read(objKey{gk: priorityClassGK, name: className})
		if err != nil {
			return err
		}
		if pc == nil {
			return admissionForbidden(res, name, fmt.Sprintf("no PriorityClass with name %s was found", className))
		}
		priority, _ = pc["value"].(int64)
		preemption = str(pc, "preemptionPolicy")
	}
	setString(spec, "priorityClassName", className)
	if p, ok := spec["priority"].(int64); ok && p != priority {
		return admissionForbidden(res, name, fmt.Sprintf("the integer value of priority (%d) must not be provided in pod spec; priority admission controller computed %d from the given PriorityClass name", p, priority))
	}
	spec["priority"] = priority
	if preemption != "" {
		if p := str(spec, "preemptionPolicy"); p != "" && p != preemption {
			return admissionForbidden(res, name, fmt.Sprintf("the string value of PreemptionPolicy (%s) must not be provided in pod spec; priority admission controller computed %s from the given PriorityClass name", p, preemption))
		}
		spec["preemptionPolicy"] = preemption
	}
	return nil
}

// defaultPriorityClass returns the PriorityClass marked globalDefault (the
// lowest value when there are several), nil when there is none.
func (t *txn) defaultPriorityClass() (map[string]any, error) {
	pcs, err := t.objectsIn(priorityClassGK, "")
	if err != nil {
		return nil, err
	}
	var def map[string]any
	for _, pc := range pcs {
		if pc["globalDefault"] != true {
			continue
		}
		v, _ := pc["value"].(int64)
		if dv, _ := def["value"].(int64); def == nil || dv > v {
			def = pc
		}
	}
	return def, nil
}

// validatePriorityClass allows one globalDefault PriorityClass.
func (t *txn) validatePriorityClass(res cluster.Resource, pc, old map[string]any, name string) error {
	if pc["globalDefault"] != true {
		return nil
	}
	def, err := t.defaultPriorityClass()
	if err != nil || def == nil {
		return err
	}
	if old == nil || metaString(def, "name") != metaString(pc, "name") {
		return admissionForbidden(res, name, fmt.Sprintf("PriorityClass %s is already marked as default. Only one default can exist", metaString(def, "name")))
	}
	return nil
}

// --- DefaultTolerationSeconds ----------------------------------------------

// defaultTolerationSeconds lets a pod tolerate not-ready and unreachable
// nodes for 300 s unless it tolerates them already.
func defaultTolerationSeconds(pod map[string]any) {
	spec := child(pod, "spec")
	tols, _ := spec["tolerations"].([]any)
	notReady, unreachable := false, false
	for _, tol := range objectList(tols) {
		key, effect := str(tol, "key"), str(tol, "effect")
		if effect != "" && effect != "NoExecute" {
			continue
		}
		if key == "" || key == "node.kubernetes.io/not-ready" {
			notReady = true
		}
		if key == "" || key == "node.kubernetes.io/unreachable" {
			unreachable = true
		}
	}
	for _, t := range []struct {
		key  string
		done bool
	}{{"node.kubernetes.io/not-ready", notReady}, {"node.kubernetes.io/unreachable", unreachable}} {
		if !t.done {
			tols = append(tols, map[string]any{"key": t.key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": int64(300)})
		}
	}
	spec["tolerations"] = tols
}

// --- DefaultStorageClass ---------------------------------------------------

// defaultStorageClass gives a claim without storageClassName the default
// StorageClass (the newest of those annotated as default), if there is one.
func (t *txn) defaultStorageClass(pvc map[string]any) error {
	spec := child(pvc, "spec")
	if _, ok := spec["storageClassName"]; ok {
		return nil
	}
	scs, err := t.objectsIn(storageClassGK, "")
	if err != nil {
		return err
	}
	var defaults []map[string]any
	for _, sc := range scs {
		ann, _ := metadata(sc)["annotations"].(map[string]any)
		if ann[defaultClassAnnotation] == "true" || ann[betaDefaultClassAnnotation] == "true" {
			defaults = append(defaults, sc)
		}
	}
	if len(defaults) == 0 {
		return nil
	}
	// The newest wins; on a tie, the name that sorts first.
	slices.SortStableFunc(defaults, func(a, b map[string]any) int {
		if c := strings.Compare(metaString(b, "creationTimestamp"), metaString(a, "creationTimestamp")); c != 0 {
			return c
		}
		return strings.Compare(metaString(a, "name"), metaString(b, "name"))
	})
	spec["storageClassName"] = metaString(defaults[0], "name")
	return nil
}
