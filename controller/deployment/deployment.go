// Package deployment is the Deployment controller of the embedded cluster,
// after kube-controller-manager 1.37's (pkg/controller/deployment): it owns
// ReplicaSets named `<deployment>-<pod-template-hash>`, rolls them with the
// RollingUpdate (maxSurge, maxUnavailable) or Recreate strategy, scales
// proportionally during a rollout, keeps revisions and their history, cleans
// up old ReplicaSets beyond revisionHistoryLimit, honours spec.paused and
// progressDeadlineSeconds, and keeps status and the Progressing, Available
// and ReplicaFailure conditions. Events are upstream's (ScalingReplicaSet
// "Scaled up replica set x from 0 to 3").
//
// The pod-template-hash is upstream's (controller.ComputeHash of the typed
// pod template and status.collisionCount, package podhash), so that a
// Deployment's ReplicaSets and pods are named as kube-controller-manager
// names them; a template that does not decode as a PodTemplateSpec falls
// back to the fnv32a hash of its canonical JSON.
package deployment

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/controller"
	"github.com/konverge/konverge/controller/event"
	"github.com/konverge/konverge/controller/internal/kobj"
	"github.com/konverge/konverge/controller/internal/podhash"
	"github.com/konverge/konverge/controller/internal/reconcile"
	"github.com/konverge/konverge/selector"
	"github.com/konverge/konverge/value"
)

// Controller is the Deployment controller. The zero value is ready to use
// and syncs every Deployment each time; New's also remembers which
// Deployments' last sync wrote nothing (SyncChanged).
type Controller struct {
	m *memory
}

var _ controller.Incremental = Controller{}

// New returns a Deployment controller that syncs incrementally: after its
// first sync, SyncChanged syncs only the Deployments that a write since
// concerns (the Deployment, its ReplicaSets, their pods, its Events, its
// namespace), whose last sync wrote something or failed, or whose requeue
// time came, as upstream's work queue hands out only the keys queued.
func New() Controller { return Controller{m: &memory{}} }

// Name implements controller.Controller.
func (Controller) Name() string { return "deployment" }

// Sync reconciles every Deployment once: one List of Deployments, one of
// ReplicaSets (and one of Pods when a Recreate rollout needs them, or to
// rebuild the memory of New's controller). A write that the client rate
// limit holds back ends the sync without an error: the Deployments after
// it are synced at the next.
func (c Controller) Sync(ctx context.Context, cl cluster.Interface, now time.Time) (controller.Result, error) {
	var res controller.Result
	if c.m != nil {
		c.m.reset()
	}
	dl, err := cl.List(ctx, kobj.DeploymentGVK)
	if err != nil {
		return res, fmt.Errorf("deployment: list deployments: %w", err)
	}
	if len(dl.Items) == 0 {
		return res, nil
	}
	rl, err := cl.List(ctx, kobj.ReplicaSetGVK)
	if err != nil {
		return res, fmt.Errorf("deployment: list replicasets: %w", err)
	}
	var pods []map[string]any
	if c.m != nil {
		pl, err := cl.List(ctx, kobj.PodGVK)
		if err != nil {
			return res, fmt.Errorf("deployment: list pods: %w", err)
		}
		pods = pl.Items
		c.m.rebuild(dl.Items, rl.Items, pods)
	}
	return syncOwners(ctx, cl, now, c.m, dl.Items, rl.Items, pods)
}

// SyncChanged implements controller.Incremental: it syncs the Deployments
// that the writes in changed concern and those whose last sync wrote
// something, failed, was not reached, or whose requeue time came, with
// their ReplicaSets and the orphans, as the memory holds them: it lists
// nothing. The others would write nothing. Without a memory it is Sync.
func (c Controller) SyncChanged(ctx context.Context, cl cluster.Interface, now time.Time, changed []controller.Key) (controller.Result, error) {
	if c.m == nil || !c.m.ok {
		return c.Sync(ctx, cl, now)
	}
	todo, res, err := c.m.pending(ctx, cl, changed, now)
	if err != nil {
		return res, fmt.Errorf("deployment: %w", err)
	}
	if len(todo) == 0 {
		return res, nil
	}
	out, err := syncOwners(ctx, cl, now, c.m, todo, c.m.replicaSets(todo), nil)
	return res.Merge(out), err
}

