// Package statefulset is the StatefulSet controller of the embedded
// cluster, after kube-controller-manager 1.37's (pkg/controller/statefulset):
// pods named `<set>-<ordinal>` with a stable identity (the labels
// statefulset.kubernetes.io/pod-name and apps.kubernetes.io/pod-index,
// hostname and subdomain), created in order and each only once its
// predecessors are Running and Ready (OrderedReady) or all at once
// (Parallel), removed from the highest ordinal down; PersistentVolumeClaims
// from volumeClaimTemplates, created before their pod and owned as the
// persistentVolumeClaimRetentionPolicy says; ControllerRevisions named and
// hashed as upstream's, currentRevision/updateRevision and collisionCount;
// RollingUpdate from the highest ordinal with partition and maxUnavailable
// (MaxUnavailableStatefulSet is on in 1.37), or OnDelete; history limits;
// and upstream's event texts.
//
// The Recreate strategy (alpha, off by default in 1.37) is refused with
// upstream's UnknownStrategy event.
package statefulset

import (
	"context"
	"fmt"
	"maps"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/controller"
	"github.com/konverge/konverge/controller/event"
	"github.com/konverge/konverge/controller/internal/claim"
	"github.com/konverge/konverge/controller/internal/history"
	"github.com/konverge/konverge/controller/internal/kobj"
	"github.com/konverge/konverge/controller/internal/podmemo"
	"github.com/konverge/konverge/controller/internal/reconcile"
	"github.com/konverge/konverge/selector"
	"github.com/konverge/konverge/value"
)

// Component is the source of the controller's Events.
const Component = "statefulset-controller"

// The labels of a StatefulSet's pods.
const (
	PodNameLabel  = "statefulset.kubernetes.io/pod-name"
	PodIndexLabel = "apps.kubernetes.io/pod-index"
	RevisionLabel = "controller-revision-hash"
)

// Controller is the StatefulSet controller. The zero value syncs every
// StatefulSet in every sync; New returns one that remembers (an
// incremental controller, one per runner).
type Controller struct {
	m *podmemo.Memory
}

// New returns an incremental StatefulSet controller: SyncChanged syncs
// only the StatefulSets that writes since concern (see
// podmemo.Memory.Dirty; the claims of their namespace), those whose last
// sync wrote something and those whose requeue time came; the others
// would write nothing.
func New() Controller { return Controller{m: &podmemo.Memory{}} }

var _ controller.Incremental = Controller{}

// Name implements controller.Controller.
func (Controller) Name() string { return "statefulset" }

// Reset forgets what the controller remembers: the next sync is a full
// one.
func (ctl Controller) Reset() {
	if ctl.m != nil {
		ctl.m.Reset()
	}
}

// owners is the controller's scaffold: its Sync and SyncChanged.
var owners = podmemo.Owners{
	Name:  "statefulset",
	GVK:   kobj.StatefulSetGVK,
	Kinds: podmemo.Kinds{Group: "apps", Kind: "StatefulSet", Claims: true, Revisions: true},
	Sync:  syncAll,
}

// Sync reconciles every StatefulSet once: one List each of StatefulSets,
// Pods, PersistentVolumeClaims and ControllerRevisions, then only the
// writes that change something.
func (ctl Controller) Sync(ctx context.Context, c cluster.Interface, now time.Time) (controller.Result, error) {
	return owners.Full(ctx, c, now, ctl.m)
}

// SyncChanged implements controller.Incremental.
func (ctl Controller) SyncChanged(ctx context.Context, c cluster.Interface, now time.Time, changed []controller.Key) (controller.Result, error) {
	return owners.Changed(ctx, c, now, ctl.m, changed)
}

// syncAll syncs sets with pods (every pod, or those sets may claim).
func syncAll(ctx context.Context, c cluster.Interface, now time.Time, m *podmemo.Memory, _, sets, pods []map[string]any) (controller.Result, error) {
	revs, err := c.List(ctx, kobj.ControllerRevisionGVK)
	if err != nil {
		return controller.Result{}, fmt.Errorf("statefulset: list controllerrevisions: %w", err)
	}
	w := &world{c: c, now: now, pods: claim.NewIndex(pods), revs: claim.NewIndex(revs.Items)}
	loop := reconcile.Loop{Name: "statefulset", Component: Component, Wait: true, Memory: m}
	return loop.Run(ctx, c, now, sets, func(ctx context.Context, set map[string]any) (reconcile.Outcome, error) {
		s := &syncer{world: w, set: set}
		err := s.run(ctx)
		return reconcile.Outcome{Changed: s.changed, Requeue: s.requeue}, err
	})
}

