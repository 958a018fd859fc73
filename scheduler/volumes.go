package scheduler

import (
	"fmt"
	"sort"

	"github.com/konverge/konverge/nodefit"
	"github.com/konverge/konverge/quantity"
	"github.com/konverge/konverge/selector"
)

// Reasons VolumeBinding rejects a node for, as kube-scheduler words them.
const (
	ReasonVolumeNodeAffinity = "node(s) didn't match PersistentVolume's node affinity"
	ReasonVolumeBind         = "node(s) didn't find available persistent volumes to bind"
	ReasonVolumeMissing      = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
)

// Annotations VolumeBinding reads.
const (
	annBindCompleted = "pv.kubernetes.io/bind-completed"
	annSelectedNode  = "volume.kubernetes.io/selected-node"
	annBetaClass     = "volume.beta.kubernetes.io/storage-class"
	// noProvisioner is the provisioner of a class whose volumes are
	// only created by hand (local volumes).
	noProvisioner = "kubernetes.io/no-provisioner"
)

// Volumes is how the scheduler reads the storage objects VolumeBinding
// looks at: a PersistentVolumeClaim, a PersistentVolume and a
// StorageClass by name (nil: it does not exist), and every
// PersistentVolume (for the claims that wait for their first consumer).
// A nil function reads as "none exists".
type Volumes struct {
	Claim   func(namespace, name string) map[string]any
	Volume  func(name string) map[string]any
	Class   func(name string) map[string]any
	Volumes func() []map[string]any
}

// SetVolumes gives the cluster its storage objects; without them a pod's
// claims are not looked at (as a cluster without VolumeBinding).
func (c *Cluster) SetVolumes(v Volumes) { c.volumes = &v }

// VolumeBinding is a claim that waits for its first consumer and the
// volume the scheduler chose for it on the pod's node: the volume's
// claimRef is to be set to the claim before the pod is bound (the binder
// then completes the binding). With no Volume, the claim is to be
// provisioned on the node: it gets the node in its
// volume.kubernetes.io/selected-node annotation, and the pod waits until
// the claim is bound (as kube-scheduler's PreBind waits for it).
type VolumeBinding struct {
	Namespace, Claim, Volume string
}

// Provisions reports whether a binding waits for a claim to be
// provisioned (the pod is not bound yet).
func Provisions(bindings []VolumeBinding) bool {
	for _, b := range bindings {
		if b.Volume == "" {
			return true
		}
	}
	return false
}

// podVolumes is what VolumeBinding's PreFilter found of a pod's claims.
type podVolumes struct {
	// bound are the volumes of the bound claims, in the pod's order.
	bound []boundVolume
	// delayed are the unbound claims of WaitForFirstConsumer classes.
	delayed []map[string]any
	// candidates are the volumes of each delayed claim's class.
	candidates map[string][]map[string]any
	// bindings are the static bindings found for each node that fits.
	bindings map[string][]VolumeBinding
}

// boundVolume is the volume of a bound claim: its required node
// selector terms (nil: none required), or gone when it does not exist.
type boundVolume struct {
	terms []labelTerm
	gone  bool
}

// labelTerm is a node selector term read once: its expressions and
// fields.
type labelTerm struct {
	exprs, fields []map[string]any
}

func newLabelTerms(terms []any) []labelTerm {
	out := make([]labelTerm, 0, len(terms))
	for _, t := range terms {
		tm, _ := t.(map[string]any)
		out = append(out, labelTerm{exprs: list(tm, "matchExpressions"), fields: list(tm, "matchFields")})
	}
	return out
}

// matches is nodefit.TermMatches for a node with these labels and no
// name (as kube-scheduler matches a volume's node affinity), without
// reading the term again for every node.
func (t labelTerm) matches(labels map[string]string) bool {
	if len(t.exprs) == 0 && len(t.fields) == 0 {
		return false
	}
	for _, e := range t.exprs {
		v, has := labels[str(e, "key")]
		if !nodefit.RequirementMatches(e, v, has) {
			return false
		}
	}
	for _, f := range t.fields {
		if op := str(f, "operator"); str(f, "key") != "metadata.name" || (op != "In" && op != "NotIn") {
			return false
		}
		if !nodefit.RequirementMatches(f, "", true) {
			return false
		}
	}
	return true
}

