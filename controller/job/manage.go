package job

import (
	"context"
	"fmt"
	"maps"
	"sort"
	"strconv"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/controller/event"
	"github.com/konverge/konverge/controller/internal/kobj"
	"github.com/konverge/konverge/controller/internal/podmemo"
	"github.com/konverge/konverge/value"
)

// manage is manageJob: it deletes pods beyond what is wanted, or creates
// the missing ones once the back-off allows, and returns the number of
// active pods.
func (s *syncer) manage(ctx context.Context, jc *jobCtx) (int64, error) {
	active := int64(len(jc.active))
	if s.spec.suspend {
		rm := s.podsForRemoval(jc.active, int(active))
		ready, removed, err := s.deletePods(ctx, rm, true)
		jc.terminating += removed
		jc.ready -= ready
		return active - removed, err
	}
	var want int64
	if s.spec.completions == nil {
		if jc.succeeded > 0 {
			want = active
		} else {
			want = s.spec.parallelism
		}
	} else {
		want = *s.spec.completions - jc.succeeded
		if want > s.spec.parallelism {
			want = s.spec.parallelism
		}
		if want < 0 {
			want = 0
		}
	}
	rmAtLeast := active - want
	if rmAtLeast < 0 {
		rmAtLeast = 0
	}
	rm := s.podsForRemoval(jc.active, int(rmAtLeast))
	if len(rm) > MaxPodCreateDeletePerSync {
		rm = rm[:MaxPodCreateDeletePerSync]
	}
	if len(rm) > 0 {
		ready, removed, err := s.deletePods(ctx, rm, true)
		jc.terminating += removed
		jc.ready -= ready
		return active - removed, err
	}
	var terminating int64
	if s.spec.onlyReplaceFailed {
		terminating = jc.terminating
	}
	diff := want - terminating - active
	if diff <= 0 {
		return active, nil
	}
	if s.spec.backoffLimitPerIndex == nil {
		if rem := backoffRemaining(jc.backoffFailures, jc.lastFailure, s.now); rem > 0 {
			s.note(s.now.Add(rem))
			return active, nil
		}
	}
	// After a refused creation, the Job's back-off (client-go's rate
	// limiter, read from the FailedCreate Event's count).
	until, waiting, err := apiBackoff.Waiting(ctx, s.c, s.job, Component, s.now)
	if err != nil {
		return active, err
	}
	if waiting {
		s.note(until)
		return active, nil
	}
	// At most MaxPodCreateDeletePerSync per sync, and per second of
	// cluster time: a Job of a huge parallelism fills over many seconds
	// (as the real one, throttled by the API server), the rest a second
	// later.
	limit := int64(MaxPodCreateDeletePerSync) - createdAt(jc.pods, s.now)
	if diff > limit {
		s.note(s.now.Add(time.Second))
		diff = max(limit, 0)
	}
	if diff == 0 {
		return active, nil
	}
	var indexes []int
	if s.spec.indexed && s.spec.completions != nil {
		indexes = s.firstPendingIndexes(jc, int(diff), int(*s.spec.completions))
		if s.spec.backoffLimitPerIndex != nil {
			var now []int
			var minRem int64 = -1
			for _, ix := range indexes {
				rem := s.indexBackoffRemaining(jc.delayedDeletion[ix])
				if rem == 0 {
					now = append(now, ix)
				} else if minRem < 0 || int64(rem) < minRem {
					minRem = int64(rem)
				}
			}
			if len(now) == 0 && minRem > 0 {
				s.note(s.now.Add(time.Duration(minRem)))
				return active, nil
			}
			indexes = now
		}
		diff = int64(len(indexes))
	}
	active += diff
	// Slow start: batches of 1, 2, 4... a batch with an error stops
	// the rest.
	for batch := min(diff, slowStartInitialBatch); diff > 0; batch = min(2*batch, diff) {
		var firstErr error
		for i := int64(0); i < batch; i++ {
			ix := unknownIndex
			if len(indexes) > 0 {
				ix, indexes = indexes[0], indexes[1:]
			}
			if err := s.createPod(ctx, ix, jc); err != nil {
				active--
				if firstErr == nil {
					firstErr = err
				}
			}
		}
		diff -= batch
		if firstErr != nil {
			active -= diff
			return active, firstErr
		}
	}
	return active, nil
}