// syncOwners syncs todo, in List order, with the ReplicaSets rss (and the
// pods, when listed already); m, when not nil, is told each outcome.
func syncOwners(ctx context.Context, c cluster.Interface, now time.Time, m *memory, todo, rss, pods []map[string]any) (controller.Result, error) {
	w := &world{c: c, now: now, byOwner: map[string][]map[string]any{}, orphans: map[string][]map[string]any{}}
	uids := make(map[string]bool, len(todo))
	for _, d := range todo {
		uids[kobj.UID(d)] = true
	}
	for _, rs := range rss {
		uid := kobj.ControllerUID(rs)
		if uid != "" && !uids[uid] {
			continue
		}
		if uid != "" {
			// scaleRS updates the ReplicaSets it scales in place
			// (replaceMap, which changes only the top level): listed
			// objects may be shared (sim caches lists), so work on a
			// shallow copy. An orphan is only read (claim adopts a
			// copy).
			w.byOwner[uid] = append(w.byOwner[uid], maps.Clone(rs))
		} else if !kobj.Deleting(rs) {
			ns := kobj.Namespace(rs)
			w.orphans[ns] = append(w.orphans[ns], rs)
		}
	}
	if pods != nil {
		w.pods = map[string][]map[string]any{}
		for _, p := range pods {
			if u := kobj.ControllerUID(p); u != "" {
				w.pods[u] = append(w.pods[u], p)
			}
		}
	}
	// What the API server refused is in the Deployment's status and
	// Events, and retried; anything else is a failure of the controller
	// or the store.
	loop := reconcile.Loop{Name: "deployment", Refused: func(err error) bool {
		return cluster.IsStatus(err) || errors.Is(err, errBackingOff) || errors.Is(err, errRetry)
	}}
	if m != nil {
		loop.Memory = m
	}
	res, err := loop.Run(ctx, c, now, todo, func(ctx context.Context, d map[string]any) (reconcile.Outcome, error) {
		// What a sync reads costs as a List would: the Deployment, its
		// ReplicaSets and the orphans of its namespace (upstream's
		// controller looks at each; the memory hands over only those its
		// selector may match).
		orphans := len(w.orphans[kobj.Namespace(d)])
		if m != nil && m.ok {
			orphans = len(m.orphans[kobj.Namespace(d)][""])
		}
		controller.Read(c, 1+len(w.byOwner[kobj.UID(d)])+orphans)
		s := &syncer{world: w, d: d, orig: d}
		err := s.run(ctx)
		if err != nil {
			err = fmt.Errorf("%s/%s: %w", kobj.Namespace(d), kobj.Name(d), err)
		}
		return reconcile.Outcome{Changed: s.changed, Requeue: s.requeue}, err
	})
	if controller.IsThrottled(err) {
		// The client waits for a token (the runner wakes the controller
		// then): the Deployments not reached are synced at the next sync.
		return res, nil
	}
	return res, err
}

type world struct {
	c       cluster.Interface
	now     time.Time
	byOwner map[string][]map[string]any
	orphans map[string][]map[string]any
	pods    map[string][]map[string]any // by controller uid, listed lazily
}

func (w *world) podsOf(ctx context.Context, uid string) ([]map[string]any, error) {
	if w.pods == nil {
		l, err := w.c.List(ctx, kobj.PodGVK)
		if err != nil {
			return nil, fmt.Errorf("list pods: %w", err)
		}
		w.pods = map[string][]map[string]any{}
		for _, p := range l.Items {
			if u := kobj.ControllerUID(p); u != "" {
				w.pods[u] = append(w.pods[u], p)
			}
		}
	}
	return w.pods[uid], nil
}

// syncer is one Deployment's sync.
type syncer struct {
	*world
	d, orig map[string]any // d: working copy (status and annotations change in memory)
	spec    spec
	changed bool
	requeue time.Time
}

func (s *syncer) status() map[string]any { return kobj.EnsureMap(s.d, "status") }

func (s *syncer) run(ctx context.Context) error {
	// The working copy shares the spec, which nothing changes, with the
	// listed object.
	s.d = maps.Clone(s.orig)
	for _, f := range []string{"metadata", "status"} {
		if v, ok := s.orig[f]; ok {
			s.d[f] = value.DeepCopy(v)
		}
	}
	s.spec = readSpec(s.d)
	defer func() {}()

	sel := kobj.Map(s.d, "spec", "selector")
	if len(sel) == 0 {
		if err := s.record(ctx, event.Warning, "SelectingAll", "This deployment is selecting all pods. A non-empty selector is required."); err != nil {
			return err
		}
		g := kobj.IntOr(s.d, 0, "metadata", "generation")
		if kobj.IntOr(s.d, 0, "status", "observedGeneration") < g {
			s.status()["observedGeneration"] = g
			return s.writeStatus(ctx)
		}
		return nil
	}
	rss, err := s.claim(ctx, sel)
	if err != nil {
		return err
	}
	if kobj.Deleting(s.d) {
		newRS, old := s.split(rss)
		s.calculateStatus(append(old, newRS), newRS)
		return s.writeStatus(ctx)
	}
	s.checkPausedConditions()
	if s.spec.paused {
		return s.sync(ctx, rss)
	}
	if s.isScalingEvent(rss) {
		return s.sync(ctx, rss)
	}
	if s.spec.recreate {
		return s.rolloutRecreate(ctx, rss)
	}
	return s.rolloutRolling(ctx, rss)
}