// claimNames are the claims a pod's volumes name, with whether each is a
// generic ephemeral volume's (named after the pod and the volume).
func claimNames(podName string, spec map[string]any) (names []string, ephemeral []bool) {
	for _, v := range list(spec, "volumes") {
		if pvc, ok := v["persistentVolumeClaim"].(map[string]any); ok {
			names = append(names, str(pvc, "claimName"))
			ephemeral = append(ephemeral, false)
		} else if _, ok := v["ephemeral"].(map[string]any); ok {
			names = append(names, podName+"-"+str(v, "name"))
			ephemeral = append(ephemeral, true)
		}
	}
	return names, ephemeral
}

// preFilterVolumes is VolumeBinding's PreFilter: the pod's claims must
// exist and not be lost or being deleted. It returns the message of a
// rejection, or what the Filter needs (nil for a pod without claims).
//
// kube-scheduler also turns away a pod with a claim of an immediate class
// (or none) that is not bound yet ("pod has unbound immediate
// PersistentVolumeClaims"); not here: the embedded cluster provisions no
// volume, and such a claim without a volume made by hand (every claim of
// a StatefulSet's volumeClaimTemplates) would keep its pods Pending for
// ever. Those claims are not looked at.

func (c *Cluster) preFilterVolumes(p *pod, spec map[string]any) (*podVolumes, string) {
	if c.volumes == nil {
		return nil, ""
	}
	names, ephemeral := claimNames(p.name, spec)
	if len(names) == 0 {
		return nil, ""
	}
	v := c.volumes
	claims := make([]map[string]any, len(names))
	for i, name := range names {
		var claim map[string]any
		if v.Claim != nil {
			claim = v.Claim(p.namespace, name)
		}
		if claim == nil {
			if ephemeral[i] {
				return nil, fmt.Sprintf("waiting for ephemeral volume controller to create the persistentvolumeclaim %q", name)
			}
			return nil, fmt.Sprintf("persistentvolumeclaim %q not found", name)
		}
		if strAt(claim, "status", "phase") == "Lost" {
			return nil, fmt.Sprintf("persistentvolumeclaim %q bound to non-existent persistentvolume %q", name, strAt(claim, "spec", "volumeName"))
		}
		if strAt(claim, "metadata", "deletionTimestamp") != "" {
			return nil, fmt.Sprintf("persistentvolumeclaim %q is being deleted", name)
		}
		if ephemeral[i] && !ownedBy(claim, p.uid) {
			return nil, fmt.Sprintf("PVC %s/%s was not created for pod %s/%s (pod is not owner)", p.namespace, name, p.namespace, p.name)
		}
		claims[i] = claim
	}
	pv := &podVolumes{}
	for _, claim := range claims {
		volumeName := strAt(claim, "spec", "volumeName")
		md, _ := claim["metadata"].(map[string]any)
		if _, done := stringMap(md, "annotations")[annBindCompleted]; volumeName != "" && done {
			var vol map[string]any
			if v.Volume != nil {
				vol = v.Volume(volumeName)
			}
			if vol == nil {
				pv.bound = append(pv.bound, boundVolume{gone: true})
				continue
			}
			if req, ok := mapAt(vol, "spec", "nodeAffinity", "required"); ok {
				// A required affinity without terms selects no node.
				pv.bound = append(pv.bound, boundVolume{terms: newLabelTerms(anyList(req["nodeSelectorTerms"]))})
			}
			continue
		}
		if volumeName == "" && c.delayBinding(claim) {
			pv.delayed = append(pv.delayed, claim)
		}
	}
	if len(pv.delayed) > 0 {
		var all []map[string]any
		if v.Volumes != nil {
			all = v.Volumes()
		}
		pv.candidates = map[string][]map[string]any{}
		for _, claim := range pv.delayed {
			class := claimClass(claim)
			if _, done := pv.candidates[class]; done {
				continue
			}
			var vols []map[string]any
			for _, vol := range all {
				if volumeClass(vol) == class {
					vols = append(vols, vol)
				}
			}
			pv.candidates[class] = vols
		}
		// The smallest claims choose first.
		sort.SliceStable(pv.delayed, func(i, j int) bool {
			return storageOf(pv.delayed[i], "spec", "resources", "requests").Cmp(storageOf(pv.delayed[j], "spec", "resources", "requests")) < 0
		})
		pv.bindings = map[string][]VolumeBinding{}
	}
	return pv, ""
}

// ownedBy reports an object whose controller is the object of uid.
func ownedBy(obj map[string]any, uid string) bool {
	md, _ := obj["metadata"].(map[string]any)
	for _, r := range list(md, "ownerReferences") {
		if c, _ := r["controller"].(bool); c && str(r, "uid") == uid {
			return true
		}
	}
	return false
}

