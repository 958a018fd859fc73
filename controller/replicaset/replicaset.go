// Package replicaset is the ReplicaSet controller of the embedded cluster,
// after kube-controller-manager's (pkg/controller/replicaset): it creates and
// deletes pods to match spec.replicas, adopts and releases pods by the
// selector, and keeps status (replicas, fullyLabeledReplicas, readyReplicas,
// availableReplicas, terminatingReplicas, observedGeneration, the
// ReplicaFailure condition).
//
// As the real controller, it creates pods in slow-start batches (1, 2,
// 4, ... at most 500 per sync, each request through the controller's
// client rate limit: some 20 pods a second, see manage), stops at the
// first batch with a failure,
// and turns what the API server refuses into FailedCreate and
// FailedDelete Events and the ReplicaFailure condition, retried with the
// work queue's back-off (see event.RetryAt): one ReplicaSet that cannot
// have its pods never stops the others, nor fails the sync.
//
// Pod names are deterministic: the ReplicaSet's name, cut as the API
// server cuts a generateName (58 characters), and 5 characters drawn from a
// hash of the ReplicaSet's name and a counter, so that the same state
// always gives the same pods; finding a free one costs O(1) per pod.
package replicaset

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sort"
	"strconv"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/controller"
	"github.com/konverge/konverge/controller/event"
	"github.com/konverge/konverge/controller/internal/kobj"
	"github.com/konverge/konverge/controller/internal/reconcile"
	"github.com/konverge/konverge/selector"
)

// Component is the source of the controller's Events.
const Component = "replicaset-controller"

// Controller is the ReplicaSet controller. The zero value is ready to
// use and syncs every ReplicaSet each time; New's also remembers what it
// read of each pod object from one sync to the next, and the ReplicaSets
// and pods (SyncChanged). The same objects give the same writes either
// way.
type Controller struct {
	memos *memos
	inc   *memory
	// NoTerminatingReplicas leaves status.terminatingReplicas out, for
	// objects whose status has no such field: the ReplicationController
	// controller's (package replication) ReplicaSets. With it, such an
	// object's status is seen as written once it is, and a sync that
	// writes nothing says so.
	NoTerminatingReplicas bool
}

// New returns an incremental ReplicaSet controller: after its first
// sync, SyncChanged syncs only the ReplicaSets queued (see
// reconcile.Queue) by a write of the ReplicaSet, of a pod it controls or
// an orphan its selector matches, of its Events or namespace, those
// whose last sync wrote something or was not reached, and those whose
// requeue time came, without listing anything, as upstream's work queue
// hands out only the keys added to it.
func New() Controller { return Controller{memos: &memos{}, inc: &memory{}} }

var _ controller.Incremental = Controller{}

// Name implements controller.Controller.
func (Controller) Name() string { return "replicaset" }

// Sync reconciles every ReplicaSet once: one List of ReplicaSets and one of
// Pods, then only the writes that change something. A write that the
// client rate limit holds back ends the sync without an error: the
// ReplicaSets after it are synced at the next.
func (ctl Controller) Sync(ctx context.Context, c cluster.Interface, now time.Time) (controller.Result, error) {
	if ctl.memos != nil {
		ctl.memos.mu.Lock()
		defer ctl.memos.mu.Unlock()
	}
	var res controller.Result
	if ctl.inc != nil {
		ctl.inc.reset()
	}
	rsList, err := c.List(ctx, kobj.ReplicaSetGVK)
	if err != nil {
		return res, fmt.Errorf("replicaset: list replicasets: %w", err)
	}
	if len(rsList.Items) == 0 {
		return res, nil
	}
	podList, err := c.List(ctx, kobj.PodGVK)
	if err != nil {
		return res, fmt.Errorf("replicaset: list pods: %w", err)
	}
	if ctl.inc != nil {
		ctl.inc.rebuild(rsList.Items, podList.Items)
	}
	idx := newPodIndex(podList.Items, ctl.memos)
	defer ctl.memos.prune(podList.Items)
	return ctl.syncAll(ctx, c, now, rsList.Items, idx)
}