// claim returns the ReplicaSets the Deployment controls, after adopting
// orphans its selector matches and releasing owned ones it no longer does.
func (s *syncer) claim(ctx context.Context, selMap map[string]any) ([]map[string]any, error) {
	sel, err := selector.FromLabelSelector(selMap)
	if err != nil {
		return nil, fmt.Errorf("selector: %w", err)
	}
	uid := kobj.UID(s.d)
	var out []map[string]any
	for _, rs := range s.byOwner[uid] {
		if kobj.Deleting(s.d) || kobj.Deleting(rs) || sel.Matches(kobj.Labels(rs)) {
			out = append(out, rs)
			continue
		}
		next := kobj.Copy(rs)
		var kept []any
		for _, r := range kobj.Slice(next, "metadata", "ownerReferences") {
			if m, _ := r.(map[string]any); m["uid"] != uid {
				kept = append(kept, r)
			}
		}
		md := kobj.Map(next, "metadata")
		if len(kept) == 0 {
			delete(md, "ownerReferences")
		} else {
			md["ownerReferences"] = kept
		}
		if _, err := s.c.Update(ctx, next); err != nil && !cluster.IsNotFound(err) {
			return nil, fmt.Errorf("release replicaset %s: %w", kobj.Name(rs), err)
		}
		s.changed = true
	}
	if kobj.Deleting(s.d) {
		return out, nil
	}
	ns := kobj.Namespace(s.d)
	orphans := s.orphans[ns]
	kept := orphans[:0]
	for _, rs := range orphans {
		if !sel.MatchesObject(kobj.Map(rs, "metadata", "labels")) {
			kept = append(kept, rs)
			continue
		}
		next := kobj.Copy(rs)
		md := kobj.EnsureMap(next, "metadata")
		md["ownerReferences"] = append(append([]any{}, kobj.Slice(next, "metadata", "ownerReferences")...),
			kobj.NewControllerRef(s.d, kobj.DeploymentGVK))
		got, err := s.c.Update(ctx, next)
		if err != nil {
			if cluster.IsNotFound(err) {
				continue
			}
			return nil, fmt.Errorf("adopt replicaset %s: %w", kobj.Name(rs), err)
		}
		s.changed = true
		out = append(out, got)
	}
	s.orphans[ns] = kept
	return out, nil
}

// split returns the new ReplicaSet (nil if none) and all the others.
func (s *syncer) split(rss []map[string]any) (map[string]any, []map[string]any) {
	newRS := findNewRS(s.d, rss)
	var old []map[string]any
	for _, rs := range rss {
		if newRS != nil && kobj.UID(rs) == kobj.UID(newRS) {
			continue
		}
		old = append(old, rs)
	}
	return newRS, old
}

func (s *syncer) record(ctx context.Context, typ, reason, msg string) error {
	s.changed = true
	return event.Record(ctx, s.c, s.now, s.d, typ, reason, msg, Component)
}

// writeStatus writes status (and the revision annotation) when they
// differ from what is stored.
func (s *syncer) writeStatus(ctx context.Context) error {
	st, _ := s.d["status"].(map[string]any)
	ost, _ := s.orig["status"].(map[string]any)
	sameStatus := value.Equal(emptyNil(st), emptyNil(ost))
	sameAnn := value.Equal(emptyNil(kobj.Map(s.d, "metadata", "annotations")), emptyNil(kobj.Map(s.orig, "metadata", "annotations")))
	if sameStatus && sameAnn {
		return nil
	}
	got, err := s.c.UpdateStatus(ctx, s.d)
	if err != nil {
		if cluster.IsNotFound(err) {
			return nil
		}
		if cluster.IsConflict(err) {
			s.changed = true
			return nil
		}
		return fmt.Errorf("update status: %w", err)
	}
	s.changed = true
	s.orig = got
	s.d = kobj.Copy(got)
	return nil
}

func emptyNil(m map[string]any) any {
	if len(m) == 0 {
		return nil
	}
	return m
}

func (s *syncer) checkPausedConditions() {
	if s.spec.progressDeadline == 0 {
		return
	}
	st := s.status()
	cond := getCond(st, "Progressing")
	if cond != nil && cond["reason"] == ReasonTimedOut {
		return
	}
	pausedExists := cond != nil && cond["reason"] == ReasonPaused
	switch {
	case s.spec.paused && !pausedExists:
		setCond(st, newCond("Progressing", "Unknown", ReasonPaused, "Deployment is paused", s.now))
	case !s.spec.paused && pausedExists:
		setCond(st, newCond("Progressing", "Unknown", ReasonResumed, "Deployment is resumed", s.now))
	}
}

