package local

import (
	"fmt"
	"strings"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/cluster/local/internal/fieldmgr"
	"github.com/konverge/konverge/merge"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

// patchTypes are the media types the API server accepts for patches of
// built-in kinds; custom resources take all but the strategic merge patch.
var (
	builtinPatchTypes = []cluster.PatchType{cluster.JSONPatchType, cluster.MergePatchType, cluster.StrategicMergePatchType, cluster.ApplyPatchType}
	customPatchTypes  = []cluster.PatchType{cluster.JSONPatchType, cluster.MergePatchType, cluster.ApplyPatchType}
)

func unsupportedMediaType(accepted []cluster.PatchType) *cluster.StatusError {
	names := make([]string, len(accepted))
	for i, pt := range accepted {
		names[i] = string(pt)
	}
	return &cluster.StatusError{Code: 415, Reason: cluster.ReasonUnsupportedMedia,
		Message: "the body of the request was in an unknown format - accepted media types include: " + strings.Join(names, ", ")}
}

// patch is the Patch verb: the patch applied to the stored object, then
// the semantics of an update (a resourceVersion the patch sets is a
// precondition).
func (t *txn) patch(gvk schema.GVK, namespace, name string, pt cluster.PatchType, data []byte, o cluster.PatchOptions) (map[string]any, error) {
	defer t.withValidation(o.FieldValidation)()
	res, err := t.resource(gvk)
	if err != nil {
		return nil, err
	}
	accepted := builtinPatchTypes
	if !res.Strategic {
		accepted = customPatchTypes
	}
	supported := false
	for _, a := range accepted {
		supported = supported || a == pt
	}
	if !supported {
		return nil, unsupportedMediaType(accepted)
	}
	if err := fieldmgr.CheckPatchOptions(pt, o); err != nil {
		return nil, err
	}
	t.request = writeRequest{manager: o.FieldManager, subresource: o.Subresource}
	switch o.Subresource {
	case "":
	case "status":
		if !res.Status {
			return nil, notFoundResource()
		}
	case "scale":
		return t.patchScale(res, namespace, name, pt, data, o)
	default:
		return nil, notFoundResource()
	}
	if pt == cluster.ApplyPatchType {
		return t.serverSideApply(res, gvk, namespace, name, data, o)
	}

	k := objKey{gk: gkOf(res), namespace: requestNamespace(res, namespace), name: name}
	old, obj, err := t.loadPatched(k, gvk, pt, data)
	if err != nil {
		return nil, err
	}
	if old == nil {
		return nil, cluster.NewNotFound(res.GroupResource(), name)
	}
	live := patchLive(old.obj, gvk.APIVersion())
	switch {
	case obj != nil:
		// Patched ahead (batch.Prefetch), as below.
	case pt == cluster.JSONPatchType:
		if _, err := value.Decode(data); err != nil {
			return nil, cluster.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
		}
		if obj, err = merge.JSONPatch(live, data); err != nil {
			return nil, &cluster.StatusError{Code: 422, Reason: cluster.ReasonInvalid, Kind: kindGroup(res.GVK), Name: name, Message: err.Error()}
		}
	case pt == cluster.MergePatchType, pt == cluster.StrategicMergePatchType:
		p, err := value.DecodeObject(data)
		if err != nil {
			if msg, ok := notAnObject(data); ok && pt == cluster.StrategicMergePatchType {
				return nil, cluster.NewBadRequest(msg)
			}
			return nil, cluster.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
		}
		if pt == cluster.MergePatchType {
			obj = merge.MergePatch(live, p)
		} else if obj, err = merge.Apply(live, p, t.api.mapper.Schema(gvk)); err != nil {
			return nil, cluster.NewBadRequest(err.Error())
		}
		// The result shares values with live, that is with old.obj, which
		// updateObject compares it with while it changes it in place:
		// copy it, but for the fieldsV1 trees (see copyForUpdate).
		obj = copyForUpdate(obj)
	}

	md := metadata(obj)
	if n := str(md, "name"); n != name {
		return nil, cluster.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", n, name))
	}
	if ns := str(md, "namespace"); res.Namespaced && ns != k.namespace {
		if ns != "" {
			return nil, cluster.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
		}
		md["namespace"] = k.namespace
	}
	obj["apiVersion"], obj["kind"] = gvk.APIVersion(), gvk.Kind
	t.patchBody = data
	defer func() { t.patchBody = nil }()
	return t.updateObject(k, res, old, obj, o.Subresource == "status", o.DryRun)
}

// patchLive is the object a patch applies to: the stored object in the
// version of the request (merge does not modify it).
func patchLive(obj map[string]any, apiVersion string) map[string]any {
	live := make(map[string]any, len(obj))
	for f, v := range obj {
		live[f] = v
	}
	live["apiVersion"] = apiVersion
	return live
}

// notAnObject is kube-apiserver's refusal of a strategic merge patch that
// is JSON but not an object (Go's encoding/json decoding it into a map):
// "json: cannot unmarshal string into Go value of type
// map[string]interface {}".
func notAnObject(data []byte) (string, bool) {
	v, err := value.Decode(data)
	if err != nil {
		return "", false
	}
	var t string
	switch v.(type) {
	case string:
		t = "string"
	case []any:
		t = "array"
	case bool:
		t = "bool"
	case nil, map[string]any:
		return "", false
	default:
		t = "number"
	}
	return "json: cannot unmarshal " + t + " into Go value of type map[string]interface {}", true
}

// updatedFrom, when set (by tests), sees the stored object each update
// started from once the update is done, to check that no step changed it.
var updatedFrom func(k objKey, old *record)

// copyForUpdate returns a copy of obj, as value.DeepCopyObject would,
// that shares with obj the fieldsV1 trees of its managedFields entries
// and nothing else. A write never changes a fieldsV1 tree in place (see
// the package doc): the field manager reads the request's trees and the
// stored ones, keeps or replaces them whole, and builds new ones for what
// changed. So the object a patch builds may keep the fieldsV1 of the
// stored object it started from, the largest part of a typical object by
// count of maps (two entries of a Deployment hold about three quarters of
// its maps), while everything the update steps do change in place
// (metadata, defaults, admission, the strategies, allocations) is its
// own and the stored object stays as it was read.
func copyForUpdate(obj map[string]any) map[string]any {
	md, ok := obj["metadata"].(map[string]any)
	if !ok {
		return value.DeepCopyObject(obj)
	}
	list, ok := md["managedFields"].([]any)
	if !ok || len(list) == 0 {
		return value.DeepCopyObject(obj)
	}
	entries := make([]any, len(list))
	for i, x := range list {
		e, ok := x.(map[string]any)
		if !ok {
			entries[i] = value.DeepCopy(x)
			continue
		}
		c := make(map[string]any, len(e))
		for k, v := range e {
			if k == "fieldsV1" {
				c[k] = v
			} else {
				c[k] = value.DeepCopy(v)
			}
		}
		entries[i] = c
	}
	mdc := make(map[string]any, len(md))
	for k, v := range md {
		if k != "managedFields" {
			mdc[k] = value.DeepCopy(v)
		}
	}
	mdc["managedFields"] = entries
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		if k != "metadata" {
			out[k] = value.DeepCopy(v)
		}
	}
	out["metadata"] = mdc
	return out
}