// SyncChanged implements controller.Incremental; without a memory it is
// Sync.
func (ctl Controller) SyncChanged(ctx context.Context, c cluster.Interface, now time.Time, changed []controller.Key) (controller.Result, error) {
	if ctl.inc == nil || !ctl.inc.q.OK {
		return ctl.Sync(ctx, c, now)
	}
	if ctl.memos != nil {
		ctl.memos.mu.Lock()
		defer ctl.memos.mu.Unlock()
	}
	todo, res, err := ctl.inc.pending(ctx, c, changed, now)
	if err != nil {
		return res, fmt.Errorf("replicaset: %w", err)
	}
	if ctl.memos != nil && len(ctl.memos.m) > 2*ctl.inc.pods.Len()+1024 {
		ctl.memos.prune(ctl.inc.pods.All())
	}
	if len(todo) == 0 {
		return res, nil
	}
	idx := newPodIndex(ctl.inc.pods.Candidates(todo), ctl.memos)
	idx.isTaken = func(k podKey) bool { return ctl.inc.pods.Taken(reconcile.Key{k.namespace, k.name}) }
	out, err := ctl.syncAll(ctx, c, now, todo, idx)
	return res.Merge(out), err
}

// syncAll syncs rss in order with the pods of idx.
func (ctl Controller) syncAll(ctx context.Context, c cluster.Interface, now time.Time, rss []map[string]any, idx *podIndex) (controller.Result, error) {
	idx.noTerminating = ctl.NoTerminatingReplicas
	// What the API server refused is in the ReplicaSet's Events and
	// status, and retried; anything else is a failure of the controller
	// or the store.
	loop := reconcile.Loop{Name: "replicaset", Refused: cluster.IsStatus}
	if ctl.inc != nil {
		loop.Memory = ctl.inc
	}
	res, err := loop.Run(ctx, c, now, rss, func(ctx context.Context, rs map[string]any) (reconcile.Outcome, error) {
		// What a sync reads costs as a List would (the pods are
		// counted as the cache serves them).
		controller.Read(c, 1)
		r, err := syncOne(ctx, c, now, rs, idx)
		return reconcile.Outcome{Changed: r.Changed, Requeue: r.RequeueAt}, err
	})
	if controller.IsThrottled(err) {
		// The client waits for a token (the runner wakes the controller
		// then): the ReplicaSets not reached are synced at the next sync.
		return res, nil
	}
	return res, err
}

// podKey is a pod's namespace and name.
type podKey struct{ namespace, name string }

type podIndex struct {
	byOwner map[string][]map[string]any // controller uid -> pods
	orphans map[string][]map[string]any // namespace -> pods without controller
	names   map[podKey]bool             // names taken (built by taken)
	pods    []cluster.Object
	// isTaken, when set, reports the names of pods that are not in pods
	// taken (the incremental controller's pods are a memory's, pods the
	// candidates of the ReplicaSets synced).
	isTaken func(podKey) bool
	// next is, by ReplicaSet uid, the counter of its next pod name.
	next  map[string]int
	memos *memos
	// noTerminating: the status has no terminatingReplicas.
	noTerminating bool
}

func newPodIndex(pods []cluster.Object, ms *memos) *podIndex {
	idx := &podIndex{
		byOwner: map[string][]map[string]any{},
		orphans: map[string][]map[string]any{},
		next:    map[string]int{},
		pods:    pods,
		memos:   ms,
	}
	for _, p := range pods {
		m := ms.of(p)
		if uid := m.ctrlUID; uid != "" {
			idx.byOwner[uid] = append(idx.byOwner[uid], p)
		} else if !m.deleting {
			idx.orphans[m.namespace] = append(idx.orphans[m.namespace], p)
		}
	}
	return idx
}

