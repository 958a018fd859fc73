package local

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/cluster/local/internal/fieldmgr"
	"github.com/konverge/konverge/merge"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/selector"
	"github.com/konverge/konverge/value"
)

// scaleGVK is the kind of the scale subresource.
var scaleGVK = schema.GVK{Group: "autoscaling", Version: "v1", Kind: "Scale"}

// scalable are the built-in kinds with a scale subresource.
var scalable = map[groupKind]bool{
	{"apps", "Deployment"}:        true,
	{"apps", "ReplicaSet"}:        true,
	{"apps", "StatefulSet"}:       true,
	{"", "ReplicationController"}: true,
}

func notFoundResource() *cluster.StatusError {
	return &cluster.StatusError{Code: 404, Reason: cluster.ReasonNotFound, Message: "the server could not find the requested resource"}
}

// scaleOf is the autoscaling/v1 Scale of a scalable object.
func scaleOf(obj map[string]any) (map[string]any, error) {
	md := metadata(obj)
	smd := map[string]any{}
	for _, f := range []string{"name", "namespace", "uid", "resourceVersion", "creationTimestamp"} {
		if v, ok := md[f]; ok {
			smd[f] = v
		}
	}
	spec, _ := obj["spec"].(map[string]any)
	status, _ := obj["status"].(map[string]any)
	replicas, ok := spec["replicas"]
	if !ok {
		replicas = int64(0)
	}
	sst := map[string]any{"replicas": int64(0)}
	if r, ok := status["replicas"]; ok {
		sst["replicas"] = r
	}
	sel, _ := spec["selector"].(map[string]any)
	if str(obj, "kind") == "ReplicationController" {
		sel = map[string]any{"matchLabels": sel}
	}
	if sel != nil {
		labels, err := selector.FromLabelSelector(sel)
		if err != nil {
			return nil, err
		}
		if s := labels.String(); s != "" {
			sst["selector"] = s
		}
	}
	return map[string]any{
		"apiVersion": scaleGVK.APIVersion(), "kind": scaleGVK.Kind,
		"metadata": smd,
		"spec":     map[string]any{"replicas": replicas},
		"status":   sst,
	}, nil
}

