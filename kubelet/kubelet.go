// Package kubelet is the simulated kubelet of the embedded cluster's
// nodes (the simulation profile's nodes:, or one node, NodeName): it
// registers them, places new pods as kube-scheduler would (package
// scheduler decides; the kubelet binds, reports FailedScheduling and
// preempts), and moves every pod of its nodes through the lifecycle of a
// real one (phases Pending, Running,
// Succeeded and Failed; the conditions PodScheduled, Initialized,
// ContainersReady, Ready, with readiness gates; container states with
// their reasons, restart counts and back-off; startup, liveness and
// readiness probes; init containers; graceful termination), at the times
// the simulation profile gives.
//
// No container runs: the profile (default-profile.yaml, embedded, or the
// one given to `konverge cluster init --sim-profile`) says which images
// pull, how long things take, which processes exit and what probes
// answer. The Kubelet is a controller.Controller that package sim drives on
// the cluster's virtual clock; it keeps no state (everything is derived
// from the pod and status.startTime), so the same pods at the same time
// always get the same status.
//
// A pod bound to a node without the scheduler (spec.nodeName given) goes
// through the kubelet's own admission first (see admission.go: OutOfcpu,
// NodeAffinity, ...), which may reject it.
//
// Not simulated: image caches, volumes, ephemeral containers,
// in-place changes of a running pod's images, and the Unknown phase (the
// nodes never go away).
package kubelet

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/controller"
	"github.com/konverge/konverge/controller/event"
	"github.com/konverge/konverge/scheduler"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

// NodeName is the name of the one node; HostIP its address. Pods get
// addresses from PodCIDR, in order: 10.244.0.2, 10.244.0.3, ...,
// 10.244.1.1, ... (the .0 and .255 of every /24 are left out); the range
// holds a quarter of a million pods, far more than a real node's, so that
// the simulated node runs whatever the controllers make.
const (
	NodeName = "konverge-node"
	HostIP   = "172.18.0.2"
	PodCIDR  = "10.244.0.0/14"
)

// podIPs is how many counters PodCIDR has (10.244.0.0 to 10.247.255.255).
const podIPs = 4 << 16

// podIP is the address of counter n, 0 <= n < podIPs.
func podIP(n int) string {
	return "10." + strconv.Itoa(244+n>>16) + "." + strconv.Itoa(n>>8&255) + "." + strconv.Itoa(n&255)
}

var (
	podGVK  = schema.GVK{Version: "v1", Kind: "Pod"}
	nodeGVK = schema.GVK{Version: "v1", Kind: "Node"}
	nsGVK   = schema.GVK{Version: "v1", Kind: "Namespace"}
	pdbGVK  = schema.GVK{Group: "policy", Version: "v1", Kind: "PodDisruptionBudget"}
	svcGVK  = schema.GVK{Version: "v1", Kind: "Service"}
	// The controllers whose selector the default spreading counts by.
	spreadOwnerGVKs = map[string]schema.GVK{
		"ReplicaSet":            {Group: "apps", Version: "v1", Kind: "ReplicaSet"},
		"StatefulSet":           {Group: "apps", Version: "v1", Kind: "StatefulSet"},
		"ReplicationController": {Version: "v1", Kind: "ReplicationController"},
	}
)

// Kubelet is the simulated node's kubelet.
type Kubelet struct {
	profile *Profile
	// nodes are the nodes the kubelet runs, byName by name.
	nodes  []node
	byName map[string]node

	mu         sync.Mutex
	behaviours map[behaviourKey]behaviour
	// current remembers, by pod uid, the pods whose stored status was
	// found to be the one of their resourceVersion at a time, until the
	// next time it changes: such a pod needs no work before then.
	current map[string]currentStatus
	// spam drops Events beyond client-go's rate, as the kubelet's
	// recorder does.
	spam event.SpamFilter
	// memo is what SyncChanged needs of the pods, from the last Sync on.
	memo *memo
	// refs reads the ConfigMaps and Secrets the pods name, during a sync.
	refs *refLookup
}

// Reset forgets what the kubelet keeps in memory (the statuses known to
// be current, the spam filter's buckets): the runner calls it after a
// sync's writes were rolled back.
func (k *Kubelet) Reset() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.current = nil
	k.memo = nil
	k.spam.Reset()
}

// currentStatus is a pod whose status at resourceVersion rv is the one
// statusAt gives from at until next.
type currentStatus struct {
	rv       string
	at, next time.Time
}

// behaviourKey is what selects a profile rule for a container.
type behaviourKey struct {
	image, name, command string
	init                 bool
}

var _ controller.Controller = (*Kubelet)(nil)

// New returns a kubelet that simulates by p; nil means the default
// profile.
func New(p *Profile) *Kubelet {
	if p == nil {
		p = DefaultProfile()
	}
	k := &Kubelet{profile: p, nodes: p.nodes(), byName: map[string]node{}}
	for _, n := range k.nodes {
		k.byName[n.spec.Name] = n
	}
	return k
}

// Name returns "kubelet".
func (k *Kubelet) Name() string { return "kubelet" }