// taken reports a pod name in use, building the set of names the first
// time (only a sync that creates pods needs it).
func (idx *podIndex) taken(k podKey) bool {
	if idx.names == nil {
		idx.names = make(map[podKey]bool, len(idx.pods))
		for _, p := range idx.pods {
			m := idx.memos.of(p)
			idx.names[podKey{m.namespace, m.name}] = true
		}
	}
	return idx.names[k] || (idx.isTaken != nil && idx.isTaken(k))
}

func syncOne(ctx context.Context, c cluster.Interface, now time.Time, rs map[string]any, idx *podIndex) (controller.Result, error) {
	var res controller.Result
	ns, name, uid := kobj.Namespace(rs), kobj.Name(rs), kobj.UID(rs)
	sel, err := selector.FromLabelSelector(kobj.Map(rs, "spec", "selector"))
	if err != nil {
		return res, fmt.Errorf("%s/%s: selector: %w", ns, name, err)
	}
	if sel.Empty() {
		// A ReplicaSet selecting everything manages nothing.
		sel = selector.Nothing()
	}
	deleting := kobj.Deleting(rs)
	tmplLabels := kobj.StringMap(rs, "spec", "template", "metadata", "labels")

	// Claim pods: release owned pods that no longer match, adopt orphans
	// that match (not while the ReplicaSet is being deleted).
	// What the sync needs of each pod is read once (facts, by the index
	// in owned).
	var owned []map[string]any
	var facts []podFacts
	// The selector is immutable, the template labels change with the
	// generation.
	rsKey := ""
	if g, ok := kobj.Int(rs, "metadata", "generation"); ok && uid != "" {
		rsKey = uid + "/" + strconv.FormatInt(g, 10)
	}
	for _, p := range idx.byOwner[uid] {
		m := idx.memos.of(p)
		matches, fully := m.of(rsKey, sel, tmplLabels)
		if m.deleting || matches || deleting {
			owned = append(owned, p)
			facts = append(facts, m.facts(fully))
			continue
		}
		if err := release(ctx, c, p, uid); err != nil {
			return res, fmt.Errorf("%s/%s: release pod %s: %w", ns, name, kobj.Name(p), err)
		}
		res.Changed = true
	}
	if !deleting {
		orphans := idx.orphans[ns]
		kept := orphans[:0]
		for _, p := range orphans {
			if !sel.Matches(kobj.Labels(p)) {
				kept = append(kept, p)
				continue
			}
			adopted, err := adopt(ctx, c, p, rs)
			if err != nil {
				if cluster.IsNotFound(err) {
					continue
				}
				return res, fmt.Errorf("%s/%s: adopt pod %s: %w", ns, name, kobj.Name(p), err)
			}
			owned = append(owned, adopted)
			facts = append(facts, idx.memos.of(adopted).facts(hasAllLabels(kobj.Map(adopted, "metadata", "labels"), tmplLabels)))
			res.Changed = true
		}
		idx.orphans[ns] = kept
	}

	var active, terminating []map[string]any
	var activeFacts []podFacts
	for i, p := range owned {
		switch {
		case facts[i].active:
			active = append(active, p)
			activeFacts = append(activeFacts, facts[i])
		case facts[i].terminating:
			terminating = append(terminating, p)
		}
	}
	// appendOnly: the active pods after manage begin with those before,
	// in order (it created pods, or did nothing).
	appendOnly := true

	var manageErr error
	replicas := kobj.IntOr(rs, 1, "spec", "replicas")
	failure := kobj.Condition(rs, "ReplicaFailure")
	if !deleting {
		retry, err := retryAt(ctx, c, rs, failure)
		if err != nil {
			return res, err
		}
		if now.Before(retry) && int64(len(active)) != replicas {
			// Still backing off from the last failure: the failure
			// stands until the retry.
			manageErr = errBackingOff
			res = res.Merge(controller.Result{RequeueAt: retry})
		} else {
			var changed bool
			appendOnly = int64(len(active)) <= replicas
			var throttled bool
			active, changed, throttled, manageErr = manage(ctx, c, now, rs, active, replicas, len(owned), idx)
			res.Changed = res.Changed || changed
			if throttled {
				// The client waits for its next token in the middle of
				// a burst: the real controller's sync is still creating
				// (or deleting) pods and writes the status after the
				// burst; so does the next sync here.
				return res, errThrottled
			}
			if manageErr != nil && !cluster.IsStatus(manageErr) {
				return res, fmt.Errorf("%s/%s: %w", ns, name, manageErr)
			}
			if manageErr != nil || int64(len(active)) != replicas {
				// Failed, or more to do than one burst: the next sync.
				res = res.Merge(controller.Result{RequeueAt: now.Add(time.Second)})
			}
		}
	}

	// Status.
	minReady := kobj.IntOr(rs, 0, "spec", "minReadySeconds")
	var fully, ready, avail int64
	for i, p := range active {
		var f podFacts
		if appendOnly && i < len(activeFacts) {
			f = activeFacts[i]
		} else {
			m := idx.memos.of(p)
			_, fully := m.of(rsKey, sel, tmplLabels)
			f = m.facts(fully)
		}
		if f.fully {
			fully++
		}
		if !f.ready {
			continue
		}
		ready++
		if minReady == 0 {
			avail++ // available as soon as ready
			continue
		}
		ok, at := kobj.PodAvailable(p, minReady, now)
		if ok {
			avail++
		} else if !at.IsZero() {
			res = res.Merge(controller.Result{RequeueAt: at})
		}
	}
	old := kobj.Map(rs, "status")
	st := map[string]any{}
	for k, v := range old {
		st[k] = v
	}
	st["replicas"] = int64(len(active))
	setOrDrop(st, "fullyLabeledReplicas", fully)
	setOrDrop(st, "readyReplicas", ready)
	setOrDrop(st, "availableReplicas", avail)
	if !idx.noTerminating {
		st["terminatingReplicas"] = int64(len(terminating))
	}
	if g, ok := kobj.Int(rs, "metadata", "generation"); ok {
		st["observedGeneration"] = g
	}
	conds := kobj.Slice(rs, "status", "conditions")
	switch {
	case manageErr == errBackingOff:
	case manageErr != nil && failure != nil && failure["message"] != manageErr.Error():
		// The condition names the latest failure, whose Event the retry
		// waits on.
		kept := make([]any, 0, len(conds))
		for _, cd := range conds {
			m, _ := cd.(map[string]any)
			if m["type"] == "ReplicaFailure" {
				m = maps.Clone(m)
				m["message"] = manageErr.Error()
				cd = m
			}
			kept = append(kept, cd)
		}
		conds = kept
	case manageErr != nil && failure == nil:
		reason := "FailedCreate"
		if int64(len(active)) > replicas {
			reason = "FailedDelete"
		}
		conds = append(append([]any{}, conds...), map[string]any{
			"type":               "ReplicaFailure",
			"status":             "True",
			"lastTransitionTime": kobj.FormatTime(now),
			"reason":             reason,
			"message":            manageErr.Error(),
		})
	case manageErr == nil && failure != nil:
		var kept []any
		for _, cd := range conds {
			if m, _ := cd.(map[string]any); m["type"] != "ReplicaFailure" {
				kept = append(kept, cd)
			}
		}
		conds = kept
	}
	if len(conds) > 0 {
		st["conditions"] = conds
	} else {
		delete(st, "conditions")
	}
	if !equalStatus(old, st) {
		// A status update takes nothing but metadata and status.
		next := maps.Clone(rs)
		next["status"] = st
		if _, err := c.UpdateStatus(ctx, next); err != nil {
			if controller.IsThrottled(err) {
				// Written by the next sync, when the token comes.
				return res, errThrottled
			}
			if !cluster.IsNotFound(err) && !cluster.IsConflict(err) {
				return res, fmt.Errorf("%s/%s: update status: %w", ns, name, err)
			}
		}
		res.Changed = true
	}
	if manageErr != nil && manageErr != errBackingOff {
		return res, fmt.Errorf("%s/%s: %w", ns, name, manageErr)
	}
	return res, nil
}

