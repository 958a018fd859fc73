package local

import (
	"errors"
	"fmt"
	"maps"
	"strconv"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/cluster/local/internal/admission"
	"github.com/konverge/konverge/cluster/local/internal/fieldmgr"
	"github.com/konverge/konverge/cluster/local/internal/strategy"
	"github.com/konverge/konverge/defaults"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/validate"
	"github.com/konverge/konverge/value"
)

// optimisticLock is the API server's reason for a Conflict on a stale
// resourceVersion.
const optimisticLock = "the object has been modified; please apply your changes to the latest version and try again"

// resource resolves a kind through the transaction's mapper.
func (t *txn) resource(gvk schema.GVK) (cluster.Resource, error) {
	if gvk.Kind == "" {
		return cluster.Resource{}, cluster.NewBadRequest("Object 'Kind' is missing")
	}
	if gvk.Version == "" {
		return cluster.Resource{}, cluster.NewBadRequest("Object 'apiVersion' is missing")
	}
	return t.api.mapper.ResourceFor(gvk)
}

func gkOf(res cluster.Resource) groupKind { return groupKind{res.GVK.Group, res.GVK.Kind} }

// requestNamespace is the namespace a request on res acts in: "" for
// cluster-scoped kinds, and "default" when none is given for namespaced
// ones (as kubectl without -n).
func requestNamespace(res cluster.Resource, ns string) string {
	switch {
	case !res.Namespaced:
		return ""
	case ns == "":
		return "default"
	}
	return ns
}

// kindGroup names a kind in Invalid errors: "Deployment.apps", "Pod".
func kindGroup(gvk schema.GVK) string {
	if gvk.Group == "" {
		return gvk.Kind
	}
	return gvk.Kind + "." + gvk.Group
}

func internalError(msg string) *cluster.StatusError {
	return &cluster.StatusError{Code: 500, Reason: cluster.ReasonInternal, Message: msg}
}

// forbidden is kube-apiserver's 403, as admission refuses.
func forbidden(res cluster.Resource, name, why string) *cluster.StatusError {
	return admission.Forbidden(res, name, why)
}

// create is the Create verb.
func (t *txn) create(in map[string]any, o cluster.CreateOptions) (map[string]any, error) {
	return t.createObject(in, o, false)
}

