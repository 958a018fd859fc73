// Package job is the Job controller of the embedded cluster, after
// kube-controller-manager 1.37's (pkg/controller/job), and its
// ttl-after-finished controller: pods created up to parallelism and the
// remaining completions (NonIndexed, or Indexed with completion indexes,
// hostnames and JOB_COMPLETION_INDEX), tracked with the
// batch.kubernetes.io/job-tracking finalizer and counted through
// status.uncountedTerminatedPods; backoffLimit with upstream's back-off
// between replacements (10s doubling to 10 minutes after consecutive
// failures), backoffLimitPerIndex and maxFailedIndexes,
// activeDeadlineSeconds, podFailurePolicy, successPolicy, suspend; the
// interim SuccessCriteriaMet and FailureTarget conditions before Complete
// and Failed with upstream's reasons and messages; the status counters
// and upstream's events; Jobs deleted ttlSecondsAfterFinished after they
// finished.
//
// Not simulated: pod groups and workloads (gang scheduling), managedBy
// other controllers is honoured by doing nothing.
package job

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/controller"
	"github.com/konverge/konverge/controller/event"
	"github.com/konverge/konverge/controller/internal/claim"
	"github.com/konverge/konverge/controller/internal/kobj"
	"github.com/konverge/konverge/controller/internal/podmemo"
	"github.com/konverge/konverge/controller/internal/reconcile"
	"github.com/konverge/konverge/selector"
	"github.com/konverge/konverge/value"
)

// Component is the source of the Job controller's Events.
const Component = "job-controller"

// TrackingFinalizer keeps a Job's pod until the controller counted it.
const TrackingFinalizer = "batch.kubernetes.io/job-tracking"

// The controller's constants, upstream's.
const (
	DefaultPodFailureBackOff  = 10 * time.Second
	MaxPodFailureBackOff      = 10 * time.Minute
	MaxUncountedPods          = 500
	MaxPodCreateDeletePerSync = 500
	slowStartInitialBatch     = 1
	jobControllerName         = "kubernetes.io/job-controller"
)

// apiBackoff is the rate limiter of the controller's work queue
// (DefaultJobApiBackOff, MaxJobApiBackOff): a sync the API server refused
// is retried 1s later, doubling up to a minute.
var apiBackoff = event.Limiter{Base: time.Second, Max: time.Minute, PerSync: true}

// Controller is the Job controller. The zero value syncs every Job in
// every sync; New returns one that remembers (an incremental controller,
// one per runner).
type Controller struct {
	m *podmemo.Memory
}

// New returns an incremental Job controller: SyncChanged syncs only the
// Jobs that writes since concern (the Job, its pods and the orphans its
// selector matches, its Events, its namespace's quotas and limits), those
// whose last sync wrote something and those whose requeue time came; the
// others would write nothing.
func New() Controller { return Controller{m: newMemory()} }

// newMemory returns the controller's memory: it marks the pods with the
// tracking finalizer.
func newMemory() *podmemo.Memory { return &podmemo.Memory{Mark: hasFinalizer} }

var _ controller.Incremental = Controller{}

// Name implements controller.Controller.
func (Controller) Name() string { return "job" }

// Reset forgets what the controller remembers: the next sync is a full
// one.
func (ctl Controller) Reset() {
	if ctl.m != nil {
		ctl.m.Reset()
	}
}

// owners is the controller's scaffold: its Sync and SyncChanged. Every
// sync sweeps the pods with the tracking finalizer, Jobs or not.
var owners = podmemo.Owners{
	Name:  "job",
	GVK:   kobj.JobGVK,
	Kinds: podmemo.Kinds{Group: "batch", Kind: "Job"},
	Sweep: true,
	Sync:  syncAll,
}

// Sync reconciles every Job once, and removes the tracking finalizer of
// pods whose Job is gone or finished.
func (ctl Controller) Sync(ctx context.Context, c cluster.Interface, now time.Time) (controller.Result, error) {
	m := ctl.m
	if m == nil {
		m = newMemory()
	}
	return owners.Full(ctx, c, now, m)
}

// SyncChanged implements controller.Incremental.
func (ctl Controller) SyncChanged(ctx context.Context, c cluster.Interface, now time.Time, changed []controller.Key) (controller.Result, error) {
	if ctl.m == nil {
		// The zero value remembers nothing: a full sync, with the
		// memory that marks the finalized pods.
		return ctl.Sync(ctx, c, now)
	}
	return owners.Changed(ctx, c, now, ctl.m, changed)
}