// Sync registers the nodes, writes the status of every pod of the nodes
// at now, removes the pods whose termination is over, and schedules the
// pods that wait for a node, highest priority first.
func (k *Kubelet) Sync(ctx context.Context, c cluster.Interface, now time.Time) (controller.Result, error) {
	var res controller.Result
	k.refs = newRefLookup(ctx, c)
	defer func() { k.refs = nil }()
	changed, err := k.ensureNodes(ctx, c, now)
	if err != nil {
		return res, err
	}
	res.Changed = changed
	list, err := c.List(ctx, podGVK)
	if err != nil {
		return res, fmt.Errorf("kubelet: list pods: %w", err)
	}
	snap, err := k.snapshot(ctx, c, list.Items)
	if err != nil {
		return res, err
	}
	ips := newIPAllocator(list.Items)
	k.mu.Lock()
	if len(k.current) > 2*len(list.Items)+1024 {
		k.current = nil // forget the pods that went
	}
	k.mu.Unlock()
	next := never
	nexts := make([]time.Time, len(list.Items))
	k.mu.Lock()
	k.memo = nil
	k.mu.Unlock()
	// The pods bound to a node whose kubelet has not admitted them yet
	// are admitted first, oldest first (as the kubelet handles new pods);
	// those rejected are done with.
	rooms, admitting, err := k.roomsFor(ctx, c, list.Items)
	if err != nil {
		return res, err
	}
	refused, err := k.admitNew(ctx, c, list.Items, admitting, rooms, snap, now)
	if err != nil {
		return res, err
	}
	res.Changed = res.Changed || len(refused) > 0
	var waiting []int
	refs := map[podKey]bool{}
	for i, pod := range list.Items {
		if waitsForNode(pod) {
			waiting = append(waiting, i)
			continue
		}
		if refused[i] {
			continue
		}
		r, err := k.syncPod(ctx, c, pod, now, ips)
		if err != nil {
			return res, err
		}
		res.Changed = res.Changed || r.changed
		next = minTime(next, r.next)
		nexts[i] = r.next
		if r.refs {
			refs[keyOf(pod)] = true
		}
	}
	sortWaiting(list.Items, waiting)
	pending := map[podKey]bool{}
	for _, i := range waiting {
		r, err := k.schedule(ctx, c, list.Items[i], now, ips, snap)
		if err != nil {
			return res, err
		}
		res.Changed = res.Changed || r.changed
		next = minTime(next, r.next)
		nexts[i] = r.next
		if r.unschedulable {
			md := mapOf(list.Items[i], "metadata")
			pending[podKey{str(md, "namespace"), str(md, "name")}] = true
		}
		if r.refs {
			refs[keyOf(list.Items[i])] = true
		}
	}
	// The pods as listed: those written since are in the next
	// SyncChanged's changes.
	k.remember(list.Items, nexts, snap, pending, rooms, refs)
	if next != never {
		res.RequeueAt = next
	}
	return res, nil
}

// waitsForNode reports a pod that no node runs yet and that is not being
// deleted: the scheduler's.
func waitsForNode(pod map[string]any) bool {
	return str(mapOf(pod, "spec"), "nodeName") == "" && str(mapOf(pod, "metadata"), "deletionTimestamp") == ""
}

// sortWaiting orders the pods waiting for a node (indexes into pods) as
// kube-scheduler's queue pops them: higher priority first, then the
// older, then by namespace and name.
func sortWaiting(pods []cluster.Object, idx []int) {
	sort.SliceStable(idx, func(a, b int) bool {
		pa, pb := pods[idx[a]], pods[idx[b]]
		qa, _ := mapOf(pa, "spec")["priority"].(int64)
		qb, _ := mapOf(pb, "spec")["priority"].(int64)
		if qa != qb {
			return qa > qb
		}
		ca, cb := str(mapOf(pa, "metadata"), "creationTimestamp"), str(mapOf(pb, "metadata"), "creationTimestamp")
		if ca != cb {
			return ca < cb
		}
		return false
	})
}

// snapshot is the scheduler's view: the Nodes as stored (or, on a
// cluster that serves none, the kubelet's own) and the pods on them.
func (k *Kubelet) snapshot(ctx context.Context, c cluster.Interface, pods []cluster.Object) (*scheduler.Cluster, error) {
	var nodes []map[string]any
	if _, err := c.Mapper().ResourceFor(nodeGVK); err == nil {
		l, err := c.List(ctx, nodeGVK)
		if err != nil {
			return nil, fmt.Errorf("kubelet: list nodes: %w", err)
		}
		nodes = append(nodes, l.Items...)
	} else {
		for _, n := range k.nodes {
			nodes = append(nodes, n.object(""))
		}
	}
	snap := scheduler.New(nodes)
	for _, p := range pods {
		snap.SetPod(p)
	}
	return snap, nil
}

// ensureNodes creates the Nodes of the profile that the cluster does not
// have (when it serves Nodes): a kubelet registers its node again when it
// is deleted.
func (k *Kubelet) ensureNodes(ctx context.Context, c cluster.Interface, now time.Time) (bool, error) {
	if _, err := c.Mapper().ResourceFor(nodeGVK); err != nil {
		return false, nil
	}
	changed := false
	for _, n := range k.nodes {
		name := n.spec.Name
		if _, err := controller.GetShared(ctx, c, nodeGVK, "", name); err == nil {
			continue
		} else if !cluster.IsNotFound(err) {
			return changed, fmt.Errorf("kubelet: get node %s: %w", name, err)
		}
		if _, err := c.Create(ctx, n.object(now.UTC().Format(time.RFC3339))); err != nil && !cluster.IsAlreadyExists(err) {
			return changed, fmt.Errorf("kubelet: register node %s: %w", name, err)
		}
		changed = true
	}
	return changed, nil
}

type podResult struct {
	changed bool
	next    time.Time
	// refs: the pod waits for a ConfigMap or Secret to appear.
	refs bool
	// unschedulable: the pod waits for a node (the scheduler found none).
	unschedulable bool
}