// world is what one Sync shares between the StatefulSets.
type world struct {
	c    cluster.Interface
	now  time.Time
	pods *claim.Index
	revs *claim.Index
	// claims are the PersistentVolumeClaims, listed on first use, by
	// namespace and name, following this sync's writes.
	claims map[nsName]map[string]any
}

type nsName struct{ ns, name string }

func (w *world) claim(ctx context.Context, ns, name string) (map[string]any, error) {
	if w.claims == nil {
		l, err := w.c.List(ctx, kobj.PVCGVK)
		if err != nil {
			return nil, fmt.Errorf("list persistentvolumeclaims: %w", err)
		}
		w.claims = make(map[nsName]map[string]any, len(l.Items))
		for _, p := range l.Items {
			w.claims[nsName{kobj.Namespace(p), kobj.Name(p)}] = p
		}
	}
	return w.claims[nsName{ns, name}], nil
}

// syncer is one StatefulSet's sync.
type syncer struct {
	*world
	set     map[string]any
	spec    spec
	changed bool
	requeue time.Time
	// created counts the pods created at the sync's time (second);
	// deleted the pods this sync deleted.
	created, deleted int
}

// spec is what the controller reads of a StatefulSet's spec (defaulted
// by the API server).
type spec struct {
	replicas        int
	start           int
	minReady        int64
	parallel        bool
	strategy        string // RollingUpdate, OnDelete, Recreate
	partition       int
	hasRolling      bool
	maxUnavailable  any
	historyLimit    int64
	whenScaled      string
	whenDeleted     string
	serviceName     string
	claimTemplates  []map[string]any
	selectorLabels  map[string]any
	collisionCount  int64
	currentRevision string
}

func readSpec(set map[string]any) spec {
	s := spec{
		replicas:        int(clampInt(kobj.IntOr(set, 1, "spec", "replicas"))),
		start:           int(clampInt(kobj.IntOr(set, 0, "spec", "ordinals", "start"))),
		minReady:        kobj.IntOr(set, 0, "spec", "minReadySeconds"),
		parallel:        kobj.Str(set, "spec", "podManagementPolicy") == "Parallel",
		strategy:        kobj.Str(set, "spec", "updateStrategy", "type"),
		historyLimit:    kobj.IntOr(set, 10, "spec", "revisionHistoryLimit"),
		whenScaled:      kobj.Str(set, "spec", "persistentVolumeClaimRetentionPolicy", "whenScaled"),
		whenDeleted:     kobj.Str(set, "spec", "persistentVolumeClaimRetentionPolicy", "whenDeleted"),
		serviceName:     kobj.Str(set, "spec", "serviceName"),
		selectorLabels:  kobj.Map(set, "spec", "selector", "matchLabels"),
		collisionCount:  kobj.IntOr(set, 0, "status", "collisionCount"),
		currentRevision: kobj.Str(set, "status", "currentRevision"),
	}
	if s.replicas < 0 {
		s.replicas = 0
	}
	if s.strategy == "" {
		s.strategy = "RollingUpdate"
	}
	if ru := kobj.Map(set, "spec", "updateStrategy", "rollingUpdate"); ru != nil {
		s.hasRolling = true
		s.partition = int(clampInt(kobj.IntOr(ru, 0, "partition")))
		s.maxUnavailable = ru["maxUnavailable"]
	}
	if s.whenScaled == "" {
		s.whenScaled = "Retain"
	}
	if s.whenDeleted == "" {
		s.whenDeleted = "Retain"
	}
	for _, t := range kobj.Slice(set, "spec", "volumeClaimTemplates") {
		if m, ok := t.(map[string]any); ok {
			s.claimTemplates = append(s.claimTemplates, m)
		}
	}
	return s
}

// clampInt keeps counts from user input within what an int32 field holds,
// so that nothing the user applies allocates or loops without bound.
func clampInt(v int64) int64 {
	const max = 1<<31 - 1
	switch {
	case v > max:
		return max
	case v < -max:
		return -max
	}
	return v
}

// maxPods bounds the pods one StatefulSet may ask for in the embedded
// cluster: more replicas than this are a user error the controller
// reports as an Event instead of trying.
const maxPods = 100000

// burstPods is how many pods one sync of a StatefulSet creates, or
// deletes, at most (upstream's MaxBatchSize), and how many it creates per
// second of cluster time: a huge Parallel StatefulSet fills over many
// seconds (as the real one, throttled by the API server) and one sync's
// work stays bounded.
const burstPods = 500

func (s *syncer) record(ctx context.Context, typ, reason, msg string) error {
	if err := event.Record(ctx, s.c, s.now, s.set, typ, reason, msg, Component); err != nil {
		return err
	}
	s.changed = true
	return nil
}

