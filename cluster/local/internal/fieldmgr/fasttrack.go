package fieldmgr

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/merge"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

// The field manager's Update, without its wrappers' conversions.
//
// k8s.io/apimachinery's FieldManager reads managedFields through
// reflection (runtime.DefaultUnstructuredConverter), writes them back the
// same way with a deep copy, and wraps the structured-merge-diff update in
// nine layers; on a create that costs as much as the rest of the write.
// TrackFast does the same steps on the store's JSON values: decode the
// entries (the request's, else the stored ones; none for a subresource,
// an empty list to reset them), skip objects that have none and are not
// being created, run merge.Updater.Update for a "current-operation"
// manager, strip the metadata fields, fold the result into the manager's
// entry with the time now, cap the Update entries at ten, encode and sort.
// TestTrackFastMatchesFieldManager checks it against the library's
// FieldManager on generated histories.

const (
	currentOperation  = "current-operation"
	maxUpdateManagers = 10
	ancientChanges    = "ancient-changes"
)

// stripSet is what the field manager never records (its stripMetaManager).
var stripSet = func() *fieldpath.Set {
	paths := []fieldpath.Path{fieldpath.MakePathOrDie("apiVersion"), fieldpath.MakePathOrDie("kind"), fieldpath.MakePathOrDie("metadata")}
	for _, f := range []string{"name", "namespace", "creationTimestamp", "selfLink", "uid", "clusterName", "generation", "managedFields", "resourceVersion"} {
		paths = append(paths, fieldpath.MakePathOrDie("metadata", f))
	}
	return fieldpath.NewSet(paths...)
}()

// managerID is a field manager's identity in managedFields; it encodes as
// the library's identifier (BuildManagerIdentifier).
type managerID struct {
	Manager     string `json:"manager,omitempty"`
	Operation   string `json:"operation,omitempty"`
	APIVersion  string `json:"apiVersion,omitempty"`
	Subresource string `json:"subresource,omitempty"`
}

func (m managerID) String() string {
	b, _ := json.Marshal(m)
	return string(b)
}

// managedState is decoded managedFields: sets and times (RFC 3339, ""
// for none) by identifier.
type managedState struct {
	fields fieldpath.ManagedFields
	times  map[string]string
	ids    map[string]managerID
}

func newManagedState() *managedState {
	return &managedState{fields: fieldpath.ManagedFields{}, times: map[string]string{}, ids: map[string]managerID{}}
}

// errNotEntries is a managedFields value that is not a list of entries as
// metav1.ManagedFieldsEntry decodes them: the library then sees no list.
var errNotEntries = errors.New("managedFields do not decode")

// decodeManaged decodes a managedFields value; errNotEntries when the
// value does not convert to entries, another error when an entry is
// invalid.
func decodeManaged(raw any) (*managedState, error) {
	m := newManagedState()
	if raw == nil {
		return m, nil
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, errNotEntries
	}
	type entry struct {
		id     managerID
		time   string
		fields any
		ftype  string
	}
	entries := make([]entry, 0, len(list))
	for _, x := range list {
		e, ok := x.(map[string]any)
		if !ok {
			return nil, errNotEntries
		}
		var en entry
		for k, v := range e {
			switch k {
			case "manager", "operation", "apiVersion", "subresource", "time", "fieldsType":
				if v == nil {
					continue
				}
				s, ok := v.(string)
				if !ok {
					return nil, errNotEntries
				}
				switch k {
				case "manager":
					en.id.Manager = s
				case "operation":
					en.id.Operation = s
				case "apiVersion":
					en.id.APIVersion = s
				case "subresource":
					en.id.Subresource = s
				case "time":
					tm, err := time.Parse(time.RFC3339, s)
					if err != nil {
						return nil, errNotEntries
					}
					en.time = tm.UTC().Format(time.RFC3339)
				case "fieldsType":
					en.ftype = s
				}
			case "fieldsV1":
				en.fields = v
			}
		}
		entries = append(entries, en)
	}
	for i, en := range entries {
		switch en.id.Operation {
		case "Apply", "Update":
		default:
			return nil, errors.New("operation must be `Apply` or `Update`")
		}
		if en.id.APIVersion == "" {
			return nil, errors.New("apiVersion must not be empty")
		}
		switch en.ftype {
		case "FieldsV1":
		case "":
			return nil, fmt.Errorf("missing fieldsType in managed fields entry %d", i)
		default:
			return nil, fmt.Errorf("invalid fieldsType %q in managed fields entry %d", en.ftype, i)
		}
		key := en.id
		if key.Operation == "Apply" {
			key.APIVersion = ""
		}
		id := key.String()
		raw := []byte("{}")
		if en.fields != nil {
			b, err := value.Encode(en.fields)
			if err != nil {
				return nil, err
			}
			raw = b
		}
		var set fieldpath.Set
		if err := set.FromJSON(bytes.NewReader(raw)); err != nil {
			return nil, err
		}
		m.fields[id] = fieldpath.NewVersionedSet(&set, fieldpath.APIVersion(en.id.APIVersion), en.id.Operation == "Apply")
		m.times[id] = en.time
		m.ids[id] = key
	}
	return m, nil
}