// syncPod moves one pod on.
func (k *Kubelet) syncPod(ctx context.Context, c cluster.Interface, pod map[string]any, now time.Time, ips *ipAllocator) (podResult, error) {
	res := podResult{next: never}
	md := mapOf(pod, "metadata")
	uid, rv := str(md, "uid"), str(md, "resourceVersion")
	k.mu.Lock()
	cur, ok := k.current[uid]
	k.mu.Unlock()
	if ok && cur.rv == rv && rv != "" && !now.Before(cur.at) && now.Before(cur.next) {
		// The status is what statusAt would give: nothing changed the
		// pod (bound here, as it was when it was found current) and no
		// transition is due yet.
		res.next = cur.next
		return res, nil
	}
	spec := mapOf(pod, "spec")
	ns, name := str(md, "namespace"), str(md, "name")
	node := str(spec, "nodeName")
	if node == "" {
		return res, nil // waits for the scheduler, or deleted before
	}
	if _, ok := k.byName[node]; !ok {
		return res, nil // bound to a node no kubelet here runs
	}
	if rejected(pod) {
		// Refused at admission: nothing ran, nothing changes; deleted, it
		// goes at once (unless a finalizer holds it).
		if str(md, "deletionTimestamp") != "" && len(listOf(md, "finalizers")) == 0 {
			if err := c.Delete(ctx, podGVK, ns, name, cluster.GracePeriod(0), cluster.Preconditions{UID: uid}); err != nil && !cluster.IsNotFound(err) {
				return res, fmt.Errorf("kubelet: remove pod %s/%s: %w", ns, name, err)
			}
			res.changed = true
		}
		return res, nil
	}
	status := mapOf(pod, "status")
	start, err := time.Parse(time.RFC3339, str(status, "startTime"))
	if err != nil {
		// Bound by someone else (spec.nodeName in the manifest): accept it now.
		start = now
	}
	newStatus, next, gone, ctrs := k.statusAt(pod, start, now, ips)
	res.next = next
	res.refs = waitsForRefs(newStatus)
	if gone && newStatus != nil {
		// Held by a finalizer: the terminal status first, then the
		// removal (which waits for the finalizer); once both are done,
		// nothing more.
		grace, _ := md["deletionGracePeriodSeconds"].(int64)
		if value.Equal(status, newStatus) && grace == 0 {
			return res, nil
		}
		if !value.Equal(status, newStatus) {
			upd := shallowCopy(pod)
			upd["status"] = newStatus
			if _, err := c.UpdateStatus(ctx, upd); err != nil {
				if cluster.IsConflict(err) || cluster.IsNotFound(err) {
					res.changed = true
					return res, nil
				}
				return res, fmt.Errorf("kubelet: update status of pod %s/%s: %w", ns, name, err)
			}
		}
	}
	if gone {
		if err := c.Delete(ctx, podGVK, ns, name, cluster.GracePeriod(0), cluster.Preconditions{UID: str(md, "uid")}); err != nil && !cluster.IsNotFound(err) {
			return res, fmt.Errorf("kubelet: remove pod %s/%s: %w", ns, name, err)
		}
		res.changed, res.next = true, never
		return res, k.emit(ctx, c, podEvents(pod, status, ctrs, now))
	}
	if value.Equal(status, newStatus) {
		if rv != "" && uid != "" && !waitsForRefs(newStatus) {
			k.mu.Lock()
			if k.current == nil {
				k.current = map[string]currentStatus{}
			}
			k.current[uid] = currentStatus{rv: rv, at: now, next: next}
			k.mu.Unlock()
		}
		return res, nil
	}
	upd := shallowCopy(pod)
	upd["status"] = newStatus
	if _, err := c.UpdateStatus(ctx, upd); err != nil {
		if cluster.IsConflict(err) || cluster.IsNotFound(err) {
			// Changed under us in this round: the next round sees it.
			res.changed = true
			return res, nil
		}
		return res, fmt.Errorf("kubelet: update status of pod %s/%s: %w", ns, name, err)
	}
	res.changed = true
	return res, k.emit(ctx, c, podEvents(pod, status, ctrs, now))
}