func (s *syncer) isScalingEvent(rss []map[string]any) bool {
	newRS, old := s.split(rss)
	for _, rs := range activeRSs(append(old, newRS)) {
		desired, err := strconv.ParseInt(kobj.Annotation(rs, DesiredReplicasAnnotation), 10, 64)
		if err != nil {
			continue
		}
		if desired != s.spec.replicas {
			return true
		}
	}
	return false
}

// getNewRS finds the new ReplicaSet (updating its annotations and
// minReadySeconds) or, with create, creates it.
func (s *syncer) getNewRS(ctx context.Context, rss []map[string]any, create bool) (map[string]any, []map[string]any, error) {
	newRS, old := s.split(rss)
	newRevision := strconv.FormatInt(maxRevision(old)+1, 10)
	if newRS != nil {
		next := copyForUpdate(newRS)
		annChanged := s.setNewRSAnnotations(next, newRevision, true)
		minReadyChanged := kobj.IntOr(next, 0, "spec", "minReadySeconds") != s.spec.minReady
		if annChanged || minReadyChanged {
			kobj.EnsureMap(next, "spec")["minReadySeconds"] = s.spec.minReady
			got, err := s.c.Update(ctx, next)
			if err != nil {
				return nil, nil, fmt.Errorf("update replicaset %s: %w", kobj.Name(newRS), err)
			}
			s.changed = true
			return got, old, nil
		}
		s.setRevision(kobj.Annotation(next, RevisionAnnotation))
		if s.spec.progressDeadline != 0 && getCond(s.status(), "Progressing") == nil {
			setCond(s.status(), newCond("Progressing", "True", ReasonFoundNewRS,
				fmt.Sprintf("Found new replica set %q", kobj.Name(next)), s.now))
		}
		return newRS, old, nil
	}
	if !create {
		return nil, old, nil
	}
	tmpl := kobj.Copy(kobj.Map(s.d, "spec", "template"))
	var cc *int64
	if v, ok := kobj.Int(s.d, "status", "collisionCount"); ok {
		cc = &v
	}
	hash, err := podhash.Compute(tmpl, cc)
	if err != nil {
		hash = kobj.TemplateHash(tmpl, cc)
	}
	kobj.EnsureMap(tmpl, "metadata", "labels")[PodTemplateHashLabel] = hash
	sel := kobj.Copy(kobj.Map(s.d, "spec", "selector"))
	kobj.EnsureMap(sel, "matchLabels")[PodTemplateHashLabel] = hash
	name := rsName(kobj.Name(s.d), hash)
	if c := getCond(s.status(), "Progressing"); c != nil && c["reason"] == ReasonFailedRSCreate {
		// The work queue's back-off after a failed create of this very
		// ReplicaSet (a changed template names another one).
		msg, _ := c["message"].(string)
		if strings.HasPrefix(msg, fmt.Sprintf("Failed to create new replica set %q:", name)) {
			at, err := event.RetryAt(ctx, s.c, event.Event{Involved: s.d, Type: event.Warning, Reason: ReasonFailedRSCreate, Message: msg, Component: Component})
			if err != nil {
				return nil, nil, err
			}
			if s.now.Before(at) {
				if s.requeue.IsZero() || at.Before(s.requeue) {
					s.requeue = at
				}
				return nil, nil, errBackingOff
			}
		}
	}
	labels := kobj.Copy(kobj.Map(tmpl, "metadata", "labels"))
	rs := map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "ReplicaSet",
		"metadata": map[string]any{
			"name":            name,
			"namespace":       kobj.Namespace(s.d),
			"ownerReferences": []any{kobj.NewControllerRef(s.d, kobj.DeploymentGVK)},
			"labels":          labels,
		},
		"spec": map[string]any{
			"replicas":        int64(0),
			"minReadySeconds": s.spec.minReady,
			"selector":        sel,
			"template":        tmpl,
		},
	}
	count, err := NewRSNewReplicas(s.d, append(append([]map[string]any{}, old...), rs), rs)
	if err != nil {
		return nil, nil, err
	}
	rs["spec"].(map[string]any)["replicas"] = count
	s.setNewRSAnnotations(rs, newRevision, false)
	created, err := s.c.Create(ctx, rs)
	already := false
	switch {
	case cluster.IsAlreadyExists(err):
		already = true
		existing, gerr := s.c.Get(ctx, kobj.ReplicaSetGVK, kobj.Namespace(s.d), name)
		if gerr != nil {
			return nil, nil, fmt.Errorf("get replicaset %s: %w", name, gerr)
		}
		if kobj.ControllerUID(existing) == kobj.UID(s.d) && EqualIgnoreHash(kobj.Map(existing, "spec", "template"), kobj.Map(s.d, "spec", "template")) {
			created = existing
			break
		}
		var n int64
		if cc != nil {
			n = *cc
		}
		s.status()["collisionCount"] = n + 1
		if werr := s.writeStatus(ctx); werr != nil {
			return nil, nil, werr
		}
		s.changed = true
		return nil, nil, errCollision
	case err != nil:
		msg := fmt.Sprintf("Failed to create new replica set %q: %v", name, err)
		if s.spec.progressDeadline != 0 {
			setCond(s.status(), newCond("Progressing", "False", ReasonFailedRSCreate, msg, s.now))
			_ = s.writeStatus(ctx)
		}
		if rerr := s.record(ctx, event.Warning, ReasonFailedRSCreate, msg); rerr != nil {
			return nil, nil, rerr
		}
		if s.requeue.IsZero() || s.now.Add(time.Second).Before(s.requeue) {
			s.requeue = s.now.Add(time.Second)
		}
		return nil, nil, fmt.Errorf("create replicaset %s: %w", name, err)
	}
	s.changed = true
	if !already && count > 0 {
		if err := s.record(ctx, event.Normal, "ScalingReplicaSet",
			fmt.Sprintf("Scaled up replica set %s from 0 to %d", name, count)); err != nil {
			return nil, nil, err
		}
	}
	s.setRevision(newRevision)
	if !already && s.spec.progressDeadline != 0 {
		setCond(s.status(), newCond("Progressing", "True", ReasonNewRSCreated,
			fmt.Sprintf("Created new replica set %q", name), s.now))
	}
	return created, old, nil
}

