// Package daemonset is the DaemonSet controller of the embedded cluster,
// after kube-controller-manager 1.37's (pkg/controller/daemon): one pod
// per node the DaemonSet should run on (its nodeSelector, required node
// affinity and nodeName, and the node's taints against its tolerations),
// pinned to the node by a required node affinity on metadata.name, with
// the default tolerations daemon pods get; RollingUpdate with maxUnavailable
// or maxSurge, and OnDelete; ControllerRevisions named and labelled with
// upstream's hash of the pod template (package podhash), the
// pod-template-generation label; the status counters; upstream's events.
//
// Not simulated: the back-off between deletions of failed daemon pods
// (a failed pod is deleted at once, with upstream's event).
package daemonset

import (
	"context"
	"errors"
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
	"github.com/konverge/konverge/controller/internal/podhash"
	"github.com/konverge/konverge/controller/internal/podmemo"
	"github.com/konverge/konverge/controller/internal/reconcile"
	"github.com/konverge/konverge/selector"
	"github.com/konverge/konverge/value"
)

// Component is the source of the controller's Events.
const Component = "daemonset-controller"

// The labels and annotation of a DaemonSet's pods and revisions.
const (
	HashLabel                  = "controller-revision-hash"
	TemplateGenerationLabel    = "pod-template-generation"
	TemplateGenerationAnnotion = "deprecated.daemonset.template.generation"
)

// burstReplicas bounds the pods one sync creates or deletes (upstream's
// BurstReplicas).
const burstReplicas = 250

// Controller is the DaemonSet controller. The zero value syncs every
// DaemonSet in every sync; New returns one that remembers (an incremental
// controller, one per runner).
type Controller struct {
	m *podmemo.Memory
}

// New returns an incremental DaemonSet controller: SyncChanged syncs only
// the DaemonSets that writes since concern (see podmemo.Memory.Dirty; any
// Node), those whose last sync wrote something and those whose requeue
// time came; the others would write nothing.
func New() Controller { return Controller{m: &podmemo.Memory{}} }

var _ controller.Incremental = Controller{}

// Name implements controller.Controller.
func (Controller) Name() string { return "daemonset" }

// Reset forgets what the controller remembers: the next sync is a full
// one.
func (ctl Controller) Reset() {
	if ctl.m != nil {
		ctl.m.Reset()
	}
}

// owners is the controller's scaffold: its Sync and SyncChanged.
var owners = podmemo.Owners{
	Name:  "daemonset",
	GVK:   kobj.DaemonSetGVK,
	Kinds: podmemo.Kinds{Group: "apps", Kind: "DaemonSet", Nodes: true, Revisions: true},
	Sync:  syncAll,
}

// Sync reconciles every DaemonSet once.
func (ctl Controller) Sync(ctx context.Context, c cluster.Interface, now time.Time) (controller.Result, error) {
	return owners.Full(ctx, c, now, ctl.m)
}

// SyncChanged implements controller.Incremental.
func (ctl Controller) SyncChanged(ctx context.Context, c cluster.Interface, now time.Time, changed []controller.Key) (controller.Result, error) {
	return owners.Changed(ctx, c, now, ctl.m, changed)
}

// syncAll syncs dss with pods (every pod, or those dss may claim).
func syncAll(ctx context.Context, c cluster.Interface, now time.Time, m *podmemo.Memory, _, dss, pods []map[string]any) (controller.Result, error) {
	nodes, err := c.List(ctx, kobj.NodeGVK)
	if err != nil {
		return controller.Result{}, fmt.Errorf("daemonset: list nodes: %w", err)
	}
	revs, err := c.List(ctx, kobj.ControllerRevisionGVK)
	if err != nil {
		return controller.Result{}, fmt.Errorf("daemonset: list controllerrevisions: %w", err)
	}
	w := &world{c: c, now: now, nodes: nodes.Items, pods: claim.NewIndex(pods), revs: claim.NewIndex(revs.Items),
		names: podmemo.Names{Taken: m.Taken}}
	loop := reconcile.Loop{Name: "daemonset", Component: Component, Wait: true, Memory: m}
	return loop.Run(ctx, c, now, dss, func(ctx context.Context, ds map[string]any) (reconcile.Outcome, error) {
		s := &syncer{world: w, ds: ds}
		err := s.run(ctx)
		return reconcile.Outcome{Changed: s.changed, Requeue: s.requeue}, err
	})
}

