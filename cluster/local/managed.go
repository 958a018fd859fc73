package local

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/openapi"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

// DefaultFieldManager is the field manager of writes that name none, where
// kube-apiserver takes the name from the client's user agent.
const DefaultFieldManager = "konverge"

// fieldManagerOf is the manager a write records: the request's, else the
// store's default.
func (t *txn) fieldManagerOf(name string) string {
	if name != "" {
		return name
	}
	if t.s.fieldManager != "" {
		return t.s.fieldManager
	}
	return DefaultFieldManager
}

// writeRequest is what the field manager needs to know of the call being
// made: who writes, through which subresource, and whether the call has
// tracked its fields itself (an apply).
type writeRequest struct {
	manager     string
	subresource string
	applied     bool
	// managedFields are those of the request's object as sent (defaulting
	// drops an empty list, which asks to clear them); set says there were.
	managedFields    any
	hasManagedFields bool
}

// keepRequestManagedFields records the managedFields of the request's
// object before defaulting.
func (t *txn) keepRequestManagedFields(obj map[string]any) {
	md, _ := obj["metadata"].(map[string]any)
	t.request.managedFields, t.request.hasManagedFields = md["managedFields"]
}

// managerKey identifies a field manager: kube-apiserver has one per
// resource, version and subresource.
type managerKey struct {
	gvk         schema.GVK
	subresource string
}

// builtinManagers are the field managers of built-in kinds, shared by every
// Store (they keep no state between calls).
var builtinManagers sync.Map // managerKey -> *managedfields.FieldManager

// fieldManager returns the field manager of a kind and subresource.
func (t *txn) fieldManager(res cluster.Resource, subresource string) (*managedfields.FieldManager, error) {
	key := managerKey{gvk: res.GVK, subresource: subresource}
	crd := t.api.crds[gkOf(res)]
	cache := &builtinManagers
	if crd != nil {
		cache = &crd.managers
	}
	if fm, ok := cache.Load(key); ok {
		return fm.(*managedfields.FieldManager), nil
	}
	gv := runtimeschema.GroupVersion{Group: res.GVK.Group, Version: res.GVK.Version}
	kind := gv.WithKind(res.GVK.Kind)
	reset := resetFields(res, subresource)
	var fm *managedfields.FieldManager
	var err error
	if crd != nil {
		var tc managedfields.TypeConverter
		if tc, err = crd.typeConverter(); err != nil {
			return nil, err
		}
		hub := runtimeschema.GroupVersion{Group: res.GVK.Group, Version: crd.storage}
		fm, err = managedfields.NewDefaultCRDFieldManager(tc, relabel{}, relabel{}, relabel{}, kind, hub, subresource, reset)
	} else {
		var tc managedfields.TypeConverter
		if tc, err = openapi.TypeConverter(); err != nil {
			return nil, err
		}
		hub := runtimeschema.GroupVersion{Group: res.GVK.Group, Version: runtime.APIVersionInternal}
		fm, err = managedfields.NewDefaultFieldManager(tc, relabel{}, relabel{}, relabel{builtin: true}, kind, hub, subresource, reset)
	}
	if err != nil {
		return nil, fmt.Errorf("local: field manager of %s: %w", res.GVK, err)
	}
	actual, _ := cache.LoadOrStore(key, fm)
	return actual.(*managedfields.FieldManager), nil
}

// resetFields are the fields a kind's strategy resets on writes through a
// subresource, which no manager owns: status on the main resource of kinds
// with a status subresource, everything else on the status subresource.
func resetFields(res cluster.Resource, subresource string) map[fieldpath.APIVersion]fieldpath.Filter {
	var set *fieldpath.Set
	switch {
	case subresource == "status":
		set = fieldpath.NewSet(fieldpath.MakePathOrDie("spec"), fieldpath.MakePathOrDie("metadata"))
	case res.Status:
		set = fieldpath.NewSet(fieldpath.MakePathOrDie("status"))
	default:
		return nil
	}
	return map[fieldpath.APIVersion]fieldpath.Filter{
		fieldpath.APIVersion(res.GVK.APIVersion()): fieldpath.NewExcludeSetFilter(set),
	}
}

