package persistentvolume

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/controller"
	"github.com/konverge/konverge/controller/event"
	"github.com/konverge/konverge/controller/internal/kobj"
	"github.com/konverge/konverge/quantity"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/selector"
)

// Component is the source of the binder's Events.
const Component = "persistentvolume-controller"

// ResyncPeriod is how often upstream's binder syncs every claim and
// volume again (--pvclaimbinder-sync-period).
const ResyncPeriod = 15 * time.Second

// The annotations of binding.
const (
	AnnBindCompleted          = "pv.kubernetes.io/bind-completed"
	AnnBoundByController      = "pv.kubernetes.io/bound-by-controller"
	AnnStorageProvisioner     = "volume.kubernetes.io/storage-provisioner"
	AnnBetaStorageProvisioner = "volume.beta.kubernetes.io/storage-provisioner"
	AnnSelectedNode           = "volume.kubernetes.io/selected-node"
	AnnDynamicallyProvisioned = "pv.kubernetes.io/provisioned-by"
	annBetaClass              = "volume.beta.kubernetes.io/storage-class"
	annDefaultClass           = "storageclass.kubernetes.io/is-default-class"
	annBetaDefaultClass       = "storageclass.beta.kubernetes.io/is-default-class"
)

var storageClassGVK = schema.GVK{Group: "storage.k8s.io", Version: "v1", Kind: "StorageClass"}

// migratedProvisioners are the in-tree provisioners whose volumes CSI
// drivers serve now, with the driver's name.
var migratedProvisioners = map[string]string{
	"kubernetes.io/aws-ebs":         "ebs.csi.aws.com",
	"kubernetes.io/gce-pd":          "pd.csi.storage.gke.io",
	"kubernetes.io/azure-disk":      "disk.csi.azure.com",
	"kubernetes.io/azure-file":      "file.csi.azure.com",
	"kubernetes.io/vsphere-volume":  "csi.vsphere.vmware.com",
	"kubernetes.io/cinder":          "cinder.csi.openstack.org",
	"kubernetes.io/portworx-volume": "pxd.portworx.com",
}

// Controller is the binder. The zero value is ready to use.
type Controller struct{}

var _ controller.Controller = Controller{}

// Name implements controller.Controller.
func (Controller) Name() string { return "persistentvolume-binder" }

// state is what one Sync reads.
type state struct {
	ctx     context.Context
	c       cluster.Interface
	now     time.Time
	volumes map[string]map[string]any
	// volumeNames in name order.
	volumeNames []string
	claims      map[[2]string]map[string]any
	classes     map[string]map[string]any
	pods        []cluster.Object
	podsRead    bool
	res         controller.Result
}

// Sync binds, releases and reclaims.
func (Controller) Sync(ctx context.Context, c cluster.Interface, now time.Time) (controller.Result, error) {
	if _, err := c.Mapper().ResourceFor(kobj.PVGVK); err != nil {
		return controller.Result{}, nil
	}
	claims, err := c.List(ctx, kobj.PVCGVK)
	if err != nil {
		return controller.Result{}, fmt.Errorf("persistentvolume: list persistentvolumeclaims: %w", err)
	}
	vols, err := c.List(ctx, kobj.PVGVK)
	if err != nil {
		return controller.Result{}, fmt.Errorf("persistentvolume: list persistentvolumes: %w", err)
	}
	if len(claims.Items) == 0 && len(vols.Items) == 0 {
		return controller.Result{}, nil
	}
	s := &state{ctx: ctx, c: c, now: now, volumes: map[string]map[string]any{},
		claims: map[[2]string]map[string]any{}, classes: map[string]map[string]any{}}
	for _, v := range vols.Items {
		s.volumes[kobj.Name(v)] = v
		s.volumeNames = append(s.volumeNames, kobj.Name(v))
	}
	sort.Strings(s.volumeNames)
	for _, cl := range claims.Items {
		s.claims[[2]string{kobj.Namespace(cl), kobj.Name(cl)}] = cl
	}
	if _, err := c.Mapper().ResourceFor(storageClassGVK); err == nil {
		classes, err := c.List(ctx, storageClassGVK)
		if err != nil {
			return controller.Result{}, fmt.Errorf("persistentvolume: list storageclasses: %w", err)
		}
		for _, sc := range classes.Items {
			s.classes[kobj.Name(sc)] = sc
		}
	}
	var errs []error
	for _, name := range s.volumeNames {
		if err := s.syncVolume(s.volumes[name]); err != nil {
			errs = append(errs, err)
		}
	}
	keys := make([][2]string, 0, len(s.claims))
	for k := range s.claims {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := s.claims[keys[i]], s.claims[keys[j]]
		if ra, rb := rv(a), rv(b); ra != rb {
			return ra < rb
		}
		return keys[i][0]+"/"+keys[i][1] < keys[j][0]+"/"+keys[j][1]
	})
	for _, k := range keys {
		if err := s.syncClaim(s.claims[k]); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return s.res, fmt.Errorf("persistentvolume: %w", errors.Join(errs...))
	}
	return s.res, nil
}

