package local

import (
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/util/managedfields"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/cluster/local/internal/fieldmgr"
	"github.com/konverge/konverge/openapi"
	"github.com/konverge/konverge/schema"
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
	var fm *managedfields.FieldManager
	var err error
	if crd != nil {
		var tc managedfields.TypeConverter
		if tc, err = crd.typeConverter(); err != nil {
			return nil, err
		}
		fm, err = fieldmgr.NewManager(tc, res, subresource, crd.storage)
	} else {
		var tc managedfields.TypeConverter
		if tc, err = openapi.TypeConverter(); err != nil {
			return nil, err
		}
		fm, err = fieldmgr.NewManager(tc, res, subresource, "")
	}
	if err != nil {
		return nil, fmt.Errorf("local: field manager of %s: %w", res.GVK, err)
	}
	actual, _ := cache.LoadOrStore(key, fm)
	return actual.(*managedfields.FieldManager), nil
}

// trackUpdate records in obj's managedFields what the call's manager
// changed from live (nil for a create): an Update operation, as
// kube-apiserver's field manager records it after defaulting (see
// fieldmgr.TrackFast). A request that sets managedFields replaces them (an empty
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
	builtin := t.api.crds[gkOf(res)] == nil
	create := live == nil
	emptyLive := func() (map[string]any, error) { return fieldmgr.EmptyObject(gvk, builtin) }
	tc, err := t.typeConverter(res)
	if err != nil {
		return err
	}
	md := metadata(obj)
	reqManaged, reqHas := md["managedFields"]
	if req.hasManagedFields {
		reqManaged, reqHas = req.managedFields, true
	}
	reset := fieldmgr.ResetFields(res, req.subresource)
	var entries []any
	// A built-in kind's type converter never changes: the entries of an
	// object shaped as one created before, or changed as one updated
	// before, are that one's.
	scope := "main"
	if res.Status {
		scope = "main+status"
	}
	switch {
	case trackCreatesByShape && create && builtin && !reqHas && req.subresource == "":
		entries, err = createdManaged.Track(tc, reset, scope, gvk, emptyLive, obj, t.fieldManagerOf(req.manager), t.now())
	case trackUpdatesByShape && !create && builtin:
		// live is the call's own (read by it), and obj: the entries may
		// share their fieldsV1 with either.
		entries, err = updatedManaged.Track(tc, reset, scope, gvk, live, obj, reqManaged, reqHas,
			t.fieldManagerOf(req.manager), req.subresource, t.now())
	default:
		if create {
			if live, err = emptyLive(); err != nil {
				return err
			}
		}
		entries, err = fieldmgr.TrackFast(tc, reset, gvk, live, obj, reqManaged, reqHas,
			t.fieldManagerOf(req.manager), req.subresource, t.now())
	}
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

// trackCreatesByShape makes trackUpdate use createdManaged; benchmarks
// turn it off to compare.
var trackCreatesByShape = true

// createdManaged remembers the managedFields of created objects of
// built-in kinds by their shape.
var createdManaged fieldmgr.CreateCache

// trackUpdatesByShape makes trackUpdate use updatedManaged; benchmarks
// and tests turn it off to compare.
var trackUpdatesByShape = true

// updatedManaged remembers the managedFields of updates of objects of
// built-in kinds by the shape of their difference.
var updatedManaged fieldmgr.UpdateCache

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
		if live, err = fieldmgr.EmptyObject(gvk, t.api.crds[gkOf(res)] == nil); err != nil {
			return err
		}
	}
	if req.hasManagedFields {
		metadata(obj)["managedFields"] = req.managedFields
	}
	return fieldmgr.Update(fm, gvk, live, obj, t.fieldManagerOf(req.manager), t.now())
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
		if live, err = fieldmgr.EmptyObject(res.GVK, t.api.crds[gkOf(res)] == nil); err != nil {
			return nil, err
		}
	}
	return fieldmgr.Apply(fm, res.GVK, live, patch, manager, force, created, t.now())
}