// relabel is the object conversion of the embedded cluster, which keeps
// one version of each object and relabels its apiVersion; it also creates
// the empty object of a kind (for built-in kinds, as their Go types encode
// it) and leaves defaulting to the write path.
type relabel struct{ builtin bool }

// Convert implements runtime.ObjectConvertor.
func (relabel) Convert(in, out, context any) error {
	return errors.New("local: conversion between objects is not supported")
}

// ConvertToVersion implements runtime.ObjectConvertor.
func (relabel) ConvertToVersion(in runtime.Object, target runtime.GroupVersioner) (runtime.Object, error) {
	u, ok := in.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("local: cannot convert %T", in)
	}
	gvk := u.GroupVersionKind()
	to, ok := target.KindForGroupVersionKinds([]runtimeschema.GroupVersionKind{gvk})
	if !ok {
		return nil, runtime.NewNotRegisteredErrForKind("local", gvk)
	}
	if to == gvk {
		return u, nil
	}
	c := &unstructured.Unstructured{Object: make(map[string]any, len(u.Object))}
	for k, v := range u.Object {
		c.Object[k] = v
	}
	c.SetGroupVersionKind(to)
	return c, nil
}

// ConvertFieldLabel implements runtime.ObjectConvertor.
func (relabel) ConvertFieldLabel(gvk runtimeschema.GroupVersionKind, label, value string) (string, string, error) {
	return label, value, nil
}

// Default implements runtime.ObjectDefaulter: the write path defaults.
func (relabel) Default(runtime.Object) {}

// New implements runtime.ObjectCreater.
func (r relabel) New(kind runtimeschema.GroupVersionKind) (runtime.Object, error) {
	obj, err := emptyObject(schema.GVK{Group: kind.Group, Version: kind.Version, Kind: kind.Kind}, r.builtin)
	if err != nil {
		return nil, err
	}
	return &unstructured.Unstructured{Object: obj}, nil
}

// emptyObject is the object a create is compared with: for built-in kinds
// the zero value of their Go types as kube-apiserver encodes it, for
// custom resources only apiVersion and kind.
func emptyObject(gvk schema.GVK, builtin bool) (map[string]any, error) {
	obj := map[string]any{}
	if builtin {
		zero, ok, err := openapi.EmptyObject(gvk)
		if err != nil {
			return nil, err
		}
		if ok {
			obj = zero
		}
	}
	setGVK(obj, gvk)
	return obj, nil
}

// trackUpdate records in obj's managedFields what the call's manager
// changed from live (nil for a create): an Update operation, as
// kube-apiserver's field manager records it after defaulting (see
// trackFast). A request that sets managedFields replaces them (an empty
// list clears them), as with kube-apiserver; one whose managedFields do not
// decode keeps the stored ones.
func (t *txn) trackUpdate(res cluster.Resource, live, obj map[string]any) error {
	req := t.request
	if req.applied {
		return nil
	}
	gvk := res.GVK
	if str(obj, "apiVersion") != gvk.APIVersion() || str(obj, "kind") != gvk.Kind {
		return fmt.Errorf("local: managed fields of %s for an object of %s %s", gvk, str(obj, "apiVersion"), str(obj, "kind"))
	}
	if trackWithLibrary {
		return t.trackLibrary(res, live, obj)
	}
	if live == nil {
		var err error
		if live, err = emptyObject(gvk, t.api.crds[gkOf(res)] == nil); err != nil {
			return err
		}
	}
	tc, err := t.typeConverter(res)
	if err != nil {
		return err
	}
	md := metadata(obj)
	reqManaged, reqHas := md["managedFields"]
	if req.hasManagedFields {
		reqManaged, reqHas = req.managedFields, true
	}
	entries, err := trackFast(tc, resetFields(res, req.subresource), gvk, live, obj, reqManaged, reqHas,
		t.fieldManagerOf(req.manager), req.subresource, t.now())
	if err != nil {
		// As the field manager's UpdateNoErrors: the stored entries stay.
		if mf, ok := metadata(live)["managedFields"]; ok {
			md["managedFields"] = mf
		} else {
			delete(md, "managedFields")
		}
		return nil
	}
	if entries == nil {
		delete(md, "managedFields")
	} else {
		md["managedFields"] = entries
	}
	return nil
}

