package apply

import (
	"context"
	"errors"
	"maps"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/defaults"
	"github.com/konverge/konverge/objref"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/validate"
	"github.com/konverge/konverge/value"
)

// serverError turns an error of normalize.Server on an item into what the
// API server answers a write of the object with: a body the kind's Go
// type cannot hold is a BadRequest, worded as kube-apiserver words it.
func serverError(it *item, err error) error {
	var de *defaults.DecodeError
	if errors.As(err, &de) {
		return cluster.NewUndecodable(it.res.GVK, de.Field, de.Msg)
	}
	return err
}

// validatePredicted validates the object a plan predicts as the API
// server validates a write (package validate, which the embedded
// cluster runs): a create when live is nil, an update of live otherwise.
// merged is normalized as the server normalizes a write. Its errors are
// the server's Invalid error, as Apply reports it. A custom resource is
// checked against crSchema, its version's openAPIV3Schema (nil: its
// metadata only).
func validatePredicted(it *item, merged, live, crSchema map[string]any) error {
	gvk := it.res.GVK
	api := gvk.APIVersion()
	if live != nil {
		merged, live = asStored(merged, live)
	} else {
		merged = preparedForCreate(it, merged)
	}
	var errs []validate.Error
	switch {
	case validate.Known(api, gvk.Kind):
		errs = validate.Object(merged, live)
	case defaults.Known(api, gvk.Kind) || defaults.IsCustomResourceDefinition(api, gvk.Kind):
		errs = validate.BuiltinObjectMeta(merged, live, it.res.Namespaced)
	default:
		var old map[string]any
		if live != nil {
			old = objref.Metadata(live)
		}
		errs = validate.ObjectMeta(objref.Metadata(merged), old, it.res.Namespaced)
		if crSchema != nil {
			// As the store decodes a custom resource: unknown fields
			// pruned, the schema's defaults, then its validation.
			obj := value.DeepCopyObject(merged)
			defaults.PruneUnknown(obj, crSchema)
			if err := defaults.ApplyCustomResource(obj, crSchema); err == nil {
				errs = append(errs, validate.CustomResource(obj, crSchema)...)
			}
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return cluster.NewInvalid(cluster.QualifiedKind(gvk), it.ref.Name, validate.ToCauses(errs))
}

// serverSet are the fields of metadata that a patch leaves to the server,
// which fills them in from the stored object before it validates, with a
// stand-in for a cache that does not hold them.
var serverSet = []struct{ field, standIn string }{
	{"resourceVersion", "1"},
	{"uid", "00000000-0000-4000-8000-000000000000"},
	{"creationTimestamp", "1970-01-01T00:00:00Z"},
}

// asStored returns merged and live with the metadata that the server takes
// from the stored object on an update (resourceVersion, uid,
// creationTimestamp) as it would be: live's, or stand-ins where live (a
// snapshot) has none. Only the metadata maps are copied.
func asStored(merged, live map[string]any) (map[string]any, map[string]any) {
	if hasServerSet(merged) && hasServerSet(live) {
		return merged, live // as the server has them: nothing to settle
	}
	mmd, lmd := maps.Clone(objref.Metadata(merged)), maps.Clone(objref.Metadata(live))
	if mmd == nil {
		mmd = map[string]any{}
	}
	if lmd == nil {
		lmd = map[string]any{}
	}
	for _, f := range serverSet {
		if s, _ := lmd[f.field].(string); s == "" {
			lmd[f.field] = f.standIn
		}
		if s, _ := mmd[f.field].(string); s == "" {
			mmd[f.field] = lmd[f.field]
		}
	}
	merged, live = maps.Clone(merged), maps.Clone(live)
	merged["metadata"], live["metadata"] = mmd, lmd
	return merged, live
}

// hasServerSet reports whether obj's metadata has every field of
// serverSet, as an object the server returned has them.
func hasServerSet(obj map[string]any) bool {
	md := objref.Metadata(obj)
	for _, f := range serverSet {
		if s, _ := md[f.field].(string); s == "" {
			return false
		}
	}
	return true
}

// preparedForCreate returns merged as the server validates a create of
// it: with a uid (a stand-in for the one the server assigns) and, for a
// Job, the selector the Job strategy generates.
func preparedForCreate(it *item, merged map[string]any) map[string]any {
	isJob := it.ref.Group == "batch" && it.ref.Kind == "Job"
	if isJob {
		merged = value.DeepCopyObject(merged)
	} else {
		merged = maps.Clone(merged)
	}
	md := maps.Clone(objref.Metadata(merged))
	if md == nil {
		md = map[string]any{}
	}
	if s, _ := md["uid"].(string); s == "" {
		md["uid"] = serverSet[1].standIn
	}
	merged["metadata"] = md
	if isJob {
		validate.GenerateJobSelector(merged, len(objref.Labels(it.config)) == 0)
	}
	return merged
}

// crSchemas returns, for the custom resources among items, the
// openAPIV3Schema of their version: from a CRD of the input, else from
// the CRD src holds (one Get per kind). Kinds without one are left out.
func crSchemas(ctx context.Context, src cluster.Reader, items []*item) map[schema.GVK]map[string]any {
	out := map[schema.GVK]map[string]any{}
	seen := map[schema.GVK]bool{}
	var recent [4]schema.GVK // the last kinds seen, looked at first
	// The kinds of the remembered objects (memo.go) are told apart by
	// their memoKind, without comparing their names.
	var recentKinds [4]*memoKind
	for i, it := range items {
		if e := it.entry; e != nil {
			k := e.kind
			if k == recentKinds[0] || k == recentKinds[1] || k == recentKinds[2] || k == recentKinds[3] {
				continue
			}
			recentKinds[i%4] = k
		}
		gvk := it.ref.GVK
		if i > 0 && (gvk == recent[0] || gvk == recent[1] || gvk == recent[2] || gvk == recent[3]) {
			continue
		}
		recent[i%4] = gvk
		if seen[gvk] {
			continue
		}
		seen[gvk] = true
		if it.crd != nil {
			if it.crd.openAPI != nil {
				out[gvk] = it.crd.openAPI
			}
			continue
		}
		api := gvk.APIVersion()
		if gvk.Group == "" || validate.Known(api, gvk.Kind) || defaults.Known(api, gvk.Kind) || it.res.Plural == "" {
			continue
		}
		crd, err := src.Get(ctx, crdGVK, "", it.res.Plural+"."+gvk.Group)
		if err != nil {
			continue // a built-in kind, or no CRD to read: the server judges
		}
		if s := crdVersionSchema(crd, gvk.Version); s != nil {
			out[gvk] = s
		}
	}
	return out
}