// schedule places a pod that waits for a node as kube-scheduler would
// (see package scheduler), binds it and starts its status, or reports
// why no node fits (PodScheduled False, a FailedScheduling Event),
// preempting pods of a lower priority when that makes room.
func (k *Kubelet) schedule(ctx context.Context, c cluster.Interface, pod map[string]any, now time.Time, ips *ipAllocator, snap *scheduler.Cluster) (podResult, error) {
	res := podResult{next: never}
	md, spec := mapOf(pod, "metadata"), mapOf(pod, "spec")
	ns, name := str(md, "namespace"), str(md, "name")
	status := mapOf(pod, "status")
	reason, msg := "", ""
	var d scheduler.Decision
	if gates, _ := spec["schedulingGates"].([]any); len(gates) > 0 {
		reason, msg = "SchedulingGated", "Scheduling is blocked due to non-empty scheduling gates"
	} else if sn := str(spec, "schedulerName"); sn != "" && sn != "default-scheduler" {
		return res, nil // another scheduler's pod
	} else {
		k.lookups(ctx, c, snap)
		d = snap.Schedule(pod)
		if d.Node == "" {
			reason, msg = "Unschedulable", d.Message
		}
	}
	if reason != "" {
		res.unschedulable = reason == "Unschedulable"
		var evs []event.Event
		for _, v := range d.Victims {
			vns, vname, _ := strings.Cut(v, "/")
			victim, err := c.Get(ctx, podGVK, vns, vname)
			if err != nil {
				if cluster.IsNotFound(err) {
					continue
				}
				return res, fmt.Errorf("kubelet: get pod %s: %w", v, err)
			}
			if str(mapOf(victim, "metadata"), "deletionTimestamp") != "" {
				continue
			}
			// The victim learns why it goes (DisruptionTarget), then is
			// deleted with its grace period.
			vst := value.DeepCopyObject(mapOf(victim, "status"))
			vst["conditions"] = append(listOf(vst, "conditions"), condition("DisruptionTarget", "True", "PreemptionByScheduler",
				"default-scheduler: preempting to accommodate a higher priority pod", nil, now))
			vupd := shallowCopy(victim)
			vupd["status"] = vst
			if _, err := c.UpdateStatus(ctx, vupd); err != nil && !cluster.IsNotFound(err) && !cluster.IsConflict(err) {
				return res, fmt.Errorf("kubelet: update status of pod %s: %w", v, err)
			}
			if err := c.Delete(ctx, podGVK, vns, vname, cluster.Preconditions{UID: str(mapOf(victim, "metadata"), "uid")}); err != nil && !cluster.IsNotFound(err) && !cluster.IsConflict(err) {
				return res, fmt.Errorf("kubelet: preempt pod %s: %w", v, err)
			}
			res.changed = true
			evs = append(evs, preemptedEvent(victim, pod, d.NominatedNode, now))
		}
		st := value.DeepCopyObject(status)
		st["phase"] = "Pending"
		setConditions(st, []any{condition("PodScheduled", "False", reason, msg, status, now)})
		if d.NominatedNode != "" {
			st["nominatedNodeName"] = d.NominatedNode
		}
		if value.Equal(st, status) {
			return res, k.emit(ctx, c, evs)
		}
		upd := shallowCopy(pod)
		upd["status"] = st
		if _, err := c.UpdateStatus(ctx, upd); err != nil && !cluster.IsConflict(err) && !cluster.IsNotFound(err) {
			return res, fmt.Errorf("kubelet: update status of pod %s/%s: %w", ns, name, err)
		}
		res.changed = true
		if reason == "Unschedulable" {
			evs = append(evs, failedSchedulingEvent(pod, msg, now))
		}
		return res, k.emit(ctx, c, evs)
	}
	target := d.Node
	if len(d.VolumeBindings) > 0 {
		wrote, ok, err := bindVolumes(ctx, c, d.VolumeBindings, target)
		if err != nil {
			return res, fmt.Errorf("kubelet: bind volumes of pod %s/%s: %w", ns, name, err)
		}
		res.changed = wrote
		if !ok {
			// Changed meanwhile: the next round sees it.
			res.changed = true
			return res, nil
		}
		if scheduler.Provisions(d.VolumeBindings) {
			// A claim waits for its volume: the pod is bound once the
			// claim is (tried again when it changes); meanwhile it is
			// nominated to the node, as kube-scheduler nominates a pod
			// whose binding waits.
			res.unschedulable = true
			if str(status, "nominatedNodeName") == target {
				return res, nil
			}
			st := value.DeepCopyObject(status)
			st["nominatedNodeName"] = target
			upd := shallowCopy(pod)
			upd["status"] = st
			if _, err := c.UpdateStatus(ctx, upd); err != nil && !cluster.IsConflict(err) && !cluster.IsNotFound(err) {
				return res, fmt.Errorf("kubelet: update status of pod %s/%s: %w", ns, name, err)
			}
			res.changed = true
			return res, nil
		}
	}
	binding := map[string]any{
		"apiVersion": "v1", "kind": "Binding",
		"metadata": map[string]any{"name": name, "namespace": ns, "uid": str(md, "uid")},
		"target":   map[string]any{"apiVersion": "v1", "kind": "Node", "name": target},
	}
	if _, err := c.Create(ctx, binding); err != nil {
		if cluster.IsConflict(err) || cluster.IsNotFound(err) {
			res.changed = true
			return res, nil
		}
		return res, fmt.Errorf("kubelet: bind pod %s/%s to %s: %w", ns, name, target, err)
	}
	bound := shallowCopy(pod)
	bspec := shallowCopy(spec)
	bspec["nodeName"] = target
	bound["spec"] = bspec
	snap.SetPod(bound)
	if _, ok := k.byName[target]; !ok {
		// A Node no kubelet here runs: the pod waits there for ever.
		res.changed = true
		return res, k.emit(ctx, c, []event.Event{scheduledEvent(pod, target, now)})
	}
	// The first status does not depend on what binding changed (the
	// node name, the PodScheduled condition, both rewritten here), and a
	// kubelet's status writes are unconditional, as its status patches:
	// no need to read the bound pod back.
	st, next, _, ctrs := k.statusAt(bound, now, now, ips)
	res.refs = waitsForRefs(st)
	// Placed: the nomination of an earlier preemption is over.
	delete(st, "nominatedNodeName")
	upd := shallowCopy(bound)
	upmd := shallowCopy(md)
	delete(upmd, "resourceVersion")
	upd["metadata"] = upmd
	upd["status"] = st
	if _, err := c.UpdateStatus(ctx, upd); err != nil && !cluster.IsConflict(err) && !cluster.IsNotFound(err) {
		return res, fmt.Errorf("kubelet: update status of pod %s/%s: %w", ns, name, err)
	}
	res.changed, res.next = true, next
	evs := append([]event.Event{scheduledEvent(pod, target, now)}, podEvents(bound, nil, ctrs, now)...)
	return res, k.emit(ctx, c, evs)
}