// trackWithLibrary makes trackUpdate use the library's FieldManager
// (trackLibrary): benchmarks compare the two with it.
var trackWithLibrary = false

// typeConverter is the structured-merge-diff converter of a kind: the
// built-in kinds', or its CRD's.
func (t *txn) typeConverter(res cluster.Resource) (managedfields.TypeConverter, error) {
	if crd := t.api.crds[gkOf(res)]; crd != nil {
		return crd.typeConverter()
	}
	return openapi.TypeConverter()
}

// trackLibrary is trackUpdate through k8s.io/apimachinery's FieldManager,
// the reference trackFast is tested against.
func (t *txn) trackLibrary(res cluster.Resource, live, obj map[string]any) error {
	req := t.request
	fm, err := t.fieldManager(res, req.subresource)
	if err != nil {
		return err
	}
	gvk := res.GVK
	if live == nil {
		if live, err = emptyObject(gvk, t.api.crds[gkOf(res)] == nil); err != nil {
			return err
		}
	}
	if req.hasManagedFields {
		metadata(obj)["managedFields"] = req.managedFields
	}
	times := newTimeMarkers(live, obj)
	liveU := &unstructured.Unstructured{Object: times.shallow(live)}
	newU := &unstructured.Unstructured{Object: obj}
	times.mark(newU.Object)
	setGVK(liveU.Object, gvk)
	out := fm.UpdateNoErrors(liveU, newU, t.fieldManagerOf(req.manager))
	u, ok := out.(*unstructured.Unstructured)
	if !ok {
		return fmt.Errorf("local: field manager returned %T", out)
	}
	metadata(obj)["managedFields"] = metadata(u.Object)["managedFields"]
	return times.restore(obj, t.now())
}

// applyPatch merges a server-side apply patch into live (nil: the object
// does not exist) for manager, as kube-apiserver's field manager does, and
// returns the object to write, whose managedFields record the apply.
// Conflicts with other managers fail with a Conflict *cluster.StatusError
// listing them, unless force takes the fields over.
func (t *txn) applyPatch(res cluster.Resource, live, patch map[string]any, manager, subresource string, force bool) (map[string]any, error) {
	fm, err := t.fieldManager(res, subresource)
	if err != nil {
		return nil, err
	}
	created := live == nil
	if created {
		if live, err = emptyObject(res.GVK, t.api.crds[gkOf(res)] == nil); err != nil {
			return nil, err
		}
	}
	times := newTimeMarkers(live, nil)
	liveU := &unstructured.Unstructured{Object: times.shallow(live)}
	setGVK(liveU.Object, res.GVK)
	out, err := fm.Apply(liveU, &unstructured.Unstructured{Object: patch}, manager, force)
	if err != nil {
		return nil, fromAPIError(err)
	}
	u, ok := out.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("local: field manager returned %T", out)
	}
	// The merged object shares values with live and the patch; bring it
	// to the store's own representation.
	data, err := value.Encode(u.Object)
	if err != nil {
		return nil, fmt.Errorf("local: encode applied object: %w", err)
	}
	obj, err := value.DecodeObject(data)
	if err != nil {
		return nil, fmt.Errorf("local: decode applied object: %w", err)
	}
	if created {
		// What the empty object held as null, kube-apiserver's Go types
		// drop.
		dropNulls(obj)
	}
	if err := times.restore(obj, t.now()); err != nil {
		return nil, err
	}
	return obj, nil
}