// podFacts is what a sync reads of a pod.
type podFacts struct {
	// active and terminating as kobj.PodActive and kobj.PodTerminating;
	// fully: it has every label of the template; ready: its Ready
	// condition is True.
	active, terminating, fully, ready bool
}

// podReady is kobj.PodReady without the time.
func podReady(pod map[string]any) bool {
	c := kobj.Condition(pod, "Ready")
	return c != nil && c["status"] == "True"
}

// errThrottled ends a ReplicaSet's sync whose write the client rate
// limit held back: the ReplicaSet stays queued, and the loop ends there.
var errThrottled = fmt.Errorf("replicaset: %w", controller.ErrThrottled)

// errBackingOff stands for the last failure while the controller waits to
// retry.
var errBackingOff = errors.New("backing off")

// retryAt is when a ReplicaSet whose last manage failed may try again:
// the back-off of the Event that recorded the failure.
func retryAt(ctx context.Context, c cluster.Interface, rs, failure map[string]any) (time.Time, error) {
	if failure == nil {
		return time.Time{}, nil
	}
	msg, _ := failure["message"].(string)
	verb := "creating"
	if failure["reason"] == "FailedDelete" {
		verb = "deleting"
	}
	reason, _ := failure["reason"].(string)
	return event.RetryAt(ctx, c, event.Event{Involved: rs, Type: event.Warning, Reason: reason,
		Message: "Error " + verb + ": " + msg, Component: Component})
}