func rv(o map[string]any) uint64 {
	n, _ := strconv.ParseUint(kobj.Str(o, "metadata", "resourceVersion"), 10, 64)
	return n
}

// ---- volumes

func (s *state) syncVolume(v map[string]any) error {
	ref := kobj.Map(v, "spec", "claimRef")
	if ref == nil || kobj.Str(ref, "uid") == "" {
		_, err := s.setVolumePhase(v, "Available", "")
		return err
	}
	claim := s.claims[[2]string{kobj.Str(ref, "namespace"), kobj.Str(ref, "name")}]
	if claim != nil && kobj.UID(claim) != kobj.Str(ref, "uid") {
		claim = nil
	}
	phase := kobj.Str(v, "status", "phase")
	switch {
	case claim == nil:
		return s.releaseAndReclaim(v, phase)
	case kobj.Str(claim, "spec", "volumeName") == "":
		if volumeModeMismatch(claim, v) {
			if err := s.emit(v, event.Warning, "VolumeMismatch", fmt.Sprintf("Cannot bind PersistentVolume to requested PersistentVolumeClaim %q due to incompatible volumeMode.", kobj.Name(claim))); err != nil {
				return err
			}
			return s.emit(claim, event.Warning, "VolumeMismatch", fmt.Sprintf("Cannot bind PersistentVolume %q to requested PersistentVolumeClaim due to incompatible volumeMode.", kobj.Name(v)))
		}
		// The claim's sync finishes the binding.
		return nil
	case kobj.Str(claim, "spec", "volumeName") == kobj.Name(v):
		_, err := s.setVolumePhase(v, "Bound", "")
		return err
	default:
		// The claim is bound to another volume.
		if kobj.Annotation(v, AnnDynamicallyProvisioned) != "" && kobj.Str(v, "spec", "persistentVolumeReclaimPolicy") == "Delete" {
			return s.releaseAndReclaim(v, phase)
		}
		return s.unbindVolume(v)
	}
}

// releaseAndReclaim marks a volume whose claim is gone Released (unless it
// is Released or Failed already) and applies its reclaim policy.
func (s *state) releaseAndReclaim(v map[string]any, phase string) error {
	if phase != "Released" && phase != "Failed" {
		nv, err := s.setVolumePhase(v, "Released", "")
		if err != nil || nv == nil {
			return err
		}
		v = nv
	}
	return s.reclaim(v)
}

// unbindVolume undoes a binding the claim does not hold: the controller's
// own is removed, a user's pre-binding keeps its claim's name.
func (s *state) unbindVolume(v map[string]any) error {
	next := kobj.Copy(v)
	if _, ok := kobj.StringMap(v, "metadata", "annotations")[AnnBoundByController]; ok {
		delete(kobj.Map(next, "spec"), "claimRef")
		ann := kobj.Map(next, "metadata", "annotations")
		delete(ann, AnnBoundByController)
		if len(ann) == 0 {
			delete(kobj.Map(next, "metadata"), "annotations")
		}
	} else {
		delete(kobj.Map(next, "spec", "claimRef"), "uid")
	}
	nv, err := s.update(next)
	if err != nil || nv == nil {
		return err
	}
	_, err = s.setVolumePhase(nv, "Available", "")
	return err
}

// hostPathDeletable is the paths the hostPath deleter accepts (its
// pattern is not anchored).
var hostPathDeletable = regexp.MustCompile("/tmp/.+")