// lookups lets the scheduler read what it reads beside nodes and pods,
// when it needs it: the labels of namespaces (pod affinity terms'
// namespaceSelector), the claims, volumes and classes (VolumeBinding),
// the PodDisruptionBudgets (preemption) and the Services and controllers
// (the default topology spreading).
func (k *Kubelet) lookups(ctx context.Context, c cluster.Interface, snap *scheduler.Cluster) {
	snap.SetNamespaceLabels(func(ns string) map[string]string {
		o, err := controller.GetShared(ctx, c, nsGVK, "", ns)
		if err != nil {
			return nil
		}
		labels := map[string]string{}
		for k, v := range mapOf(mapOf(o, "metadata"), "labels") {
			if s, ok := v.(string); ok {
				labels[k] = s
			}
		}
		return labels
	})
	if !k.profile.SkipVolumeBinding {
		snap.SetVolumes(volumeLookups(ctx, c))
	}
	snap.SetDisruptionBudgets(func() []map[string]any {
		if _, err := c.Mapper().ResourceFor(pdbGVK); err != nil {
			return nil
		}
		l, err := c.List(ctx, pdbGVK)
		if err != nil {
			return nil
		}
		out := make([]map[string]any, len(l.Items))
		copy(out, l.Items)
		return out
	})
	snap.SetServices(func(ns string) []map[string]any {
		if _, err := c.Mapper().ResourceFor(svcGVK); err != nil {
			return nil
		}
		l, err := c.List(ctx, svcGVK, cluster.InNamespace(ns))
		if err != nil {
			return nil
		}
		out := make([]map[string]any, len(l.Items))
		copy(out, l.Items)
		return out
	})
	snap.SetControllers(func(kind, ns, name string) map[string]any {
		gvk, ok := spreadOwnerGVKs[kind]
		if !ok {
			return nil
		}
		return lookup(ctx, c, gvk, ns, name)
	})
}

// registeredLabels are the labels the kubelet registers konverge-node
// with (another node has its own name as kubernetes.io/hostname).
var registeredLabels = map[string]string{
	"kubernetes.io/hostname": NodeName, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
	"beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": "amd64",
}