func setOrDrop(st map[string]any, k string, v int64) {
	// The API omits zero counters (omitempty) except replicas.
	if v == 0 {
		delete(st, k)
		return
	}
	st[k] = v
}

func equalStatus(a, b map[string]any) bool {
	return valueEqual(map[string]any(a), map[string]any(b))
}

// burstReplicas is how many pods one sync creates or deletes at most.
const burstReplicas = 500

// manage creates or deletes pods so that active matches replicas (at most
// burstReplicas per sync; creations in slow-start batches of 1, 2, 4, ...
// that stop after a batch with a failure) and returns the active pods
// afterwards. The error is the first the API server returned (each is
// also an Event), or a failure of the store.
//
// Each request goes through the controller's client, which the runner
// limits as kube-controller-manager limits the real one (20 requests a
// second, a burst of 30, the Events included): a burst of 500 pods takes
// some 25 seconds of cluster time, over several syncs here. throttled
// reports that a request waits for its token: the burst goes on at the
// next sync, which counts what the burst did so far as the pods added
// (or removed) since the status was last written, since the real
// controller writes the status only once its burst is done.
func manage(ctx context.Context, c cluster.Interface, now time.Time, rs map[string]any, active []map[string]any, replicas int64, owned int, idx *podIndex) (_ []map[string]any, changed, throttled bool, _ error) {
	diff := int64(len(active)) - replicas
	// sofar is what the current burst did already (see above).
	sofar := int64(len(active)) - kobj.IntOr(rs, 0, "status", "replicas")
	switch {
	case diff < 0:
		n := min(-diff, burstReplicas-max(sofar, 0))
		if n <= 0 {
			return active, changed, false, nil
		}
		uid := kobj.UID(rs)
		if _, ok := idx.next[uid]; !ok {
			idx.next[uid] = owned
		}
		for done, batch := int64(0), int64(1); done < n; batch *= 2 {
			size := min(batch, n-done)
			var first error
			for range size {
				pod := newPod(rs, idx)
				created, err := c.Create(ctx, pod)
				if controller.IsThrottled(err) {
					return active, changed, true, nil
				}
				if err != nil {
					if !cluster.IsStatus(err) {
						return active, changed, false, err
					}
					changed = true
					if err := event.Record(ctx, c, now, rs, event.Warning, "FailedCreate", fmt.Sprintf("Error creating: %v", err), Component); err != nil {
						return active, changed, controller.IsThrottled(err), dropThrottled(err)
					}
					if first == nil {
						first = err
					}
					continue
				}
				changed = true
				active = append(active, created)
				if err := event.Record(ctx, c, now, rs, event.Normal, "SuccessfulCreate", "Created pod: "+kobj.Name(created), Component); err != nil {
					return active, changed, controller.IsThrottled(err), dropThrottled(err)
				}
			}
			done += size
			if first != nil {
				return active, changed, false, first
			}
		}
	case diff > 0:
		n := min(diff, burstReplicas-max(-sofar, 0))
		if n <= 0 {
			return active, changed, false, nil
		}
		victims := append([]map[string]any(nil), active...)
		SortForDeletion(victims, now)
		del := map[string]bool{}
		var first error
		for _, p := range victims[:n] {
			err := c.Delete(ctx, kobj.PodGVK, kobj.Namespace(p), kobj.Name(p), cluster.Preconditions{UID: kobj.UID(p)})
			if controller.IsThrottled(err) {
				throttled = true
				break
			}
			if err != nil && !cluster.IsNotFound(err) && !cluster.IsConflict(err) {
				if !cluster.IsStatus(err) {
					return active, changed, false, err
				}
				changed = true
				if err := event.Record(ctx, c, now, rs, event.Warning, "FailedDelete", fmt.Sprintf("Error deleting: %v", err), Component); err != nil {
					if controller.IsThrottled(err) {
						throttled = true
						break
					}
					return active, changed, false, err
				}
				if first == nil {
					first = err
				}
				continue
			}
			changed = true
			del[kobj.UID(p)] = true
			if err == nil {
				if err := event.Record(ctx, c, now, rs, event.Normal, "SuccessfulDelete", "Deleted pod: "+kobj.Name(p), Component); err != nil {
					if controller.IsThrottled(err) {
						throttled = true
						break
					}
					return active, changed, false, err
				}
			}
		}
		kept := active[:0:0]
		for _, p := range active {
			if !del[kobj.UID(p)] {
				kept = append(kept, p)
			}
		}
		active = kept
		if throttled {
			return active, changed, true, nil
		}
		if first != nil {
			return active, changed, false, first
		}
	}
	return active, changed, false, nil
}