// patchScale is a Patch of the scale subresource, as kube-apiserver's
// ScaleREST does it: the object's Scale, with the managers of its replicas
// (managedfields.ScaleHandler), patched and tracked as a Scale by the
// request's manager with subresource "scale", then spec.replicas and the
// managers written back to the object. It returns the Scale.
func (t *txn) patchScale(res cluster.Resource, namespace, name string, pt cluster.PatchType, data []byte, o cluster.PatchOptions) (map[string]any, error) {
	crd := t.crdVersion(res)
	replicasPath := []string{"spec", "replicas"}
	switch {
	case crd != nil && crd.scale == nil:
		return nil, cluster.NewNotFound(res.GroupResource(), name)
	case crd != nil:
		replicasPath = scalePath(crd.scale.specReplicasPath)
	case !scalable[gkOf(res)]:
		return nil, notFoundResource()
	}
	if pt == cluster.ApplyPatchType {
		return nil, unsupportedMediaType([]cluster.PatchType{cluster.JSONPatchType, cluster.MergePatchType, cluster.StrategicMergePatchType})
	}
	k := objKey{gk: gkOf(res), namespace: requestNamespace(res, namespace), name: name}
	old, err := t.load(k)
	if err != nil {
		return nil, err
	}
	if old == nil {
		return nil, cluster.NewNotFound(res.GroupResource(), name)
	}
	live := make(map[string]any, len(old.obj))
	for f, v := range old.obj {
		live[f] = v
	}
	live["apiVersion"] = res.GVK.APIVersion()

	// The object's managers, their times marked (see timeMarkers), as the
	// Scale's.
	times := fieldmgr.NewTimes(live)
	marked := times.Shallow(live)
	gv := runtimeschema.GroupVersion{Group: res.GVK.Group, Version: res.GVK.Version}
	handler := managedfields.NewScaleHandler((&unstructured.Unstructured{Object: marked}).GetManagedFields(), gv,
		managedfields.ResourcePathMappings{gv.String(): fieldpath.MakePathOrDie(pathElems(replicasPath)...)})
	scaleEntries, err := handler.ToSubresource()
	if err != nil {
		return nil, fmt.Errorf("local: managed fields of %s/%s scale: %w", k.namespace, name, err)
	}
	oldScale, err := t.scaleOfObject(crd, live)
	if err != nil {
		return nil, err
	}
	oldScaleU := &unstructured.Unstructured{Object: oldScale}
	oldScaleU.SetManagedFields(scaleEntries)

	// The patch, applied to the Scale.
	var newScale map[string]any
	switch pt {
	case cluster.JSONPatchType:
		if _, err := value.Decode(data); err != nil {
			return nil, cluster.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
		}
		if newScale, err = merge.JSONPatch(oldScale, data); err != nil {
			return nil, &cluster.StatusError{Code: 422, Reason: cluster.ReasonInvalid, Kind: "Scale.autoscaling", Name: name, Message: err.Error()}
		}
	default:
		p, err := value.DecodeObject(data)
		if err != nil {
			return nil, cluster.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
		}
		newScale = merge.MergePatch(oldScale, p)
	}
	newScale = value.DeepCopyObject(newScale)
	if n := metaString(newScale, "name"); n != name {
		return nil, cluster.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", n, name))
	}
	spec, _ := newScale["spec"].(map[string]any)
	replicas, _ := spec["replicas"].(int64)
	if crd != nil && replicas == unsetReplicas {
		return nil, cluster.NewBadRequest(fmt.Sprintf("the spec replicas field %q cannot be empty", crd.scale.specReplicasPath))
	}
	if crd == nil && replicas < 0 {
		return nil, cluster.NewInvalid("Scale.autoscaling", name, []cluster.Cause{{Type: "FieldValueInvalid", Field: "spec.replicas",
			Message: fmt.Sprintf("Invalid value: %d: must be greater than or equal to 0", replicas)}})
	}
	if uid := metaString(newScale, "uid"); uid != "" && uid != metaString(live, "uid") {
		return nil, cluster.NewConflict(res.GroupResource(), name, fmt.Sprintf("Precondition failed: UID in precondition: %s, UID in object meta: %s", uid, metaString(live, "uid")))
	}

	// The Scale's fields tracked for the request's manager.
	fm, err := t.fieldManager(cluster.Resource{GVK: scaleGVK}, "scale")
	if err != nil {
		return nil, err
	}
	newScaleU := &unstructured.Unstructured{Object: newScale}
	newScaleU.SetManagedFields(scaleEntries)
	tracked := fm.UpdateNoErrors(oldScaleU, newScaleU, t.fieldManagerOf(o.FieldManager))
	trackedU, ok := tracked.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("local: field manager returned %T", tracked)
	}
	parentEntries, err := handler.ToParent(trackedU.GetManagedFields())
	if err != nil {
		return nil, fmt.Errorf("local: managed fields of %s/%s: %w", k.namespace, name, err)
	}

	// Back to the object: replicas, the resourceVersion precondition and
	// the managers.
	obj := value.DeepCopyObject(live)
	setField(obj, replicasPath, replicas)
	md := metadata(obj)
	md["resourceVersion"] = metaString(newScale, "resourceVersion")
	u := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{}}}
	u.SetManagedFields(parentEntries)
	md["managedFields"] = metadata(u.Object)["managedFields"]
	if err := times.Restore(obj, t.now()); err != nil {
		return nil, err
	}
	t.request = writeRequest{manager: o.FieldManager, subresource: "scale", applied: true}
	out, err := t.updateObject(k, res, old, obj, false, o.DryRun)
	if err != nil {
		return nil, err
	}
	if crd != nil {
		scale, _, err := crd.scale.of(out)
		if err != nil {
			return nil, cluster.NewBadRequest(err.Error())
		}
		return scale, nil
	}
	return scaleOf(out)
}

// unsetReplicas stands for spec replicas a custom resource does not have
// in its Scale before a patch (the smallest int32, as apiextensions).
const unsetReplicas = -2147483648

// scaleOfObject is the Scale of a built-in object, or of a custom
// resource of a CRD version with a scale subresource (its replicas
// unsetReplicas when it has none).
func (t *txn) scaleOfObject(crd *crdVersion, obj map[string]any) (map[string]any, error) {
	if crd == nil {
		return scaleOf(obj)
	}
	scale, found, err := crd.scale.of(obj)
	if err != nil {
		return nil, internalError("Internal error occurred: " + err.Error())
	}
	if !found {
		scale["spec"] = map[string]any{"replicas": int64(unsetReplicas)}
	}
	return scale, nil
}

// pathElems turns field names into the arguments of MakePathOrDie.
func pathElems(path []string) []any {
	out := make([]any, len(path))
	for i, p := range path {
		out[i] = p
	}
	return out
}

// setField sets the value at path, creating the objects on the way.
func setField(obj map[string]any, path []string, v any) {
	for _, p := range path[:len(path)-1] {
		next, ok := obj[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			obj[p] = next
		}
		obj = next
	}
	obj[path[len(path)-1]] = v
}