// reclaim applies a released volume's reclaim policy.
func (s *state) reclaim(v map[string]any) error {
	if kobj.Annotation(v, "pv.kubernetes.io/migrated-to") != "" {
		return nil
	}
	switch policy := kobj.Str(v, "spec", "persistentVolumeReclaimPolicy"); policy {
	case "Retain", "Recycle":
		return nil
	case "Delete":
		if !s.released(v) {
			return nil
		}
		spec := kobj.Map(v, "spec")
		if p := kobj.Annotation(v, AnnDynamicallyProvisioned); p != "" && !strings.HasPrefix(p, "kubernetes.io/") {
			return nil
		}
		switch {
		case spec["csi"] != nil:
			return nil
		case spec["hostPath"] != nil:
			path := kobj.Str(spec, "hostPath", "path")
			if !hostPathDeletable.MatchString(path) {
				return s.failDelete(v, "host_path deleter only supports /tmp/.+ but received provided "+path)
			}
			if err := s.c.Delete(s.ctx, kobj.PVGVK, "", kobj.Name(v)); err != nil && !cluster.IsNotFound(err) {
				return fmt.Errorf("delete persistentvolume %s: %w", kobj.Name(v), err)
			}
			s.res.Changed = true
			return nil
		default:
			return s.failDelete(v, fmt.Sprintf("error getting deleter volume plugin for volume %q: no deletable volume plugin matched", kobj.Name(v)))
		}
	default:
		if kobj.Str(v, "status", "phase") == "Failed" {
			return nil
		}
		if _, err := s.setVolumePhase(v, "Failed", ""); err != nil {
			return err
		}
		return s.emit(v, event.Warning, "VolumeUnknownReclaimPolicy", "Volume has unrecognized PersistentVolumeReclaimPolicy")
	}
}

// released reports a volume whose claim is gone or bound elsewhere.
func (s *state) released(v map[string]any) bool {
	ref := kobj.Map(v, "spec", "claimRef")
	if ref == nil || kobj.Str(ref, "uid") == "" {
		return false
	}
	claim := s.claims[[2]string{kobj.Str(ref, "namespace"), kobj.Str(ref, "name")}]
	if claim != nil && kobj.UID(claim) == kobj.Str(ref, "uid") {
		vn := kobj.Str(claim, "spec", "volumeName")
		return vn != "" && vn != kobj.Name(v)
	}
	return true
}

// failDelete marks a volume Failed with the deleter's message, and the
// Event when the phase changes.
func (s *state) failDelete(v map[string]any, msg string) error {
	if kobj.Str(v, "status", "phase") == "Failed" {
		return nil
	}
	nv, err := s.setVolumePhase(v, "Failed", msg)
	if err != nil || nv == nil {
		return err
	}
	return s.emit(nv, event.Warning, "VolumeFailedDelete", msg)
}

// setVolumePhase writes a volume's phase and message when the phase
// changes; it returns the volume as written (nil when a conflict or its
// deletion got in the way).
func (s *state) setVolumePhase(v map[string]any, phase, message string) (map[string]any, error) {
	if kobj.Str(v, "status", "phase") == phase {
		return v, nil
	}
	next := kobj.Copy(v)
	st := kobj.EnsureMap(next, "status")
	st["phase"] = phase
	if message != "" {
		st["message"] = message
	} else {
		delete(st, "message")
	}
	out, err := s.c.UpdateStatus(s.ctx, next)
	if err != nil {
		return nil, s.writeErr(v, err)
	}
	s.res.Changed = true
	s.volumes[kobj.Name(out)] = out
	return out, nil
}

// ---- claims

func (s *state) syncClaim(claim map[string]any) error {
	if _, ok := kobj.StringMap(claim, "metadata", "annotations")[AnnBindCompleted]; !ok {
		return s.syncUnboundClaim(claim)
	}
	return s.syncBoundClaim(claim)
}

func (s *state) syncUnboundClaim(claim map[string]any) error {
	vn := kobj.Str(claim, "spec", "volumeName")
	if vn == "" {
		delay := s.delayBinding(claim)
		v, err := s.findBestMatch(claim, delay)
		if err != nil {
			return err
		}
		if v != nil {
			return s.bind(v, claim)
		}
		if updated, err := s.assignDefaultClass(claim); err != nil || updated {
			return err
		}
		switch {
		case delay && kobj.Annotation(claim, AnnSelectedNode) == "":
			if err := s.emitWaiting(claim); err != nil {
				return err
			}
		case claimClass(claim) != "":
			return s.provision(claim)
		default:
			if err := s.periodic(claim, event.Normal, "FailedBinding", "no persistent volumes available for this claim and no storage class is set"); err != nil {
				return err
			}
		}
		_, err = s.setClaimStatus(claim, "Pending", nil)
		return err
	}
	v := s.volumes[vn]
	if v == nil {
		_, err := s.setClaimStatus(claim, "Pending", nil)
		return err
	}
	switch {
	case kobj.Map(v, "spec", "claimRef") == nil:
		if why := unsatisfied(v, claim); why != "" {
			if err := s.periodic(claim, event.Warning, "VolumeMismatch", fmt.Sprintf("Cannot bind to requested volume %q: %s", vn, why)); err != nil {
				return err
			}
			_, err := s.setClaimStatus(claim, "Pending", nil)
			return err
		}
		return s.bind(v, claim)
	case boundToClaim(v, claim):
		return s.bind(v, claim)
	default:
		if err := s.periodic(claim, event.Warning, "FailedBinding", fmt.Sprintf("volume %q already bound to a different claim.", vn)); err != nil {
			return err
		}
		if _, ok := kobj.StringMap(claim, "metadata", "annotations")[AnnBoundByController]; ok {
			return nil
		}
		_, err := s.setClaimStatus(claim, "Pending", nil)
		return err
	}
}