type world struct {
	c     cluster.Interface
	now   time.Time
	nodes []cluster.Object
	pods  *claim.Index
	revs  *claim.Index
	names podmemo.Names
}

type syncer struct {
	*world
	ds      map[string]any
	changed bool
	requeue time.Time
	// wrote reports pods created or deleted by this sync (upstream's
	// expectations: no rolling update in the same sync).
	wrote bool
	// place is how the DaemonSet's pods are placed (tolerations and
	// affinity), computed once.
	place *placement
}

func (s *syncer) record(ctx context.Context, typ, reason, msg string) {
	if err := event.Record(ctx, s.c, s.now, s.ds, typ, reason, msg, Component); err == nil {
		s.changed = true
	}
}

func (s *syncer) note(at time.Time) {
	if !at.IsZero() && at.After(s.now) && (s.requeue.IsZero() || at.Before(s.requeue)) {
		s.requeue = at
	}
}

func (s *syncer) available(pod map[string]any) bool {
	ok, at := kobj.PodAvailable(pod, kobj.IntOr(s.ds, 0, "spec", "minReadySeconds"), s.now)
	s.note(at)
	return ok
}

func (s *syncer) run(ctx context.Context) error {
	sel := kobj.Map(s.ds, "spec", "selector")
	if len(sel) == 0 {
		s.record(ctx, event.Warning, "SelectingAll", "This daemon set is selecting all pods. A non-empty selector is required.")
		return nil
	}
	if kobj.Deleting(s.ds) {
		return nil
	}
	labels, err := selector.FromLabelSelector(sel)
	if err != nil {
		return nil
	}
	s.place = newPlacement(s.ds)
	cur, old, err := s.constructHistory(ctx, labels)
	if err != nil {
		return fmt.Errorf("failed to construct revisions of DaemonSet: %w", err)
	}
	if cur == nil {
		return nil
	}
	hash := kobj.Str(cur, "metadata", "labels", HashLabel)
	pods, err := s.claimPods(ctx, labels)
	if err != nil {
		return err
	}
	err = s.manage(ctx, pods, hash)
	if err == nil && !s.wrote && kobj.Str(s.ds, "spec", "updateStrategy", "type") != "OnDelete" {
		pods, err = s.claimPods(ctx, labels)
		if err == nil {
			err = s.rollingUpdate(ctx, pods, hash)
		}
	}
	if err == nil {
		err = s.cleanupHistory(ctx, old, pods)
	}
	pods, perr := s.claimPods(ctx, labels)
	if perr != nil {
		return errors.Join(err, perr)
	}
	if serr := s.updateStatus(ctx, pods, hash); serr != nil && err == nil {
		err = serr
	}
	return err
}

// claimPods returns the DaemonSet's pods after adoption and release.
// Pods created or deleted in this sync are in the index already.
func (s *syncer) claimPods(ctx context.Context, sel selector.Labels) ([]map[string]any, error) {
	pods, changed, err := claim.Objects(ctx, s.c, s.ds, kobj.DaemonSetGVK, s.pods.Candidates(s.ds), func(p map[string]any) bool {
		return sel.Matches(kobj.Labels(p))
	})
	if changed {
		s.changed = true
		for _, p := range pods {
			s.pods.Forget(p)
		}
	}
	return pods, err
}

// nodeToPods groups pods by the node they are for (spec.nodeName, else
// the node of their node affinity); pods both terminal and being deleted
// are left out.
func nodeToPods(pods []map[string]any) map[string][]map[string]any {
	out := map[string][]map[string]any{}
	for _, p := range pods {
		phase := kobj.Str(p, "status", "phase")
		if (phase == "Succeeded" || phase == "Failed") && kobj.Deleting(p) {
			continue
		}
		n := targetNode(p)
		if n == "" {
			continue
		}
		out[n] = append(out[n], p)
	}
	return out
}

