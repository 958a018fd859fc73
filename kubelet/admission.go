package kubelet

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/controller/event"
	"github.com/konverge/konverge/nodefit"
	"github.com/konverge/konverge/scheduler"
	"github.com/konverge/konverge/value"
)

// The kubelet's own admission (kubelet v1.37, lifecycle/predicate.go and
// the handlers before it): a pod that reaches a node without the
// scheduler's say (spec.nodeName in the manifest, a Binding made by hand)
// is checked against what the pods the node already admitted hold. The
// first check that fails rejects it: the pod goes to phase Failed with the
// check's reason and "Pod was rejected: <message>", and the kubelet
// records a Warning Event with that reason and message. A rejected pod
// never runs; its controller (a ReplicaSet) replaces it, as for any
// failed pod.
//
// The checks, in the kubelet's order: the pod's kubernetes.io/os label
// and spec.os against the node's (linux); then the general predicates:
// every resource the node lacks (pods, cpu, memory, ephemeral-storage,
// then the extended resources the node has, by name; the first one
// names the reason: OutOfpods, OutOfcpu, OutOfmemory, ...), the
// required node affinity and nodeSelector (NodeAffinity), the host ports
// (NodePorts) and the NoExecute taints the pod does not tolerate
// (TaintToleration). Not simulated: critical pods evicting others to
// make room, sysctls, AppArmor, device plugins, node shutdown.

// Admission reasons of the kubelet.
const (
	ReasonOSSelector  = "PodOSSelectorNodeLabelDoesNotMatch"
	ReasonOSField     = "PodOSNotSupported"
	ReasonOutOfPrefix = "OutOf"
)

// rejectedPrefix starts the status message of a pod the kubelet rejected.
const rejectedPrefix = "Pod was rejected: "

// nodeRoom is what the pods a node admitted hold of it, and what it
// offers.
type nodeRoom struct {
	obj         map[string]any // the Node
	alloc, used nodefit.Resources
	allowed     int64 // pods
	held        map[podKey]heldPod
}

// heldPod is what one admitted pod holds.
type heldPod struct {
	amt   nodefit.Resources
	ports []portUse
}

// portUse is a host port a container holds.
type portUse struct {
	ip, protocol string
	port         int64
}

// podPortUses are the host ports a pod's containers (and sidecars) hold.
func podPortUses(spec map[string]any) []portUse {
	var out []portUse
	for _, field := range []string{"initContainers", "containers"} {
		for _, x := range listOf(spec, field) {
			c, _ := x.(map[string]any)
			if field == "initContainers" && str(c, "restartPolicy") != "Always" {
				continue
			}
			for _, y := range listOf(c, "ports") {
				p, _ := y.(map[string]any)
				hp, _ := p["hostPort"].(int64)
				if hp <= 0 {
					continue
				}
				u := portUse{ip: str(p, "hostIP"), protocol: str(p, "protocol"), port: hp}
				if u.ip == "" {
					u.ip = "0.0.0.0"
				}
				if u.protocol == "" {
					u.protocol = "TCP"
				}
				out = append(out, u)
			}
		}
	}
	return out
}

// newNodeRoom is a node with nothing admitted yet.
func newNodeRoom(obj map[string]any) *nodeRoom {
	st := mapOf(obj, "status")
	alloc := mapOf(st, "allocatable")
	if alloc == nil {
		alloc = mapOf(st, "capacity")
	}
	r := &nodeRoom{obj: obj, held: map[podKey]heldPod{}}
	r.alloc, r.allowed = nodefit.ParseResources(alloc)
	return r
}

// hold counts an admitted pod (again: what it held before is replaced).
func (r *nodeRoom) hold(key podKey, pod map[string]any) {
	r.release(key)
	spec := mapOf(pod, "spec")
	amt, _, _ := nodefit.PodRequests(spec)
	h := heldPod{amt: amt, ports: podPortUses(spec)}
	r.held[key] = h
	r.used.Add(h.amt)
}

// release forgets what a pod held.
func (r *nodeRoom) release(key podKey) {
	h, ok := r.held[key]
	if !ok {
		return
	}
	delete(r.held, key)
	r.used.Sub(h.amt)
}

// holds reports a pod that holds room on its node: admitted (it has a
// startTime) and not finished.
func holds(pod map[string]any) bool {
	st := mapOf(pod, "status")
	switch str(st, "phase") {
	case "Succeeded", "Failed":
		return false
	}
	return str(st, "startTime") != ""
}

func keyOf(pod map[string]any) podKey {
	md := mapOf(pod, "metadata")
	return podKey{str(md, "namespace"), str(md, "name")}
}

// needsAdmission reports a pod bound to one of the kubelet's nodes that
// its kubelet has not admitted (or rejected) yet: no startTime, not
// finished, not being deleted.
func (k *Kubelet) needsAdmission(pod map[string]any) bool {
	node := str(mapOf(pod, "spec"), "nodeName")
	if node == "" {
		return false
	}
	if _, ok := k.byName[node]; !ok {
		return false
	}
	st := mapOf(pod, "status")
	switch str(st, "phase") {
	case "Succeeded", "Failed":
		return false
	}
	return str(st, "startTime") == "" && str(mapOf(pod, "metadata"), "deletionTimestamp") == ""
}