func (s *state) syncBoundClaim(claim map[string]any) error {
	vn := kobj.Str(claim, "spec", "volumeName")
	if vn == "" {
		return s.loseClaim(claim, "ClaimLost", "Bound claim has lost reference to PersistentVolume. Data on the volume is lost!")
	}
	v := s.volumes[vn]
	if v == nil {
		return s.loseClaim(claim, "ClaimLost", "Bound claim has lost its PersistentVolume. Data on the volume is lost!")
	}
	ref := kobj.Map(v, "spec", "claimRef")
	if ref == nil || kobj.Str(ref, "uid") == kobj.UID(claim) {
		return s.bind(v, claim)
	}
	return s.loseClaim(claim, "ClaimMisbound", "Two claims are bound to the same volume, this one is bound incorrectly")
}

// loseClaim marks a claim Lost, with the Event when the phase changes.
func (s *state) loseClaim(claim map[string]any, reason, msg string) error {
	if kobj.Str(claim, "status", "phase") == "Lost" {
		return nil
	}
	nc, err := s.setClaimStatus(claim, "Lost", nil)
	if err != nil || nc == nil {
		return err
	}
	return s.emit(nc, event.Warning, reason, msg)
}

// bind writes the binding on both sides, the volume first, and marks both
// Bound.
func (s *state) bind(v, claim map[string]any) error {
	// The volume's claimRef and annotation.
	ref := kobj.Map(v, "spec", "claimRef")
	if ref == nil || kobj.Str(ref, "name") != kobj.Name(claim) || kobj.Str(ref, "namespace") != kobj.Namespace(claim) || kobj.Str(ref, "uid") != kobj.UID(claim) {
		next := kobj.Copy(v)
		if !boundToClaim(v, claim) {
			kobj.SetAnnotation(next, AnnBoundByController, "yes")
		}
		kobj.EnsureMap(next, "spec")["claimRef"] = map[string]any{
			"apiVersion": "v1", "kind": "PersistentVolumeClaim",
			"namespace": kobj.Namespace(claim), "name": kobj.Name(claim),
			"uid": kobj.UID(claim), "resourceVersion": kobj.Str(claim, "metadata", "resourceVersion"),
		}
		nv, err := s.update(next)
		if err != nil || nv == nil {
			return err
		}
		v = nv
	}
	nv, err := s.setVolumePhase(v, "Bound", "")
	if err != nil || nv == nil {
		return err
	}
	v = nv
	// The claim's volumeName and annotations.
	next := kobj.Copy(claim)
	dirty := false
	if kobj.Str(claim, "spec", "volumeName") != kobj.Name(v) {
		kobj.EnsureMap(next, "spec")["volumeName"] = kobj.Name(v)
		if _, ok := kobj.StringMap(claim, "metadata", "annotations")[AnnBoundByController]; !ok {
			kobj.SetAnnotation(next, AnnBoundByController, "yes")
		}
		dirty = true
	}
	if _, ok := kobj.StringMap(claim, "metadata", "annotations")[AnnBindCompleted]; !ok {
		kobj.SetAnnotation(next, AnnBindCompleted, "yes")
		dirty = true
	}
	if dirty {
		nc, err := s.update(next)
		if err != nil || nc == nil {
			return err
		}
		claim = nc
	}
	_, err = s.setClaimStatus(claim, "Bound", v)
	return err
}