func (s *syncer) run(ctx context.Context) error {
	s.spec = readSpec(s.set)
	sel, err := selector.FromLabelSelector(kobj.Map(s.set, "spec", "selector"))
	if err != nil {
		// Not transient: upstream logs it and does not retry.
		return nil
	}
	if s.spec.replicas > maxPods {
		return s.record(ctx, event.Warning, "FailedCreate", fmt.Sprintf("StatefulSet %s asks for %d replicas; the embedded cluster runs at most %d pods per StatefulSet", kobj.Name(s.set), s.spec.replicas, maxPods))
	}
	revisions, err := s.claimRevisions(ctx, sel)
	if err != nil {
		return err
	}
	pods, err := s.claimPods(ctx, sel)
	if err != nil {
		return err
	}
	return s.update(ctx, pods, revisions)
}

// claimRevisions adopts the orphaned ControllerRevisions the selector
// matches and returns the set's revisions: those matching the selector
// that it controls or that are orphans (ListControllerRevisions).
func (s *syncer) claimRevisions(ctx context.Context, sel selector.Labels) ([]map[string]any, error) {
	uid := kobj.UID(s.set)
	var out []map[string]any
	for _, r := range s.revs.Candidates(s.set) {
		if !sel.Matches(kobj.Labels(r)) {
			continue
		}
		if kobj.ControllerUID(r) == uid {
			out = append(out, r)
			continue
		}
		if kobj.Deleting(s.set) {
			out = append(out, r)
			continue
		}
		adopted, err := claim.Adopt(ctx, s.c, r, s.set, kobj.StatefulSetGVK)
		if err != nil {
			if cluster.IsNotFound(err) || cluster.IsConflict(err) {
				s.changed = true
				continue
			}
			return nil, err
		}
		s.revs.Forget(r)
		s.changed = true
		out = append(out, adopted)
	}
	return out, nil
}

// claimPods returns the pods of the set: owned or adopted pods that match
// the selector and are named as its members.
func (s *syncer) claimPods(ctx context.Context, sel selector.Labels) ([]map[string]any, error) {
	name := kobj.Name(s.set)
	match := func(p map[string]any) bool {
		parent, _ := parentAndOrdinal(kobj.Name(p))
		return parent == name && sel.Matches(kobj.Labels(p))
	}
	pods, changed, err := claim.Objects(ctx, s.c, s.set, kobj.StatefulSetGVK, s.pods.Candidates(s.set), match)
	if changed {
		s.changed = true
		for _, p := range pods {
			s.pods.Forget(p)
		}
	}
	return pods, err
}

// parentAndOrdinal splits a pod name `<parent>-<ordinal>` (the regexp
// "(.*)-([0-9]+)$"); the ordinal is -1 when the name has none.
func parentAndOrdinal(name string) (string, int) {
	i := strings.LastIndexByte(name, '-')
	if i < 0 || i == len(name)-1 {
		return "", -1
	}
	digits := name[i+1:]
	for j := 0; j < len(digits); j++ {
		if digits[j] < '0' || digits[j] > '9' {
			return "", -1
		}
	}
	n, err := strconv.ParseInt(digits, 10, 32)
	if err != nil {
		return name[:i], -1
	}
	return name[:i], int(n)
}

func ordinalOf(pod map[string]any) int {
	_, o := parentAndOrdinal(kobj.Name(pod))
	return o
}

func podName(set map[string]any, ordinal int) string {
	return kobj.Name(set) + "-" + strconv.Itoa(ordinal)
}

func claimName(set, template map[string]any, ordinal int) string {
	return kobj.Name(template) + "-" + kobj.Name(set) + "-" + strconv.Itoa(ordinal)
}

func podRevision(pod map[string]any) string {
	return kobj.Str(pod, "metadata", "labels", RevisionLabel)
}

func isCreated(pod map[string]any) bool     { return kobj.Str(pod, "status", "phase") != "" }
func isPending(pod map[string]any) bool     { return kobj.Str(pod, "status", "phase") == "Pending" }
func isTerminating(pod map[string]any) bool { return kobj.Deleting(pod) }
func isTerminal(pod map[string]any) bool {
	p := kobj.Str(pod, "status", "phase")
	return p == "Succeeded" || p == "Failed"
}

// requeueAt asks for a sync at t at the latest.
func (s *syncer) requeueAt(t time.Time) {
	if s.requeue.IsZero() || t.Before(s.requeue) {
		s.requeue = t
	}
}