// podsForRemoval is activePodsForRemoval: duplicate, index-less and
// out-of-range indexes of an Indexed Job first, then the least advanced
// pods.
func (s *syncer) podsForRemoval(pods []map[string]any, rmAtLeast int) []map[string]any {
	var rm, left []map[string]any
	if s.spec.indexed && s.spec.completions != nil {
		rm, left = duplicatedIndexPods(pods, int(*s.spec.completions))
	} else {
		left = append([]map[string]any{}, pods...)
	}
	if len(rm) < rmAtLeast {
		sortActivePods(left)
		rm = append(rm, left[:rmAtLeast-len(rm)]...)
	}
	return rm
}

// sortByIndex sorts pods by completion index, stably; each pod's index
// is read once.
func sortByIndex(pods []map[string]any) {
	type indexed struct {
		ix  int
		pod map[string]any
	}
	xs := make([]indexed, len(pods))
	for i, p := range pods {
		xs[i] = indexed{completionIndex(p), p}
	}
	sort.SliceStable(xs, func(i, j int) bool { return xs[i].ix < xs[j].ix })
	for i, x := range xs {
		pods[i] = x.pod
	}
}

func duplicatedIndexPods(pods []map[string]any, completions int) (rm, left []map[string]any) {
	sorted := append([]map[string]any{}, pods...)
	sortByIndex(sorted)
	group := func(ps []map[string]any, ix int) {
		switch {
		case len(ps) == 0:
		case ix == unknownIndex:
			rm = append(rm, ps...)
		case len(ps) == 1:
			left = append(left, ps[0])
		default:
			cp := append([]map[string]any{}, ps...)
			sortActivePods(cp)
			rm = append(rm, cp[:len(cp)-1]...)
			left = append(left, cp[len(cp)-1])
		}
	}
	last, start := unknownIndex, 0
	for i, p := range sorted {
		ix := completionIndex(p)
		if ix >= completions {
			group(sorted[start:i], last)
			rm = append(rm, sorted[i:]...)
			return rm, left
		}
		if ix != last {
			group(sorted[start:i], last)
			start, last = i, ix
		}
	}
	group(sorted[start:], last)
	return rm, left
}

// firstPendingIndexes returns up to count indexes below completions that
// no active pod has and that neither succeeded nor failed.
func (s *syncer) firstPendingIndexes(jc *jobCtx, count, completions int) []int {
	if count == 0 {
		return nil
	}
	nonPending := jc.succeededIndexes.withOrdered(sortedKeys(indexesOf(jc.active)))
	if s.spec.onlyReplaceFailed {
		var term []map[string]any
		for _, p := range jc.pods {
			if kobj.PodTerminating(p) {
				term = append(term, p)
			}
		}
		nonPending = nonPending.withOrdered(sortedKeys(indexesOf(term)))
	}
	if jc.failedIndexes != nil {
		nonPending = nonPending.merge(*jc.failedIndexes)
	}
	var out []int
	cand := 0
	for _, iv := range nonPending {
		for ; cand < completions && len(out) < count && cand < iv.first; cand++ {
			out = append(out, cand)
		}
		if cand < iv.last+1 {
			cand = iv.last + 1
		}
	}
	for ; cand < completions && len(out) < count; cand++ {
		out = append(out, cand)
	}
	return out
}

func (s *syncer) indexBackoffRemaining(lastFailed map[string]any) time.Duration {
	if lastFailed == nil {
		return 0
	}
	failures := absFailures(lastFailed) + 1
	return backoffRemaining(failures, finishTime(lastFailed), s.now)
}