// setClaimStatus writes a claim's phase, and the access modes and
// capacity of its volume (none without one), when they change.
func (s *state) setClaimStatus(claim map[string]any, phase string, v map[string]any) (map[string]any, error) {
	next := kobj.Copy(claim)
	st := kobj.EnsureMap(next, "status")
	oldPhase := kobj.Str(claim, "status", "phase")
	dirty := false
	if oldPhase != phase {
		st["phase"] = phase
		dirty = true
	}
	if v == nil {
		for _, f := range []string{"accessModes", "capacity", "currentVolumeAttributesClassName"} {
			if _, ok := st[f]; ok {
				delete(st, f)
				dirty = true
			}
		}
	} else {
		modes := kobj.Slice(v, "spec", "accessModes")
		if !sameList(kobj.Slice(claim, "status", "accessModes"), modes) {
			if modes == nil {
				delete(st, "accessModes")
			} else {
				st["accessModes"] = kobj.Copy(map[string]any{"m": modes})["m"]
			}
			dirty = true
		}
		if oldPhase != phase {
			vc := kobj.Map(v, "spec", "capacity")
			if _, ok := vc["storage"]; !ok {
				return nil, fmt.Errorf("PersistentVolume %q is without a storage capacity", kobj.Name(v))
			}
			cc := kobj.Map(claim, "status", "capacity")
			if cc == nil || cmpQuantity(vc["storage"], cc["storage"]) != 0 {
				st["capacity"] = kobj.Copy(vc)
				dirty = true
			}
			if oldPhase == "Pending" && phase == "Bound" {
				if vac, ok := kobj.Map(v, "spec")["volumeAttributesClassName"]; ok && st["currentVolumeAttributesClassName"] != vac {
					st["currentVolumeAttributesClassName"] = vac
					dirty = true
				}
			}
		}
	}
	if !dirty {
		return claim, nil
	}
	out, err := s.c.UpdateStatus(s.ctx, next)
	if err != nil {
		return nil, s.writeErr(claim, err)
	}
	s.res.Changed = true
	s.claims[[2]string{kobj.Namespace(out), kobj.Name(out)}] = out
	return out, nil
}

// assignDefaultClass gives a claim without a class the default
// StorageClass created after it.
func (s *state) assignDefaultClass(claim map[string]any) (bool, error) {
	if _, ok := kobj.StringMap(claim, "metadata", "annotations")[annBetaClass]; ok {
		return false, nil
	}
	if _, ok := kobj.Map(claim, "spec")["storageClassName"]; ok {
		return false, nil
	}
	def := s.defaultClass()
	if def == nil {
		return false, nil
	}
	next := kobj.Copy(claim)
	kobj.EnsureMap(next, "spec")["storageClassName"] = kobj.Name(def)
	nc, err := s.update(next)
	return nc != nil, err
}

// defaultClass is the newest class marked default (the older name first
// at the same time).
func (s *state) defaultClass() map[string]any {
	var best map[string]any
	for _, sc := range s.classes {
		a := kobj.StringMap(sc, "metadata", "annotations")
		if a[annDefaultClass] != "true" && a[annBetaDefaultClass] != "true" {
			continue
		}
		if best == nil {
			best = sc
			continue
		}
		t, bt := kobj.ParseTime(kobj.Str(sc, "metadata", "creationTimestamp")), kobj.ParseTime(kobj.Str(best, "metadata", "creationTimestamp"))
		if t.After(bt) || (t.Equal(bt) && kobj.Name(sc) < kobj.Name(best)) {
			best = sc
		}
	}
	return best
}

// classFor returns the StorageClass of a claim as its sync sees it: a
// class created after the claim is unknown to the claim's first sync.
func (s *state) classFor(claim map[string]any) (map[string]any, error) {
	name := claimClass(claim)
	sc := s.classes[name]
	if sc == nil || rv(sc) < rv(claim) {
		return sc, nil
	}
	seen, err := s.seen(claim)
	if err != nil || !seen {
		return nil, err
	}
	return sc, nil
}

// seen reports a claim the binder has already acted on: annotated or
// spoken of by it.
func (s *state) seen(claim map[string]any) (bool, error) {
	a := kobj.StringMap(claim, "metadata", "annotations")
	if a[AnnStorageProvisioner] != "" || a[AnnBindCompleted] != "" {
		return true, nil
	}
	last, err := event.LastRecorded(s.ctx, s.c, claim, Component)
	if err != nil {
		return false, err
	}
	return !last.IsZero(), nil
}

// delayBinding reports a claim of a WaitForFirstConsumer class.
func (s *state) delayBinding(claim map[string]any) bool {
	if claimClass(claim) == "" {
		return false
	}
	sc, err := s.classFor(claim)
	if err != nil || sc == nil {
		return false
	}
	return kobj.Str(sc, "volumeBindingMode") == "WaitForFirstConsumer"
}