// dropThrottled is err, or nil when the client rate limit held the
// request back (manage reports that as throttled).
func dropThrottled(err error) error {
	if controller.IsThrottled(err) {
		return nil
	}
	return err
}

// newPod is the pod a ReplicaSet creates: its template, a free
// deterministic name, and the ReplicaSet as controller.
func newPod(rs map[string]any, idx *podIndex) map[string]any {
	ns, rsName := kobj.Namespace(rs), kobj.Name(rs)
	tmpl := kobj.Copy(kobj.Map(rs, "spec", "template"))
	md := kobj.Map(tmpl, "metadata")
	pmd := map[string]any{}
	if l := kobj.Map(md, "labels"); len(l) > 0 {
		pmd["labels"] = l
	}
	if a := kobj.Map(md, "annotations"); len(a) > 0 {
		pmd["annotations"] = a
	}
	if f := kobj.Slice(md, "finalizers"); len(f) > 0 {
		pmd["finalizers"] = f
	}
	uid := kobj.UID(rs)
	var name string
	for n := idx.next[uid]; ; n++ {
		name = PodName(rsName, n)
		if !idx.taken(podKey{ns, name}) {
			idx.next[uid] = n + 1
			break
		}
	}
	idx.names[podKey{ns, name}] = true
	pmd["name"] = name
	pmd["generateName"] = rsName + "-"
	pmd["namespace"] = ns
	pmd["ownerReferences"] = []any{kobj.NewControllerRef(rs, kobj.ReplicaSetGVK)}
	pod := map[string]any{
		"apiVersion": "v1",
		"kind":       "Pod",
		"metadata":   pmd,
	}
	if spec := kobj.Map(tmpl, "spec"); spec != nil {
		pod["spec"] = spec
	}
	return pod
}