// available reports a pod available at now (podutil.IsPodAvailable); it
// notes when a ready pod becomes available.
func (s *syncer) available(pod map[string]any) bool {
	ok, at := kobj.PodAvailable(pod, s.spec.minReady, s.now)
	if !ok && !at.IsZero() && (s.requeue.IsZero() || at.Before(s.requeue)) {
		s.requeue = at
	}
	return ok
}

func (s *syncer) runningAndAvailable(pod map[string]any) bool { return s.available(pod) }

func (s *syncer) unavailable(pod map[string]any) bool {
	return !s.available(pod) || isTerminating(pod)
}

// revisionsOf returns the current and update revisions, creating the
// update revision (or renumbering an equal older one) as upstream's
// getStatefulSetRevisions, and the collision count.
func (s *syncer) revisionsOf(ctx context.Context, revisions []map[string]any) (current, update map[string]any, collisions int64, err error) {
	history.Sort(revisions)
	collisions = s.spec.collisionCount
	tmpl := kobj.Map(s.set, "spec", "template")
	data, raw, err := history.Patch(tmpl)
	if err != nil {
		return nil, nil, collisions, err
	}
	n := history.Next(revisions)
	var equal []map[string]any
	for _, r := range revisions {
		if string(history.Raw(r)) == string(raw) {
			equal = append(equal, r)
		}
	}
	switch {
	case len(equal) > 0 && kobj.Name(revisions[len(revisions)-1]) == kobj.Name(equal[len(equal)-1]):
		update = revisions[len(revisions)-1]
	case len(equal) > 0:
		update, err = history.SetRevision(ctx, s.c, equal[len(equal)-1], n)
		if err != nil {
			return nil, nil, collisions, err
		}
		s.changed = true
	default:
		update, collisions, err = s.createRevision(ctx, data, raw, n, collisions)
		if err != nil {
			return nil, nil, collisions, err
		}
	}
	for _, r := range revisions {
		if kobj.Name(r) == s.spec.currentRevision {
			current = r
			break
		}
	}
	if current == nil {
		current = update
	}
	return current, update, collisions, nil
}

// createRevision is CreateControllerRevision: on a name taken by a
// revision with other data it counts a collision and tries the next
// hash.
func (s *syncer) createRevision(ctx context.Context, data map[string]any, raw []byte, n, collisions int64) (map[string]any, int64, error) {
	labels := kobj.StringMap(s.set, "spec", "template", "metadata", "labels")
	if labels == nil {
		labels = map[string]string{}
	}
	annotations := kobj.Map(s.set, "metadata", "annotations")
	for i := 0; i < 100; i++ {
		cc := collisions
		hash := history.Hash(raw, &cc)
		name := history.Name(kobj.Name(s.set), hash)
		ls := maps.Clone(labels)
		ls[history.HashLabel] = hash
		rev := history.New(s.set, kobj.StatefulSetGVK, name, ls, annotations, data, n)
		created, err := s.c.Create(ctx, rev)
		if err == nil {
			s.changed = true
			return created, collisions, nil
		}
		if !cluster.IsAlreadyExists(err) {
			return nil, collisions, fmt.Errorf("create controllerrevision %s: %w", name, err)
		}
		existing, gerr := s.c.Get(ctx, kobj.ControllerRevisionGVK, kobj.Namespace(s.set), name)
		if gerr != nil {
			return nil, collisions, fmt.Errorf("get controllerrevision %s: %w", name, gerr)
		}
		if string(history.Raw(existing)) == string(raw) {
			return existing, collisions, nil
		}
		collisions++
	}
	return nil, collisions, fmt.Errorf("create controllerrevision: 100 hash collisions")
}

// withTemplate is the set with the pod template a revision stores
// (ApplyRevision).
func withTemplate(set, rev map[string]any) map[string]any {
	t := history.Template(rev)
	if t == nil {
		return set
	}
	out := maps.Clone(set)
	sp := maps.Clone(kobj.Map(set, "spec"))
	sp["template"] = t
	out["spec"] = sp
	return out
}

// status is a StatefulSet's status as the controller computes it.
type status struct {
	observedGeneration int64
	replicas           int64
	ready              int64
	available          int64
	current            int64
	updated            int64
	currentRevision    string
	updateRevision     string
	collisionCount     int64
	conditions         []any
}

func (s *syncer) countInto(st *status, lists ...[]map[string]any) {
	st.replicas, st.ready, st.available, st.current, st.updated = 0, 0, 0, 0, 0
	for _, list := range lists {
		for _, pod := range list {
			if pod == nil {
				continue
			}
			if isCreated(pod) {
				st.replicas++
			}
			if kobj.PodRunningAndReady(pod) {
				st.ready++
				if s.available(pod) {
					st.available++
				}
			}
			if isCreated(pod) && !isTerminating(pod) {
				rev := podRevision(pod)
				if rev == st.currentRevision {
					st.current++
				}
				if rev == st.updateRevision {
					st.updated++
				}
			}
		}
	}
}