// isResetManaged reports a request that clears managedFields: an empty
// list, or one empty entry.
func isResetManaged(raw any, present bool) bool {
	list, ok := raw.([]any)
	if !present || !ok {
		return false
	}
	if len(list) == 0 {
		return true
	}
	if len(list) == 1 {
		e, ok := list[0].(map[string]any)
		if !ok {
			return false
		}
		for _, v := range e {
			if v != nil && v != "" {
				return false
			}
		}
		return true
	}
	return false
}

// TrackFast computes the managedFields of obj after an Update of live
// (empty, without a uid, for a create) by manager: the entries to store,
// or nil for none. It fails only where the library's field manager
// would, and the caller then keeps the stored entries.
func TrackFast(tc managedfields.TypeConverter, reset map[fieldpath.APIVersion]fieldpath.Filter, gvk schema.GVK, live, obj map[string]any,
	reqManaged any, reqHasManaged bool, manager, subresource, now string) ([]any, error) {
	entries, _, err := trackFast(tc, reset, gvk, live, obj, reqManaged, reqHasManaged, manager, subresource, now)
	return entries, err
}

// trackInfo is how trackFast came to its entries: from the entries it
// takes first (the request's, or for a subresource the stored ones),
// merged at the cap, and whether the manager's entry (managerKey) took
// fields (and the time now).
type trackInfo struct {
	fromEntries bool
	capped      bool
	touched     bool
	managerKey  string
}