// errCollision stops a sync after a hash collision was recorded in
// status.collisionCount; the next sync uses the new hash.
var errCollision = errors.New("pod-template-hash collision")

// errBackingOff stops a sync that waits to retry a failed create.
var errBackingOff = errors.New("backing off")

// errRetry is a sync that upstream's controller fails (it logs the error
// and queues the Deployment again), which is no failure of this one: the
// next sync retries.
var errRetry = errors.New("retry")

func rsName(deployName, hash string) string {
	const maxLen = 253 - 1
	if len(deployName) > maxLen-len(hash) {
		deployName = deployName[:maxLen-len(hash)]
	}
	return deployName + "-" + hash
}

// setRevision sets the Deployment's revision annotation (in memory).
func (s *syncer) setRevision(rev string) {
	if rev == "" || kobj.Annotation(s.d, RevisionAnnotation) == rev {
		return
	}
	kobj.SetAnnotation(s.d, RevisionAnnotation, rev)
}

// setNewRSAnnotations is SetNewReplicaSetAnnotations: the Deployment's
// annotations copied, the revision raised and its history kept.
func (s *syncer) setNewRSAnnotations(rs map[string]any, newRevision string, exists bool) bool {
	changed := false
	ann := kobj.EnsureMap(rs, "metadata", "annotations")
	for k, v := range kobj.Map(s.d, "metadata", "annotations") {
		if annotationsToSkip[k] {
			continue
		}
		if cur, ok := ann[k]; ok && value.Equal(cur, v) {
			continue
		}
		ann[k] = v
		changed = true
	}
	oldRev, had := ann[RevisionAnnotation].(string)
	oldInt, err := strconv.ParseInt(oldRev, 10, 64)
	if err != nil {
		if oldRev != "" {
			return false
		}
		oldInt = 0
	}
	newInt, err := strconv.ParseInt(newRevision, 10, 64)
	if err != nil {
		return false
	}
	if oldInt < newInt {
		ann[RevisionAnnotation] = newRevision
		changed = true
	}
	if had && oldInt < newInt {
		hist, _ := ann[RevisionHistoryAnnotation].(string)
		olds := strings.Split(hist, ",")
		if len(olds[0]) == 0 {
			ann[RevisionHistoryAnnotation] = oldRev
		} else {
			total := len(hist) + len(oldRev) + 1
			start := 0
			for total > maxRevHistoryLengthInChars && start < len(olds) {
				total = total - len(olds[start]) - 1
				start++
			}
			if total <= maxRevHistoryLengthInChars {
				ann[RevisionHistoryAnnotation] = strings.Join(append(olds[start:], oldRev), ",")
			}
		}
	}
	if !exists && setReplicasAnnotations(rs, s.spec.replicas, s.spec.replicas+s.spec.MaxSurge()) {
		changed = true
	}
	if len(ann) == 0 {
		delete(kobj.Map(rs, "metadata"), "annotations")
	}
	return changed
}