// update is UpdateStatefulSet: revisions, pods, status, history.
func (s *syncer) update(ctx context.Context, pods, revisions []map[string]any) error {
	current, update, collisions, err := s.revisionsOf(ctx, revisions)
	if err != nil {
		return err
	}
	st, updErr := s.updatePods(ctx, current, update, collisions, pods)
	if st != nil {
		if err := s.writeStatus(ctx, st); err != nil && updErr == nil {
			updErr = err
		}
	}
	if err := s.truncateHistory(ctx, pods, revisions, current, update); err != nil && updErr == nil {
		updErr = err
	}
	return updErr
}

// updatePods is updateStatefulSet: it creates, updates and deletes pods
// towards the target state and returns the status.
func (s *syncer) updatePods(ctx context.Context, currentRev, updateRev map[string]any, collisions int64, pods []map[string]any) (*status, error) {
	currentSet := withTemplate(s.set, currentRev)
	updateSet := withTemplate(s.set, updateRev)
	if s.spec.strategy == "Recreate" {
		msg := fmt.Sprintf("statefulset %s/%s uses Recreate strategy but feature gate StatefulSetRecreateStrategy is disabled", kobj.Namespace(s.set), kobj.Name(s.set))
		return nil, s.record(ctx, event.Warning, "UnknownStrategy", msg)
	}
	st := &status{
		observedGeneration: kobj.IntOr(s.set, 0, "metadata", "generation"),
		currentRevision:    kobj.Name(currentRev),
		updateRevision:     kobj.Name(updateRev),
		collisionCount:     collisions,
		conditions:         kobj.Slice(s.set, "status", "conditions"),
	}
	s.countInto(st, pods)

	replicas := make([]map[string]any, s.spec.replicas)
	var condemned []map[string]any
	start, end := s.spec.start, s.spec.start+s.spec.replicas-1
	for _, pod := range pods {
		o := ordinalOf(pod)
		switch {
		case o >= start && o <= end:
			replicas[o-start] = pod
		case o >= 0:
			condemned = append(condemned, pod)
		}
	}
	currentReplicas := kobj.IntOr(s.set, 0, "status", "currentReplicas")
	// The pods not created yet are made when the sync reaches them (a
	// sync creates a burst at most: a set of 100,000 replicas does not
	// build 100,000 pods in every sync); nil until then.
	materialize := func(i int) map[string]any {
		if replicas[i] == nil {
			replicas[i] = s.newVersionedPod(currentSet, updateSet, kobj.Name(currentRev), kobj.Name(updateRev), start+i, currentReplicas)
		}
		return replicas[i]
	}
	sort.SliceStable(condemned, func(i, j int) bool { return ordinalOf(condemned[i]) > ordinalOf(condemned[j]) })

	var firstUnavailable map[string]any
	for i, p := range replicas {
		// (A pod not created yet is unavailable.)
		if p == nil || s.unavailable(p) {
			firstUnavailable = materialize(i)
			break
		}
	}
	for i := len(condemned) - 1; i >= 0; i-- {
		if s.unavailable(condemned[i]) && firstUnavailable == nil {
			firstUnavailable = condemned[i]
		}
	}
	if kobj.Deleting(s.set) {
		return st, nil
	}
	monotonic := !s.spec.parallel
	done := func(err error) (*status, error) {
		s.countInto(st, replicas, condemned)
		return st, err
	}

	// At most a burst of creations per second of cluster time.
	ts := kobj.FormatTime(s.now)
	for _, group := range [][]map[string]any{replicas, condemned} {
		for _, p := range group {
			if p != nil && kobj.Str(p, "metadata", "creationTimestamp") == ts {
				s.created++
			}
		}
	}
	// The replicas in range, in order.
	for i := range replicas {
		if s.created >= burstPods {
			// The rest a second later.
			s.requeueAt(s.now.Add(time.Second))
			return done(nil)
		}
		materialize(i)
		exit, err := s.processReplica(ctx, updateSet, monotonic, replicas, i)
		if err != nil {
			if monotonic {
				return done(err)
			}
			return done(err)
		}
		if exit && monotonic {
			return done(nil)
		}
	}
	// Claims of condemned pods follow the retention policy.
	for _, p := range condemned {
		match, err := s.claimsMatchPolicy(ctx, updateSet, p)
		if err != nil {
			return done(err)
		}
		if !match {
			if err := s.updateClaimsForPolicy(ctx, updateSet, p); err != nil {
				return done(err)
			}
		}
	}
	// Scale down, from the highest ordinal, at most a burst per sync.
	for _, p := range condemned {
		if s.deleted >= burstPods {
			s.requeueAt(s.now.Add(time.Second))
			return done(nil)
		}
		exit, err := s.processCondemned(ctx, firstUnavailable, monotonic, p)
		if err != nil {
			return done(err)
		}
		if exit && monotonic {
			return done(nil)
		}
	}
	s.countInto(st, replicas, condemned)
	if s.spec.strategy == "OnDelete" {
		return st, nil
	}
	return st, s.rollingUpdate(ctx, replicas, updateRev, st)
}