// createPod creates one pod of the Job (of index ix, or unknownIndex),
// with upstream's event.
func (s *syncer) createPod(ctx context.Context, ix int, jc *jobCtx) error {
	tmpl := kobj.Map(s.job, "spec", "template")
	md := kobj.Map(tmpl, "metadata")
	spec, _ := value.DeepCopy(kobj.Map(tmpl, "spec")).(map[string]any)
	if spec == nil {
		spec = map[string]any{}
	}
	labels := map[string]any{}
	maps.Copy(labels, kobj.Map(md, "labels"))
	annotations := map[string]any{}
	maps.Copy(annotations, kobj.Map(md, "annotations"))
	finalizers, _ := value.DeepCopy(kobj.Slice(md, "finalizers")).([]any)
	has := false
	for _, f := range finalizers {
		if f == TrackingFinalizer {
			has = true
		}
	}
	if !has {
		finalizers = append(finalizers, TrackingFinalizer)
	}
	jobName := kobj.Name(s.job)
	prefix := jobName + "-"
	if len(prefix) > maxGeneratedNameLength {
		prefix = prefix[:maxGeneratedNameLength]
	}
	if s.spec.indexed {
		addIndexEnv(spec)
	}
	if ix != unknownIndex {
		idx := strconv.Itoa(ix)
		annotations[CompletionIndexAnnotation] = idx
		labels[CompletionIndexAnnotation] = idx
		spec["hostname"] = jobName + "-" + idx
		prefix = podGenerateNameWithIndex(jobName, ix)
		if s.spec.backoffLimitPerIndex != nil {
			failures, ignored := s.newIndexFailureCounts(jc.delayedDeletion[ix])
			annotations[IndexFailureCountAnnotation] = strconv.FormatInt(failures, 10)
			if ignored > 0 {
				annotations[IndexIgnoredFailureCountAnnotation] = strconv.FormatInt(ignored, 10)
			}
		}
	}
	ns := kobj.Namespace(s.job)
	var name string
	for n := 0; ; n++ {
		name = prefix + kobj.ShortName(5, ns, jobName, strconv.FormatInt(s.now.UnixNano(), 10), strconv.Itoa(n))
		if !s.names.Has(podmemo.Key{ns, name}) {
			break
		}
	}
	s.names.Add(podmemo.Key{ns, name})
	pmd := map[string]any{
		"name":            name,
		"generateName":    prefix,
		"namespace":       ns,
		"ownerReferences": []any{kobj.NewControllerRef(s.job, kobj.JobGVK)},
		"finalizers":      finalizers,
	}
	if len(labels) > 0 {
		pmd["labels"] = labels
	}
	if len(annotations) > 0 {
		pmd["annotations"] = annotations
	}
	pod := map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": pmd, "spec": spec}
	created, err := s.c.Create(ctx, pod)
	if err != nil {
		s.record(ctx, event.Warning, "FailedCreate", fmt.Sprintf("Error creating: %v", err))
		return err
	}
	s.changed = true
	s.pods.Add(created)
	s.record(ctx, event.Normal, "SuccessfulCreate", "Created pod: "+kobj.Name(created))
	return nil
}

func (s *syncer) newIndexFailureCounts(replaced map[string]any) (int64, int64) {
	if replaced == nil {
		return 0, 0
	}
	failures := annotationInt32(replaced, IndexFailureCountAnnotation)
	ignored := annotationInt32(replaced, IndexIgnoredFailureCountAnnotation)
	if s.spec.podFailurePolicy != nil {
		if _, count, _ := s.matchPodFailurePolicy(replaced); count {
			failures++
		} else {
			ignored++
		}
	} else {
		failures++
	}
	return failures, ignored
}