func setReplicasAnnotations(rs map[string]any, desired, maxReplicas int64) bool {
	ann := kobj.EnsureMap(rs, "metadata", "annotations")
	changed := false
	d, m := strconv.FormatInt(desired, 10), strconv.FormatInt(maxReplicas, 10)
	if ann[DesiredReplicasAnnotation] != d {
		ann[DesiredReplicasAnnotation] = d
		changed = true
	}
	if ann[MaxReplicasAnnotation] != m {
		ann[MaxReplicasAnnotation] = m
		changed = true
	}
	return changed
}

func replicasAnnotationsNeedUpdate(rs map[string]any, desired, maxReplicas int64) bool {
	return kobj.Annotation(rs, DesiredReplicasAnnotation) != strconv.FormatInt(desired, 10) ||
		kobj.Annotation(rs, MaxReplicasAnnotation) != strconv.FormatInt(maxReplicas, 10)
}

// scaleRS is scaleReplicaSet: it writes the size and the replicas
// annotations, records ScalingReplicaSet, and updates rs in place.
func (s *syncer) scaleRS(ctx context.Context, rs map[string]any, newScale int64, force bool) (bool, error) {
	old := rsReplicas(rs)
	if !force && old == newScale {
		return false, nil
	}
	maxR := s.spec.replicas + s.spec.MaxSurge()
	sizeChange := old != newScale
	if !sizeChange && !replicasAnnotationsNeedUpdate(rs, s.spec.replicas, maxR) {
		return false, nil
	}
	next := copyForUpdate(rs)
	kobj.EnsureMap(next, "spec")["replicas"] = newScale
	setReplicasAnnotations(next, s.spec.replicas, maxR)
	got, err := s.c.Update(ctx, next)
	if err != nil {
		return false, fmt.Errorf("scale replicaset %s: %w", kobj.Name(rs), err)
	}
	s.changed = true
	replaceMap(rs, got)
	if !sizeChange {
		return false, nil
	}
	op := "down"
	if old < newScale {
		op = "up"
	}
	return true, s.record(ctx, event.Normal, "ScalingReplicaSet",
		fmt.Sprintf("Scaled %s replica set %s from %d to %d", op, kobj.Name(rs), old, newScale))
}

// copyForUpdate copies a ReplicaSet deep enough to change its metadata
// and the top level of its spec (replicas, minReadySeconds): the rest is
// shared with rs.
func copyForUpdate(rs map[string]any) map[string]any {
	next := maps.Clone(rs)
	if md, ok := rs["metadata"]; ok {
		next["metadata"] = value.DeepCopy(md)
	}
	if spec, ok := rs["spec"].(map[string]any); ok {
		next["spec"] = maps.Clone(spec)
	}
	return next
}

// replaceMap makes dst hold src's content, so that every slice holding
// dst sees the update.
func replaceMap(dst, src map[string]any) {
	for k := range dst {
		delete(dst, k)
	}
	for k, v := range src {
		dst[k] = v
	}
}

// sync is the path of scaling events and paused Deployments: scale
// (proportionally), clean up when paused, update status.
func (s *syncer) sync(ctx context.Context, rss []map[string]any) error {
	newRS, old, err := s.getNewRS(ctx, rss, false)
	if err != nil {
		return s.ignoreCollision(err)
	}
	if err := s.scale(ctx, newRS, old); err != nil {
		return err
	}
	if s.spec.paused {
		if err := s.cleanup(ctx, old); err != nil {
			return err
		}
	}
	s.calculateStatus(append(old, newRS), newRS)
	return s.writeStatus(ctx)
}

func (s *syncer) ignoreCollision(err error) error {
	if errors.Is(err, errCollision) {
		return nil
	}
	return err
}

// scale is the proportional scaling of sync.go.
func (s *syncer) scale(ctx context.Context, newRS map[string]any, old []map[string]any) error {
	if al := findActiveOrLatest(newRS, old); al != nil {
		if rsReplicas(al) == s.spec.replicas {
			return nil
		}
		_, err := s.scaleRS(ctx, al, s.spec.replicas, false)
		return err
	}
	if isSaturated(s.spec.replicas, newRS) {
		for _, o := range activeRSs(old) {
			if _, err := s.scaleRS(ctx, o, 0, false); err != nil {
				return err
			}
		}
		return nil
	}
	if s.spec.recreate {
		return nil
	}
	all := activeRSs(append(append([]map[string]any{}, old...), newRS))
	total := sumSpec(all)
	var allowed int64
	if s.spec.replicas > 0 {
		allowed = s.spec.replicas + s.spec.MaxSurge()
	}
	toAdd := allowed - total
	switch {
	case toAdd > 0:
		sortBySize(all, true)
	case toAdd < 0:
		sortBySize(all, false)
	}
	var added int64
	sizes := make([]int64, len(all))
	for i, rs := range all {
		if toAdd != 0 {
			p := GetProportion(rs, s.d, toAdd, added)
			sizes[i] = rsReplicas(rs) + p
			added += p
		} else {
			sizes[i] = rsReplicas(rs)
		}
	}
	for i, rs := range all {
		if i == 0 && toAdd != 0 {
			sizes[0] += toAdd - added
			if sizes[0] < 0 {
				sizes[0] = 0
			}
		}
		if _, err := s.scaleRS(ctx, rs, sizes[i], true); err != nil {
			return err
		}
	}
	return nil
}

