package normalize

import (
	"fmt"
	"maps"

	"github.com/konverge/konverge/defaults"
	"github.com/konverge/konverge/lastapplied"
	"github.com/konverge/konverge/objref"
	"github.com/konverge/konverge/value"
)

// ApplySetLabel is the label that makes an object a member of an ApplySet
// (KEP-3659), which apply adds to every object of a set.
const ApplySetLabel = "applyset.kubernetes.io/part-of"

// ServerMetadata are the fields of metadata that only the API server
// writes.
var ServerMetadata = []string{"uid", "resourceVersion", "generation", "creationTimestamp", "managedFields", "selfLink"}

// Options say what Object does. The zero value drops server metadata and
// status and keeps everything else as it is.
type Options struct {
	// Defaults normalizes as the API server does on a write (Server).
	Defaults bool
	// KeepStatus keeps status, which is dropped by default (controllers
	// write it).
	KeepStatus bool
	// KeepServerMetadata keeps ServerMetadata, which is dropped by default.
	KeepServerMetadata bool
	// DropLastApplied drops the kubectl.kubernetes.io/last-applied-configuration
	// annotation (and an annotations map it leaves empty).
	DropLastApplied bool
	// DropApplySet drops the ApplySetLabel (and a labels map it leaves
	// empty).
	DropApplySet bool
}

// Server returns what kube-apiserver stores for obj, as far as it can be
// known without asking it: for built-in kinds, obj through their Go type
// with canonical quantities, a Secret's stringData folded into data, and
// the server's defaults; for CustomResourceDefinitions, the defaults the
// embedded cluster's store gives them (defaults.CustomResourceDefinition:
// spec.conversion, names.singular, names.listKind); other kinds as they
// are. The result is a copy, but for the fieldsV1 of metadata.managedFields,
// which it shares with obj: those are raw JSON to the server, which no
// defaulting changes (and they are the largest part of most objects).
// A value the kind cannot hold is an error naming the field.
func Server(obj map[string]any) (map[string]any, error) {
	out := copyForServer(obj)
	api, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	if defaults.IsCustomResourceDefinition(api, kind) {
		defaults.CustomResourceDefinition(out)
		return out, nil
	}
	if !defaults.Known(api, kind) {
		return out, nil
	}
	if err := defaults.Apply(out); err != nil {
		return nil, fmt.Errorf("normalize: %s: %w", objref.Of(obj), err)
	}
	return out, nil
}

// copyForServer is value.DeepCopyObject of obj, but for the fieldsV1 of
// the entries of metadata.managedFields: the entries are copied, their
// fieldsV1 shared.
func copyForServer(obj map[string]any) map[string]any {
	md, ok := obj["metadata"].(map[string]any)
	if !ok {
		return value.DeepCopyObject(obj)
	}
	mf, ok := md["managedFields"].([]any)
	if !ok {
		return value.DeepCopyObject(obj)
	}
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		if k != "metadata" {
			out[k] = value.DeepCopy(v)
		}
	}
	omd := make(map[string]any, len(md))
	for k, v := range md {
		if k != "managedFields" {
			omd[k] = value.DeepCopy(v)
		}
	}
	omf := make([]any, len(mf))
	for i, e := range mf {
		em, ok := e.(map[string]any)
		if !ok {
			omf[i] = value.DeepCopy(e)
			continue
		}
		oe := make(map[string]any, len(em))
		for k, v := range em {
			if k == "fieldsV1" {
				oe[k] = v
			} else {
				oe[k] = value.DeepCopy(v)
			}
		}
		omf[i] = oe
	}
	omd["managedFields"] = omf
	out["metadata"] = omd
	return out
}

// Object returns obj normalized as opts say: a copy where anything changes
// (maps on the way to a change are copied, the rest is shared), obj itself
// otherwise.
func Object(obj map[string]any, opts Options) (map[string]any, error) {
	if obj == nil {
		return nil, nil
	}
	if opts.Defaults {
		var err error
		if obj, err = Server(obj); err != nil {
			return nil, err
		}
	}
	out := obj
	copied := false
	own := func() {
		if !copied {
			out, copied = maps.Clone(obj), true
		}
	}
	if _, ok := obj["status"]; ok && !opts.KeepStatus {
		own()
		delete(out, "status")
	}
	md := objref.Metadata(obj)
	if md == nil {
		return out, nil
	}
	nmd := md
	mdCopied := false
	ownMD := func() {
		if !mdCopied {
			nmd, mdCopied = maps.Clone(md), true
		}
	}
	if !opts.KeepServerMetadata {
		for _, f := range ServerMetadata {
			if _, ok := md[f]; ok {
				ownMD()
				delete(nmd, f)
			}
		}
	}
	dropKey := func(field, key string) {
		m, _ := nmd[field].(map[string]any)
		if _, ok := m[key]; !ok {
			return
		}
		ownMD()
		if len(m) == 1 {
			delete(nmd, field)
			return
		}
		m = maps.Clone(m)
		delete(m, key)
		nmd[field] = m
	}
	if opts.DropLastApplied {
		dropKey("annotations", lastapplied.Annotation)
	}
	if opts.DropApplySet {
		dropKey("labels", ApplySetLabel)
	}
	if mdCopied {
		own()
		out["metadata"] = nmd
	}
	return out, nil
}

// Equal reports whether a and b are equal once both are normalized with
// opts (numbers compare by value).
func Equal(a, b map[string]any, opts Options) (bool, error) {
	na, err := Object(a, opts)
	if err != nil {
		return false, err
	}
	nb, err := Object(b, opts)
	if err != nil {
		return false, err
	}
	return value.Equal(na, nb), nil
}
