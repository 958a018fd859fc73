package kubelet

import (
	"container/heap"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/controller"
	"github.com/konverge/konverge/scheduler"
)

var _ controller.Incremental = (*Kubelet)(nil)

// podKey is a pod's namespace and name.
type podKey struct{ namespace, name string }

func (a podKey) compare(b podKey) int {
	if c := strings.Compare(a.namespace, b.namespace); c != 0 {
		return c
	}
	return strings.Compare(a.name, b.name)
}

// memo is what the kubelet remembers of the pods between a Sync and the
// SyncChanged calls that follow it, rebuilt by every Sync from the pods
// alone: the address each pod holds, and when each has work due (the
// next of its last sync).
type memo struct {
	valid bool
	uid   map[podKey]string
	ip    map[podKey]string
	// used counts the holders of each address.
	used map[string]int
	// low is at most the counter of the lowest free pod address (see
	// ipAllocator).
	low int
	due map[podKey]time.Time
	// sched is the scheduler's view of the nodes and the pods on them;
	// pending are the pods it found no node for, retried when a pod
	// leaves a node (its requests, ports and spread are freed).
	sched   *scheduler.Cluster
	pending map[podKey]bool
	// rooms is the kubelet's admission view of its nodes (nil until a
	// pod needed admission), nodeOf the node of each pod holding room.
	rooms  map[string]*nodeRoom
	nodeOf map[podKey]string
	// refs are the pods waiting for a ConfigMap or Secret to appear.
	refs  map[podKey]bool
	freed bool
	// queue holds the due times, earliest first; an entry whose time is
	// not the pod's due time any more is dropped when it comes up.
	queue dueQueue
}

type dueEntry struct {
	at  time.Time
	key podKey
}

type dueQueue []dueEntry