// addIndexEnv gives every container JOB_COMPLETION_INDEX from the pod's
// index label.
func addIndexEnv(spec map[string]any) {
	for _, f := range []string{"initContainers", "containers"} {
		for _, c := range kobj.Slice(spec, f) {
			cm, _ := c.(map[string]any)
			env := kobj.Slice(cm, "env")
			found := false
			for _, e := range env {
				if em, _ := e.(map[string]any); kobj.Str(em, "name") == completionIndexEnvName {
					found = true
				}
			}
			if found {
				continue
			}
			cm["env"] = append(append([]any{}, env...), map[string]any{
				"name": completionIndexEnvName,
				"valueFrom": map[string]any{"fieldRef": map[string]any{
					"fieldPath": "metadata.labels['" + CompletionIndexAnnotation + "']",
				}},
			})
		}
	}
}

// deletePods deletes pods with upstream's events (removing the tracking
// finalizer first when withFinalizer, as deleteJobPods does) and returns
// how many were ready and how many were deleted.
func (s *syncer) deletePods(ctx context.Context, pods []map[string]any, withFinalizer bool) (ready, deleted int64, err error) {
	for _, p := range pods {
		if withFinalizer {
			if _, ferr := removeFinalizer(ctx, s.c, p); ferr != nil {
				err = ferr
				continue
			}
			s.changed = true
		}
		derr := s.c.Delete(ctx, kobj.PodGVK, kobj.Namespace(p), kobj.Name(p))
		switch {
		case derr == nil:
			s.changed = true
			s.record(ctx, event.Normal, "SuccessfulDelete", "Deleted pod: "+kobj.Name(p))
			deleted++
		case cluster.IsNotFound(derr):
			deleted++
		default:
			s.record(ctx, event.Warning, "FailedDelete", fmt.Sprintf("Error deleting: %v", derr))
			err = derr
			continue
		}
		if ok, _ := kobj.PodReady(p); ok {
			ready++
		}
	}
	return ready, deleted, err
}