// statusAt computes the status of a pod accepted at start, at now, with
// the next time it changes; gone reports a terminating pod whose
// containers have all stopped.
func (k *Kubelet) statusAt(pod map[string]any, start, now time.Time, ips *ipAllocator) (st map[string]any, next time.Time, gone bool, ctrs []ctrInfo) {
	md, spec := mapOf(pod, "metadata"), mapOf(pod, "spec")
	old := mapOf(pod, "status")
	// Every field statusAt sets is new; the others are kept as they are.
	st = maps.Clone(old)
	if st == nil {
		st = map[string]any{}
	}
	policy := str(spec, "restartPolicy")
	if policy == "" {
		policy = "Always"
	}
	// A terminating pod is frozen at the start of its termination; its
	// containers stop and it goes once they all have.
	t := now
	deleting := false
	var killAt, deadline time.Time
	if dts := str(md, "deletionTimestamp"); dts != "" {
		if dt, err := time.Parse(time.RFC3339, dts); err == nil {
			grace, _ := md["deletionGracePeriodSeconds"].(int64)
			deadline = dt
			killAt = dt.Add(-seconds(grace))
			if killAt.Before(start) {
				killAt = start
			}
			deleting = true
			t = minTime(now, killAt)
		}
	}
	next = never
	note := func(x time.Time) {
		if x.After(now) {
			next = minTime(next, x)
		}
	}

	inits := listOf(spec, "initContainers")
	specCtrs := listOf(spec, "containers")
	initStatuses := make([]any, 0, len(inits))
	var pendingInit []string
	initFailed := false
	// The sandbox is made once the volumes are mounted: at start, or
	// when the ConfigMaps and Secrets the volumes name appeared.
	sandbox := start
	if vrefs := k.refs.volumeRefs(str(md, "namespace"), spec); len(vrefs) > 0 {
		if a := lastResolved(vrefs); a.After(start) && !sandboxBefore(old, a) {
			sandbox = mountRetryAfter(start, a)
			if now.Before(sandbox) {
				return k.mountWaitStatus(pod, st, old, start, now, sandbox, firstError(vrefs, now), deleting)
			}
		}
	}
	creating := sandbox
	initialized := true
	// stops is how long the running containers take to stop; Never: they
	// ignore SIGTERM.
	stops := time.Duration(0)
	running := func(s ctrState, b behaviour) {
		switch {
		case !s.running || stops == time.Duration(Never):
		case b.stop == time.Duration(Never) || b.stop > stops:
			stops = b.stop
		}
	}
	// unready lists the containers that keep the pod from being ready:
	// the restartable init containers (sidecars) first, as the kubelet
	// checks them.
	var unready []string
	for _, x := range inits {
		cm, _ := x.(map[string]any)
		sidecar := str(cm, "restartPolicy") == "Always"
		if !initialized {
			initStatuses = append(initStatuses, k.containerStatus(pod, cm, ctrState{waitingReason: "PodInitializing"}, false, old, "initContainerStatuses"))
			pendingInit = append(pendingInit, str(cm, "name"))
			if sidecar {
				unready = append(unready, str(cm, "name"))
			}
			continue
		}
		in := k.input(cm, policy, true)
		k.gateEnv(in, pod, cm, old, "initContainerStatuses")
		s := in.at(creating, t)
		note(s.next)
		running(s, in.b)
		if sidecar && deleting {
			s.ready = false
		}
		if sidecar && !s.ready {
			unready = append(unready, str(cm, "name"))
		}
		ctrs = append(ctrs, ctrInfo{cm: cm, init: true, in: in, state: s})
		initStatuses = append(initStatuses, k.containerStatus(pod, cm, s, true, old, "initContainerStatuses"))
		switch {
		case s.failed:
			initFailed, initialized = true, false
			pendingInit = append(pendingInit, str(cm, "name"))
		case s.done.After(t):
			initialized = false
			pendingInit = append(pendingInit, str(cm, "name"))
		default:
			creating = s.done
		}
	}
	var ctrStatuses []any
	var counts struct{ waiting, running, stopped, succeeded int }
	for _, x := range specCtrs {
		cm, _ := x.(map[string]any)
		var s ctrState
		var b behaviour
		var in *ctrInput
		if !initialized {
			s = ctrState{waitingReason: "PodInitializing"}
		} else {
			in = k.input(cm, policy, false)
			k.gateEnv(in, pod, cm, old, "containerStatuses")
			b = in.b
			s = in.at(creating, t)
			note(s.next)
			running(s, b)
		}
		ctrs = append(ctrs, ctrInfo{cm: cm, in: in, state: s})
		if deleting {
			s.ready = false
		}
		if !s.ready {
			unready = append(unready, str(cm, "name"))
		}
		switch {
		case s.running:
			counts.running++
		case s.terminated != nil:
			counts.stopped++
			if s.terminated.code == 0 {
				counts.succeeded++
			}
		case s.last != nil:
			counts.stopped++
		default:
			counts.waiting++
		}
		ctrStatuses = append(ctrStatuses, k.containerStatus(pod, cm, s, false, old, "containerStatuses"))
	}

	// Phase, as the kubelet's getPhase.
	phase := "Pending"
	switch {
	case initFailed && policy == "Never":
		phase = "Failed"
	case !initialized || counts.waiting > 0:
		phase = "Pending"
	case counts.running > 0:
		phase = "Running"
	case counts.stopped > 0:
		switch {
		case policy == "Always":
			phase = "Running"
		case counts.stopped == counts.succeeded:
			phase = "Succeeded"
		case policy == "Never":
			phase = "Failed"
		default:
			phase = "Running"
		}
	}
	if p := str(old, "phase"); p == "Succeeded" || p == "Failed" {
		phase = p // terminal phases are final
	}

	if deleting {
		end := killAt.Add(stops)
		if stops == time.Duration(Never) || end.After(deadline) {
			end = deadline
		}
		if phase == "Succeeded" || phase == "Failed" || !now.Before(end) {
			if len(listOf(md, "finalizers")) == 0 {
				return nil, never, true, ctrs
			}
			// A finalizer holds the pod: its containers have stopped and
			// the kubelet writes the pod's terminal phase before it
			// removes it (as it does since v1.27), which the object keeps
			// until the finalizer goes.
			gone = true
			if stopped := k.stopContainers(pod, ctrs, initStatuses, ctrStatuses, old, killAt, deadline); phase != "Succeeded" && phase != "Failed" {
				phase = stopped
			}
			next = never
		}
		if !gone {
			next = minTime(never, end)
			if !end.After(now) {
				next = never
			}
		}
	}

	st["phase"] = phase
	hostIP := k.byName[str(spec, "nodeName")].hostIP
	if hostIP == "" {
		hostIP = HostIP
	}
	st["hostIP"] = hostIP
	st["hostIPs"] = []any{map[string]any{"ip": hostIP}}
	ip := str(old, "podIP")
	if b, _ := spec["hostNetwork"].(bool); b {
		ip = hostIP
	} else if ip == "" {
		ip = ips.next()
	}
	if ip != "" {
		st["podIP"] = ip
		st["podIPs"] = []any{map[string]any{"ip": ip}}
	} else {
		delete(st, "podIP")
		delete(st, "podIPs")
	}
	st["startTime"] = start.UTC().Format(time.RFC3339)
	if len(inits) > 0 {
		st["initContainerStatuses"] = initStatuses
	} else {
		delete(st, "initContainerStatuses")
	}
	st["containerStatuses"] = ctrStatuses

	// Conditions, in the kubelet's order.
	ts := func(x time.Time) string { return x.UTC().Format(time.RFC3339) }
	conds := []any{}
	readyToStart := condition("PodReadyToStartContainers", "True", "", "", old, now)
	readyToStart["lastTransitionTime"] = ts(sandbox)
	conds = append(conds, readyToStart)
	if initialized {
		c := condition("Initialized", "True", "", "", old, now)
		if len(inits) > 0 {
			c["lastTransitionTime"] = ts(creating)
		} else {
			c["lastTransitionTime"] = ts(start)
		}
		conds = append(conds, c)
	} else {
		conds = append(conds, condition("Initialized", "False", "ContainersNotInitialized",
			"containers with incomplete status: ["+strings.Join(pendingInit, " ")+"]", old, now))
	}
	terminal := phase == "Succeeded" || phase == "Failed"
	containersReady := len(unready) == 0
	var cr, ready map[string]any
	switch {
	case containersReady:
		cr = condition("ContainersReady", "True", "", "", old, now)
	case terminal:
		cr = condition("ContainersReady", "False", "PodCompleted", "", old, now)
	default:
		cr = condition("ContainersReady", "False", "ContainersNotReady", "containers with unready status: ["+strings.Join(unready, " ")+"]", old, now)
	}
	var gateMsgs []string
	for _, g := range listOf(spec, "readinessGates") {
		gm, _ := g.(map[string]any)
		typ := str(gm, "conditionType")
		c := findCondition(old, typ)
		if c == nil {
			gateMsgs = append(gateMsgs, fmt.Sprintf("corresponding condition of pod readiness gate %q does not exist.", typ))
		} else if str(c, "status") != "True" {
			gateMsgs = append(gateMsgs, fmt.Sprintf("the status of pod readiness gate %q is not \"True\", but %s", typ, str(c, "status")))
		}
	}
	switch {
	case terminal:
		ready = condition("Ready", "False", "PodCompleted", "", old, now)
	case !containersReady:
		ready = condition("Ready", "False", "ContainersNotReady", "containers with unready status: ["+strings.Join(unready, " ")+"]", old, now)
	case len(gateMsgs) > 0:
		ready = condition("Ready", "False", "ReadinessGatesNotReady", strings.Join(gateMsgs, ", "), old, now)
	default:
		ready = condition("Ready", "True", "", "", old, now)
	}
	conds = append(conds, ready, cr)
	sched := condition("PodScheduled", "True", "", "", old, now)
	sched["lastTransitionTime"] = ts(start)
	conds = append(conds, sched)
	setConditions(st, conds)
	return st, next, gone, ctrs
}