// createObject creates in; applied says that in carries its managedFields
// already (the result of a server-side apply), or none where the control
// plane writes none.
func (t *txn) createObject(in map[string]any, o cluster.CreateOptions, applied bool) (map[string]any, error) {
	defer t.withValidation(o.FieldValidation)()
	gvk := gvkOf(in)
	res, err := t.resource(gvk)
	if err != nil {
		return nil, err
	}
	gk := gkOf(res)
	if err := fieldmgr.CheckFieldManager("CreateOptions", o.FieldManager, nil); err != nil {
		return nil, err
	}
	t.request = writeRequest{manager: o.FieldManager, applied: applied}
	// The steps below change obj in place: a copy of in, unless the caller
	// handed in over (cluster.HandOver). What they need of the request as
	// it came is read first.
	requestLabels := len(metaMap(in, "labels")) > 0
	obj := in
	if !o.HandedOver {
		obj = value.DeepCopyObject(in)
	}
	md := metadata(obj)
	ns := requestNamespace(res, str(md, "namespace"))
	setString(md, "namespace", ns)
	if err := t.admit(admission.Chain.CheckLifecycle, admission.Create, res, obj, nil, str(md, "name")); err != nil {
		return nil, err
	}
	if gk == bindingGK {
		return t.bind(obj, ns, o)
	}
	if crd := t.api.crds[gk]; crd != nil && crd.terminating {
		return nil, &cluster.StatusError{Code: 405, Reason: cluster.ReasonMethodNotAllowed,
			Message: "create not allowed while custom resource definition is terminating"}
	}

	// System fields, then what the kind's strategy resets.
	now := t.now()
	md["uid"] = newUID()
	md["creationTimestamp"] = now
	for _, f := range []string{"deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"} {
		delete(md, f)
	}
	// Admission names an object by the name the request gave, else by
	// its generateName.
	admitName := str(md, "name")
	if admitName == "" {
		admitName = str(md, "generateName")
	}
	generated := str(md, "name") == "" && str(md, "generateName") != ""
	if generated {
		md["name"] = generateName(str(md, "generateName"))
	}
	t.keepRequestManagedFields(obj)
	// Defaults (which may replace any map of obj), the creator's fields
	// (kube-apiserver's field manager sees the object as decoded), then
	// admission and the strategy.
	if err := t.defaults(res, obj); err != nil {
		return nil, err
	}
	if err := t.trackUpdate(res, nil, obj); err != nil {
		return nil, err
	}
	if err := t.admit(admission.Chain.Mutate, admission.Create, res, obj, nil, admitName); err != nil {
		return nil, err
	}
	md = metadata(obj)
	t.prepareForCreate(res, obj, !requestLabels)
	if _, ok := t.generationRuleFor(res); ok {
		md["generation"] = int64(1)
	}
	if gk == serviceGK {
		if err := t.prepareService(objKey{gk: gk, namespace: ns, name: str(md, "name")}, obj, nil); err != nil {
			return nil, err
		}
	}
	if err := t.validate(res, obj, nil); err != nil {
		return nil, err
	}
	if err := t.admit(admission.Chain.Validate, admission.Create, res, obj, nil, admitName); err != nil {
		return nil, err
	}
	t.warnRequest(gk)
	t.warnObject(gk, obj)
	if gk == crdGK {
		defaultCRD(obj)
		obj["status"] = initialCRDStatus(obj)
	}
	if str(md, "resourceVersion") != "" {
		return nil, internalError("resourceVersion should not be set on objects to be created")
	}

	k := objKey{gk: gk, namespace: ns, name: str(md, "name")}
	for attempt := 0; t.exists(k); attempt++ {
		if generated && attempt < 8 {
			k.name = generateName(str(md, "generateName"))
			md["name"] = k.name
			continue
		}
		e := cluster.NewAlreadyExists(res.GroupResource(), k.name)
		if generated {
			e.Message = fmt.Sprintf("%s %q already exists, the server was not allowed to generate a unique name for this operation", res.GroupResource(), k.name)
		} else if existing, err := t.load(k); err != nil {
			return nil, err
		} else if isDeleting(existing.obj) {
			e.Message = "object is being deleted: " + e.Message
		}
		return nil, e
	}
	if o.DryRun {
		return obj, nil
	}
	if err := t.store(k, res, obj, nil); err != nil {
		return nil, err
	}
	if err := t.afterCreate(k, res, obj); err != nil {
		return nil, err
	}
	return obj, nil
}

// afterCreate is what the control plane's controllers do at once with a
// new object, in the same transaction: a namespace gets its default
// ServiceAccount and root CA ConfigMap, a CRD is established. obj, the
// object as created, is what the create returns.
func (t *txn) afterCreate(k objKey, res cluster.Resource, obj map[string]any) error {
	switch k.gk {
	case namespaceGK:
		return t.populateNamespace(k.name)
	case crdGK:
		rec, err := t.load(k)
		if err != nil || rec == nil {
			return err
		}
		established := value.DeepCopyObject(rec.obj)
		prepareCRD(established, nil, t.now())
		return t.save(k, established, rec)
	}
	return nil
}

// metaMap returns a map field of obj's metadata, nil when it has none.
func metaMap(obj map[string]any, field string) map[string]any {
	md, _ := obj["metadata"].(map[string]any)
	m, _ := md[field].(map[string]any)
	return m
}

// store writes obj, new or over old (unless nothing changed), in the
// storage version of its kind, and leaves it in the version it was
// written in.
func (t *txn) store(k objKey, res cluster.Resource, obj map[string]any, old *record) error {
	apiVersion := str(obj, "apiVersion")
	if crd := t.api.crds[k.gk]; crd != nil && crd.storage != "" {
		obj["apiVersion"] = schema.GVK{Group: res.GVK.Group, Version: crd.storage}.APIVersion()
	}
	var err error
	if old == nil {
		err = t.put(k, obj, nil)
	} else {
		err = t.save(k, obj, old)
	}
	obj["apiVersion"] = apiVersion
	return err
}