// provision asks for a volume of the claim's class: the external
// provisioner's annotations and Event, or ProvisioningFailed.
func (s *state) provision(claim map[string]any) error {
	sc, err := s.classFor(claim)
	if err != nil {
		return err
	}
	if sc == nil {
		return s.periodic(claim, event.Warning, "ProvisioningFailed", fmt.Sprintf("storageclass.storage.k8s.io %q not found", claimClass(claim)))
	}
	prov := kobj.Str(sc, "provisioner")
	if csi, ok := migratedProvisioners[prov]; ok {
		prov = csi
	} else if strings.HasPrefix(prov, "kubernetes.io/") {
		return s.periodic(claim, event.Warning, "ProvisioningFailed", "no volume plugin matched name: "+prov)
	}
	msg := fmt.Sprintf("Waiting for a volume to be created either by the external provisioner '%s' "+
		"or manually by the system administrator. If volume creation is delayed, please verify that "+
		"the provisioner is running and correctly registered.", prov)
	if kobj.Annotation(claim, AnnStorageProvisioner) != prov {
		next := kobj.Copy(claim)
		kobj.SetAnnotation(next, AnnBetaStorageProvisioner, prov)
		kobj.SetAnnotation(next, AnnStorageProvisioner, prov)
		nc, err := s.update(next)
		if err != nil || nc == nil {
			return err
		}
		// Upstream syncs the claim again on its own update: the Event
		// comes twice.
		for i := 0; i < 2; i++ {
			if err := s.emit(nc, event.Normal, "ExternalProvisioning", msg); err != nil {
				return err
			}
		}
		return nil
	}
	return s.periodic(claim, event.Normal, "ExternalProvisioning", msg)
}

// emitWaiting says why a claim of a WaitForFirstConsumer class waits.
func (s *state) emitWaiting(claim map[string]any) error {
	reason, msg := "WaitForFirstConsumer", "waiting for first consumer to be created before binding"
	names, err := s.unscheduledPods(claim)
	if err != nil {
		return err
	}
	switch {
	case len(names) > 1:
		reason, msg = "WaitForPodScheduled", fmt.Sprintf("waiting for pods %s to be scheduled", strings.Join(names, ","))
	case len(names) == 1:
		reason, msg = "WaitForPodScheduled", fmt.Sprintf("waiting for pod %s to be scheduled", names[0])
	}
	return s.periodic(claim, event.Normal, reason, msg)
}

// unscheduledPods names the active pods not scheduled yet that use a
// claim.
func (s *state) unscheduledPods(claim map[string]any) ([]string, error) {
	if !s.podsRead {
		l, err := s.c.List(s.ctx, kobj.PodGVK)
		if err != nil {
			return nil, fmt.Errorf("list pods: %w", err)
		}
		s.pods, s.podsRead = l.Items, true
	}
	var names []string
	for _, p := range s.pods {
		if kobj.Namespace(p) != kobj.Namespace(claim) || kobj.Str(p, "spec", "nodeName") != "" {
			continue
		}
		if ph := kobj.Str(p, "status", "phase"); ph == "Succeeded" || ph == "Failed" {
			continue
		}
		for _, vol := range kobj.Slice(p, "spec", "volumes") {
			vm, _ := vol.(map[string]any)
			if kobj.Str(vm, "persistentVolumeClaim", "claimName") == kobj.Name(claim) ||
				(vm["ephemeral"] != nil && kobj.Name(p)+"-"+kobj.Str(vm, "name") == kobj.Name(claim)) {
				names = append(names, kobj.Name(p))
				break
			}
		}
	}
	return names, nil
}

// periodic records an Event that upstream's binder emits at every sync
// of the claim (every ResyncPeriod from the first), as client-go's
// recorder writes it: every occurrence counts, but its spam filter (per
// object and type a burst of event.SpamBurst, then one per
// event.SpamInterval) lets only some writes through, each with the count
// of all occurrences so far. Which writes were made is read back from
// the Event's first and last times. It asks to come back when the next
// write is due.
func (s *state) periodic(obj map[string]any, typ, reason, msg string) error {
	ev := event.Event{Involved: obj, Type: typ, Reason: reason, Message: msg, Component: Component, Time: s.now}
	e, err := event.Find(s.ctx, s.c, ev)
	if err != nil {
		return err
	}
	if e == nil {
		if err := s.emit(obj, typ, reason, msg); err != nil {
			return err
		}
		s.res = s.res.Merge(controller.Result{RequeueAt: s.now.Add(ResyncPeriod)})
		return nil
	}
	first := kobj.ParseTime(kobj.Str(e, "firstTimestamp"))
	last := kobj.ParseTime(kobj.Str(e, "lastTimestamp"))
	count := kobj.IntOr(e, 1, "count")
	lastSync := int64(last.Sub(first) / ResyncPeriod)
	// Occurrences beyond one per sync (a claim synced again on its own
	// update) stay counted.
	extra := count - (lastSync + 1)
	if extra < 0 {
		extra = 0
	}
	due := nextWrite(lastSync)
	nowSync := int64(s.now.Sub(first) / ResyncPeriod)
	if nowSync >= due {
		// A write with every occurrence so far.
		next := kobj.Copy(e)
		next["count"] = nowSync + 1 + extra
		next["lastTimestamp"] = kobj.FormatTime(s.now)
		if _, err := s.c.Update(s.ctx, next); err != nil {
			if err := s.writeErr(e, err); err != nil {
				return err
			}
		} else {
			s.res.Changed = true
		}
		due = nextWrite(nowSync)
	}
	s.res = s.res.Merge(controller.Result{RequeueAt: first.Add(time.Duration(due) * ResyncPeriod)})
	return nil
}