func trackFast(tc managedfields.TypeConverter, reset map[fieldpath.APIVersion]fieldpath.Filter, gvk schema.GVK, live, obj map[string]any,
	reqManaged any, reqHasManaged bool, manager, subresource, now string) ([]any, trackInfo, error) {
	var info trackInfo
	liveMD, _ := live["metadata"].(map[string]any)
	var managed *managedState
	var err error
	switch {
	case subresource != "":
		if managed, err = decodeManaged(liveMD["managedFields"]); err != nil {
			managed = newManagedState()
		}
		info.fromEntries = err == nil && len(managed.fields) > 0
	case isResetManaged(reqManaged, reqHasManaged):
		managed = newManagedState()
	default:
		managed, err = decodeManaged(reqManaged)
		info.fromEntries = err == nil && len(managed.fields) > 0
		if !info.fromEntries {
			if managed, err = decodeManaged(liveMD["managedFields"]); err != nil {
				managed = newManagedState()
			}
		}
	}
	uid, _ := liveMD["uid"].(string)
	if len(managed.fields) == 0 && uid != "" {
		// An object without managedFields stays so until it is applied.
		return nil, info, nil
	}

	version := fieldpath.APIVersion(gvk.APIVersion())
	// What both objects hold alike adds nothing to the comparison: the
	// field manager compares what differs (a kubelet's status update
	// converts the status it changed, not the whole pod).
	livePart, newPart := differing(live, withoutManagedFields(obj))
	liveTyped, err := toTyped(tc, gvk, livePart, false)
	if err != nil {
		return nil, info, err
	}
	newTyped, err := toTyped(tc, gvk, newPart, false)
	if err != nil {
		return nil, info, err
	}
	updater := (&merge.UpdaterBuilder{Converter: relabelConverter{tc: tc}, IgnoreFilter: reset}).BuildUpdater()
	_, fields, err := updater.Update(liveTyped, newTyped, version, managed.fields, currentOperation)
	if err != nil {
		return nil, info, err
	}
	// stripMeta, for the current operation only.
	if vs, ok := fields[currentOperation]; ok {
		if s := vs.Set().Difference(stripSet); s.Empty() {
			delete(fields, currentOperation)
		} else {
			fields[currentOperation] = fieldpath.NewVersionedSet(s, vs.APIVersion(), vs.Applied())
		}
	}
	managed.fields = fields
	// The manager takes what the operation changed, with the time now.
	id := managerID{Manager: manager, Operation: "Update", APIVersion: string(version), Subresource: subresource}
	if id.Manager == "" {
		id.Manager = "unknown"
	}
	key := id.String()
	info.managerKey = key
	if vs, ok := fields[currentOperation]; ok {
		info.touched = true
		delete(fields, currentOperation)
		if prev, ok := fields[key]; ok {
			fields[key] = fieldpath.NewVersionedSet(vs.Set().Union(prev.Set()), vs.APIVersion(), vs.Applied())
		} else {
			fields[key] = vs
		}
		managed.times[key] = now
		managed.ids[key] = id
	}
	info.capped = capUpdateManagers(managed)
	entries, err := encodeManaged(managed)
	return entries, info, err
}

// capUpdateManagers merges the oldest Update entries into
// "ancient-changes" ones until ten are left (the library's
// capManagersManager); it reports whether there were more than ten.
func capUpdateManagers(m *managedState) bool {
	var updaters []string
	for k, vs := range m.fields {
		if !vs.Applied() {
			updaters = append(updaters, k)
		}
	}
	if len(updaters) <= maxUpdateManagers {
		return false
	}
	sort.Slice(updaters, func(i, j int) bool {
		a, b := unixOf(m.times[updaters[i]]), unixOf(m.times[updaters[j]])
		if m.times[updaters[i]] == "" {
			a = 0
		}
		if m.times[updaters[j]] == "" {
			b = 0
		}
		if a != b {
			return a < b
		}
		return updaters[i] < updaters[j]
	})
	first := map[string]string{}
	length := len(updaters)
	for i := 0; i < len(updaters) && length > maxUpdateManagers; i++ {
		k := updaters[i]
		vs := m.fields[k]
		version := string(vs.APIVersion())
		bucketID := managerID{Manager: ancientChanges, Operation: "Update", APIVersion: version}
		bucket := bucketID.String()
		f, seen := first[version]
		if !seen {
			first[version] = k
			continue
		}
		if _, ok := m.fields[bucket]; !ok {
			m.fields[bucket] = m.fields[f]
			delete(m.fields, f)
		}
		m.fields[bucket] = fieldpath.NewVersionedSet(vs.Set().Union(m.fields[bucket].Set()), vs.APIVersion(), vs.Applied())
		delete(m.fields, k)
		m.times[bucket] = m.times[k]
		m.ids[bucket] = bucketID
		length--
	}
	return true
}