// track is trackJobStatusAndRemoveFinalizers: finished pods go into
// uncountedTerminatedPods, their finalizers are removed, the counters take
// them, and the Job finishes when it may.
func (s *syncer) track(ctx context.Context, jc *jobCtx, needs bool) error {
	pods := jc.pods
	if s.spec.indexed {
		pods = append([]map[string]any{}, pods...)
		sortByIndex(pods)
	}
	withFinalizer := map[string]bool{}
	for _, p := range pods {
		if hasFinalizer(p) {
			withFinalizer[kobj.UID(p)] = true
		}
	}
	if s.cleanUncounted(withFinalizer) {
		needs = true
	}
	var toRemove []map[string]any
	var newSuccIdx []int
	reachedMax := false
	completions := 0
	if s.spec.completions != nil {
		completions = int(*s.spec.completions)
	}
	for _, p := range pods {
		if !hasFinalizer(p) {
			continue
		}
		failed := s.podFailed(p)
		if !s.canRemoveFinalizer(jc, p, failed) {
			continue
		}
		toRemove = append(toRemove, p)
		uid := kobj.UID(p)
		if kobj.Str(p, "status", "phase") == "Succeeded" && !jc.uncountedFail[uid] {
			if s.spec.indexed {
				ix := completionIndex(p)
				if ix != unknownIndex && ix < completions && !jc.prevSucceededIndexes.has(ix) {
					newSuccIdx = append(newSuccIdx, ix)
					needs = true
				}
			} else if !jc.uncountedSucc[uid] {
				needs = true
				s.st.uncountedSucc = append(s.st.uncountedSucc, uid)
			}
		} else if failed || (jc.finished != nil && kobj.Str(jc.finished, "type") != "SuccessCriteriaMet") {
			ix := completionIndex(p)
			if !jc.uncountedFail[uid] && (!s.spec.indexed || (ix != unknownIndex && ix < completions)) {
				count := true
				if s.spec.podFailurePolicy != nil {
					_, count, _ = s.matchPodFailurePolicy(p)
				}
				if count {
					needs = true
					s.st.uncountedFail = append(s.st.uncountedFail, uid)
				}
			}
		}
		if len(newSuccIdx)+len(s.st.uncountedSucc)+len(s.st.uncountedFail) >= MaxUncountedPods {
			reachedMax = true
			break
		}
	}
	if s.spec.indexed {
		sort.Ints(newSuccIdx)
		jc.succeededIndexes = jc.succeededIndexes.withOrdered(newSuccIdx)
		str := jc.succeededIndexes.String()
		if str != s.st.completedIndexes {
			needs = true
		}
		s.st.succeeded = int64(jc.succeededIndexes.total())
		s.st.completedIndexes = str
		var fi *string
		if jc.failedIndexes != nil {
			v := jc.failedIndexes.String()
			fi = &v
		}
		if (fi == nil) != (s.st.failedIndexes == nil) || (fi != nil && *fi != *s.st.failedIndexes) {
			s.st.failedIndexes = fi
			needs = true
		}
	}
	if jc.finished != nil && kobj.Str(jc.finished, "type") == "FailureTarget" {
		s.st.conditions = append(s.st.conditions, jc.finished)
		needs = true
		jc.finished = s.condition("Failed", "True", kobj.Str(jc.finished, "reason"), kobj.Str(jc.finished, "message"))
	}
	if jc.finished != nil && kobj.Str(jc.finished, "type") == "SuccessCriteriaMet" {
		if c := findCond(s.st.conditions, "SuccessCriteriaMet"); c == nil || c["status"] != "True" {
			s.st.conditions = append(s.st.conditions, jc.finished)
			needs = true
		}
		jc.finished = s.condition("Complete", "True", kobj.Str(jc.finished, "reason"), kobj.Str(jc.finished, "message"))
	}
	// Flush what is uncounted before removing finalizers.
	if needs {
		if err := s.writeStatus(ctx); err != nil {
			return fmt.Errorf("adding uncounted pods to status: %w", err)
		}
		needs = false
	}
	var rmErr error
	for _, p := range toRemove {
		if _, err := removeFinalizer(ctx, s.c, p); err != nil {
			rmErr = err
			continue
		}
		s.changed = true
		delete(withFinalizer, kobj.UID(p))
	}
	if s.cleanUncounted(withFinalizer) {
		needs = true
	}
	if rmErr != nil {
		if needs {
			if err := s.writeStatus(ctx); err != nil {
				return err
			}
		}
		return rmErr
	}
	finishedNow := !reachedMax && s.enactFinished(jc)
	if finishedNow {
		needs = true
	}
	if needs {
		if err := s.writeStatus(ctx); err != nil {
			return fmt.Errorf("removing uncounted pods from status: %w", err)
		}
		if finishedNow {
			s.recordFinished(ctx, jc.finished)
		}
	}
	return nil
}

// cleanUncounted moves the uncounted pods whose finalizer is gone into
// the counters.
func (s *syncer) cleanUncounted(withFinalizer map[string]bool) bool {
	updated := false
	keep := func(uids []string) []string {
		var out []string
		for _, u := range uids {
			if withFinalizer[u] {
				out = append(out, u)
			}
		}
		return out
	}
	if n := keep(s.st.uncountedSucc); len(n) != len(s.st.uncountedSucc) {
		updated = true
		s.st.succeeded += int64(len(s.st.uncountedSucc) - len(n))
		s.st.uncountedSucc = n
	}
	if n := keep(s.st.uncountedFail); len(n) != len(s.st.uncountedFail) {
		updated = true
		s.st.failed += int64(len(s.st.uncountedFail) - len(n))
		s.st.uncountedFail = n
	}
	return updated
}

func (s *syncer) canRemoveFinalizer(jc *jobCtx, p map[string]any, failed bool) bool {
	if kobj.Deleting(s.job) || jc.finished != nil || kobj.Str(p, "status", "phase") == "Succeeded" {
		return true
	}
	if !failed {
		return false
	}
	if s.spec.backoffLimitPerIndex != nil {
		if ix := completionIndex(p); ix != unknownIndex {
			if d, ok := jc.delayedDeletion[ix]; ok && kobj.UID(d) == kobj.UID(p) {
				return false
			}
		}
	}
	return true
}