// syncsPerToken is how many resyncs the spam filter takes to refill one
// token.
const syncsPerToken = int64(event.SpamInterval / ResyncPeriod)

// nextWrite is the sync (counted from the first, 0) whose occurrence the
// spam filter lets through after the one at sync k: each of the first
// event.SpamBurst, then one whenever a token has refilled.
func nextWrite(k int64) int64 {
	burst := int64(event.SpamBurst)
	if k+1 < burst {
		return k + 1
	}
	// The writes by sync k: the burst, then one at the first sync after
	// each refilled token (the filter's bucket starts an instant after
	// the first occurrence, so a token is not back at the sync that
	// falls exactly on the refill).
	writes := burst
	if k >= burst {
		writes = burst + (k-1)/syncsPerToken
	}
	n := (writes-burst+1)*syncsPerToken + 1
	if n <= k {
		n = k + 1
	}
	return n
}

func (s *state) emit(obj map[string]any, typ, reason, msg string) error {
	_, err := event.Emit(s.ctx, s.c, event.Event{Involved: obj, Type: typ, Reason: reason, Message: msg, Component: Component, Time: s.now})
	if err == nil {
		s.res.Changed = true
	}
	return err
}

// update writes an object; nil (and no error) when a conflict or its
// deletion got in the way: the next round sees it anew.
func (s *state) update(obj map[string]any) (map[string]any, error) {
	out, err := s.c.Update(s.ctx, obj)
	if err != nil {
		return nil, s.writeErr(obj, err)
	}
	s.res.Changed = true
	if kobj.Str(out, "kind") == "PersistentVolume" {
		s.volumes[kobj.Name(out)] = out
	} else {
		s.claims[[2]string{kobj.Namespace(out), kobj.Name(out)}] = out
	}
	return out, nil
}

func (s *state) writeErr(obj map[string]any, err error) error {
	if cluster.IsNotFound(err) || cluster.IsConflict(err) {
		s.res.Changed = true
		return nil
	}
	return fmt.Errorf("update %s %s: %w", kobj.Str(obj, "kind"), kobj.Name(obj), err)
}

// ---- matching

// findBestMatch is upstream's index lookup: the volumes grouped by their
// access modes, the groups holding every requested mode tried from the
// fewest modes up, in each the volume bound to the claim, else the
// smallest Available one that fits.
func (s *state) findBestMatch(claim map[string]any, delay bool) (map[string]any, error) {
	want := modeSet(kobj.Slice(claim, "spec", "accessModes"))
	groups := map[string][]map[string]any{}
	for _, name := range s.volumeNames {
		v := s.volumes[name]
		key := modeKey(modeSet(kobj.Slice(v, "spec", "accessModes")))
		groups[key] = append(groups[key], v)
	}
	var keys []string
	for k := range groups {
		if containsAll(modeSet(splitModes(k)), want) {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		ni, nj := len(splitModes(keys[i])), len(splitModes(keys[j]))
		if ni != nj {
			return ni < nj
		}
		return keys[i] < keys[j]
	})
	for _, k := range keys {
		v, err := findMatching(claim, groups[k], delay)
		if err != nil || v != nil {
			return v, err
		}
	}
	return nil, nil
}