// newVersionedPod is newVersionedStatefulSetPod: ordinals below the
// partition get the current revision, the others the update revision.
func (s *syncer) newVersionedPod(currentSet, updateSet map[string]any, currentRev, updateRev string, ordinal int, currentReplicas int64) map[string]any {
	useCurrent := false
	if s.spec.strategy == "RollingUpdate" && !s.spec.hasRolling && int64(ordinal) < int64(s.spec.start)+currentReplicas {
		useCurrent = true
	}
	if s.spec.hasRolling && ordinal < s.spec.start+s.spec.partition {
		useCurrent = true
	}
	if useCurrent {
		return newPod(currentSet, ordinal, currentRev)
	}
	return newPod(updateSet, ordinal, updateRev)
}

// newPod is newStatefulSetPod with its revision label: the template's
// labels, annotations and finalizers, the identity and the volumes of the
// claims. It has no status: not created yet.
func newPod(set map[string]any, ordinal int, revision string) map[string]any {
	tmpl := kobj.Map(set, "spec", "template")
	md := kobj.Map(tmpl, "metadata")
	name := podName(set, ordinal)
	labels := map[string]any{}
	for k, v := range kobj.Map(md, "labels") {
		labels[k] = v
	}
	labels[PodNameLabel] = name
	labels[PodIndexLabel] = strconv.Itoa(ordinal)
	labels[RevisionLabel] = revision
	pmd := map[string]any{
		"name":            name,
		"generateName":    kobj.Name(set) + "-",
		"namespace":       kobj.Namespace(set),
		"labels":          labels,
		"ownerReferences": []any{kobj.NewControllerRef(set, kobj.StatefulSetGVK)},
	}
	if a := kobj.Map(md, "annotations"); len(a) > 0 {
		pmd["annotations"] = value.DeepCopy(a)
	}
	if f := kobj.Slice(md, "finalizers"); len(f) > 0 {
		pmd["finalizers"] = value.DeepCopy(f)
	}
	spec, _ := value.DeepCopy(kobj.Map(tmpl, "spec")).(map[string]any)
	if spec == nil {
		spec = map[string]any{}
	}
	spec["hostname"] = name
	if sn := kobj.Str(set, "spec", "serviceName"); sn != "" {
		spec["subdomain"] = sn
	}
	pod := map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": pmd, "spec": spec}
	updateStorage(set, pod)
	return pod
}

// updateStorage points the pod's volumes of the claim templates at its
// claims, keeping its other volumes after them.
func updateStorage(set, pod map[string]any) {
	templates := kobj.Slice(set, "spec", "volumeClaimTemplates")
	if len(templates) == 0 {
		return
	}
	ordinal := ordinalOf(pod)
	spec := kobj.EnsureMap(pod, "spec")
	names := map[string]bool{}
	var vols []any
	for _, t := range templates {
		tm, _ := t.(map[string]any)
		n := kobj.Name(tm)
		names[n] = true
		vols = append(vols, map[string]any{
			"name":                  n,
			"persistentVolumeClaim": map[string]any{"claimName": claimName(set, tm, ordinal)},
		})
	}
	for _, v := range kobj.Slice(spec, "volumes") {
		vm, _ := v.(map[string]any)
		if !names[kobj.Str(vm, "name")] {
			vols = append(vols, v)
		}
	}
	spec["volumes"] = vols
}

func identityMatches(set, pod map[string]any) bool {
	parent, ordinal := parentAndOrdinal(kobj.Name(pod))
	return ordinal >= 0 && parent == kobj.Name(set) && kobj.Name(pod) == podName(set, ordinal) &&
		kobj.Namespace(pod) == kobj.Namespace(set) &&
		kobj.Str(pod, "metadata", "labels", PodNameLabel) == kobj.Name(pod)
}