// rejected reports a pod the kubelet refused: Failed before any of its
// containers was created.
func rejected(pod map[string]any) bool {
	st := mapOf(pod, "status")
	return str(st, "phase") == "Failed" && strings.HasPrefix(str(st, "message"), rejectedPrefix) && len(listOf(st, "containerStatuses")) == 0
}

// admitCheck runs the kubelet's checks for pod on r: "" when it is
// admitted, else the reason and message (without rejectedPrefix).
func admitCheck(pod map[string]any, r *nodeRoom) (reason, message string) {
	md, spec := mapOf(pod, "metadata"), mapOf(pod, "spec")
	// The kubelet runs on linux: its node's os label is linux whatever
	// the Node says.
	if os, ok := mapOf(md, "labels")["kubernetes.io/os"].(string); ok && os != "linux" {
		return ReasonOSSelector, "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label"
	}
	if o := mapOf(spec, "os"); o != nil && str(o, "name") != "linux" {
		return ReasonOSField, "Failed to admit pod as the OS field doesn't match node OS"
	}
	// The general predicates; the first failure names the rejection.
	if reason, message = r.fits(spec); reason != "" {
		return reason, message
	}
	if !nodeAffine(spec, r.obj) {
		return "NodeAffinity", "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector"
	}
	if r.portsTaken(podPortUses(spec)) {
		return "NodePorts", "Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports"
	}
	if untoleratedNoExecute(spec, r.obj) {
		return "TaintToleration", "Predicate TaintToleration failed: node(s) had taints that the pod didn't tolerate"
	}
	return "", ""
}

// fits is the resource check: the first resource the node lacks.
func (r *nodeRoom) fits(spec map[string]any) (reason, message string) {
	short := func(name string, requested, used, capacity int64) (string, string) {
		return ReasonOutOfPrefix + name, fmt.Sprintf("Node didn't have enough resource: %s, requested: %d, used: %d, capacity: %d",
			name, requested, used, capacity)
	}
	if count := int64(len(r.held)); count+1 > r.allowed {
		return short("pods", 1, count, r.allowed)
	}
	want, _, _ := nodefit.PodRequests(spec)
	// Extended resources the node does not know are left to others
	// (cluster-level resources): the kubelet does not check them.
	for name := range want.Scalar {
		if _, ok := r.alloc.Scalar[name]; !ok && nodefit.Extended(name) {
			delete(want.Scalar, name)
		}
	}
	if want.MilliCPU > 0 && want.MilliCPU > r.alloc.MilliCPU-r.used.MilliCPU {
		return short("cpu", want.MilliCPU, r.used.MilliCPU, r.alloc.MilliCPU)
	}
	if want.Memory > 0 && want.Memory > r.alloc.Memory-r.used.Memory {
		return short("memory", want.Memory, r.used.Memory, r.alloc.Memory)
	}
	if want.EphemeralStorage > 0 && want.EphemeralStorage > r.alloc.EphemeralStorage-r.used.EphemeralStorage {
		return short("ephemeral-storage", want.EphemeralStorage, r.used.EphemeralStorage, r.alloc.EphemeralStorage)
	}
	names := make([]string, 0, len(want.Scalar))
	for name := range want.Scalar {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if v := want.Scalar[name]; v > 0 && v > r.alloc.Scalar[name]-r.used.Scalar[name] {
			return short(name, v, r.used.Scalar[name], r.alloc.Scalar[name])
		}
	}
	return "", ""
}

// portsTaken reports a wanted host port that an admitted pod holds (the
// same port and protocol on the same address, or either on 0.0.0.0).
func (r *nodeRoom) portsTaken(want []portUse) bool {
	if len(want) == 0 {
		return false
	}
	for _, h := range r.held {
		for _, u := range h.ports {
			for _, w := range want {
				if u.port == w.port && u.protocol == w.protocol && (u.ip == w.ip || u.ip == "0.0.0.0" || w.ip == "0.0.0.0") {
					return true
				}
			}
		}
	}
	return false
}