// stopContainers sets the running containers of a pod whose deletion
// ends as terminated (in ctrs, and their statuses in initStatuses and
// ctrStatuses): a container that stopped on SIGTERM within the grace
// period (its profile's stop) exited 0, Completed; one still running at
// the deadline was killed, 137, Error. It returns the pod's terminal
// phase, as the kubelet's getPhase for a terminal pod: Succeeded when
// every container succeeded, else Failed.
func (k *Kubelet) stopContainers(pod map[string]any, ctrs []ctrInfo, initStatuses, ctrStatuses []any, old map[string]any, killAt, deadline time.Time) string {
	succeeded, total := 0, 0
	for i := range ctrs {
		c := &ctrs[i]
		s := &c.state
		if s.running {
			t := &term{code: 0, reason: "Completed", startedAt: s.startedAt, finishedAt: killAt}
			if c.in != nil {
				stop := c.in.b.stop
				if stop == time.Duration(Never) || killAt.Add(stop).After(deadline) {
					t.code, t.reason, t.finishedAt = 137, "Error", deadline
				} else {
					t.finishedAt = killAt.Add(stop)
				}
			}
			s.running, s.ready, s.started, s.terminated = false, false, false, t
			list, field := ctrStatuses, "containerStatuses"
			if c.init {
				list, field = initStatuses, "initContainerStatuses"
			}
			for j, x := range list {
				if xm, _ := x.(map[string]any); str(xm, "name") == str(c.cm, "name") {
					list[j] = k.containerStatus(pod, c.cm, *s, c.init, old, field)
				}
			}
		}
		if c.init {
			continue
		}
		total++
		if s.terminated != nil && s.terminated.code == 0 {
			succeeded++
		}
	}
	if total > 0 && succeeded == total {
		return "Succeeded"
	}
	return "Failed"
}

// input collects what decides a container's timeline.
func (k *Kubelet) input(cm map[string]any, policy string, init bool) *ctrInput {
	sidecar := init && str(cm, "restartPolicy") == "Always"
	var command []string
	for _, f := range []string{"command", "args"} {
		for _, a := range listOf(cm, f) {
			if s, ok := a.(string); ok {
				command = append(command, s)
			}
		}
	}
	in := &ctrInput{
		name:  str(cm, "name"),
		image: str(cm, "image"),
		b:     k.behaviourOf(str(cm, "image"), str(cm, "name"), command, init && !sidecar),
	}
	switch {
	case sidecar || (!init && policy == "Always"):
		in.restartOnSuccess, in.restartFail, in.sidecar = true, true, sidecar
	case policy == "Never":
	default: // OnFailure, or an init container under Always
		in.restartFail = true
	}
	if !init || sidecar {
		in.readiness = probeOf(cm, "readinessProbe")
		in.liveness = probeOf(cm, "livenessProbe")
		in.startup = probeOf(cm, "startupProbe")
	}
	return in
}

// behaviourOf resolves the profile for a container, once per distinct
// container.
func (k *Kubelet) behaviourOf(image, name string, command []string, init bool) behaviour {
	key := behaviourKey{image: image, name: name, command: strings.Join(command, "\x00"), init: init}
	k.mu.Lock()
	defer k.mu.Unlock()
	if b, ok := k.behaviours[key]; ok {
		return b
	}
	if k.behaviours == nil || len(k.behaviours) > 10000 {
		k.behaviours = map[behaviourKey]behaviour{}
	}
	b := k.profile.behaviourOf(image, name, command, init)
	k.behaviours[key] = b
	return b
}

func probeOf(cm map[string]any, field string) *probeSpec {
	p, _ := cm[field].(map[string]any)
	if p == nil {
		return nil
	}
	sec := func(f string, def int64) time.Duration {
		if v, ok := p[f].(int64); ok && v > 0 {
			return seconds(v)
		}
		return seconds(def)
	}
	num := func(f string, def int64) int64 {
		if v, ok := p[f].(int64); ok && v > 0 {
			return v
		}
		return def
	}
	return &probeSpec{
		delay: sec("initialDelaySeconds", 0), period: sec("periodSeconds", 10), timeout: sec("timeoutSeconds", 1),
		success: num("successThreshold", 1), failure: num("failureThreshold", 3),
	}
}