func storageMatches(set, pod map[string]any) bool {
	ordinal := ordinalOf(pod)
	if ordinal < 0 {
		return false
	}
	vols := map[string]map[string]any{}
	for _, v := range kobj.Slice(pod, "spec", "volumes") {
		vm, _ := v.(map[string]any)
		vols[kobj.Str(vm, "name")] = vm
	}
	for _, t := range kobj.Slice(set, "spec", "volumeClaimTemplates") {
		tm, _ := t.(map[string]any)
		v, ok := vols[kobj.Name(tm)]
		if !ok || kobj.Str(v, "persistentVolumeClaim", "claimName") != claimName(set, tm, ordinal) {
			return false
		}
	}
	return true
}

// processReplica is upstream's: it reports whether a monotonic sync must
// stop at this replica.
func (s *syncer) processReplica(ctx context.Context, updateSet map[string]any, monotonic bool, replicas []map[string]any, i int) (bool, error) {
	pod := replicas[i]
	if isTerminal(pod) {
		if !kobj.Deleting(pod) {
			if err := s.deletePod(ctx, pod); err != nil {
				return true, err
			}
		}
		return true, nil
	}
	if !isCreated(pod) {
		stale, err := s.claimIsStale(ctx, pod)
		if err != nil || stale {
			return true, err
		}
		created, err := s.createPod(ctx, pod)
		if err != nil {
			return true, err
		}
		if created != nil {
			replicas[i] = withoutStatus(created)
		}
		if monotonic {
			return true, nil
		}
		return false, nil
	}
	if isPending(pod) {
		if err := s.createClaims(ctx, s.set, pod); err != nil {
			return true, err
		}
		if err := s.updateClaimsForPolicy(ctx, s.set, pod); err != nil {
			s.recordPod(ctx, "update", pod, err)
			return true, err
		}
	}
	if isTerminating(pod) && monotonic {
		return true, nil
	}
	if !kobj.PodRunningAndReady(pod) && monotonic {
		return true, nil
	}
	if !s.runningAndAvailable(pod) && monotonic {
		return true, nil
	}
	match, err := s.claimsMatchPolicy(ctx, updateSet, pod)
	if err != nil {
		match = true
	}
	if identityMatches(s.set, pod) && storageMatches(s.set, pod) && match {
		return false, nil
	}
	if err := s.updatePod(ctx, updateSet, kobj.Copy(pod)); err != nil {
		return true, err
	}
	return false, nil
}

// withoutStatus is a pod just created as the controller sees it in the
// same sync: not yet created as far as its status goes.
func withoutStatus(pod map[string]any) map[string]any {
	out := maps.Clone(pod)
	delete(out, "status")
	return out
}

func (s *syncer) processCondemned(ctx context.Context, firstUnavailable map[string]any, monotonic bool, pod map[string]any) (bool, error) {
	if isTerminating(pod) {
		return monotonic, nil
	}
	first := firstUnavailable != nil && kobj.Name(firstUnavailable) == kobj.Name(pod)
	if !kobj.PodRunningAndReady(pod) && monotonic && !first {
		return true, nil
	}
	if !s.runningAndAvailable(pod) && monotonic && !first {
		return true, nil
	}
	return true, s.deletePod(ctx, pod)
}

// rollingUpdate is updateStatefulSetAfterInvariantEstablished: it deletes
// the pods not at the update revision from the highest ordinal down to
// the partition, at most maxUnavailable unavailable at a time.
func (s *syncer) rollingUpdate(ctx context.Context, replicas []map[string]any, updateRev map[string]any, st *status) error {
	updateMin := 0
	maxUnavailable := 1
	if s.spec.hasRolling {
		updateMin = s.spec.partition
		maxUnavailable = scaledMaxUnavailable(s.spec.maxUnavailable, len(replicas))
	}
	rev := kobj.Name(updateRev)
	unavailable, unavailableNeedingUpdate := 0, 0
	for t := len(replicas) - 1; t >= 0; t-- {
		p := replicas[t]
		if s.unavailable(p) {
			unavailable++
			if s.spec.parallel && podRevision(p) != rev && !isTerminating(p) {
				unavailableNeedingUpdate++
			}
		}
	}
	if unavailable >= maxUnavailable && unavailableNeedingUpdate == 0 {
		return nil
	}
	if s.spec.parallel {
		for t := len(replicas) - 1; t >= updateMin && t >= 0; t-- {
			p := replicas[t]
			if podRevision(p) != rev && !s.runningAndAvailable(p) && !isTerminating(p) {
				if err := s.deletePod(ctx, p); err != nil {
					return err
				}
				st.current--
			}
		}
		budget := maxUnavailable - unavailable
		for t := len(replicas) - 1; t >= updateMin && t >= 0 && budget > 0; t-- {
			p := replicas[t]
			if podRevision(p) != rev && !s.unavailable(p) {
				if err := s.deletePod(ctx, p); err != nil {
					return err
				}
				budget--
				st.current--
			}
		}
		return nil
	}
	toDelete := maxUnavailable - unavailable
	deleted := 0
	for t := len(replicas) - 1; t >= updateMin && t >= 0 && deleted < toDelete; t-- {
		p := replicas[t]
		if podRevision(p) != rev && !isTerminating(p) {
			if err := s.deletePod(ctx, p); err != nil {
				return err
			}
			deleted++
			st.current--
		}
	}
	return nil
}