// crdVersion returns the served CRD version of a custom resource, nil for
// built-in kinds.
func (t *txn) crdVersion(res cluster.Resource) *crdVersion {
	if crd := t.api.crds[gkOf(res)]; crd != nil {
		return crd.versions[res.GVK.Version]
	}
	return nil
}

// defaults fills in the server's defaults: for custom resources, after
// pruning the fields their schema does not know.
func (t *txn) defaults(res cluster.Resource, obj map[string]any) error {
	v := t.crdVersion(res)
	if v == nil {
		unknown, err := defaults.ApplyUnknown(obj)
		if err == nil {
			err = t.checkUnknown(res, metaString(obj, "name"), unknown)
		}
		var se *cluster.StatusError
		if errors.As(err, &se) {
			return err
		}
		var de *defaults.DecodeError
		if errors.As(err, &de) {
			return cluster.NewUndecodable(res.GVK, de.Field, de.Msg)
		}
		if err != nil {
			return t.wrap("default", objKey{gk: gkOf(res), namespace: metaString(obj, "namespace"), name: metaString(obj, "name")}, err)
		}
		return nil
	}
	if v.schema == nil {
		return nil
	}
	if err := t.checkUnknown(res, metaString(obj, "name"), defaults.PruneUnknown(obj, v.schema)); err != nil {
		return err
	}
	if err := defaults.ApplyCustomResource(obj, v.schema); err != nil {
		return t.wrap("default", objKey{gk: gkOf(res), namespace: metaString(obj, "namespace"), name: metaString(obj, "name")}, err)
	}
	return nil
}

// validate validates obj, as created (old nil) or as an update of old:
// built-in kinds by package validate, custom resources by their schema, and
// the metadata of every kind.
func (t *txn) validate(res cluster.Resource, obj, old map[string]any) error {
	var errs []validate.Error
	v := t.crdVersion(res)
	if v == nil && validate.Known(str(obj, "apiVersion"), str(obj, "kind")) {
		errs = validate.Object(obj, old)
	} else {
		var oldMD map[string]any
		if old != nil {
			oldMD = metadata(old)
		}
		if v == nil {
			errs = validate.BuiltinObjectMeta(obj, old, res.Namespaced)
		} else {
			errs = validate.ObjectMeta(metadata(obj), oldMD, res.Namespaced)
		}
		if v != nil && v.schema != nil {
			errs = append(errs, validate.CustomResource(obj, v.schema)...)
		}
	}
	causes := validate.ToCauses(errs)
	if v != nil && v.scale != nil {
		causes = append(causes, v.scale.validate(obj, true)...)
	}
	if gkOf(res) == crdGK {
		causes = append(causes, crdCauses(obj)...)
		causes = append(causes, storedVersionCauses(obj, old, t.request.subresource == "status")...)
		causes = append(causes, approvalCauses(obj, old)...)
	}
	if len(causes) > 0 {
		return cluster.NewInvalid(kindGroup(res.GVK), metaString(obj, "name"), causes)
	}
	return nil
}

// update is the Update and UpdateStatus verbs.
func (t *txn) update(in map[string]any, statusOnly bool, o cluster.UpdateOptions) (map[string]any, error) {
	defer t.withValidation(o.FieldValidation)()
	res, err := t.resource(gvkOf(in))
	if err != nil {
		return nil, err
	}
	if err := fieldmgr.CheckFieldManager("UpdateOptions", o.FieldManager, nil); err != nil {
		return nil, err
	}
	t.request = writeRequest{manager: o.FieldManager}
	if statusOnly {
		t.request.subresource = "status"
	}
	var obj map[string]any
	if statusOnly {
		// A status update takes only metadata and status from the
		// request: copy just those.
		obj = make(map[string]any, 4)
		for _, f := range []string{"apiVersion", "kind", "metadata", "status"} {
			if v, ok := in[f]; ok {
				obj[f] = value.DeepCopy(v)
			}
		}
	} else {
		obj = value.DeepCopyObject(in)
	}
	md := metadata(obj)
	ns := requestNamespace(res, str(md, "namespace"))
	setString(md, "namespace", ns)
	name := str(md, "name")
	if name == "" {
		return nil, cluster.NewBadRequest("resource name may not be empty")
	}
	if statusOnly && !res.Status {
		return nil, &cluster.StatusError{Code: 404, Reason: cluster.ReasonNotFound, Message: "the server could not find the requested resource"}
	}
	k := objKey{gk: gkOf(res), namespace: ns, name: name}
	old, err := t.load(k)
	if err != nil {
		return nil, err
	}
	if old == nil {
		return nil, cluster.NewNotFound(res.GroupResource(), name)
	}
	return t.updateObject(k, res, old, obj, statusOnly, o.DryRun)
}