func setGVK(obj map[string]any, gvk schema.GVK) {
	obj["apiVersion"], obj["kind"] = gvk.APIVersion(), gvk.Kind
}

// timeMarkers stands in for the times of managedFields while the field
// manager works: it stamps the entries it changes with the wall clock,
// while the embedded cluster stamps them with its own. Before the call,
// every time is replaced by a marker early in 1970 that keeps the order of
// the times (the field manager orders entries, and merges the oldest, by
// time); after, a marker goes back to its time and any other time is one
// the field manager set, which becomes the store's now.
type timeMarkers struct {
	toMarker map[string]string
	toTime   map[string]string
}

var markerBase = time.Unix(0, 0).UTC()

// newTimeMarkers collects the times of the managedFields of the objects.
func newTimeMarkers(objs ...map[string]any) *timeMarkers {
	var times []string
	for _, obj := range objs {
		for _, e := range managedEntries(obj) {
			if s, ok := e["time"].(string); ok && s != "" {
				times = append(times, s)
			}
		}
	}
	m := &timeMarkers{toMarker: map[string]string{}, toTime: map[string]string{}}
	if len(times) == 0 {
		return m
	}
	sort.Slice(times, func(i, j int) bool { return unixOf(times[i]) < unixOf(times[j]) })
	rank, last := 0, int64(-1)
	for _, s := range times {
		if _, ok := m.toMarker[s]; ok {
			continue
		}
		if u := unixOf(s); u != last {
			rank, last = rank+1, u
		}
		marker := formatTime(markerBase.Add(time.Duration(rank) * time.Second))
		m.toMarker[s] = marker
		if _, ok := m.toTime[marker]; !ok {
			m.toTime[marker] = s
		}
	}
	return m
}

func unixOf(s string) int64 {
	tm, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return 0
	}
	return tm.Unix()
}

func managedEntries(obj map[string]any) []map[string]any {
	md, _ := obj["metadata"].(map[string]any)
	list, _ := md["managedFields"].([]any)
	out := make([]map[string]any, 0, len(list))
	for _, x := range list {
		if e, ok := x.(map[string]any); ok {
			out = append(out, e)
		}
	}
	return out
}

// shallow returns obj with its own metadata and managedFields, marked.
func (m *timeMarkers) shallow(obj map[string]any) map[string]any {
	c := make(map[string]any, len(obj))
	for k, v := range obj {
		c[k] = v
	}
	if md, ok := obj["metadata"].(map[string]any); ok {
		mdc := make(map[string]any, len(md))
		for k, v := range md {
			mdc[k] = v
		}
		c["metadata"] = mdc
	}
	m.mark(c)
	return c
}

// mark replaces the times of obj's managedFields (entries copied) by their
// markers.
func (m *timeMarkers) mark(obj map[string]any) {
	md, _ := obj["metadata"].(map[string]any)
	list, ok := md["managedFields"].([]any)
	if !ok || len(m.toMarker) == 0 {
		return
	}
	out := make([]any, len(list))
	for i, x := range list {
		e, ok := x.(map[string]any)
		if !ok {
			out[i] = x
			continue
		}
		if s, ok := e["time"].(string); ok {
			if marker, ok := m.toMarker[s]; ok {
				c := make(map[string]any, len(e))
				for k, v := range e {
					c[k] = v
				}
				c["time"] = marker
				e = c
			}
		}
		out[i] = e
	}
	md["managedFields"] = out
}