// delayBinding reports a claim whose class binds at the first consumer
// (a class that does not exist binds at once).
func (c *Cluster) delayBinding(claim map[string]any) bool {
	name := claimClass(claim)
	if name == "" || c.volumes.Class == nil {
		return false
	}
	class := c.volumes.Class(name)
	return class != nil && str(class, "volumeBindingMode") == "WaitForFirstConsumer"
}

func claimClass(claim map[string]any) string {
	md, _ := claim["metadata"].(map[string]any)
	if class, ok := stringMap(md, "annotations")[annBetaClass]; ok {
		return class
	}
	return strAt(claim, "spec", "storageClassName")
}

func volumeClass(vol map[string]any) string {
	md, _ := vol["metadata"].(map[string]any)
	if class, ok := stringMap(md, "annotations")[annBetaClass]; ok {
		return class
	}
	return strAt(vol, "spec", "storageClassName")
}

// storageOf is the storage quantity of the map at path (zero when absent
// or not a quantity).
func storageOf(obj map[string]any, path ...string) quantity.Quantity {
	m, _ := mapAt(obj, path...)
	s, _ := m["storage"].(string)
	if s == "" {
		if n, ok := m["storage"].(int64); ok {
			s = fmt.Sprint(n)
		}
	}
	q, err := quantity.Parse(s)
	if err != nil {
		return quantity.Quantity{}
	}
	return q
}

// fitsVolumes is VolumeBinding's Filter: the volumes of the bound claims
// must exist and their node affinity select n; each claim that waits for
// its first consumer needs an available volume that n can reach, or a
// class that can provision one.
func (in *incoming) fitsVolumes(n *node) *status {
	pv := in.volumes
	if pv == nil {
		return nil
	}
	// As kube-scheduler, the first volume that does not exist or does
	// not match the node is the one reported.
	boundOK, boundFound := true, true
	for _, b := range pv.bound {
		if b.gone {
			boundFound = false
			break
		}
		if b.terms != nil && !anyTermMatches(b.terms, n.labels) {
			boundOK = false
			break
		}
	}
	unboundOK := true
	if len(pv.delayed) > 0 {
		var bindings []VolumeBinding
		bindings, unboundOK = in.c.matchDelayed(pv, n)
		if unboundOK && len(bindings) > 0 {
			pv.bindings[n.name] = bindings
		}
	}
	switch {
	case boundOK && unboundOK && boundFound:
		return nil
	case !boundOK && unboundOK && boundFound:
		// The common case, shared: statuses are not changed once made.
		return statusVolumeNodeAffinity
	}
	var reasons []string
	if !boundOK {
		reasons = append(reasons, ReasonVolumeNodeAffinity)
	}
	if !unboundOK {
		reasons = append(reasons, ReasonVolumeBind)
	}
	if !boundFound {
		reasons = append(reasons, ReasonVolumeMissing)
	}
	return &status{reasons: reasons}
}

var statusVolumeNodeAffinity = &status{reasons: []string{ReasonVolumeNodeAffinity}}

// matchDelayed finds, for the claims that wait for their first consumer,
// a volume each on n (the smallest that fits, not chosen by an earlier
// claim of the pod), and checks that the others can be provisioned there.
func (c *Cluster) matchDelayed(pv *podVolumes, n *node) ([]VolumeBinding, bool) {
	var toFind, toProvision []map[string]any
	for _, claim := range pv.delayed {
		md, _ := claim["metadata"].(map[string]any)
		if sel, ok := stringMap(md, "annotations")[annSelectedNode]; ok {
			if sel != n.name {
				return nil, false
			}
			toProvision = append(toProvision, claim)
			continue
		}
		toFind = append(toFind, claim)
	}
	var bindings []VolumeBinding
	chosen := map[string]bool{}
	for _, claim := range toFind {
		vol := matchVolume(claim, pv.candidates[claimClass(claim)], n, chosen)
		if vol == nil {
			toProvision = append(toProvision, claim)
			continue
		}
		name := strAt(vol, "metadata", "name")
		chosen[name] = true
		if volumeBoundTo(vol, claim) {
			// Already the claim's: the binder completes it.
			continue
		}
		bindings = append(bindings, VolumeBinding{Namespace: strAt(claim, "metadata", "namespace"), Claim: strAt(claim, "metadata", "name"), Volume: name})
	}
	for _, claim := range toProvision {
		var class map[string]any
		if c.volumes.Class != nil {
			class = c.volumes.Class(claimClass(claim))
		}
		if class == nil || str(class, "provisioner") == noProvisioner {
			return nil, false
		}
		bindings = append(bindings, VolumeBinding{Namespace: strAt(claim, "metadata", "namespace"), Claim: strAt(claim, "metadata", "name")})
	}
	return bindings, true
}

