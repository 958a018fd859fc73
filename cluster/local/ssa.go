package local

import (
	"fmt"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

// serverSideApply is the Patch verb with an apply patch: the patch merged
// into the stored object by the field manager (or, when there is none,
// into an empty one, which creates it), then the rules of an update (or a
// create).
func (t *txn) serverSideApply(res cluster.Resource, gvk schema.GVK, namespace, name string, data []byte, o cluster.PatchOptions) (map[string]any, error) {
	// As kube-apiserver: YAML to JSON, decoded, and, after the merge,
	// decoded strictly (duplicate fields), as kubectl asks with
	// fieldValidation=Strict. The store's decoder refuses duplicates and
	// what is not an object: only then does the slower decoding of the API
	// server run, for its messages.
	j, err := utilyaml.ToJSON(data)
	if err != nil {
		return nil, cluster.NewBadRequest(fmt.Sprintf("error encoding patch: %v", err))
	}
	patch, err := value.DecodeObject(j)
	strict := err == nil
	if !strict {
		var decoded map[string]any
		if err := utilyaml.Unmarshal(j, &decoded); err != nil {
			return nil, cluster.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
		}
		b, err := value.Encode(decoded)
		if err != nil {
			return nil, cluster.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
		}
		if patch, err = value.DecodeObject(b); err != nil {
			return nil, cluster.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
		}
	}
	if patch == nil {
		patch = map[string]any{}
	}
	k := objKey{gk: gkOf(res), namespace: requestNamespace(res, namespace), name: name}
	old, err := t.load(k)
	if err != nil {
		return nil, err
	}
	var live map[string]any
	if old != nil {
		// The patch applies to the object in the version of the request.
		live = make(map[string]any, len(old.obj))
		for f, v := range old.obj {
			live[f] = v
		}
		live["apiVersion"] = gvk.APIVersion()
	}
	obj, err := t.applyPatch(res, live, patch, o.FieldManager, o.Subresource, o.Force)
	if err != nil {
		return nil, err
	}
	if !strict {
		if err := utilyaml.UnmarshalStrict(j, &map[string]any{}); err != nil {
			switch cluster.FieldValidation(o.FieldValidation) {
			case cluster.FieldValidationStrict:
				return nil, cluster.NewBadRequest(fmt.Sprintf("error strict decoding patch: %v", err))
			case cluster.FieldValidationIgnore:
			default:
				t.warnings = append(t.warnings, err.Error())
			}
		}
	}
	t.request = writeRequest{manager: o.FieldManager, subresource: o.Subresource, applied: true}
	md := metadata(obj)
	if str(md, "name") == "" {
		md["name"] = name
	}
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
	if old == nil {
		if o.Subresource != "" {
			return nil, cluster.NewNotFound(res.GroupResource(), name)
		}
		return t.createObject(obj, cluster.CreateOptions{DryRun: o.DryRun, FieldManager: o.FieldManager}, true)
	}
	return t.updateObject(k, res, old, obj, o.Subresource == "status", o.DryRun)
}