// restore gives obj's managedFields their times back (now for those the
// field manager stamped), in kube-apiserver's order, in the store's
// representation.
func (m *timeMarkers) restore(obj map[string]any, now string) error {
	md, _ := obj["metadata"].(map[string]any)
	raw, ok := md["managedFields"]
	if !ok || raw == nil {
		delete(md, "managedFields")
		return nil
	}
	// The field manager encodes entries as maps of strings, fieldsV1 as
	// maps of maps: the store's representation already. The entries are
	// the field manager's own, or marked copies.
	list, ok := raw.([]any)
	if !ok {
		return fmt.Errorf("local: managedFields are a %T", raw)
	}
	if len(list) == 0 {
		delete(md, "managedFields")
		return nil
	}
	list = append([]any(nil), list...)
	for _, x := range list {
		e, ok := x.(map[string]any)
		if !ok {
			continue
		}
		s, ok := e["time"].(string)
		if !ok {
			continue
		}
		if orig, ok := m.toTime[s]; ok {
			e["time"] = orig
		} else {
			e["time"] = now
		}
	}
	sortManagedFields(list)
	md["managedFields"] = list
	return nil
}

// sortManagedFields orders entries as kube-apiserver encodes them: by
// operation, time, manager, apiVersion and subresource.
func sortManagedFields(list []any) {
	sort.SliceStable(list, func(i, j int) bool {
		p, _ := list[i].(map[string]any)
		q, _ := list[j].(map[string]any)
		if a, b := str(p, "operation"), str(q, "operation"); a != b {
			return a < b
		}
		if a, b := unixOf(str(p, "time")), unixOf(str(q, "time")); a != b {
			return a < b
		}
		for _, f := range []string{"manager", "apiVersion", "subresource"} {
			if a, b := str(p, f), str(q, f); a != b {
				return a < b
			}
		}
		return false
	})
}

// checkFieldManager validates a request's field manager as kube-apiserver
// validates the options of a write (kindName "CreateOptions",
// "UpdateOptions" or "PatchOptions").
func checkFieldManager(kindName, manager string, errs field.ErrorList) error {
	errs = append(errs, metavalidation.ValidateFieldManager(manager, field.NewPath("fieldManager"))...)
	if len(errs) == 0 {
		return nil
	}
	return fromAPIError(apierrors.NewInvalid(runtimeschema.GroupKind{Group: metav1.GroupName, Kind: kindName}, "", errs))
}

// checkPatchOptions validates the options of a patch.
func checkPatchOptions(pt cluster.PatchType, o cluster.PatchOptions) error {
	var errs field.ErrorList
	if pt == cluster.ApplyPatchType {
		if o.FieldManager == "" {
			errs = append(errs, field.Required(field.NewPath("fieldManager"), "is required for apply patch"))
		}
	} else if o.Force {
		errs = append(errs, field.Forbidden(field.NewPath("force"), "may not be specified for non-apply patch"))
	}
	return checkFieldManager("PatchOptions", o.FieldManager, errs)
}

// fromAPIError converts an error of the field manager to the
// *cluster.StatusError kube-apiserver would answer: its own status, and
// any other error as an InternalError with the message.
func fromAPIError(err error) error {
	var se apierrors.APIStatus
	if errors.As(err, &se) {
		st := se.Status()
		out := &cluster.StatusError{Code: int(st.Code), Reason: cluster.Reason(st.Reason), Message: st.Message}
		if d := st.Details; d != nil {
			out.Group, out.Kind, out.Name = d.Group, d.Kind, d.Name
			for _, c := range d.Causes {
				out.Causes = append(out.Causes, cluster.Cause{Type: string(c.Type), Field: c.Field, Message: c.Message})
			}
		}
		return out
	}
	return &cluster.StatusError{Code: 500, Message: err.Error()}
}

// dropNulls removes the null fields of the objects in v.
func dropNulls(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if e == nil {
				delete(x, k)
			} else {
				dropNulls(e)
			}
		}
	case []any:
		for _, e := range x {
			dropNulls(e)
		}
	}
}