func findActiveOrLatest(newRS map[string]any, old []map[string]any) map[string]any {
	if newRS == nil && len(old) == 0 {
		return nil
	}
	sorted := append([]map[string]any(nil), old...)
	sortByCreation(sorted)
	for i, j := 0, len(sorted)-1; i < j; i, j = i+1, j-1 {
		sorted[i], sorted[j] = sorted[j], sorted[i]
	}
	act := activeRSs(append(sorted, newRS))
	switch len(act) {
	case 0:
		if newRS != nil {
			return newRS
		}
		return sorted[0]
	case 1:
		return act[0]
	}
	return nil
}

func isSaturated(replicas int64, rs map[string]any) bool {
	if rs == nil {
		return false
	}
	desired, err := strconv.ParseInt(kobj.Annotation(rs, DesiredReplicasAnnotation), 10, 64)
	if err != nil {
		return false
	}
	return rsReplicas(rs) == replicas && desired == replicas && rsStatus(rs, "availableReplicas") == replicas
}

// cleanup deletes the oldest ReplicaSets beyond revisionHistoryLimit that
// are scaled to 0 and settled.
func (s *syncer) cleanup(ctx context.Context, old []map[string]any) error {
	if !s.spec.hasHistoryLimit {
		return nil
	}
	var alive []map[string]any
	for _, rs := range old {
		if rs != nil && !kobj.Deleting(rs) {
			alive = append(alive, rs)
		}
	}
	diff := int64(len(alive)) - s.spec.historyLimit
	if diff <= 0 {
		return nil
	}
	sortByRevision(alive)
	for _, rs := range alive[:diff] {
		if rsStatus(rs, "replicas") != 0 || rsReplicas(rs) != 0 ||
			kobj.IntOr(rs, 0, "metadata", "generation") > rsStatus(rs, "observedGeneration") {
			continue
		}
		err := s.c.Delete(ctx, kobj.ReplicaSetGVK, kobj.Namespace(rs), kobj.Name(rs))
		if err != nil && !cluster.IsNotFound(err) {
			return fmt.Errorf("delete replicaset %s: %w", kobj.Name(rs), err)
		}
		s.changed = true
	}
	return nil
}

func sortByRevision(rss []map[string]any) {
	sortByCreation(rss)
	// Stable: by revision, creation order among equals (ReplicaSetsByRevision).
	for i := 1; i < len(rss); i++ {
		for j := i; j > 0; j-- {
			a, _ := revision(rss[j-1])
			b, _ := revision(rss[j])
			if a <= b {
				break
			}
			rss[j-1], rss[j] = rss[j], rss[j-1]
		}
	}
}

// calculateStatus sets status from the ReplicaSets (calculateStatus of
// sync.go), keeping the conditions and setting Available.
func (s *syncer) calculateStatus(all []map[string]any, newRS map[string]any) {
	var live []map[string]any
	for _, rs := range all {
		if rs != nil {
			live = append(live, rs)
		}
	}
	avail := sumStatus(live, "availableReplicas")
	total := sumSpec(live)
	unavail := total - avail
	if unavail < 0 {
		unavail = 0
	}
	st := s.status()
	st["observedGeneration"] = kobj.IntOr(s.d, 0, "metadata", "generation")
	setCount(st, "replicas", sumStatus(live, "replicas"))
	var updated int64
	if newRS != nil {
		updated = rsStatus(newRS, "replicas")
	}
	setCount(st, "updatedReplicas", updated)
	setCount(st, "readyReplicas", sumStatus(live, "readyReplicas"))
	setCount(st, "availableReplicas", avail)
	setCount(st, "unavailableReplicas", unavail)
	st["terminatingReplicas"] = sumStatus(live, "terminatingReplicas")
	if avail >= s.spec.replicas-s.spec.MaxUnavailable() {
		setCond(st, newCond("Available", "True", ReasonMinAvailable, msgMinAvailable, s.now))
	} else {
		setCond(st, newCond("Available", "False", ReasonMinUnavailable, msgMinUnavailable, s.now))
	}
}