// syncAll syncs the Jobs of todo (all of jobs, or some) with pods (every
// pod, or those they may claim), then removes the tracking finalizer of
// the pods the memory marks whose Job is gone or finished.
func syncAll(ctx context.Context, c cluster.Interface, now time.Time, m *podmemo.Memory, jobs, todo, pods []map[string]any) (controller.Result, error) {
	withFinalizer := m.Marked()
	var w *world
	if len(todo) > 0 {
		// The index of the pods only when there are Jobs to sync.
		w = &world{c: c, now: now, pods: claim.NewIndex(pods), names: podmemo.Names{Taken: m.Taken}}
	}
	loop := reconcile.Loop{Name: "job", Component: Component, Limiter: apiBackoff, Memory: m}
	res, errs, err := loop.Each(ctx, c, now, todo, func(ctx context.Context, j map[string]any) (reconcile.Outcome, error) {
		s := &syncer{world: w, job: j}
		err := s.run(ctx)
		return reconcile.Outcome{Changed: s.changed, Requeue: s.requeue}, err
	})
	if err != nil {
		return res, err
	}
	byUID := map[string]map[string]any{}
	for _, j := range jobs {
		byUID[kobj.UID(j)] = j
	}
	// Orphans: pods with the finalizer whose Job is gone or finished.
	for _, p := range withFinalizer {
		if ref := kobj.ControllerRef(p); ref != nil {
			if ref["kind"] != "Job" || ref["apiVersion"] != "batch/v1" {
				continue
			}
			if j := byUID[kobj.Str(ref, "uid")]; j != nil && (!finished(j) || managedElsewhere(j)) {
				continue
			}
		} else {
			// An orphan with the finalizer: a Job may still adopt it.
			adoptable := false
			for _, j := range jobs {
				if kobj.Namespace(j) != kobj.Namespace(p) || finished(j) {
					continue
				}
				if sel, err := selector.FromLabelSelector(kobj.Map(j, "spec", "selector")); err == nil && sel.Matches(kobj.Labels(p)) {
					adoptable = true
					break
				}
			}
			if adoptable {
				continue
			}
		}
		changed, err := removeFinalizer(ctx, c, p)
		res.Changed = res.Changed || changed
		if err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return res, fmt.Errorf("job: %w", errors.Join(errs...))
	}
	return res, nil
}

type world struct {
	c     cluster.Interface
	now   time.Time
	pods  *claim.Index
	names podmemo.Names
}

func hasFinalizer(pod map[string]any) bool {
	for _, f := range kobj.Slice(pod, "metadata", "finalizers") {
		if f == TrackingFinalizer {
			return true
		}
	}
	return false
}

// removeFinalizer takes the tracking finalizer off a pod, with upstream's
// strategic merge patch (which the pod's other changes do not conflict
// with).
func removeFinalizer(ctx context.Context, c cluster.Interface, pod map[string]any) (bool, error) {
	if !hasFinalizer(pod) {
		return false, nil
	}
	patch := []byte(`{"metadata":{"$deleteFromPrimitiveList/finalizers":["` + TrackingFinalizer + `"]}}`)
	if _, err := c.Patch(ctx, kobj.PodGVK, kobj.Namespace(pod), kobj.Name(pod), cluster.StrategicMergePatchType, patch); err != nil {
		if cluster.IsNotFound(err) {
			return true, nil
		}
		return false, fmt.Errorf("removing tracking finalizer of pod %s: %w", kobj.Name(pod), err)
	}
	return true, nil
}

// finished reports a Job with a Complete or Failed condition True.
func finished(job map[string]any) bool {
	for _, t := range []string{"Complete", "Failed"} {
		if c := kobj.Condition(job, t); c != nil && c["status"] == "True" {
			return true
		}
	}
	return false
}

func managedElsewhere(job map[string]any) bool {
	m := kobj.Str(job, "spec", "managedBy")
	return m != "" && m != jobControllerName
}

// spec is what the controller reads of a Job's spec (defaulted).
type spec struct {
	parallelism          int64
	completions          *int64
	backoffLimit         int64
	backoffLimitPerIndex *int64
	maxFailedIndexes     *int64
	activeDeadline       *int64
	suspend              bool
	indexed              bool
	onlyReplaceFailed    bool
	restartPolicy        string
	podFailurePolicy     []any
	successRules         []any
}