// nodeAffine reports whether the node matches the pod's nodeSelector and
// its required node affinity (one of the terms).
func nodeAffine(spec, node map[string]any) bool {
	md := mapOf(node, "metadata")
	labels := map[string]string{}
	for k, v := range mapOf(md, "labels") {
		if s, ok := v.(string); ok {
			labels[k] = s
		}
	}
	for k, v := range mapOf(spec, "nodeSelector") {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	req := mapOf(mapOf(mapOf(spec, "affinity"), "nodeAffinity"), "requiredDuringSchedulingIgnoredDuringExecution")
	if req == nil {
		return true
	}
	for _, x := range listOf(req, "nodeSelectorTerms") {
		t, _ := x.(map[string]any)
		if nodefit.TermMatches(t, labels, str(md, "name")) {
			return true
		}
	}
	return false
}

// untoleratedNoExecute reports a NoExecute taint of the node that no
// toleration of the pod tolerates (the kubelet looks at no other effect).
func untoleratedNoExecute(spec, node map[string]any) bool {
	for _, x := range listOf(mapOf(node, "spec"), "taints") {
		taint, _ := x.(map[string]any)
		if str(taint, "effect") == "NoExecute" && !nodefit.Tolerated(listOf(spec, "tolerations"), taint) {
			return true
		}
	}
	return false
}

// admissionRooms is what the pods the kubelet admitted hold on each of
// its nodes (from pods), for the Node objects given (by name).
func (k *Kubelet) admissionRooms(nodes map[string]map[string]any, pods []cluster.Object) map[string]*nodeRoom {
	rooms := map[string]*nodeRoom{}
	for name, n := range k.byName {
		obj := nodes[name]
		if obj == nil {
			obj = n.object("")
		}
		rooms[name] = newNodeRoom(obj)
	}
	for _, pod := range pods {
		if r := rooms[str(mapOf(pod, "spec"), "nodeName")]; r != nil && holds(pod) {
			r.hold(keyOf(pod), pod)
		}
	}
	return rooms
}

// admit decides on a pod that needs admission: admitted, it is counted
// on its node and ok is true (its status is then written as any pod's);
// rejected, its Failed status and the Warning Event are written here.
func (k *Kubelet) admit(ctx context.Context, c cluster.Interface, pod map[string]any, rooms map[string]*nodeRoom, now time.Time) (ok bool, written map[string]any, err error) {
	node := str(mapOf(pod, "spec"), "nodeName")
	r := rooms[node]
	if r == nil {
		return true, nil, nil
	}
	reason, message := admitCheck(pod, r)
	if reason == "" {
		r.hold(keyOf(pod), pod)
		return true, nil, nil
	}
	md := mapOf(pod, "metadata")
	old := mapOf(pod, "status")
	st := map[string]any{
		"phase":     "Failed",
		"reason":    reason,
		"message":   rejectedPrefix + message,
		"startTime": now.UTC().Format(time.RFC3339),
	}
	for _, f := range []string{"qosClass", "observedGeneration"} {
		if v, ok := old[f]; ok {
			st[f] = v
		}
	}
	// The conditions the kubelet owns (PodScheduled among them) go: the
	// rejected status has none of its own; the others stay.
	var conds []any
	for _, x := range listOf(old, "conditions") {
		if cm, _ := x.(map[string]any); cm != nil && !ownConditions[str(cm, "type")] {
			conds = append(conds, value.DeepCopy(cm))
		}
	}
	if len(conds) > 0 {
		st["conditions"] = conds
	}
	upd := shallowCopy(pod)
	upd["status"] = st
	if _, err := c.UpdateStatus(ctx, upd); err != nil {
		if cluster.IsConflict(err) || cluster.IsNotFound(err) {
			return false, nil, nil
		}
		return false, nil, fmt.Errorf("kubelet: reject pod %s/%s: %w", str(md, "namespace"), str(md, "name"), err)
	}
	ev := event.Event{Involved: pod, Type: event.Warning, Reason: reason, Message: message,
		Component: Component, Host: node, Time: now}
	return false, upd, k.emit(ctx, c, []event.Event{ev})
}

// admitNew admits or rejects, oldest first, the pods of idx (indexes
// into pods, each needing admission), on rooms; it returns the indexes
// of those it rejected (their status written) and frees them in the
// scheduler's view.
func (k *Kubelet) admitNew(ctx context.Context, c cluster.Interface, pods []cluster.Object, idx []int, rooms map[string]*nodeRoom, snap *scheduler.Cluster, now time.Time) (map[int]bool, error) {
	sort.SliceStable(idx, func(a, b int) bool {
		ca := str(mapOf(pods[idx[a]], "metadata"), "creationTimestamp")
		cb := str(mapOf(pods[idx[b]], "metadata"), "creationTimestamp")
		return ca < cb
	})
	refused := map[int]bool{}
	for _, i := range idx {
		ok, written, err := k.admit(ctx, c, pods[i], rooms, now)
		if err != nil {
			return refused, err
		}
		if !ok {
			refused[i] = true
			if written != nil && snap != nil {
				snap.SetPod(written)
			}
		}
	}
	return refused, nil
}

// roomsFor builds the admission view of the nodes for a full sync of
// pods, when one of them needs admission (nil otherwise: no need).
func (k *Kubelet) roomsFor(ctx context.Context, c cluster.Interface, pods []cluster.Object) (map[string]*nodeRoom, []int, error) {
	var idx []int
	for i, p := range pods {
		if k.needsAdmission(p) {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return nil, nil, nil
	}
	nodes := map[string]map[string]any{}
	if _, err := c.Mapper().ResourceFor(nodeGVK); err == nil {
		l, err := c.List(ctx, nodeGVK)
		if err != nil {
			return nil, nil, fmt.Errorf("kubelet: list nodes: %w", err)
		}
		for _, n := range l.Items {
			nodes[str(mapOf(n, "metadata"), "name")] = n
		}
	}
	return k.admissionRooms(nodes, pods), idx, nil
}