// updateObject replaces old by obj (which the call owns) with the
// semantics of an update: the resourceVersion precondition, fields only the
// server sets, status kept (or, for statusOnly, only status taken),
// generation, defaults and validation, deletion once the last finalizer
// goes, and no write at all when nothing changes.
func (t *txn) updateObject(k objKey, res cluster.Resource, old *record, obj map[string]any, statusOnly, dryRun bool) (map[string]any, error) {
	if updatedFrom != nil {
		defer updatedFrom(k, old)
	}
	if !statusOnly {
		t.keepRequestManagedFields(obj)
	}
	md, omd := metadata(obj), metadata(old.obj)
	oldRV := str(omd, "resourceVersion")
	if rv := str(md, "resourceVersion"); rv != "" && rv != oldRV {
		return nil, cluster.NewConflict(res.GroupResource(), k.name, optimisticLock)
	}
	fastStatus := statusOnly && strategy.StatusDefaultsAlone(res) && t.crdVersion(res) == nil
	if statusOnly {
		// The status strategies take everything but status from the
		// stored object.
		var next map[string]any
		if fastStatus {
			// Nothing below changes what next shares with old.obj
			// (which this call owns) but its metadata.
			next = maps.Clone(old.obj)
			next["metadata"] = maps.Clone(metadata(old.obj))
		} else {
			next = value.DeepCopyObject(old.obj)
		}
		if st, ok := obj["status"]; ok {
			next["status"] = st
		} else {
			delete(next, "status")
		}
		next["apiVersion"] = obj["apiVersion"]
		if t.request.applied {
			// A server-side apply of status has tracked its fields.
			if mf, ok := md["managedFields"]; ok {
				metadata(next)["managedFields"] = mf
			} else {
				delete(metadata(next), "managedFields")
			}
		}
		if k.gk.Group == "apps" && k.gk.Kind == "Deployment" {
			// The Deployment status strategy resets only spec and labels:
			// the controller writes its revision annotation with the status.
			if a, ok := md["annotations"]; ok {
				metadata(next)["annotations"] = a
			} else {
				delete(metadata(next), "annotations")
			}
		}
		obj, md = next, metadata(next)
	}
	md["resourceVersion"] = oldRV
	if statusOnly && k.gk == pvGK {
		strategy.PreparePVStatusUpdate(obj, old.obj, t.now())
	}

	if fastStatus {
		// The rest is the stored object, defaulted already: defaulting it
		// again changes nothing.
		if err := t.defaultStatus(res, obj); err != nil {
			return nil, err
		}
	} else {
		empty := emptyDataMaps(k.gk, obj)
		if err := t.defaults(res, obj); err != nil {
			return nil, err
		}
		defer restoreEmptyMaps(obj, empty)()
	}
	// The writer's fields, as kube-apiserver's field manager sees them:
	// after decoding, before admission and the strategy.
	if err := t.trackUpdate(res, old.obj, obj); err != nil {
		return nil, err
	}
	md = metadata(obj)
	if !statusOnly {
		if err := t.admit(admission.Chain.Mutate, admission.Update, res, obj, old.obj, str(md, "name")); err != nil {
			return nil, err
		}
		strategy.PrepareForUpdate(res, obj, old.obj)
		if k.gk == serviceGK {
			strategy.DropTypeDependentFields(obj, old.obj)
			if err := t.prepareService(k, obj, old.obj); err != nil {
				return nil, err
			}
		}
		if g, ok := omd["generation"]; ok {
			md["generation"] = g
		} else {
			delete(md, "generation")
		}
		if rule, ok := t.generationRuleFor(res); ok && rule.Bumps(obj, old.obj) {
			g, _ := omd["generation"].(int64)
			md["generation"] = g + 1
		}
	}
	if err := t.validate(res, obj, old.obj); err != nil {
		return nil, err
	}
	if !statusOnly {
		if err := t.admit(admission.Chain.Validate, admission.Update, res, obj, old.obj, str(md, "name")); err != nil {
			return nil, err
		}
		t.warnRequest(k.gk)
		t.warnObject(k.gk, obj)
	}
	if k.gk == crdGK && !statusOnly {
		defaultCRD(obj)
		prepareCRD(obj, old.obj, t.now())
	}

	if str(omd, "deletionTimestamp") != "" && len(finalizers(obj)) == 0 && !namespacePending(obj) {
		if g, ok := omd["deletionGracePeriodSeconds"].(int64); !ok || g == 0 {
			if dryRun {
				return obj, nil
			}
			// The last finalizer is gone: the object goes, as it is now,
			// at the revision of its deletion.
			md["resourceVersion"] = strconv.FormatUint(t.rev+1, 10)
			if err := t.finalize(k, old, obj); err != nil {
				return nil, err
			}
			return obj, nil
		}
	}

	if dryRun {
		return obj, nil
	}
	if err := t.store(k, res, obj, old); err != nil {
		return nil, err
	}
	return obj, nil
}