// findMatching is upstream's FindMatchingVolume without a node.
func findMatching(claim map[string]any, vols []map[string]any, delay bool) (map[string]any, error) {
	requested := kobj.Map(claim, "spec", "resources", "requests")["storage"]
	class := claimClass(claim)
	var sel *selector.Labels
	if m := kobj.Map(claim, "spec", "selector"); m != nil {
		l, err := selector.FromLabelSelector(m)
		if err != nil {
			return nil, fmt.Errorf("error creating internal label selector for claim: %s/%s: %w", kobj.Namespace(claim), kobj.Name(claim), err)
		}
		sel = &l
	}
	var best map[string]any
	for _, v := range vols {
		if kobj.Map(v, "spec", "claimRef") != nil && !boundToClaim(v, claim) {
			continue
		}
		size := kobj.Map(v, "spec", "capacity")["storage"]
		if cmpQuantity(size, requested) < 0 {
			continue
		}
		if volumeModeMismatch(claim, v) {
			continue
		}
		if kobj.Str(claim, "spec", "volumeAttributesClassName") != kobj.Str(v, "spec", "volumeAttributesClassName") {
			continue
		}
		if kobj.Deleting(v) {
			continue
		}
		if boundToClaim(v, claim) {
			return v, nil
		}
		if delay {
			continue
		}
		if kobj.Str(v, "status", "phase") != "Available" {
			continue
		}
		if sel != nil && !sel.Matches(kobj.Labels(v)) {
			continue
		}
		if volumeClass(v) != class {
			continue
		}
		if best == nil || cmpQuantity(kobj.Map(best, "spec", "capacity")["storage"], size) > 0 {
			best = v
		}
	}
	return best, nil
}

// unsatisfied says why a volume named by a claim cannot be bound to it
// ("" when it can).
func unsatisfied(v, claim map[string]any) string {
	if kobj.Deleting(v) {
		return fmt.Sprintf("the volume is marked for deletion %q", kobj.Name(v))
	}
	if cmpQuantity(kobj.Map(v, "spec", "capacity")["storage"], kobj.Map(claim, "spec", "resources", "requests")["storage"]) < 0 {
		return "requested PV is too small"
	}
	if volumeClass(v) != claimClass(claim) {
		return "storageClassName does not match"
	}
	if kobj.Str(claim, "spec", "volumeAttributesClassName") != kobj.Str(v, "spec", "volumeAttributesClassName") {
		return "volumeAttributesClassName does not match"
	}
	if volumeModeMismatch(claim, v) {
		return "incompatible volumeMode"
	}
	if !containsAll(modeSet(kobj.Slice(v, "spec", "accessModes")), modeSet(kobj.Slice(claim, "spec", "accessModes"))) {
		return "incompatible accessMode"
	}
	return ""
}

// boundToClaim reports a volume whose claimRef names the claim (and its
// uid, when it has one).
func boundToClaim(v, claim map[string]any) bool {
	ref := kobj.Map(v, "spec", "claimRef")
	if ref == nil {
		return false
	}
	if kobj.Str(ref, "name") != kobj.Name(claim) || kobj.Str(ref, "namespace") != kobj.Namespace(claim) {
		return false
	}
	uid := kobj.Str(ref, "uid")
	return uid == "" || uid == kobj.UID(claim)
}

func claimClass(claim map[string]any) string {
	if a, ok := kobj.StringMap(claim, "metadata", "annotations")[annBetaClass]; ok {
		return a
	}
	return kobj.Str(claim, "spec", "storageClassName")
}

func volumeClass(v map[string]any) string {
	if a, ok := kobj.StringMap(v, "metadata", "annotations")[annBetaClass]; ok {
		return a
	}
	return kobj.Str(v, "spec", "storageClassName")
}

func volumeModeMismatch(claim, v map[string]any) bool {
	mode := func(s string) string {
		if s == "" {
			return "Filesystem"
		}
		return s
	}
	return mode(kobj.Str(claim, "spec", "volumeMode")) != mode(kobj.Str(v, "spec", "volumeMode"))
}

// The access modes in upstream's order (GetAccessModesAsString).
var modeOrder = []string{"ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"}

func modeSet(list []any) map[string]bool {
	m := map[string]bool{}
	for _, x := range list {
		if s, ok := x.(string); ok {
			m[s] = true
		}
	}
	return m
}

func modeKey(m map[string]bool) string {
	var parts []string
	for _, o := range modeOrder {
		if m[o] {
			parts = append(parts, o)
		}
	}
	return strings.Join(parts, ",")
}

func splitModes(k string) []any {
	if k == "" {
		return nil
	}
	var out []any
	for _, p := range strings.Split(k, ",") {
		out = append(out, p)
	}
	return out
}

func containsAll(have, want map[string]bool) bool {
	for m := range want {
		if !have[m] {
			return false
		}
	}
	return true
}

func sameList(a, b []any) bool { return slices.Equal(a, b) }

// cmpQuantity compares two quantities (a missing or unparsable one is
// zero).
func cmpQuantity(a, b any) int {
	return parseQ(a).Cmp(parseQ(b))
}

func parseQ(v any) quantity.Quantity {
	n, err := quantity.Normalize(v)
	if err != nil {
		return quantity.Quantity{}
	}
	s, _ := n.(string)
	q, err := quantity.Parse(s)
	if err != nil {
		return quantity.Quantity{}
	}
	return q
}