// enactFinished adds the Complete or Failed condition once nothing is
// uncounted or terminating.
func (s *syncer) enactFinished(jc *jobCtx) bool {
	if jc.finished == nil {
		return false
	}
	if len(s.st.uncountedSucc)+len(s.st.uncountedFail) > 0 {
		return false
	}
	if s.st.terminating != nil && *s.st.terminating > 0 {
		return false
	}
	f := jc.finished
	s.ensureCondition(kobj.Str(f, "type"), kobj.Str(f, "status"), kobj.Str(f, "reason"), kobj.Str(f, "message"))
	if kobj.Str(f, "type") == "Complete" {
		s.st.completionTime = kobj.FormatTime(s.now)
	}
	return true
}

func (s *syncer) recordFinished(ctx context.Context, f map[string]any) {
	if kobj.Str(f, "type") == "Complete" {
		if s.spec.completions != nil && s.st.succeeded > *s.spec.completions {
			s.record(ctx, event.Warning, "TooManySucceededPods", "Too many succeeded pods running after completion count reached")
		}
		s.record(ctx, event.Normal, "Completed", "Job completed")
		return
	}
	s.record(ctx, event.Warning, kobj.Str(f, "reason"), kobj.Str(f, "message"))
}

// writeStatus writes the working status.
func (s *syncer) writeStatus(ctx context.Context) error {
	next := maps.Clone(s.job)
	next["status"] = s.st.toMap()
	out, err := s.c.UpdateStatus(ctx, next)
	if err != nil {
		if cluster.IsNotFound(err) {
			s.changed = true
			return nil
		}
		return err
	}
	s.changed = true
	s.job = out
	return nil
}

// sortActivePods is controller.ActivePods' order, the pods to delete
// first: unassigned before assigned; Pending before Unknown before
// Running; not ready before ready; ready for less time before more; more
// restarts before fewer; newer before older.
func sortActivePods(pods []map[string]any) {
	rank := func(p string) int {
		switch p {
		case "Pending":
			return 0
		case "Unknown":
			return 1
		case "Running":
			return 2
		}
		return 3
	}
	restarts := func(p map[string]any) int64 {
		var m int64
		for _, cs := range kobj.Slice(p, "status", "containerStatuses") {
			if n := kobj.IntOr(cs.(map[string]any), 0, "restartCount"); n > m {
				m = n
			}
		}
		return m
	}
	sort.SliceStable(pods, func(i, j int) bool {
		a, b := pods[i], pods[j]
		aa, ba := kobj.Str(a, "spec", "nodeName") != "", kobj.Str(b, "spec", "nodeName") != ""
		if aa != ba {
			return !aa
		}
		if ra, rb := rank(kobj.Str(a, "status", "phase")), rank(kobj.Str(b, "status", "phase")); ra != rb {
			return ra < rb
		}
		ar, at := kobj.PodReady(a)
		br, bt := kobj.PodReady(b)
		if ar != br {
			return !ar
		}
		if ar && br && !at.Equal(bt) {
			return at.After(bt)
		}
		if x, y := restarts(a), restarts(b); x != y {
			return x > y
		}
		ca := kobj.ParseTime(kobj.Str(a, "metadata", "creationTimestamp"))
		cb := kobj.ParseTime(kobj.Str(b, "metadata", "creationTimestamp"))
		return ca.After(cb)
	})
}

// createdAt counts the pods created at now (to the second, as
// creationTimestamp has it).
func createdAt(pods []map[string]any, now time.Time) int64 {
	ts := kobj.FormatTime(now)
	var n int64
	for _, p := range pods {
		if kobj.Str(p, "metadata", "creationTimestamp") == ts {
			n++
		}
	}
	return n
}