// namespacePending reports a Namespace whose spec.finalizers still hold
// its deletion.
func namespacePending(obj map[string]any) bool {
	if str(obj, "kind") != "Namespace" {
		return false
	}
	spec, _ := obj["spec"].(map[string]any)
	fs, _ := spec["finalizers"].([]any)
	return len(fs) > 0
}

// defaultStatus fills in the defaults of obj's status alone, as defaults
// would for the whole object, for a kind of statusDefaultsAlone.
func (t *txn) defaultStatus(res cluster.Resource, obj map[string]any) error {
	shell := map[string]any{"apiVersion": obj["apiVersion"], "kind": obj["kind"]}
	if st, ok := obj["status"]; ok {
		shell["status"] = st
	}
	if md, ok := obj["metadata"].(map[string]any); ok {
		// For the error messages.
		shell["metadata"] = map[string]any{"name": md["name"], "namespace": md["namespace"]}
	}
	if err := t.defaults(res, shell); err != nil {
		return err
	}
	if st, ok := shell["status"]; ok {
		obj["status"] = st
	} else {
		delete(obj, "status")
	}
	return nil
}

// emptyDataMaps returns the keys of a Secret's or ConfigMap's data maps
// (data, binaryData) that the request holds as empty maps. Decoding
// drops them from what is stored (protobuf keeps no empty map), but
// kube-apiserver validates the decoded request, where an empty map is not
// the stored nil: updating an immutable Secret with data: {} changes its
// data (restoreEmptyMaps puts them back for validation only).
func emptyDataMaps(gk groupKind, obj map[string]any) []string {
	if gk.Group != "" || (gk.Kind != "Secret" && gk.Kind != "ConfigMap") {
		return nil
	}
	var keys []string
	for _, k := range []string{"data", "binaryData"} {
		if m, ok := obj[k].(map[string]any); ok && len(m) == 0 {
			keys = append(keys, k)
		}
	}
	return keys
}

// restoreEmptyMaps sets the keys of obj to empty maps where defaulting
// dropped them, and returns the function that drops them again.
func restoreEmptyMaps(obj map[string]any, keys []string) func() {
	var put []string
	for _, k := range keys {
		if _, ok := obj[k]; !ok {
			obj[k] = map[string]any{}
			put = append(put, k)
		}
	}
	return func() {
		for _, k := range put {
			if m, ok := obj[k].(map[string]any); ok && len(m) == 0 {
				delete(obj, k)
			}
		}
	}
}