func readSpec(job map[string]any) spec {
	s := spec{
		parallelism:   clamp32(kobj.IntOr(job, 1, "spec", "parallelism")),
		backoffLimit:  clamp32(kobj.IntOr(job, 6, "spec", "backoffLimit")),
		suspend:       kobj.Bool(job, "spec", "suspend"),
		indexed:       kobj.Str(job, "spec", "completionMode") == "Indexed",
		restartPolicy: kobj.Str(job, "spec", "template", "spec", "restartPolicy"),
	}
	if v, ok := kobj.Int(job, "spec", "completions"); ok {
		v = clamp32(v)
		s.completions = &v
	}
	if v, ok := kobj.Int(job, "spec", "backoffLimitPerIndex"); ok {
		v = clamp32(v)
		s.backoffLimitPerIndex = &v
	}
	if v, ok := kobj.Int(job, "spec", "maxFailedIndexes"); ok {
		v = clamp32(v)
		s.maxFailedIndexes = &v
	}
	if v, ok := kobj.Int(job, "spec", "activeDeadlineSeconds"); ok {
		s.activeDeadline = &v
	}
	if kobj.Map(job, "spec", "podFailurePolicy") != nil {
		s.podFailurePolicy = kobj.Slice(job, "spec", "podFailurePolicy", "rules")
	}
	s.successRules = kobj.Slice(job, "spec", "successPolicy", "rules")
	s.onlyReplaceFailed = kobj.Str(job, "spec", "podReplacementPolicy") == "Failed"
	if s.parallelism < 0 {
		s.parallelism = 0
	}
	return s
}

func clamp32(v int64) int64 {
	switch {
	case v > 1<<31-1:
		return 1<<31 - 1
	case v < -(1 << 31):
		return -(1 << 31)
	}
	return v
}

// status is a Job's status as the controller works on it.
type status struct {
	conditions       []any
	startTime        string
	completionTime   string
	active           int64
	succeeded        int64
	failed           int64
	terminating      *int64
	completedIndexes string
	failedIndexes    *string
	uncountedSucc    []string
	uncountedFail    []string
	ready            *int64
	// rest are the fields the controller does not own, kept.
	rest map[string]any
}

func readStatus(job map[string]any) *status {
	st := kobj.Map(job, "status")
	s := &status{
		startTime:        kobj.Str(st, "startTime"),
		completionTime:   kobj.Str(st, "completionTime"),
		active:           kobj.IntOr(st, 0, "active"),
		succeeded:        kobj.IntOr(st, 0, "succeeded"),
		failed:           kobj.IntOr(st, 0, "failed"),
		completedIndexes: kobj.Str(st, "completedIndexes"),
		rest:             map[string]any{},
	}
	if c, ok := value.DeepCopy(kobj.Slice(st, "conditions")).([]any); ok {
		s.conditions = c
	}
	if v, ok := kobj.Int(st, "terminating"); ok {
		s.terminating = &v
	}
	if v, ok := kobj.Int(st, "ready"); ok {
		s.ready = &v
	}
	if v, ok := st["failedIndexes"].(string); ok {
		s.failedIndexes = &v
	}
	for _, u := range kobj.Slice(st, "uncountedTerminatedPods", "succeeded") {
		if x, ok := u.(string); ok {
			s.uncountedSucc = append(s.uncountedSucc, x)
		}
	}
	for _, u := range kobj.Slice(st, "uncountedTerminatedPods", "failed") {
		if x, ok := u.(string); ok {
			s.uncountedFail = append(s.uncountedFail, x)
		}
	}
	own := map[string]bool{"conditions": true, "startTime": true, "completionTime": true, "active": true, "succeeded": true,
		"failed": true, "terminating": true, "completedIndexes": true, "failedIndexes": true, "uncountedTerminatedPods": true, "ready": true}
	for k, v := range st {
		if !own[k] {
			s.rest[k] = v
		}
	}
	return s
}

func (s *status) toMap() map[string]any {
	out := maps.Clone(s.rest)
	if len(s.conditions) > 0 {
		out["conditions"] = s.conditions
	}
	if s.startTime != "" {
		out["startTime"] = s.startTime
	}
	if s.completionTime != "" {
		out["completionTime"] = s.completionTime
	}
	setNonZero(out, "active", s.active)
	setNonZero(out, "succeeded", s.succeeded)
	setNonZero(out, "failed", s.failed)
	if s.terminating != nil {
		out["terminating"] = *s.terminating
	}
	if s.completedIndexes != "" {
		out["completedIndexes"] = s.completedIndexes
	}
	if s.failedIndexes != nil {
		out["failedIndexes"] = *s.failedIndexes
	}
	u := map[string]any{}
	if len(s.uncountedSucc) > 0 {
		u["succeeded"] = strList(s.uncountedSucc)
	}
	if len(s.uncountedFail) > 0 {
		u["failed"] = strList(s.uncountedFail)
	}
	out["uncountedTerminatedPods"] = u
	if s.ready != nil {
		out["ready"] = *s.ready
	}
	return out
}