// scaledMaxUnavailable is getStatefulSetMaxUnavailable: an integer or a
// percentage of replicas rounded down, at least 1 (default 1).
func scaledMaxUnavailable(v any, replicas int) int {
	n := 1
	switch x := v.(type) {
	case int64:
		n = int(clampInt(x))
	case float64:
		n = int(clampInt(int64(x)))
	case string:
		if p, ok := strings.CutSuffix(x, "%"); ok {
			if pct, err := strconv.Atoi(p); err == nil {
				n = int(int64(pct) * int64(replicas) / 100)
			}
		} else if i, err := strconv.Atoi(x); err == nil {
			n = i
		}
	}
	if n < 1 {
		n = 1
	}
	return n
}

// writeStatus completes an update that reached every replica and writes
// the status when it differs where upstream compares it.
func (s *syncer) writeStatus(ctx context.Context, st *status) error {
	if int64(s.spec.replicas) == st.updated && int64(s.spec.replicas) == st.ready && int64(s.spec.replicas) == st.replicas {
		st.current = st.updated
		st.currentRevision = st.updateRevision
	}
	old := kobj.Map(s.set, "status")
	inconsistent := st.observedGeneration > kobj.IntOr(old, 0, "observedGeneration") ||
		st.replicas != kobj.IntOr(old, 0, "replicas") ||
		st.current != kobj.IntOr(old, 0, "currentReplicas") ||
		st.ready != kobj.IntOr(old, 0, "readyReplicas") ||
		st.updated != kobj.IntOr(old, 0, "updatedReplicas") ||
		st.currentRevision != kobj.Str(old, "currentRevision") ||
		st.available != kobj.IntOr(old, 0, "availableReplicas") ||
		st.updateRevision != kobj.Str(old, "updateRevision") ||
		!value.Equal(emptyAsNil(st.conditions), emptyAsNil(kobj.Slice(old, "conditions")))
	if !inconsistent {
		return nil
	}
	out := map[string]any{
		"replicas":          st.replicas,
		"availableReplicas": st.available,
		"collisionCount":    st.collisionCount,
	}
	setNonZero(out, "observedGeneration", st.observedGeneration)
	setNonZero(out, "readyReplicas", st.ready)
	setNonZero(out, "currentReplicas", st.current)
	setNonZero(out, "updatedReplicas", st.updated)
	if st.currentRevision != "" {
		out["currentRevision"] = st.currentRevision
	}
	if st.updateRevision != "" {
		out["updateRevision"] = st.updateRevision
	}
	if len(st.conditions) > 0 {
		out["conditions"] = st.conditions
	}
	next := maps.Clone(s.set)
	next["status"] = out
	if _, err := s.c.UpdateStatus(ctx, next); err != nil {
		if cluster.IsNotFound(err) || cluster.IsConflict(err) {
			s.changed = true
			return nil
		}
		return fmt.Errorf("update status: %w", err)
	}
	s.changed = true
	return nil
}

func setNonZero(m map[string]any, k string, v int64) {
	if v != 0 {
		m[k] = v
	}
}

func emptyAsNil(l []any) any {
	if len(l) == 0 {
		return nil
	}
	return l
}

// truncateHistory deletes the oldest revisions that no pod, nor the
// current or update revision, uses, beyond revisionHistoryLimit.
func (s *syncer) truncateHistory(ctx context.Context, pods, revisions []map[string]any, current, update map[string]any) error {
	live := map[string]bool{kobj.Name(current): true, kobj.Name(update): true}
	for _, p := range pods {
		live[podRevision(p)] = true
	}
	var old []map[string]any
	for _, r := range revisions {
		if !live[kobj.Name(r)] {
			old = append(old, r)
		}
	}
	limit := s.spec.historyLimit
	if limit < 0 || int64(len(old)) <= limit {
		return nil
	}
	for _, r := range old[:int64(len(old))-limit] {
		if err := s.c.Delete(ctx, kobj.ControllerRevisionGVK, kobj.Namespace(r), kobj.Name(r)); err != nil && !cluster.IsNotFound(err) {
			return fmt.Errorf("delete controllerrevision %s: %w", kobj.Name(r), err)
		}
		s.changed = true
	}
	return nil
}