// matchVolume is the volume a claim that waits for its first consumer
// binds to on n: one its claimRef already gives it, else the smallest
// Available one of its class that fits (size, volumeMode, access modes,
// selector) and that n can reach, not in excluded.
func matchVolume(claim map[string]any, vols []map[string]any, n *node, excluded map[string]bool) map[string]any {
	want := storageOf(claim, "spec", "resources", "requests")
	var sel *selector.Labels
	if m, ok := mapAt(claim, "spec", "selector"); ok {
		l, err := selector.FromLabelSelector(m)
		if err != nil {
			return nil
		}
		sel = &l
	}
	var best map[string]any
	var bestSize quantity.Quantity
	for _, vol := range vols {
		md, _ := vol["metadata"].(map[string]any)
		if excluded[str(md, "name")] {
			continue
		}
		size := storageOf(vol, "spec", "capacity")
		if size.Cmp(want) < 0 {
			continue
		}
		if volumeMode(vol) != volumeMode(claim) {
			continue
		}
		if strAt(vol, "spec", "volumeAttributesClassName") != strAt(claim, "spec", "volumeAttributesClassName") {
			continue
		}
		if volumeBoundTo(vol, claim) {
			if !volumeNodeAffine(vol, n) {
				continue
			}
			return vol
		}
		if strAt(vol, "status", "phase") != "Available" {
			continue
		}
		if _, ok := mapAt(vol, "spec", "claimRef"); ok {
			continue
		}
		if sel != nil && !sel.Matches(stringMap(md, "labels")) {
			continue
		}
		if !hasModes(vol, claim) {
			continue
		}
		if !volumeNodeAffine(vol, n) {
			continue
		}
		if best == nil || size.Cmp(bestSize) < 0 {
			best, bestSize = vol, size
		}
	}
	return best
}

func volumeMode(obj map[string]any) string {
	if m := strAt(obj, "spec", "volumeMode"); m != "" {
		return m
	}
	return "Filesystem"
}

// hasModes reports a volume that offers every access mode the claim asks
// for.
func hasModes(vol, claim map[string]any) bool {
	spec, _ := vol["spec"].(map[string]any)
	cspec, _ := claim["spec"].(map[string]any)
	have := map[string]bool{}
	for _, m := range listOfStrings(spec, "accessModes") {
		have[m] = true
	}
	for _, m := range listOfStrings(cspec, "accessModes") {
		if !have[m] {
			return false
		}
	}
	return true
}

// volumeBoundTo reports a volume whose claimRef names the claim (and its
// uid, when it has one).
func volumeBoundTo(vol, claim map[string]any) bool {
	ref, ok := mapAt(vol, "spec", "claimRef")
	if !ok {
		return false
	}
	md, _ := claim["metadata"].(map[string]any)
	if str(ref, "name") != str(md, "name") || str(ref, "namespace") != str(md, "namespace") {
		return false
	}
	uid := str(ref, "uid")
	return uid == "" || uid == str(md, "uid")
}

// volumeNodeAffine reports whether a volume's required node affinity
// selects n. As kube-scheduler, it matches the node's labels only: a
// metadata.name field selects no node.
func volumeNodeAffine(vol map[string]any, n *node) bool {
	req, ok := mapAt(vol, "spec", "nodeAffinity", "required")
	if !ok {
		return true
	}
	for _, t := range anyList(req["nodeSelectorTerms"]) {
		tm, _ := t.(map[string]any)
		if nodefit.TermMatches(tm, n.labels, "") {
			return true
		}
	}
	return false
}

// anyTermMatches reports whether one of the terms matches a node with
// these labels.
func anyTermMatches(terms []labelTerm, labels map[string]string) bool {
	for _, t := range terms {
		if t.matches(labels) {
			return true
		}
	}
	return false
}

// volumeBindings are the static bindings found for the pod on the node
// chosen.
func (in *incoming) volumeBindings(nodeName string) []VolumeBinding {
	if in.volumes == nil {
		return nil
	}
	return in.volumes.bindings[nodeName]
}