func strList(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

func setNonZero(m map[string]any, k string, v int64) {
	if v != 0 {
		m[k] = v
	}
}

func i64(v int64) *int64 { return &v }

// syncer is one Job's sync.
type syncer struct {
	*world
	job     map[string]any
	spec    spec
	st      *status
	changed bool
	requeue time.Time
}

func (s *syncer) note(at time.Time) {
	if !at.IsZero() && at.After(s.now) && (s.requeue.IsZero() || at.Before(s.requeue)) {
		s.requeue = at
	}
}

func (s *syncer) record(ctx context.Context, typ, reason, msg string) {
	if err := event.Record(ctx, s.c, s.now, s.job, typ, reason, msg, Component); err == nil {
		s.changed = true
	}
}

func (s *syncer) condition(typ, status, reason, msg string) map[string]any {
	ts := kobj.FormatTime(s.now)
	return map[string]any{"type": typ, "status": status, "lastProbeTime": ts, "lastTransitionTime": ts, "reason": reason, "message": msg}
}

func findCond(conds []any, typ string) map[string]any {
	for _, c := range conds {
		if m, _ := c.(map[string]any); kobj.Str(m, "type") == typ {
			return m
		}
	}
	return nil
}

// jobCtx is upstream's syncJobCtx.
type jobCtx struct {
	pods                 []map[string]any
	active               []map[string]any
	ready                int64
	terminating          int64
	succeeded, failed    int64
	uncountedSucc        map[string]bool
	uncountedFail        map[string]bool
	finished             map[string]any // the finished condition to reach
	prevSucceededIndexes intervals
	succeededIndexes     intervals
	failedIndexes        *intervals
	delayedDeletion      map[int]map[string]any
	backoffFailures      int64
	lastFailure          time.Time
}

func (s *syncer) run(ctx context.Context) error {
	if managedElsewhere(s.job) {
		return nil
	}
	if finished(s.job) {
		return nil
	}
	if m := kobj.Str(s.job, "spec", "completionMode"); m != "" && m != "NonIndexed" && m != "Indexed" {
		s.record(ctx, event.Warning, "UnknownCompletionMode", "Skipped Job sync because completion mode is unknown")
		return nil
	}
	s.spec = readSpec(s.job)
	s.st = readStatus(s.job)
	sel, err := selector.FromLabelSelector(kobj.Map(s.job, "spec", "selector"))
	if err != nil {
		return nil
	}
	pods, err := s.claimPods(ctx, sel)
	if err != nil {
		return err
	}
	jc := &jobCtx{pods: pods, uncountedSucc: set(s.st.uncountedSucc), uncountedFail: set(s.st.uncountedFail)}
	for _, p := range pods {
		if kobj.PodActive(p) {
			jc.active = append(jc.active, p)
			if ok, _ := kobj.PodReady(p); ok {
				jc.ready++
			}
		}
		if kobj.PodTerminating(p) {
			jc.terminating++
		}
	}
	active := int64(len(jc.active))
	newSucc, newFail := s.newFinishedPods(jc)
	jc.succeeded = s.st.succeeded + int64(len(newSucc)) + int64(len(jc.uncountedSucc))
	jc.failed = s.st.failed + s.nonIgnoredFailed(newFail) + int64(len(jc.uncountedFail))
	if s.st.startTime == "" && !s.spec.suspend {
		s.st.startTime = kobj.FormatTime(s.now)
	}
	jc.backoffFailures, jc.lastFailure = backoffOf(pods, s.spec, s.job)

	var manageErr error
	exceedsBackoff := jc.failed > s.spec.backoffLimit
	if c := findCond(s.st.conditions, "SuccessCriteriaMet"); c != nil && c["status"] == "True" {
		jc.finished = c
	}
	if jc.finished == nil {
		if ft := findCond(s.st.conditions, "FailureTarget"); ft != nil && ft["status"] == "True" {
			jc.finished = s.condition("Failed", "True", kobj.Str(ft, "reason"), kobj.Str(ft, "message"))
		} else if msg := s.failJobMessage(pods); msg != "" {
			jc.finished = s.condition("FailureTarget", "True", "PodFailurePolicy", msg)
		}
	}
	if jc.finished == nil {
		switch {
		case exceedsBackoff || s.pastBackoffLimitOnFailure(pods):
			jc.finished = s.condition("FailureTarget", "True", "BackoffLimitExceeded", "Job has reached the specified backoff limit")
		case s.pastActiveDeadline():
			jc.finished = s.condition("FailureTarget", "True", "DeadlineExceeded", "Job was active longer than specified deadline")
		case s.spec.activeDeadline != nil && !s.spec.suspend:
			start := kobj.ParseTime(s.st.startTime)
			s.note(start.Add(time.Duration(*s.spec.activeDeadline) * time.Second))
		}
	}
	if s.spec.indexed && s.spec.completions != nil {
		completions := int(*s.spec.completions)
		jc.prevSucceededIndexes, jc.succeededIndexes = s.succeededIndexes(pods, completions)
		jc.succeeded = int64(jc.succeededIndexes.total())
		if s.spec.backoffLimitPerIndex != nil {
			fi := s.failedIndexes(pods, completions)
			jc.failedIndexes = &fi
			if jc.finished == nil {
				if s.spec.maxFailedIndexes != nil && int64(fi.total()) > *s.spec.maxFailedIndexes {
					jc.finished = s.condition("FailureTarget", "True", "MaxFailedIndexesExceeded", "Job has exceeded the specified maximal number of failed indexes")
				} else if fi.total() > 0 && fi.total()+jc.succeededIndexes.total() >= completions {
					jc.finished = s.condition("FailureTarget", "True", "FailedIndexes", "Job has failed indexes")
				}
			}
			jc.delayedDeletion = s.podsWithDelayedDeletion(jc)
		}
		if jc.finished == nil {
			if msg, ok := s.matchSuccessPolicy(completions, jc.succeededIndexes); ok {
				jc.finished = s.condition("SuccessCriteriaMet", "True", "SuccessPolicy", msg)
			}
		}
	}
	suspendChanged := false
	if jc.finished != nil {
		deletedReady, deleted, err := s.deletePods(ctx, jc.active, false)
		if deleted != active {
			jc.finished = nil
		}
		active -= deleted
		jc.terminating += deleted
		jc.ready -= deletedReady
		manageErr = err
	} else {
		manageCalled := false
		if !kobj.Deleting(s.job) {
			active, manageErr = s.manage(ctx, jc)
			manageCalled = true
		}
		complete := false
		if s.spec.completions == nil {
			complete = jc.succeeded > 0 && active == 0
		} else {
			complete = jc.succeeded >= *s.spec.completions && active == 0
		}
		switch {
		case complete:
			jc.finished = s.condition("SuccessCriteriaMet", "True", "CompletionsReached", "Reached expected number of succeeded pods")
		case manageCalled && s.spec.suspend:
			if s.ensureCondition("Suspended", "True", "JobSuspended", "Job suspended") {
				suspendChanged = true
				s.record(ctx, event.Normal, "Suspended", "Job suspended")
				s.st.startTime = ""
			}
		case manageCalled:
			if s.ensureCondition("Suspended", "False", "JobResumed", "Job resumed") {
				suspendChanged = true
				s.record(ctx, event.Normal, "Resumed", "Job resumed")
				s.st.startTime = kobj.FormatTime(s.now)
			}
		}
	}
	needs := suspendChanged || active != s.st.active || s.st.ready == nil || *s.st.ready != jc.ready ||
		s.st.terminating == nil || *s.st.terminating != jc.terminating
	s.st.active = active
	s.st.ready = i64(jc.ready)
	s.st.terminating = i64(jc.terminating)
	if err := s.track(ctx, jc, needs); err != nil {
		return fmt.Errorf("tracking status: %w", err)
	}
	return manageErr
}

func set(ss []string) map[string]bool {
	m := make(map[string]bool, len(ss))
	for _, s := range ss {
		m[s] = true
	}
	return m
}

// ensureCondition is ensureJobConditionStatus.
func (s *syncer) ensureCondition(typ, status, reason, msg string) bool {
	if c := findCond(s.st.conditions, typ); c != nil {
		if kobj.Str(c, "status") != status || kobj.Str(c, "reason") != reason || kobj.Str(c, "message") != msg {
			nc := s.condition(typ, status, reason, msg)
			for k := range c {
				delete(c, k)
			}
			maps.Copy(c, nc)
			return true
		}
		return false
	}
	if status != "False" {
		s.st.conditions = append(s.st.conditions, s.condition(typ, status, reason, msg))
		return true
	}
	return false
}

// claimPods returns the Job's pods: adopted orphans get the tracking
// finalizer too.
func (s *syncer) claimPods(ctx context.Context, sel selector.Labels) ([]map[string]any, error) {
	uid := kobj.UID(s.job)
	var out []map[string]any
	for _, p := range s.pods.Candidates(s.job) {
		ref := kobj.ControllerRef(p)
		if ref != nil {
			if ref["uid"] != uid {
				continue
			}
			if sel.Matches(kobj.Labels(p)) {
				out = append(out, p)
				continue
			}
			if kobj.Deleting(s.job) {
				continue
			}
			if err := claim.Release(ctx, s.c, p, uid); err != nil {
				return out, err
			}
			s.changed = true
			continue
		}
		if kobj.Deleting(s.job) || kobj.Deleting(p) || !sel.Matches(kobj.Labels(p)) {
			continue
		}
		next := kobj.Copy(p)
		md := kobj.EnsureMap(next, "metadata")
		refs, _ := md["ownerReferences"].([]any)
		md["ownerReferences"] = append(append([]any{}, refs...), kobj.NewControllerRef(s.job, kobj.JobGVK))
		if !hasFinalizer(p) {
			fs, _ := md["finalizers"].([]any)
			md["finalizers"] = append(append([]any{}, fs...), TrackingFinalizer)
		}
		adopted, err := s.c.Update(ctx, next)
		if err != nil {
			if cluster.IsNotFound(err) || cluster.IsConflict(err) {
				s.changed = true
				continue
			}
			return out, fmt.Errorf("adopt pod %s: %w", kobj.Name(p), err)
		}
		s.changed = true
		s.pods.Forget(p)
		out = append(out, adopted)
	}
	return out, nil
}

// podFailed is isPodFailed.
func (s *syncer) podFailed(p map[string]any) bool {
	phase := kobj.Str(p, "status", "phase")
	if phase == "Failed" {
		return true
	}
	if s.spec.onlyReplaceFailed {
		return false
	}
	return kobj.Deleting(p) && phase != "Succeeded"
}

// validFinished is getValidPodsWithFilter: pods with the finalizer, not
// yet uncounted, with a valid index for an Indexed Job.
func (s *syncer) validFinished(jc *jobCtx, uncounted map[string]bool, filter func(map[string]any) bool) []map[string]any {
	var out []map[string]any
	for _, p := range jc.pods {
		if !hasFinalizer(p) || uncounted[kobj.UID(p)] {
			continue
		}
		if s.spec.indexed {
			ix := completionIndex(p)
			if ix == unknownIndex || s.spec.completions == nil || int64(ix) >= *s.spec.completions {
				continue
			}
		}
		if filter(p) {
			out = append(out, p)
		}
	}
	return out
}

func (s *syncer) newFinishedPods(jc *jobCtx) (succ, fail []map[string]any) {
	succ = s.validFinished(jc, jc.uncountedSucc, func(p map[string]any) bool { return kobj.Str(p, "status", "phase") == "Succeeded" })
	fail = s.validFinished(jc, jc.uncountedFail, s.podFailed)
	return succ, fail
}

func (s *syncer) nonIgnoredFailed(pods []map[string]any) int64 {
	n := int64(len(pods))
	if s.spec.podFailurePolicy != nil {
		for _, p := range pods {
			if _, count, _ := s.matchPodFailurePolicy(p); !count {
				n--
			}
		}
	}
	return n
}

// pastBackoffLimitOnFailure counts container restarts of running pods
// under restartPolicy OnFailure.
func (s *syncer) pastBackoffLimitOnFailure(pods []map[string]any) bool {
	if s.spec.restartPolicy != "OnFailure" {
		return false
	}
	var n int64
	for _, p := range pods {
		phase := kobj.Str(p, "status", "phase")
		if phase != "Running" && phase != "Pending" {
			continue
		}
		for _, f := range []string{"initContainerStatuses", "containerStatuses"} {
			for _, cs := range kobj.Slice(p, "status", f) {
				n += kobj.IntOr(cs.(map[string]any), 0, "restartCount")
			}
		}
	}
	if s.spec.backoffLimit == 0 {
		return n > 0
	}
	return n >= s.spec.backoffLimit
}

func (s *syncer) pastActiveDeadline() bool {
	if s.spec.activeDeadline == nil || s.st.startTime == "" || s.spec.suspend {
		return false
	}
	start := kobj.ParseTime(s.st.startTime)
	d := *s.spec.activeDeadline
	if d > int64(1<<62/time.Second) {
		return false
	}
	return !s.now.Before(start.Add(time.Duration(d) * time.Second))
}

// failJobMessage is getFailJobMessage.
func (s *syncer) failJobMessage(pods []map[string]any) string {
	if s.spec.podFailurePolicy == nil {
		return ""
	}
	for _, p := range pods {
		if s.podFailed(p) {
			if msg, _, _ := s.matchPodFailurePolicy(p); msg != "" {
				return msg
			}
		}
	}
	return ""
}

// matchPodFailurePolicy returns the FailJob message, whether the failure
// counts, and the action of the rule that matched ("" none).
func (s *syncer) matchPodFailurePolicy(p map[string]any) (msg string, count bool, action string) {
	if s.spec.podFailurePolicy == nil {
		return "", true, ""
	}
	for i, r := range s.spec.podFailurePolicy {
		rule, _ := r.(map[string]any)
		act := kobj.Str(rule, "action")
		if oec := kobj.Map(rule, "onExitCodes"); oec != nil {
			cs := matchExitCodes(p, oec)
			if cs == nil {
				continue
			}
			switch act {
			case "Ignore":
				return "", false, act
			case "FailIndex", "Count":
				return "", true, act
			case "FailJob":
				return fmt.Sprintf("Container %s for pod %s/%s failed with exit code %v matching %v rule at index %d",
					kobj.Str(cs, "name"), kobj.Namespace(p), kobj.Name(p), kobj.IntOr(cs, 0, "state", "terminated", "exitCode"), act, i), true, act
			}
		} else if pcs := kobj.Slice(rule, "onPodConditions"); pcs != nil {
			cond := matchPodConditions(p, pcs)
			if cond == nil {
				continue
			}
			switch act {
			case "Ignore":
				return "", false, act
			case "FailIndex", "Count":
				return "", true, act
			case "FailJob":
				return fmt.Sprintf("Pod %s/%s has condition %v matching %v rule at index %d",
					kobj.Namespace(p), kobj.Name(p), kobj.Str(cond, "type"), act, i), true, act
			}
		}
	}
	return "", true, ""
}

func matchExitCodes(p, req map[string]any) map[string]any {
	for _, f := range []string{"containerStatuses", "initContainerStatuses"} {
		for _, x := range kobj.Slice(p, "status", f) {
			cs, _ := x.(map[string]any)
			term := kobj.Map(cs, "state", "terminated")
			if term == nil {
				continue
			}
			if name := kobj.Str(req, "containerName"); name != "" && name != kobj.Str(cs, "name") {
				continue
			}
			code := kobj.IntOr(term, 0, "exitCode")
			if code == 0 {
				continue
			}
			in := false
			for _, v := range kobj.Slice(req, "values") {
				if n, ok := v.(int64); ok && n == code {
					in = true
				}
			}
			switch kobj.Str(req, "operator") {
			case "In":
				if in {
					return cs
				}
			case "NotIn":
				if !in {
					return cs
				}
			}
		}
	}
	return nil
}

func matchPodConditions(p map[string]any, patterns []any) map[string]any {
	for _, x := range kobj.Slice(p, "status", "conditions") {
		c, _ := x.(map[string]any)
		for _, y := range patterns {
			pat, _ := y.(map[string]any)
			if kobj.Str(c, "type") == kobj.Str(pat, "type") && kobj.Str(c, "status") == kobj.Str(pat, "status") {
				return c
			}
		}
	}
	return nil
}

func (s *syncer) matchSuccessPolicy(completions int, succeeded intervals) (string, bool) {
	if len(s.spec.successRules) == 0 || len(succeeded) == 0 {
		return "", false
	}
	for i, r := range s.spec.successRules {
		rule, _ := r.(map[string]any)
		count, hasCount := kobj.Int(rule, "succeededCount")
		if si, ok := rule["succeededIndexes"].(string); ok {
			req := parseIndexes(si, completions)
			if len(req) == 0 {
				continue
			}
			contains := 0
			for _, a := range req {
				for _, b := range succeeded {
					lo, hi := max(a.first, b.first), min(a.last, b.last)
					if hi >= lo {
						contains += hi - lo + 1
					}
				}
			}
			if contains == req.total() || (hasCount && int64(contains) >= count) {
				return fmt.Sprintf("Matched rules at index %d", i), true
			}
		} else if hasCount && int64(succeeded.total()) >= count {
			return fmt.Sprintf("Matched rules at index %d", i), true
		}
	}
	return "", false
}

func (s *syncer) succeededIndexes(pods []map[string]any, completions int) (prev, all intervals) {
	prev = parseIndexes(s.st.completedIndexes, completions)
	newSucc := map[int]bool{}
	for _, p := range pods {
		ix := completionIndex(p)
		if kobj.Str(p, "status", "phase") == "Succeeded" && ix != unknownIndex && ix < completions && hasFinalizer(p) {
			newSucc[ix] = true
		}
	}
	return prev, prev.withOrdered(sortedKeys(newSucc))
}

func (s *syncer) failedIndexes(pods []map[string]any, completions int) intervals {
	var prev intervals
	if s.st.failedIndexes != nil {
		prev = parseIndexes(*s.st.failedIndexes, completions)
	}
	newFail := map[int]bool{}
	for _, p := range pods {
		ix := completionIndex(p)
		if ix != unknownIndex && ix < completions && hasFinalizer(p) && s.indexFailed(p) {
			newFail[ix] = true
		}
	}
	return prev.withOrdered(sortedKeys(newFail))
}

func (s *syncer) indexFailed(p map[string]any) bool {
	counted := false
	if s.podFailed(p) {
		if s.spec.podFailurePolicy != nil {
			_, count, action := s.matchPodFailurePolicy(p)
			if action == "FailIndex" {
				return true
			}
			counted = count
		} else {
			counted = true
		}
	}
	return counted && annotationInt32(p, IndexFailureCountAnnotation) >= *s.spec.backoffLimitPerIndex
}

// podsWithDelayedDeletion is getPodsWithDelayedDeletionPerIndex.
func (s *syncer) podsWithDelayedDeletion(jc *jobCtx) map[int]map[string]any {
	activeIdx := indexesOf(jc.active)
	out := map[int]map[string]any{}
	for _, p := range s.validFinished(jc, nil, s.podFailed) {
		ix := completionIndex(p)
		if jc.succeededIndexes.has(ix) || (jc.failedIndexes != nil && jc.failedIndexes.has(ix)) || activeIdx[ix] {
			continue
		}
		if last, ok := out[ix]; ok {
			if absFailures(last) <= absFailures(p) && !finishTime(p).Before(finishTime(last)) {
				out[ix] = p
			}
		} else {
			out[ix] = p
		}
	}
	return out
}

func absFailures(p map[string]any) int64 {
	return annotationInt32(p, IndexFailureCountAnnotation) + annotationInt32(p, IndexIgnoredFailureCountAnnotation)
}

// finishTime is getFinishedTime.
func finishTime(p map[string]any) time.Time {
	var latest time.Time
	all := true
	for _, x := range kobj.Slice(p, "status", "containerStatuses") {
		cs, _ := x.(map[string]any)
		t := kobj.ParseTime(kobj.Str(cs, "state", "terminated", "finishedAt"))
		if t.IsZero() {
			all = false
			break
		}
		if t.After(latest) {
			latest = t
		}
	}
	if all && !latest.IsZero() {
		return latest
	}
	if c := kobj.Condition(p, "Ready"); c != nil && c["status"] == "False" {
		if t := kobj.ParseTime(kobj.Str(c, "lastTransitionTime")); !t.IsZero() {
			return t
		}
	}
	if dt := kobj.ParseTime(kobj.Str(p, "metadata", "deletionTimestamp")); !dt.IsZero() {
		return dt.Add(-time.Duration(kobj.IntOr(p, 0, "metadata", "deletionGracePeriodSeconds")) * time.Second)
	}
	return kobj.ParseTime(kobj.Str(p, "metadata", "creationTimestamp"))
}

// backoffOf is the back-off record upstream keeps in memory, derived from
// the pods: the failures that finished after the last success, and when
// the last of them finished.
func backoffOf(pods []map[string]any, sp spec, job map[string]any) (int64, time.Time) {
	var lastSuccess time.Time
	for _, p := range pods {
		if kobj.Str(p, "status", "phase") == "Succeeded" {
			if t := finishTime(p); t.After(lastSuccess) {
				lastSuccess = t
			}
		}
	}
	var n int64
	var last time.Time
	for _, p := range pods {
		phase := kobj.Str(p, "status", "phase")
		failed := phase == "Failed" || (!sp.onlyReplaceFailed && kobj.Deleting(p) && phase != "Succeeded")
		if !failed {
			continue
		}
		t := finishTime(p)
		if !t.After(lastSuccess) {
			continue
		}
		n++
		if t.After(last) {
			last = t
		}
	}
	return n, last
}

// backoffRemaining is getRemainingTimeForFailuresCount: 10s doubling per
// consecutive failure, at most 10 minutes, since the last failure.
func backoffRemaining(failures int64, last, now time.Time) time.Duration {
	if failures == 0 {
		return 0
	}
	d := DefaultPodFailureBackOff
	for i := int64(1); i < failures; i++ {
		d *= 2
		if d >= MaxPodFailureBackOff {
			d = MaxPodFailureBackOff
			break
		}
	}
	elapsed := now.Sub(last)
	if d < elapsed {
		return 0
	}
	return d - elapsed
}
