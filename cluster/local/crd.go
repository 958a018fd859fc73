package local

import (
	"fmt"
	"net/url"
	"sort"
	"strings"
	"sync"

	bolt "go.etcd.io/bbolt"
	"k8s.io/apimachinery/pkg/util/managedfields"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/defaults"
	"github.com/konverge/konverge/kinds"
	"github.com/konverge/konverge/openapi"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

// apiState is the set of kinds the store serves: the built-in kinds and
// the versions of the CRDs it holds. It is immutable: a change builds a
// new one.
type apiState struct {
	mapper cluster.Mapper
	// crds holds the custom resources by group and kind.
	crds map[groupKind]*crdInfo
	// crdObjs holds the CRD objects by name, to rebuild from.
	crdObjs map[string]map[string]any
}

// crdInfo is how one CRD serves its custom resources.
type crdInfo struct {
	name       string
	namespaced bool
	// terminating: the CRD is being deleted.
	terminating bool
	// storage is the version objects are stored in.
	storage  string
	versions map[string]*crdVersion
	// typeConverter is the server-side apply schema of the custom
	// resources, built on first use; managers caches their field managers
	// (managedFields).
	typeConverter func() (managedfields.TypeConverter, error)
	managers      sync.Map
}

// crdVersion is one served version of a CRD.
type crdVersion struct {
	// schema is the version's openAPIV3Schema (nil when it has none).
	schema map[string]any
	// status reports the status subresource.
	status bool
	// selectable maps the selectableFields to the value of an absent field.
	selectable map[string]string
	// scale is the scale subresource (nil when the version has none).
	scale *crdScale
}

// crdScale is the scale subresource of a CRD's version: where the
// replicas and selector of the autoscaling/v1 Scale are in its custom
// resources (".spec.replicas").
type crdScale struct {
	specReplicasPath, statusReplicasPath, labelSelectorPath string
}

// loadAPI reads the CRDs of the database.
func loadAPI(tx *bolt.Tx, builtin []cluster.Resource) (*apiState, error) {
	objs := map[string]map[string]any{}
	if b := tx.Bucket(bucketObjects).Bucket(crdGK.bucket()); b != nil {
		err := b.ForEach(func(k, v []byte) error {
			obj, err := value.DecodeObject(v)
			if err != nil {
				return fmt.Errorf("decode CustomResourceDefinition %s: %w", k, err)
			}
			objs[metaString(obj, "name")] = obj
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return buildAPI(builtin, objs), nil
}

// buildAPI makes the served kinds from the built-in ones and CRDs. A CRD
// that does not convert (which validation prevents) serves nothing.
func buildAPI(builtin []cluster.Resource, crdObjs map[string]map[string]any) *apiState {
	reg := schema.Builtin()
	var resources []cluster.Resource
	crds := map[groupKind]*crdInfo{}
	names := make([]string, 0, len(crdObjs))
	for n := range crdObjs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		obj := crdObjs[n]
		versions, err := schema.FromCRD(obj)
		if err != nil || len(versions) == 0 {
			continue
		}
		raw := crdVersionsByName(obj)
		info := &crdInfo{name: n, namespaced: versions[0].Scope == "Namespaced", terminating: isDeleting(obj), versions: map[string]*crdVersion{}}
		info.typeConverter = sync.OnceValues(func() (managedfields.TypeConverter, error) {
			return openapi.CustomResourceTypeConverter(obj)
		})
		for _, v := range versions {
			if v.Storage {
				info.storage = v.GVK.Version
			}
			if !v.Served {
				continue
			}
			rv := raw[v.GVK.Version]
			spec := crdVersionSpec(rv)
			info.versions[v.GVK.Version] = spec
			reg.Add(v.GVK, v.Type)
			resources = append(resources, cluster.Resource{
				GVK:        v.GVK,
				Plural:     v.Plural,
				Singular:   v.Singular,
				ShortNames: v.ShortNames,
				Namespaced: info.namespaced,
				Status:     spec.status,
			})
		}
		crds[groupKind{versions[0].GVK.Group, versions[0].GVK.Kind}] = info
	}
	mapper := kinds.NewMapper(builtin, reg).With(resources...)
	return &apiState{mapper: mapper, crds: crds, crdObjs: crdObjs}
}

func crdVersionsByName(crd map[string]any) map[string]map[string]any {
	spec, _ := crd["spec"].(map[string]any)
	list, _ := spec["versions"].([]any)
	out := map[string]map[string]any{}
	for _, x := range list {
		if m, ok := x.(map[string]any); ok {
			out[str(m, "name")] = m
		}
	}
	return out
}

func crdVersionSpec(v map[string]any) *crdVersion {
	out := &crdVersion{selectable: map[string]string{}}
	if s, ok := v["schema"].(map[string]any); ok {
		out.schema, _ = s["openAPIV3Schema"].(map[string]any)
	}
	if sub, ok := v["subresources"].(map[string]any); ok {
		_, out.status = sub["status"]
		if sc, ok := sub["scale"].(map[string]any); ok {
			out.scale = &crdScale{specReplicasPath: str(sc, "specReplicasPath"), statusReplicasPath: str(sc, "statusReplicasPath"),
				labelSelectorPath: str(sc, "labelSelectorPath")}
		}
	}
	sfs, _ := v["selectableFields"].([]any)
	for _, sf := range sfs {
		m, _ := sf.(map[string]any)
		if p := strings.TrimPrefix(str(m, "jsonPath"), "."); p != "" {
			out.selectable[p] = ""
		}
	}
	return out
}

// setCRD serves a created or updated CRD for the rest of the transaction
// (and after its commit).
func (t *txn) setCRD(obj map[string]any) {
	objs := make(map[string]map[string]any, len(t.api.crdObjs)+1)
	for k, v := range t.api.crdObjs {
		objs[k] = v
	}
	objs[metaString(obj, "name")] = obj
	t.api, t.apiChanged = buildAPI(t.s.builtin, objs), true
}

// dropCRD stops serving a deleted CRD.
func (t *txn) dropCRD(name string) {
	objs := make(map[string]map[string]any, len(t.api.crdObjs))
	for k, v := range t.api.crdObjs {
		if k != name {
			objs[k] = v
		}
	}
	t.api, t.apiChanged = buildAPI(t.s.builtin, objs), true
}

// crdCauses validates what the store needs of a CRD to serve it.
func crdCauses(obj map[string]any) []cluster.Cause {
	var causes []cluster.Cause
	spec, _ := obj["spec"].(map[string]any)
	names, _ := spec["names"].(map[string]any)
	group, plural := str(spec, "group"), str(names, "plural")
	if name := metaString(obj, "name"); name != "" && name != plural+"."+group {
		causes = append(causes, cluster.Cause{Type: "FieldValueInvalid", Field: "metadata.name",
			Message: fmt.Sprintf("Invalid value: %q: must be spec.names.plural+\".\"+spec.group", name)})
	}
	storage := 0
	versions, _ := spec["versions"].([]any)
	for _, v := range versions {
		if m, ok := v.(map[string]any); ok && m["storage"] == true {
			storage++
		}
	}
	if len(versions) > 0 && storage != 1 {
		causes = append(causes, cluster.Cause{Type: "FieldValueInvalid", Field: "spec.versions",
			Message: "Invalid value: \"\": must have exactly one version marked as storage version"})
	}
	if _, err := schema.FromCRD(obj); err != nil {
		causes = append(causes, cluster.Cause{Type: "FieldValueInvalid", Field: "spec", Message: err.Error()})
	}
	causes = append(causes, scaleCauses(versions)...)
	return causes
}

// storedVersionCauses refuses an update of a CRD (old is the stored one)
// that leaves out of spec.versions a version still in
// status.storedVersions, as kube-apiserver does: data may remain stored
// in it until a storage migration removes it from storedVersions (a
// status update). A spec update keeps the stored status, with the new
// storage version added.
func storedVersionCauses(obj, old map[string]any, statusOnly bool) []cluster.Cause {
	if old == nil {
		return nil
	}
	status := old
	if statusOnly {
		status = obj
	}
	stored, _ := peek(status, "status")["storedVersions"].([]any)
	versions := objectList(peek(obj, "spec")["versions"])
	if !statusOnly {
		for _, v := range versions {
			if v["storage"] == true && !containsAny(stored, str(v, "name")) {
				stored = append(stored[:len(stored):len(stored)], str(v, "name"))
			}
		}
	}
	var causes []cluster.Cause
	for i, x := range stored {
		name, _ := x.(string)
		found := false
		for _, v := range versions {
			found = found || str(v, "name") == name
		}
		if found {
			continue
		}
		causes = append(causes, cluster.Cause{Type: "FieldValueInvalid", Field: fmt.Sprintf("status.storedVersions[%d]", i),
			Message: fmt.Sprintf("Invalid value: %q: missing from spec.versions; %s was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in %s and removes %s from status.storedVersions", name, name, name, name)})
	}
	return causes
}

// The API-approval policy of the groups the Kubernetes project owns:
// a CRD of k8s.io, kubernetes.io or a subgroup of them carries the
// annotation api-approved.kubernetes.io, the URL of its approval or a
// reason that starts with "unapproved"; kube-apiserver refuses one
// without, and its approval controller reports the state in the
// condition KubernetesAPIApprovalPolicyConformant.
const (
	approvalAnnotation = "api-approved.kubernetes.io"
	approvalCondition  = "KubernetesAPIApprovalPolicyConformant"
	approvalPolicyURL  = "https://github.com/kubernetes/enhancements/pull/1111"
)

// protectedGroup reports a group of the Kubernetes project.
func protectedGroup(group string) bool {
	return group == "k8s.io" || strings.HasSuffix(group, ".k8s.io") ||
		group == "kubernetes.io" || strings.HasSuffix(group, ".kubernetes.io")
}

// approvalState is the approval a CRD's annotations give: "approved",
// "unapproved", "missing" or "invalid", and the reason's words.
func approvalState(crd map[string]any) (state, reason string) {
	v, ok := metaMap(crd, "annotations")[approvalAnnotation].(string)
	switch {
	case !ok:
		return "missing", fmt.Sprintf("protected groups must have approval annotation %q, see %s", approvalAnnotation, approvalPolicyURL)
	case strings.HasPrefix(v, "unapproved"):
		return "unapproved", fmt.Sprintf("not approved: %q", v)
	}
	if _, err := url.ParseRequestURI(v); err == nil {
		return "approved", "approved in " + v
	}
	return "invalid", fmt.Sprintf("protected groups must have approval annotation %q with either a URL or a reason starting with \"unapproved\", see %s", approvalAnnotation, approvalPolicyURL)
}

// approvalCauses refuses a CRD of a protected group without a valid
// approval annotation; an update that leaves the state as it was is
// never refused (a controller that only updates the spec).
func approvalCauses(obj, old map[string]any) []cluster.Cause {
	if !protectedGroup(str(peek(obj, "spec"), "group")) {
		return nil
	}
	state, reason := approvalState(obj)
	if old != nil {
		if was, _ := approvalState(old); was == state {
			return nil
		}
	}
	field := "metadata.annotations[" + approvalAnnotation + "]"
	switch state {
	case "missing":
		return []cluster.Cause{{Type: "FieldValueRequired", Field: field, Message: "Required value: " + reason}}
	case "invalid":
		v, _ := metaMap(obj, "annotations")[approvalAnnotation].(string)
		return []cluster.Cause{{Type: "FieldValueInvalid", Field: field, Message: fmt.Sprintf("Invalid value: %q: %s", v, reason)}}
	}
	return nil
}

// setApprovalCondition sets the condition the approval controller writes
// on a CRD of a protected group.
func setApprovalCondition(crd, status map[string]any, now string) {
	if !protectedGroup(str(peek(crd, "spec"), "group")) {
		return
	}
	state, reason := approvalState(crd)
	switch state {
	case "approved":
		setCondition(status, approvalCondition, "True", "ApprovedAnnotation", reason, now)
	case "unapproved":
		setCondition(status, approvalCondition, "False", "UnapprovedAnnotation", reason, now)
	case "missing":
		setCondition(status, approvalCondition, "False", "MissingAnnotation", reason, now)
	default:
		setCondition(status, approvalCondition, "False", "InvalidAnnotation", reason, now)
	}
}

// scaleCauses validates the scale subresources of a CRD's versions, as
// apiextensions' ValidateCustomResourceDefinitionSubresources, with its
// field paths: spec.subresources when every version has the same
// subresources (the internal version holds them once), else
// spec.versions[i].subresources.
func scaleCauses(versions []any) []cluster.Cause {
	same := true
	for _, v := range versions {
		m, _ := v.(map[string]any)
		f, _ := versions[0].(map[string]any)
		if !value.Equal(m["subresources"], f["subresources"]) {
			same = false
		}
	}
	var causes []cluster.Cause
	for i, v := range versions {
		if same && i > 0 {
			break
		}
		m, _ := v.(map[string]any)
		sc, ok := kobjMap(m, "subresources", "scale")
		if !ok {
			continue
		}
		base := fmt.Sprintf("spec.versions[%d].subresources.scale.", i)
		if same {
			base = "spec.subresources.scale."
		}
		path := func(field, p, under string, unders ...string) {
			switch {
			case p == "":
				if field != "labelSelectorPath" {
					causes = append(causes, cluster.Cause{Type: "FieldValueRequired", Field: base + field, Message: "Required value"})
				}
				return
			case p[0] != '.':
				causes = append(causes, invalidCause(base+field, p, "must be a simple json path starting with ."))
				return
			}
			for _, u := range unders {
				if strings.HasPrefix(p, u+".") {
					return
				}
			}
			causes = append(causes, invalidCause(base+field, p, under))
		}
		path("specReplicasPath", str(sc, "specReplicasPath"), "should be a json path under .spec", ".spec")
		path("statusReplicasPath", str(sc, "statusReplicasPath"), "should be a json path under .status", ".status")
		path("labelSelectorPath", str(sc, "labelSelectorPath"), "should be a json path under either .spec or .status", ".spec", ".status")
	}
	return causes
}

// kobjMap returns the object at path.
func kobjMap(m map[string]any, path ...string) (map[string]any, bool) {
	var cur any = m
	for _, p := range path {
		cm, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		cur = cm[p]
	}
	out, ok := cur.(map[string]any)
	return out, ok
}

// prepareCRD sets the status the API server's CRD controllers give a CRD:
// stored versions, accepted names, and the NamesAccepted and Established
// conditions (at once: the embedded cluster serves a CRD as soon as it is
// stored). old is nil on create.
func prepareCRD(obj, old map[string]any, now string) {
	status := map[string]any{}
	if old != nil {
		if s, ok := old["status"].(map[string]any); ok {
			status = value.DeepCopyObject(s)
		}
	}
	obj["status"] = status
	spec, _ := obj["spec"].(map[string]any)
	var storage string
	versions, _ := spec["versions"].([]any)
	for _, v := range versions {
		if m, ok := v.(map[string]any); ok && m["storage"] == true {
			storage = str(m, "name")
		}
	}
	stored, _ := status["storedVersions"].([]any)
	if storage != "" && !containsAny(stored, storage) {
		status["storedVersions"] = append(stored, storage)
	}
	names, _ := spec["names"].(map[string]any)
	accepted := map[string]any{}
	for k, v := range names {
		accepted[k] = v
	}
	if kind := str(names, "kind"); kind != "" {
		if str(accepted, "singular") == "" {
			accepted["singular"] = strings.ToLower(kind)
		}
		if str(accepted, "listKind") == "" {
			accepted["listKind"] = kind + "List"
		}
	}
	status["acceptedNames"] = accepted
	setCondition(status, "NamesAccepted", "True", "NoConflicts", "no conflicts found", now)
	setCondition(status, "Established", "True", "InitialNamesAccepted", "the initial names have been accepted", now)
	setApprovalCondition(obj, status, now)
}

// defaultCRD fills in what the CRD's defaulting does (spec.conversion
// None, names.singular and names.listKind from the kind), with the code
// normalize.Server runs too.
func defaultCRD(obj map[string]any) { defaults.CustomResourceDefinition(obj) }

// initialCRDStatus is the status of a CRD as created, before the
// controllers accept its names: stored versions only.
func initialCRDStatus(obj map[string]any) map[string]any {
	status := map[string]any{"acceptedNames": map[string]any{"kind": "", "plural": ""}, "conditions": nil}
	versions, _ := child(obj, "spec")["versions"].([]any)
	for _, v := range objectList(versions) {
		if v["storage"] == true {
			status["storedVersions"] = []any{str(v, "name")}
		}
	}
	return status
}

// setCondition sets a condition in status.conditions, keeping its
// lastTransitionTime when its status does not change.
func setCondition(status map[string]any, typ, st, reason, message, now string) {
	conds, _ := status["conditions"].([]any)
	for i, c := range conds {
		m, ok := c.(map[string]any)
		if !ok || str(m, "type") != typ {
			continue
		}
		n := map[string]any{"type": typ, "status": st, "reason": reason, "message": message, "lastTransitionTime": m["lastTransitionTime"]}
		if str(m, "status") != st || m["lastTransitionTime"] == nil {
			n["lastTransitionTime"] = now
		}
		conds[i] = n
		return
	}
	status["conditions"] = append(conds, map[string]any{"type": typ, "status": st, "reason": reason, "message": message, "lastTransitionTime": now})
}