func setCount(st map[string]any, k string, v int64) {
	if v == 0 {
		delete(st, k)
		return
	}
	st[k] = v
}

func (s *syncer) complete() bool {
	st := s.status()
	r := s.spec.replicas
	return kobj.IntOr(st, 0, "updatedReplicas") == r && kobj.IntOr(st, 0, "replicas") == r &&
		kobj.IntOr(st, 0, "availableReplicas") == r &&
		kobj.IntOr(st, 0, "observedGeneration") >= kobj.IntOr(s.d, 0, "metadata", "generation")
}

// syncRolloutStatus is progress.go: status, the Progressing condition
// against the deadline, ReplicaFailure from the ReplicaSets.
func (s *syncer) syncRolloutStatus(ctx context.Context, all []map[string]any, newRS map[string]any) error {
	prev := kobj.Copy(s.status())
	s.calculateStatus(all, newRS)
	st := s.status()
	if s.spec.progressDeadline == 0 {
		removeCond(st, "Progressing")
	}
	cur := getCond(prev, "Progressing")
	isComplete := kobj.IntOr(st, 0, "replicas") == kobj.IntOr(st, 0, "updatedReplicas") && cur != nil && cur["reason"] == ReasonNewRSAvailable
	if s.spec.progressDeadline != 0 && !isComplete {
		rsName := ""
		if newRS != nil {
			rsName = kobj.Name(newRS)
		}
		subject := func(verb string) string {
			if newRS != nil {
				return fmt.Sprintf("ReplicaSet %q %s", rsName, verb)
			}
			return fmt.Sprintf("Deployment %q %s", kobj.Name(s.d), verb)
		}
		switch {
		case s.complete():
			setCond(st, newCond("Progressing", "True", ReasonNewRSAvailable, subject("has successfully progressed."), s.now))
		case progressing(prev, st):
			c := newCond("Progressing", "True", ReasonRSUpdated, subject("is progressing."), s.now)
			if cur != nil {
				if cur["status"] == "True" {
					c["lastTransitionTime"] = cur["lastTransitionTime"]
				}
				removeCond(st, "Progressing")
			}
			setCond(st, c)
		case s.timedOut(st):
			setCond(st, newCond("Progressing", "False", ReasonTimedOut, subject("has timed out progressing."), s.now))
		}
	}
	if f := replicaFailure(all, newRS); f != nil {
		setCond(st, f)
	} else {
		removeCond(st, "ReplicaFailure")
	}
	// Requeue at the deadline of a rollout still progressing.
	if c := getCond(st, "Progressing"); s.spec.progressDeadline != 0 && c != nil && !s.complete() && c["reason"] != ReasonTimedOut {
		from := kobj.ParseTime(kobj.Str(c, "lastUpdateTime"))
		if !from.IsZero() {
			at := from.Add(kobj.Seconds(s.spec.progressDeadline)).Add(time.Second)
			if at.After(s.now) && (s.requeue.IsZero() || at.Before(s.requeue)) {
				s.requeue = at
			}
		}
	}
	return s.writeStatus(ctx)
}

func progressing(old, st map[string]any) bool {
	g := func(m map[string]any, k string) int64 { return kobj.IntOr(m, 0, k) }
	oldOld := g(old, "replicas") - g(old, "updatedReplicas")
	newOld := g(st, "replicas") - g(st, "updatedReplicas")
	return g(st, "updatedReplicas") > g(old, "updatedReplicas") || newOld < oldOld ||
		g(st, "readyReplicas") > g(old, "readyReplicas") || g(st, "availableReplicas") > g(old, "availableReplicas")
}

func (s *syncer) timedOut(st map[string]any) bool {
	c := getCond(st, "Progressing")
	if c == nil || c["reason"] == ReasonNewRSAvailable {
		return false
	}
	if c["reason"] == ReasonTimedOut {
		return true
	}
	from := kobj.ParseTime(kobj.Str(c, "lastUpdateTime"))
	return from.Add(kobj.Seconds(s.spec.progressDeadline)).Before(s.now)
}

func replicaFailure(all []map[string]any, newRS map[string]any) map[string]any {
	conv := func(rs map[string]any) map[string]any {
		c := kobj.Condition(rs, "ReplicaFailure")
		if c == nil {
			return nil
		}
		return map[string]any{
			"type": "ReplicaFailure", "status": c["status"], "reason": c["reason"], "message": c["message"],
			"lastUpdateTime": c["lastTransitionTime"], "lastTransitionTime": c["lastTransitionTime"],
		}
	}
	if newRS != nil {
		if c := conv(newRS); c != nil {
			return c
		}
	}
	for _, rs := range all {
		if rs != nil {
			if c := conv(rs); c != nil {
				return c
			}
		}
	}
	return nil
}