// containerStatus writes one container's status.
func (k *Kubelet) containerStatus(pod, cm map[string]any, s ctrState, init bool, old map[string]any, field string) map[string]any {
	name, image := str(cm, "name"), str(cm, "image")
	out := map[string]any{
		"name": name, "image": image, "imageID": "",
		"ready": s.ready, "restartCount": s.restarts,
		"started": s.running && s.started,
	}
	if init && str(cm, "restartPolicy") != "Always" {
		out["started"] = s.running
	}
	if s.ran {
		out["imageID"] = fullImage(image) + "@sha256:" + digest(NormalizeImage(image))
	}
	uid := str(mapOf(pod, "metadata"), "uid")
	if s.ran {
		out["containerID"] = "containerd://" + digest(uid+"/"+name+"/"+strconv.FormatInt(s.restarts, 10))
	}
	ts := func(x time.Time) string { return x.UTC().Format(time.RFC3339) }
	termOf := func(t *term) map[string]any {
		return map[string]any{"exitCode": t.code, "reason": t.reason, "startedAt": ts(t.startedAt), "finishedAt": ts(t.finishedAt),
			"containerID": out["containerID"]}
	}
	state := map[string]any{}
	switch {
	case s.running:
		state["running"] = map[string]any{"startedAt": ts(s.startedAt)}
	case s.terminated != nil:
		state["terminated"] = termOf(s.terminated)
	default:
		w := map[string]any{"reason": s.waitingReason}
		if s.waitingMessage != "" {
			msg := s.waitingMessage
			if s.waitingReason == "CrashLoopBackOff" {
				md := mapOf(pod, "metadata")
				msg += " pod=" + str(md, "name") + "_" + str(md, "namespace") + "(" + uid + ")"
			}
			w["message"] = msg
		}
		state["waiting"] = w
	}
	out["state"] = state
	last := map[string]any{}
	if s.last != nil {
		lt := termOf(s.last)
		lt["containerID"] = "containerd://" + digest(uid+"/"+name+"/"+strconv.FormatInt(s.restarts-1, 10))
		last["terminated"] = lt
	}
	out["lastState"] = last
	return out
}

func digest(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// condition builds a pod condition, keeping the old transition time when
// its status did not change.
func condition(typ, status, reason, msg string, old map[string]any, now time.Time) map[string]any {
	c := map[string]any{"type": typ, "status": status, "lastProbeTime": nil}
	if reason != "" {
		c["reason"] = reason
	}
	if msg != "" {
		c["message"] = msg
	}
	c["lastTransitionTime"] = now.UTC().Format(time.RFC3339)
	if o := findCondition(old, typ); o != nil && str(o, "status") == status {
		if lt := str(o, "lastTransitionTime"); lt != "" {
			c["lastTransitionTime"] = lt
		}
	}
	return c
}

func findCondition(status map[string]any, typ string) map[string]any {
	for _, x := range listOf(status, "conditions") {
		if c, _ := x.(map[string]any); str(c, "type") == typ {
			return c
		}
	}
	return nil
}

// ownConditions are the condition types the kubelet writes; others (those
// of readiness gates) are kept as they are.
var ownConditions = map[string]bool{"PodReadyToStartContainers": true, "Initialized": true, "Ready": true, "ContainersReady": true, "PodScheduled": true}

func setConditions(st map[string]any, conds []any) {
	own := map[string]bool{}
	for _, c := range conds {
		own[str(c.(map[string]any), "type")] = true
	}
	for _, x := range listOf(st, "conditions") {
		if c, _ := x.(map[string]any); c != nil && !own[str(c, "type")] && !ownConditions[str(c, "type")] {
			conds = append(conds, c)
		}
	}
	st["conditions"] = conds
}

// ipAllocator hands out the pod addresses no pod holds, lowest first.
type ipAllocator struct {
	pods []cluster.Object
	used map[string]bool // built by the first next
	n    int
	// memo, when set, holds the addresses of the pods instead of pods;
	// first is the counter of the first address handed out.
	memo  *memo
	first int
}

func newIPAllocator(pods []cluster.Object) *ipAllocator {
	return &ipAllocator{pods: pods, n: 1}
}

func (a *ipAllocator) next() string {
	if a.used == nil {
		a.used = map[string]bool{}
		if a.memo != nil {
			// Every address below low is taken.
			a.n = max(a.n, a.memo.low-1)
		}
		for _, p := range a.pods {
			if ip := str(mapOf(p, "status"), "podIP"); ip != "" {
				a.used[ip] = true
			}
		}
	}
	for {
		a.n++
		if a.n >= podIPs {
			// Every address is taken: the pod runs without one.
			a.n = podIPs
			return ""
		}
		if a.n%256 == 0 || a.n%256 == 255 {
			continue
		}
		ip := podIP(a.n)
		if !a.used[ip] && (a.memo == nil || a.memo.used[ip] == 0) {
			a.used[ip] = true
			if a.first == 0 {
				a.first = a.n
			}
			return ip
		}
	}
}

func mapOf(m map[string]any, f string) map[string]any {
	v, _ := m[f].(map[string]any)
	return v
}

func listOf(m map[string]any, f string) []any {
	v, _ := m[f].([]any)
	return v
}

func str(m map[string]any, f string) string {
	s, _ := m[f].(string)
	return s
}

func shallowCopy(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func labelsAny(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