// PodName is the n-th candidate name of a pod of the ReplicaSet rsName:
// `<rsName>-<5 characters of the safe alphabet>`, the prefix cut to 58
// characters as the API server cuts a generateName.
func PodName(rsName string, n int) string {
	const maxPrefix = 63 - 5
	prefix := rsName + "-"
	if len(prefix) > maxPrefix {
		prefix = prefix[:maxPrefix]
	}
	return prefix + kobj.ShortName(5, rsName, strconv.Itoa(n))
}

func adopt(ctx context.Context, c cluster.Interface, pod, rs map[string]any) (map[string]any, error) {
	next := kobj.Copy(pod)
	md := kobj.EnsureMap(next, "metadata")
	refs, _ := md["ownerReferences"].([]any)
	md["ownerReferences"] = append(append([]any{}, refs...), kobj.NewControllerRef(rs, kobj.ReplicaSetGVK))
	return c.Update(ctx, next)
}

func release(ctx context.Context, c cluster.Interface, pod map[string]any, uid string) error {
	next := kobj.Copy(pod)
	md := kobj.EnsureMap(next, "metadata")
	refs, _ := md["ownerReferences"].([]any)
	var kept []any
	for _, r := range refs {
		if m, _ := r.(map[string]any); m["uid"] != uid {
			kept = append(kept, r)
		}
	}
	if len(kept) == 0 {
		delete(md, "ownerReferences")
	} else {
		md["ownerReferences"] = kept
	}
	_, err := c.Update(ctx, next)
	if cluster.IsNotFound(err) {
		return nil
	}
	return err
}

// SortForDeletion orders pods as upstream's ActivePods ranking, the ones to
// delete first: unassigned before assigned; Pending before Unknown before
// Running; not ready before ready; lower pod-deletion-cost first; ready for
// a shorter time before longer; more restarts before fewer; newer before
// older.
func SortForDeletion(pods []map[string]any, now time.Time) {
	type key struct {
		assigned   bool
		phase      int
		ready      bool
		cost       int64
		readySince time.Time
		restarts   int64
		created    time.Time
		name       string
	}
	keys := make(map[string]key, len(pods))
	for _, p := range pods {
		ready, since := kobj.PodReady(p)
		cost, _ := strconv.ParseInt(kobj.Annotation(p, "controller.kubernetes.io/pod-deletion-cost"), 10, 64)
		keys[kobj.Namespace(p)+"/"+kobj.Name(p)] = key{
			assigned:   kobj.Str(p, "spec", "nodeName") != "",
			phase:      phaseRank(kobj.Str(p, "status", "phase")),
			ready:      ready,
			cost:       cost,
			readySince: since,
			restarts:   maxRestarts(p),
			created:    kobj.ParseTime(kobj.Str(p, "metadata", "creationTimestamp")),
			name:       kobj.Name(p),
		}
	}
	sort.SliceStable(pods, func(i, j int) bool {
		a := keys[kobj.Namespace(pods[i])+"/"+kobj.Name(pods[i])]
		b := keys[kobj.Namespace(pods[j])+"/"+kobj.Name(pods[j])]
		if a.assigned != b.assigned {
			return !a.assigned
		}
		if a.phase != b.phase {
			return a.phase < b.phase
		}
		if a.ready != b.ready {
			return !a.ready
		}
		if a.cost != b.cost {
			return a.cost < b.cost
		}
		if a.ready && b.ready && !a.readySince.Equal(b.readySince) {
			return a.readySince.After(b.readySince)
		}
		if a.restarts != b.restarts {
			return a.restarts > b.restarts
		}
		if !a.created.Equal(b.created) {
			return a.created.After(b.created)
		}
		return a.name > b.name
	})
}

func phaseRank(p string) int {
	switch p {
	case "Pending", "":
		return 0
	case "Unknown":
		return 1
	case "Running":
		return 2
	}
	return 3
}

func maxRestarts(pod map[string]any) int64 {
	var m int64
	for _, cs := range kobj.Slice(pod, "status", "containerStatuses") {
		c, _ := cs.(map[string]any)
		if n := kobj.IntOr(c, 0, "restartCount"); n > m {
			m = n
		}
	}
	return m
}