// encodeManaged writes entries as kube-apiserver stores them, sorted.
func encodeManaged(m *managedState) ([]any, error) {
	if len(m.fields) == 0 {
		return nil, nil
	}
	out := make([]any, 0, len(m.fields))
	for k, vs := range m.fields {
		id, ok := m.ids[k]
		if !ok {
			if err := json.Unmarshal([]byte(k), &id); err != nil {
				return nil, fmt.Errorf("manager identifier %s: %w", k, err)
			}
		}
		raw, err := vs.Set().ToJSON()
		if err != nil {
			return nil, err
		}
		fields, err := value.Decode(raw)
		if err != nil {
			return nil, err
		}
		op := "Update"
		if vs.Applied() {
			op = "Apply"
		}
		e := map[string]any{
			"manager":    id.Manager,
			"operation":  op,
			"apiVersion": string(vs.APIVersion()),
			"fieldsType": "FieldsV1",
			"fieldsV1":   fields,
		}
		if id.Subresource != "" {
			e["subresource"] = id.Subresource
		}
		if t := m.times[k]; t != "" {
			e["time"] = t
		}
		out = append(out, e)
	}
	sortManagedFields(out)
	return out, nil
}

// withoutManagedFields is obj without metadata.managedFields (a shallow
// copy when it has them), as the field manager compares the new object.
func withoutManagedFields(obj map[string]any) map[string]any {
	md, ok := obj["metadata"].(map[string]any)
	if !ok {
		return obj
	}
	if _, has := md["managedFields"]; !has {
		return obj
	}
	mc := make(map[string]any, len(md))
	for k, v := range md {
		if k != "managedFields" {
			mc[k] = v
		}
	}
	c := make(map[string]any, len(obj))
	for k, v := range obj {
		c[k] = v
	}
	c["metadata"] = mc
	return c
}

// differing returns a and b without the map entries they share: a key
// whose values are equal in both is left out of both, and two maps under
// one key are reduced alike; lists and other values are kept whole. The
// comparison of what is left is the comparison of a and b: every path
// under an entry equal in both compares as unchanged, and a map (atomic
// or not) that differs still differs.
func differing(a, b map[string]any) (map[string]any, map[string]any) {
	pa := make(map[string]any, len(a))
	pb := make(map[string]any, len(b))
	for k, va := range a {
		vb, ok := b[k]
		if !ok {
			pa[k] = va
			continue
		}
		if value.Equal(va, vb) {
			continue
		}
		ma, okA := va.(map[string]any)
		mb, okB := vb.(map[string]any)
		if okA && okB {
			pa[k], pb[k] = differing(ma, mb)
			continue
		}
		pa[k], pb[k] = va, vb
	}
	for k, vb := range b {
		if _, ok := a[k]; !ok {
			pb[k] = vb
		}
	}
	return pa, pb
}

// toTyped is obj as a typed value of gvk; withoutManaged leaves its
// managedFields out, as the field manager removes them from the new object
// before it compares.
func toTyped(tc managedfields.TypeConverter, gvk schema.GVK, obj map[string]any, withoutManaged bool) (*typed.TypedValue, error) {
	c := make(map[string]any, len(obj))
	for k, v := range obj {
		c[k] = v
	}
	SetGVK(c, gvk)
	if md, ok := c["metadata"].(map[string]any); ok && withoutManaged {
		if _, has := md["managedFields"]; has {
			mc := make(map[string]any, len(md))
			for k, v := range md {
				if k != "managedFields" {
					mc[k] = v
				}
			}
			c["metadata"] = mc
		}
	}
	return tc.ObjectToTyped(&unstructured.Unstructured{Object: c}, typed.AllowDuplicates)
}

// relabelConverter converts typed values between versions as the
// embedded cluster does: by relabeling apiVersion.
type relabelConverter struct{ tc managedfields.TypeConverter }

func (c relabelConverter) Convert(v *typed.TypedValue, version fieldpath.APIVersion) (*typed.TypedValue, error) {
	obj, err := c.tc.TypedToObject(v)
	if err != nil {
		return v, err
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return v, fmt.Errorf("local: converted %T", obj)
	}
	if u.GetAPIVersion() == string(version) {
		return v, nil
	}
	cp := make(map[string]any, len(u.Object))
	for k, x := range u.Object {
		cp[k] = x
	}
	cp["apiVersion"] = string(version)
	return c.tc.ObjectToTyped(&unstructured.Unstructured{Object: cp})
}

func (c relabelConverter) IsMissingVersionError(err error) bool {
	return runtime.IsNotRegisteredError(err)
}