// targetNode is GetTargetNodeName.
func targetNode(pod map[string]any) string {
	if n := kobj.Str(pod, "spec", "nodeName"); n != "" {
		return n
	}
	terms := kobj.Slice(pod, "spec", "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
	for _, t := range terms {
		tm, _ := t.(map[string]any)
		for _, e := range kobj.Slice(tm, "matchFields") {
			em, _ := e.(map[string]any)
			if kobj.Str(em, "key") == "metadata.name" && kobj.Str(em, "operator") == "In" {
				vals := kobj.Slice(em, "values")
				if len(vals) != 1 {
					return ""
				}
				v, _ := vals[0].(string)
				return v
			}
		}
	}
	return ""
}

// sortByAge is podByCreationTimestampAndPhase: scheduled first, then
// oldest, then by name.
func sortByAge(pods []map[string]any) {
	sort.SliceStable(pods, func(i, j int) bool {
		a, b := pods[i], pods[j]
		na, nb := kobj.Str(a, "spec", "nodeName") != "", kobj.Str(b, "spec", "nodeName") != ""
		if na != nb {
			return na
		}
		ca := kobj.ParseTime(kobj.Str(a, "metadata", "creationTimestamp"))
		cb := kobj.ParseTime(kobj.Str(b, "metadata", "creationTimestamp"))
		if ca.Equal(cb) {
			return kobj.Name(a) < kobj.Name(b)
		}
		return ca.Before(cb)
	})
}

func (s *syncer) templateGeneration() (string, bool) {
	v := kobj.Annotation(s.ds, TemplateGenerationAnnotion)
	if v == "" {
		return "", false
	}
	if _, err := strconv.ParseInt(v, 10, 64); err != nil {
		return "", false
	}
	return v, true
}

// podUpdated is IsPodUpdated: the pod's hash or template generation is
// the DaemonSet's.
func (s *syncer) podUpdated(pod map[string]any, hash string) bool {
	gen, ok := s.templateGeneration()
	l := kobj.Labels(pod)
	return (hash != "" && l[HashLabel] == hash) || (ok && l[TemplateGenerationLabel] == gen)
}

func (s *syncer) allowsSurge() bool {
	return s.surgeCount(1) > 0
}

func (s *syncer) surgeCount(n int) int {
	if kobj.Str(s.ds, "spec", "updateStrategy", "type") != "RollingUpdate" {
		return 0
	}
	ru := kobj.Map(s.ds, "spec", "updateStrategy", "rollingUpdate")
	if ru == nil || ru["maxSurge"] == nil {
		return 0
	}
	return scaled(ru["maxSurge"], n)
}

func (s *syncer) unavailableCount(n int) int {
	if kobj.Str(s.ds, "spec", "updateStrategy", "type") != "RollingUpdate" {
		return 0
	}
	ru := kobj.Map(s.ds, "spec", "updateStrategy", "rollingUpdate")
	if ru == nil {
		return 0
	}
	return scaled(ru["maxUnavailable"], n)
}

// scaled is GetScaledValueFromIntOrPercent rounding up.
func scaled(v any, total int) int {
	switch x := v.(type) {
	case int64:
		return clamp(x)
	case float64:
		return clamp(int64(x))
	case string:
		p, ok := strings.CutSuffix(x, "%")
		if !ok {
			n, _ := strconv.ParseInt(x, 10, 64)
			return clamp(n)
		}
		pct, err := strconv.ParseInt(p, 10, 64)
		if err != nil {
			return 0
		}
		return clamp((pct*int64(total) + 99) / 100)
	}
	return 0
}

func clamp(v int64) int {
	const max = 1<<31 - 1
	if v > max {
		return max
	}
	if v < 0 {
		return 0
	}
	return int(v)
}

// manage creates the missing daemon pods and deletes the ones that should
// not run (podsShouldBeOnNode for every node).
func (s *syncer) manage(ctx context.Context, pods []map[string]any, hash string) error {
	byNode := nodeToPods(pods)
	var create []string
	var del []map[string]any
	running := map[string]bool{}
	for _, node := range s.nodes {
		name := kobj.Name(node)
		running[name] = true
		c, d := s.podsShouldBeOnNode(ctx, node, byNode, hash)
		create = append(create, c...)
		del = append(del, d...)
	}
	// Unscheduled pods for nodes that do not exist.
	var gone []string
	for n := range byNode {
		if !running[n] {
			gone = append(gone, n)
		}
	}
	sort.Strings(gone)
	for _, n := range gone {
		for _, p := range byNode[n] {
			if kobj.Str(p, "spec", "nodeName") == "" {
				del = append(del, p)
			}
		}
	}
	return s.syncNodes(ctx, del, create, hash)
}

func (s *syncer) podsShouldBeOnNode(ctx context.Context, node map[string]any, byNode map[string][]map[string]any, hash string) (create []string, del []map[string]any) {
	shouldRun, shouldContinue := s.place.shouldRun(node)
	name := kobj.Name(node)
	pods, exists := byNode[name]
	switch {
	case shouldRun && !exists:
		create = append(create, name)
	case shouldContinue:
		var running []map[string]any
		for _, p := range pods {
			if kobj.Deleting(p) {
				continue
			}
			switch kobj.Str(p, "status", "phase") {
			case "Failed":
				s.record(ctx, event.Warning, "FailedDaemonPod", fmt.Sprintf("Found failed daemon pod %s/%s on node %s, will try to kill it", kobj.Namespace(p), kobj.Name(p), name))
				del = append(del, p)
			case "Succeeded":
				s.record(ctx, event.Normal, "SucceededDaemonPod", fmt.Sprintf("Found succeeded daemon pod %s/%s on node %s, will try to delete it", kobj.Namespace(p), kobj.Name(p), name))
				del = append(del, p)
			default:
				running = append(running, p)
			}
		}
		if !s.allowsSurge() {
			if len(running) <= 1 {
				break
			}
			sortByAge(running)
			del = append(del, running[1:]...)
			break
		}
		if len(running) <= 1 {
			if len(running) == 0 && shouldRun {
				create = append(create, name)
			}
			break
		}
		sortByAge(running)
		var oldestNew, oldestOld map[string]any
		for _, p := range running {
			if kobj.Labels(p)[HashLabel] == hash {
				if oldestNew == nil {
					oldestNew = p
					continue
				}
			} else if oldestOld == nil {
				oldestOld = p
				continue
			}
			del = append(del, p)
		}
		if oldestNew != nil && oldestOld != nil {
			if ready, _ := kobj.PodReady(oldestOld); !ready {
				del = append(del, oldestOld)
			} else if s.available(oldestNew) {
				del = append(del, oldestOld)
			}
		}
	case !shouldContinue && exists:
		for _, p := range pods {
			if !kobj.Deleting(p) {
				del = append(del, p)
			}
		}
	}
	return create, del
}

// syncNodes deletes pods and creates one pod on each node given, at most
// burstReplicas of each.
func (s *syncer) syncNodes(ctx context.Context, del []map[string]any, create []string, hash string) error {
	if len(create) > burstReplicas {
		create = create[:burstReplicas]
	}
	if len(del) > burstReplicas {
		del = del[:burstReplicas]
	}
	var errs []error
	for _, node := range create {
		pod := s.newPod(node, hash)
		created, err := s.c.Create(ctx, pod)
		if err != nil {
			if strings.Contains(err.Error(), "is being terminated") {
				continue
			}
			s.record(ctx, event.Warning, "FailedCreate", fmt.Sprintf("Error creating: %v", err))
			errs = append(errs, err)
			break
		}
		s.changed, s.wrote = true, true
		s.pods.Add(created)
		s.record(ctx, event.Normal, "SuccessfulCreate", "Created pod: "+kobj.Name(created))
	}
	for _, p := range del {
		err := s.c.Delete(ctx, kobj.PodGVK, kobj.Namespace(p), kobj.Name(p))
		if err != nil {
			if cluster.IsNotFound(err) {
				continue
			}
			s.record(ctx, event.Warning, "FailedDelete", fmt.Sprintf("Error deleting: %v", err))
			errs = append(errs, fmt.Errorf("unable to delete pods: %w", err))
			continue
		}
		s.changed, s.wrote = true, true
		s.pods.Refresh(ctx, s.c, p)
		s.record(ctx, event.Normal, "SuccessfulDelete", "Deleted pod: "+kobj.Name(p))
	}
	return errors.Join(errs...)
}

// newPod is the pod of the DaemonSet for node: the template with the
// revision hash and template generation labels, the daemon tolerations,
// a required node affinity for the node, a free generated name.
func (s *syncer) newPod(node, hash string) map[string]any {
	tmpl := kobj.Map(s.ds, "spec", "template")
	md := kobj.Map(tmpl, "metadata")
	labels := map[string]any{}
	for k, v := range kobj.Map(md, "labels") {
		labels[k] = v
	}
	if gen, ok := s.templateGeneration(); ok {
		labels[TemplateGenerationLabel] = gen
	}
	if hash != "" {
		labels[HashLabel] = hash
	}
	spec, _ := value.DeepCopy(kobj.Map(tmpl, "spec")).(map[string]any)
	if spec == nil {
		spec = map[string]any{}
	}
	spec["tolerations"] = daemonTolerations(spec)
	spec["affinity"] = pinToNode(kobj.Map(spec, "affinity"), node)
	ns, dsName := kobj.Namespace(s.ds), kobj.Name(s.ds)
	prefix := dsName + "-"
	if len(prefix) > 58 {
		prefix = prefix[:58]
	}
	var name string
	for n := 0; ; n++ {
		// Drawn from the DaemonSet, the time and a counter: a new pod
		// does not take the name of the one it replaces, and the same
		// cluster at the same time names it the same.
		name = prefix + kobj.ShortName(5, ns, dsName, strconv.FormatInt(s.now.UnixNano(), 10), strconv.Itoa(n))
		if !s.names.Has(podmemo.Key{ns, name}) {
			break
		}
	}
	s.names.Add(podmemo.Key{ns, name})
	pmd := map[string]any{
		"name":            name,
		"generateName":    prefix,
		"namespace":       ns,
		"labels":          labels,
		"ownerReferences": []any{kobj.NewControllerRef(s.ds, kobj.DaemonSetGVK)},
	}
	if a := kobj.Map(md, "annotations"); len(a) > 0 {
		pmd["annotations"] = value.DeepCopy(a)
	}
	if f := kobj.Slice(md, "finalizers"); len(f) > 0 {
		pmd["finalizers"] = value.DeepCopy(f)
	}
	return map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": pmd, "spec": spec}
}

// pinToNode is ReplaceDaemonSetPodNodeNameNodeAffinity.
func pinToNode(affinity map[string]any, node string) map[string]any {
	term := map[string]any{"matchFields": []any{map[string]any{
		"key": "metadata.name", "operator": "In", "values": []any{node},
	}}}
	sel := map[string]any{"nodeSelectorTerms": []any{term}}
	if affinity == nil {
		return map[string]any{"nodeAffinity": map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": sel}}
	}
	na := kobj.Map(affinity, "nodeAffinity")
	if na == nil {
		affinity["nodeAffinity"] = map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": sel}
		return affinity
	}
	req := kobj.Map(na, "requiredDuringSchedulingIgnoredDuringExecution")
	if req == nil {
		na["requiredDuringSchedulingIgnoredDuringExecution"] = sel
		return affinity
	}
	req["nodeSelectorTerms"] = []any{term}
	return affinity
}

// updateStatus computes and writes the counters (storeDaemonSetStatus).
func (s *syncer) updateStatus(ctx context.Context, pods []map[string]any, hash string) error {
	byNode := nodeToPods(pods)
	var desired, current, mis, ready, updated, avail int64
	for _, node := range s.nodes {
		shouldRun, _ := s.place.shouldRun(node)
		ps := byNode[kobj.Name(node)]
		scheduled := len(ps) > 0
		if !shouldRun {
			if scheduled {
				mis++
			}
			continue
		}
		desired++
		if !scheduled {
			continue
		}
		current++
		ps = append([]map[string]any{}, ps...)
		sortByAge(ps)
		p := ps[0]
		if ok, _ := kobj.PodReady(p); ok {
			ready++
			if s.available(p) {
				avail++
			}
		}
		if s.podUpdated(p, hash) {
			updated++
		}
	}
	unavailable := desired - avail
	old := kobj.Map(s.ds, "status")
	gen := kobj.IntOr(s.ds, 0, "metadata", "generation")
	if kobj.IntOr(old, 0, "desiredNumberScheduled") == desired &&
		kobj.IntOr(old, 0, "currentNumberScheduled") == current &&
		kobj.IntOr(old, 0, "numberMisscheduled") == mis &&
		kobj.IntOr(old, 0, "numberReady") == ready &&
		kobj.IntOr(old, 0, "updatedNumberScheduled") == updated &&
		kobj.IntOr(old, 0, "numberAvailable") == avail &&
		kobj.IntOr(old, 0, "numberUnavailable") == unavailable &&
		kobj.IntOr(old, 0, "observedGeneration") >= gen {
		return nil
	}
	st := maps.Clone(old)
	if st == nil {
		st = map[string]any{}
	}
	st["observedGeneration"] = gen
	st["desiredNumberScheduled"] = desired
	st["currentNumberScheduled"] = current
	st["numberMisscheduled"] = mis
	st["numberReady"] = ready
	setNonZero(st, "updatedNumberScheduled", updated)
	setNonZero(st, "numberAvailable", avail)
	setNonZero(st, "numberUnavailable", unavailable)
	if gen == 0 {
		delete(st, "observedGeneration")
	}
	next := maps.Clone(s.ds)
	next["status"] = st
	if _, err := s.c.UpdateStatus(ctx, next); err != nil {
		if cluster.IsNotFound(err) || cluster.IsConflict(err) {
			s.changed = true
			return nil
		}
		return fmt.Errorf("error storing status for daemon set: %w", err)
	}
	s.changed = true
	return nil
}

func setNonZero(m map[string]any, k string, v int64) {
	if v == 0 {
		delete(m, k)
		return
	}
	m[k] = v
}

// rollingUpdate is upstream's: without surge, delete old pods within
// maxUnavailable; with surge, create new pods beside old ones within
// maxSurge.
func (s *syncer) rollingUpdate(ctx context.Context, pods []map[string]any, hash string) error {
	byNode := nodeToPods(pods)
	desired := 0
	for _, node := range s.nodes {
		if ok, _ := s.place.shouldRun(node); ok {
			desired++
			if _, ok := byNode[kobj.Name(node)]; !ok {
				byNode[kobj.Name(node)] = nil
			}
		}
	}
	maxUnavailable := s.unavailableCount(desired)
	maxSurge := s.surgeCount(desired)
	if desired > 0 && maxUnavailable == 0 && maxSurge == 0 {
		maxUnavailable = 1
	}
	nodeNames := make([]string, 0, len(byNode))
	for n := range byNode {
		nodeNames = append(nodeNames, n)
	}
	sort.Strings(nodeNames)
	if maxSurge == 0 {
		numUnavailable := 0
		var allowed, candidates []map[string]any
		for _, n := range nodeNames {
			newPod, oldPod, ok := s.findUpdated(byNode[n], hash)
			if !ok {
				numUnavailable++
				continue
			}
			switch {
			case oldPod == nil && newPod == nil, oldPod != nil && newPod != nil:
				numUnavailable++
			case newPod != nil:
				if !s.available(newPod) {
					numUnavailable++
				}
			default:
				switch {
				case !s.available(oldPod):
					allowed = append(allowed, oldPod)
					numUnavailable++
				case numUnavailable >= maxUnavailable:
				default:
					candidates = append(candidates, oldPod)
				}
			}
		}
		remaining := maxUnavailable - numUnavailable
		if remaining < 0 {
			remaining = 0
		}
		if remaining > len(candidates) {
			remaining = len(candidates)
		}
		return s.syncNodes(ctx, append(allowed, candidates[:remaining]...), nil, hash)
	}
	var oldToDelete, shouldNotRun []map[string]any
	var candidateNodes, allowedNodes []string
	numSurge, numAvailable := 0, 0
	nodesByName := map[string]map[string]any{}
	for _, node := range s.nodes {
		nodesByName[kobj.Name(node)] = node
	}
	for _, n := range nodeNames {
		newPod, oldPod, ok := s.findUpdated(byNode[n], hash)
		if !ok {
			numSurge++
			continue
		}
		if oldPod != nil {
			if s.available(oldPod) {
				numAvailable++
			}
		} else if newPod != nil && s.available(newPod) {
			numAvailable++
		}
		switch {
		case oldPod == nil:
		case newPod == nil:
			node := nodesByName[n]
			shouldRun := false
			if node != nil {
				shouldRun, _ = s.place.shouldRun(node)
			}
			if !s.available(oldPod) {
				if node == nil {
					return fmt.Errorf("couldn't get node for nodeName %q", n)
				}
				if !shouldRun {
					oldToDelete = append(oldToDelete, oldPod)
					continue
				}
				allowedNodes = append(allowedNodes, n)
				continue
			}
			if node == nil {
				return fmt.Errorf("couldn't get node for nodeName %q", n)
			}
			if !shouldRun {
				shouldNotRun = append(shouldNotRun, oldPod)
				continue
			}
			if numSurge >= maxSurge {
				continue
			}
			candidateNodes = append(candidateNodes, n)
		default:
			if !s.available(newPod) {
				numSurge++
				continue
			}
			oldToDelete = append(oldToDelete, oldPod)
		}
	}
	remainingSurge := maxSurge - numSurge
	if deletable := numAvailable - desired; deletable > 0 {
		if deletable > len(shouldNotRun) {
			deletable = len(shouldNotRun)
		}
		oldToDelete = append(oldToDelete, shouldNotRun[:deletable]...)
	}
	if remainingSurge < 0 {
		remainingSurge = 0
	}
	if remainingSurge > len(candidateNodes) {
		remainingSurge = len(candidateNodes)
	}
	return s.syncNodes(ctx, oldToDelete, append(allowedNodes, candidateNodes[:remainingSurge]...), hash)
}

// findUpdated is findUpdatedPodsOnNode: at most one new and one old pod
// not being deleted, or ok false.
func (s *syncer) findUpdated(pods []map[string]any, hash string) (newPod, oldPod map[string]any, ok bool) {
	for _, p := range pods {
		if kobj.Deleting(p) {
			continue
		}
		if s.podUpdated(p, hash) {
			if newPod != nil {
				return nil, nil, false
			}
			newPod = p
		} else {
			if oldPod != nil {
				return nil, nil, false
			}
			oldPod = p
		}
	}
	return newPod, oldPod, true
}

// constructHistory claims the DaemonSet's revisions, finds the one of its
// template (creating it if needed, renumbered to be the newest), and
// returns it with the others.
func (s *syncer) constructHistory(ctx context.Context, sel selector.Labels) (cur map[string]any, old []map[string]any, err error) {
	revs, changed, err := claim.Objects(ctx, s.c, s.ds, kobj.DaemonSetGVK, s.revs.Candidates(s.ds), func(r map[string]any) bool {
		return sel.Matches(kobj.Labels(r))
	})
	if changed {
		s.changed = true
		for _, r := range revs {
			s.revs.Forget(r)
		}
	}
	if err != nil {
		return nil, nil, err
	}
	data, raw, err := history.Patch(kobj.Map(s.ds, "spec", "template"))
	if err != nil {
		return nil, nil, err
	}
	var curs []map[string]any
	for _, r := range revs {
		if _, ok := kobj.Labels(r)[HashLabel]; !ok {
			next := kobj.Copy(r)
			kobj.EnsureMap(next, "metadata", "labels")[HashLabel] = kobj.Name(r)
			if r, err = s.c.Update(ctx, next); err != nil {
				return nil, nil, fmt.Errorf("label controllerrevision %s: %w", kobj.Name(next), err)
			}
			s.changed = true
		}
		if string(history.Raw(r)) == string(raw) {
			curs = append(curs, r)
		} else {
			old = append(old, r)
		}
	}
	var maxRev int64
	for _, r := range old {
		if n := history.Revision(r); n > maxRev {
			maxRev = n
		}
	}
	want := maxRev + 1
	switch len(curs) {
	case 0:
		cur, err = s.snapshot(ctx, data, raw, want)
		if err != nil {
			return nil, nil, err
		}
	default:
		cur, err = s.dedup(ctx, curs)
		if err != nil {
			return nil, nil, err
		}
		if history.Revision(cur) < want {
			if cur, err = history.SetRevision(ctx, s.c, cur, want); err != nil {
				return nil, nil, err
			}
			s.changed = true
		}
	}
	return cur, old, nil
}

// snapshot creates the revision of the current template; on a name taken
// by another template it counts a collision (and tries again next sync).
func (s *syncer) snapshot(ctx context.Context, data map[string]any, raw []byte, revision int64) (map[string]any, error) {
	var cc *int64
	if v, ok := kobj.Int(s.ds, "status", "collisionCount"); ok {
		cc = &v
	}
	hash, err := podhash.Compute(kobj.Map(s.ds, "spec", "template"), cc)
	if err != nil {
		return nil, err
	}
	name := kobj.Name(s.ds) + "-" + hash
	labels := kobj.StringMap(s.ds, "spec", "template", "metadata", "labels")
	if labels == nil {
		labels = map[string]string{}
	}
	labels[HashLabel] = hash
	rev := history.New(s.ds, kobj.DaemonSetGVK, name, labels, kobj.Map(s.ds, "metadata", "annotations"), data, revision)
	created, err := s.c.Create(ctx, rev)
	if err == nil {
		s.changed = true
		return created, nil
	}
	if !cluster.IsAlreadyExists(err) {
		return nil, fmt.Errorf("create controllerrevision %s: %w", name, err)
	}
	existing, gerr := s.c.Get(ctx, kobj.ControllerRevisionGVK, kobj.Namespace(s.ds), name)
	if gerr != nil {
		return nil, gerr
	}
	if string(history.Raw(existing)) == string(raw) {
		return existing, nil
	}
	next := maps.Clone(s.ds)
	st := maps.Clone(kobj.Map(s.ds, "status"))
	if st == nil {
		st = map[string]any{}
	}
	n := int64(0)
	if cc != nil {
		n = *cc
	}
	st["collisionCount"] = n + 1
	next["status"] = st
	if _, err := s.c.UpdateStatus(ctx, next); err != nil {
		return nil, err
	}
	s.changed = true
	return nil, nil
}

// dedup keeps the newest of several revisions of the current template,
// relabelling pods to its hash.
func (s *syncer) dedup(ctx context.Context, curs []map[string]any) (map[string]any, error) {
	if len(curs) == 1 {
		return curs[0], nil
	}
	var keep map[string]any
	var maxRev int64
	for _, r := range curs {
		if history.Revision(r) >= maxRev {
			keep, maxRev = r, history.Revision(r)
		}
	}
	keepHash := kobj.Labels(keep)[HashLabel]
	for _, p := range s.pods.Owned(kobj.UID(s.ds)) {
		if kobj.Labels(p)[HashLabel] != keepHash {
			patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, HashLabel, keepHash)
			if _, err := s.c.Patch(ctx, kobj.PodGVK, kobj.Namespace(p), kobj.Name(p), cluster.MergePatchType, []byte(patch)); err != nil && !cluster.IsNotFound(err) {
				return nil, err
			}
			s.changed = true
		}
	}
	for _, r := range curs {
		if kobj.Name(r) == kobj.Name(keep) {
			continue
		}
		if err := s.c.Delete(ctx, kobj.ControllerRevisionGVK, kobj.Namespace(r), kobj.Name(r)); err != nil && !cluster.IsNotFound(err) {
			return nil, err
		}
		s.changed = true
	}
	return keep, nil
}

// cleanupHistory deletes the oldest revisions beyond
// revisionHistoryLimit that no pod uses.
func (s *syncer) cleanupHistory(ctx context.Context, old, pods []map[string]any) error {
	keep := kobj.IntOr(s.ds, 10, "spec", "revisionHistoryLimit")
	kill := int64(len(old)) - keep
	if kill <= 0 {
		return nil
	}
	live := map[string]bool{}
	for _, p := range pods {
		if h := kobj.Labels(p)[HashLabel]; h != "" {
			live[h] = true
		}
	}
	old = append([]map[string]any{}, old...)
	history.Sort(old)
	for _, r := range old {
		if kill <= 0 {
			break
		}
		if live[kobj.Labels(r)[HashLabel]] {
			continue
		}
		if err := s.c.Delete(ctx, kobj.ControllerRevisionGVK, kobj.Namespace(r), kobj.Name(r)); err != nil && !cluster.IsNotFound(err) {
			return err
		}
		s.changed = true
		kill--
	}
	return nil
}