func (q dueQueue) Len() int { return len(q) }
func (q dueQueue) Less(i, j int) bool {
	if c := q[i].at.Compare(q[j].at); c != 0 {
		return c < 0
	}
	return q[i].key.compare(q[j].key) < 0
}
func (q dueQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *dueQueue) Push(x any)   { *q = append(*q, x.(dueEntry)) }
func (q *dueQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

func newMemo() *memo {
	return &memo{valid: true, uid: map[podKey]string{}, ip: map[podKey]string{}, used: map[string]int{}, due: map[podKey]time.Time{}, low: 1, pending: map[podKey]bool{}}
}

// see records what a pod holds (nil: it is gone).
func (m *memo) see(key podKey, pod map[string]any) {
	if m.rooms != nil {
		if n, ok := m.nodeOf[key]; ok {
			m.rooms[n].release(key)
			delete(m.nodeOf, key)
		}
		if pod != nil && holds(pod) {
			n := str(mapOf(pod, "spec"), "nodeName")
			if r := m.rooms[n]; r != nil {
				r.hold(key, pod)
				m.nodeOf[key] = n
			}
		}
	}
	ip := ""
	if pod != nil {
		ip = str(mapOf(pod, "status"), "podIP")
		m.uid[key] = str(mapOf(pod, "metadata"), "uid")
		if m.sched != nil {
			before := m.sched.Holds(key.namespace, key.name)
			m.sched.SetPod(pod)
			if before && !m.sched.Holds(key.namespace, key.name) {
				m.freed = true
			}
		}
	} else {
		delete(m.uid, key)
		delete(m.due, key)
		delete(m.pending, key)
		delete(m.refs, key)
		if m.sched != nil && m.sched.Holds(key.namespace, key.name) {
			m.sched.RemovePod(key.namespace, key.name)
			m.freed = true
		}
	}
	old, had := m.ip[key]
	if had && old == ip {
		return
	}
	if had {
		if m.used[old]--; m.used[old] <= 0 {
			delete(m.used, old)
			if n := ipCounter(old); n > 1 && n < m.low {
				m.low = n
			}
		}
	}
	if ip == "" {
		delete(m.ip, key)
		return
	}
	m.ip[key] = ip
	m.used[ip]++
}

// setRefs records whether a pod waits for a ConfigMap or Secret.
func (m *memo) setRefs(key podKey, waits bool) {
	if !waits {
		delete(m.refs, key)
		return
	}
	if m.refs == nil {
		m.refs = map[podKey]bool{}
	}
	m.refs[key] = true
}

// setDue records the next of a pod's sync.
func (m *memo) setDue(key podKey, next time.Time) {
	if next.Equal(never) {
		delete(m.due, key)
		return
	}
	if at, ok := m.due[key]; ok && at.Equal(next) {
		return
	}
	m.due[key] = next
	heap.Push(&m.queue, dueEntry{at: next, key: key})
}

// valid reports whether e is its pod's due time.
func (m *memo) current(e dueEntry) bool {
	at, ok := m.due[e.key]
	return ok && at.Equal(e.at)
}

// next returns the earliest due time (never: none).
func (m *memo) next() time.Time {
	for len(m.queue) > 0 && !m.current(m.queue[0]) {
		heap.Pop(&m.queue)
	}
	if len(m.queue) > 2*len(m.due)+1024 {
		m.rebuildQueue()
	}
	if len(m.queue) == 0 {
		return never
	}
	return m.queue[0].at
}

func (m *memo) rebuildQueue() {
	m.queue = m.queue[:0]
	for k, at := range m.due {
		m.queue = append(m.queue, dueEntry{at: at, key: k})
	}
	heap.Init(&m.queue)
}

// popDue removes the pods due at or before now from the queue and adds
// them to visit.
func (m *memo) popDue(now time.Time, visit map[podKey]bool) {
	for len(m.queue) > 0 && !m.queue[0].at.After(now) {
		e := heap.Pop(&m.queue).(dueEntry)
		if m.current(e) {
			visit[e.key] = true
			delete(m.due, e.key)
		}
	}
}

// ipCounter is the counter of a pod address handed out by ipAllocator
// (see podIP); -1 for another address.
func ipCounter(ip string) int {
	var o [4]int
	for i := range o {
		part := ip
		if i < 3 {
			var ok bool
			part, ip, ok = strings.Cut(ip, ".")
			if !ok {
				return -1
			}
		}
		v, err := strconv.Atoi(part)
		if err != nil || v < 0 || v > 255 {
			return -1
		}
		o[i] = v
	}
	if o[0] != 10 || o[1] < 244 || o[1] > 247 {
		return -1
	}
	return (o[1]-244)<<16 | o[2]<<8 | o[3]
}

// SyncChanged is Sync for the pods written since the last sync and those
// whose work is due at now: every other pod's status is still the one its
// last sync found (see Sync, which visits them all to find that out).
func (k *Kubelet) SyncChanged(ctx context.Context, c cluster.Interface, now time.Time, changed []controller.Key) (controller.Result, error) {
	k.mu.Lock()
	m := k.memo
	k.mu.Unlock()
	if m == nil || !m.valid {
		return k.Sync(ctx, c, now)
	}
	var res controller.Result
	visit := map[podKey]bool{}
	k.refs = newRefLookup(ctx, c)
	defer func() { k.refs = nil }()
	for _, ch := range changed {
		if ch.Group == "" && ch.Kind == "Node" {
			// A Node changed (labels, taints, a new one): the pods waiting
			// for a node are retried, as kube-scheduler requeues them on a
			// node event, and a deleted node of the profile registers
			// again.
			return k.Sync(ctx, c, now)
		}
		if ch.Group == "" && (ch.Kind == "ConfigMap" || ch.Kind == "Secret") && len(m.refs) > 0 {
			// What a waiting pod names may have appeared: the pods are
			// looked at again, none known current.
			k.mu.Lock()
			k.current = nil
			k.mu.Unlock()
			return k.Sync(ctx, c, now)
		}
		if ch.Group == "" && ch.Kind == "Pod" {
			visit[podKey{ch.Namespace, ch.Name}] = true
		}
		if volumeKind(ch) && len(m.pending) > 0 {
			// A claim, volume or class changed: the pods waiting for a
			// node are tried again, as kube-scheduler requeues those
			// VolumeBinding turned away.
			m.freed = true
		}
	}
	m.popDue(now, visit)
	keys := make([]podKey, 0, len(visit))
	for key := range visit {
		keys = append(keys, key)
	}
	// In List order, as Sync: the same pods get the same addresses.
	slices.SortFunc(keys, podKey.compare)
	pods := make([]map[string]any, 0, len(keys))
	found := keys[:0]
	for _, key := range keys {
		pod, err := controller.GetShared(ctx, c, podGVK, key.namespace, key.name)
		if cluster.IsNotFound(err) {
			k.mu.Lock()
			delete(k.current, m.uid[key])
			k.mu.Unlock()
			m.see(key, nil)
			continue
		}
		if err != nil {
			return res, fmt.Errorf("kubelet: get pod %s/%s: %w", key.namespace, key.name, err)
		}
		if m.rooms == nil && k.needsAdmission(pod) {
			// A pod bound to a node by hand: its admission weighs every
			// pod of the node, which a full sync counts.
			return k.Sync(ctx, c, now)
		}
		m.see(key, pod)
		pods = append(pods, pod)
		found = append(found, key)
	}
	ips := &ipAllocator{memo: m, n: 1}
	var admitting []int
	objs := make([]cluster.Object, len(pods))
	copy(objs, pods)
	for i, pod := range pods {
		if k.needsAdmission(pod) {
			admitting = append(admitting, i)
		}
	}
	refused, err := k.admitNew(ctx, c, objs, admitting, m.rooms, m.sched, now)
	if err != nil {
		return res, err
	}
	res.Changed = res.Changed || len(refused) > 0
	for _, i := range admitting {
		if !refused[i] {
			// Admitted: its status (with a startTime) is written below.
			m.nodeOf[found[i]] = str(mapOf(pods[i], "spec"), "nodeName")
		}
	}
	var waiting []int
	for i, pod := range pods {
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
		m.setDue(found[i], r.next)
		m.setRefs(found[i], r.refs)
	}
	if m.freed && len(m.pending) > 0 {
		// Room was freed: every pod waiting for a node is tried again.
		for key := range m.pending {
			if visit[key] {
				continue
			}
			pod, err := controller.GetShared(ctx, c, podGVK, key.namespace, key.name)
			if cluster.IsNotFound(err) {
				delete(m.pending, key)
				continue
			}
			if err != nil {
				return res, fmt.Errorf("kubelet: get pod %s/%s: %w", key.namespace, key.name, err)
			}
			waiting = append(waiting, len(pods))
			pods = append(pods, pod)
			found = append(found, key)
		}
	}
	m.freed = false
	objs = make([]cluster.Object, len(pods))
	copy(objs, pods)
	sortWaiting(objs, waiting)
	for _, i := range waiting {
		r, err := k.schedule(ctx, c, pods[i], now, ips, m.sched)
		if err != nil {
			return res, err
		}
		res.Changed = res.Changed || r.changed
		m.setDue(found[i], r.next)
		m.setRefs(found[i], r.refs)
		if r.unschedulable {
			m.pending[found[i]] = true
		} else {
			delete(m.pending, found[i])
		}
	}
	if ips.first > 1 {
		m.low = ips.first
	}
	if next := m.next(); next != never {
		res.RequeueAt = next
	}
	return res, nil
}

// remember rebuilds the memo from the pods of a Sync and their next.
func (k *Kubelet) remember(pods []cluster.Object, nexts []time.Time, snap *scheduler.Cluster, pending map[podKey]bool, rooms map[string]*nodeRoom, refs map[podKey]bool) {
	m := newMemo()
	m.pending = pending
	m.refs = refs
	for i, pod := range pods {
		md := mapOf(pod, "metadata")
		key := podKey{str(md, "namespace"), str(md, "name")}
		m.see(key, pod)
		if !nexts[i].Equal(never) {
			m.due[key] = nexts[i]
		}
	}
	m.rebuildQueue()
	// The admission view after the Sync's admissions (the pods listed
	// before them are not seen into it).
	if rooms != nil {
		m.rooms, m.nodeOf = rooms, map[podKey]string{}
		for n, r := range rooms {
			for key := range r.held {
				m.nodeOf[key] = n
			}
		}
	}
	// The scheduler's view after the Sync's binds; the pods written
	// since are seen again by the next SyncChanged.
	m.sched = snap
	k.mu.Lock()
	k.memo = m
	k.mu.Unlock()
}
