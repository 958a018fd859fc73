// Package cronjob is the CronJob controller of the embedded cluster, after
// kube-controller-manager 1.37's (pkg/controller/cronjob, the v2
// controller): at each time of its schedule (cron syntax by
// github.com/robfig/cron/v3, as upstream; in spec.timeZone, or TZ= in the
// schedule) it creates a Job named `<cronjob>-<scheduled time in minutes>`,
// with concurrencyPolicy Allow, Forbid or Replace, startingDeadlineSeconds,
// suspend, the successful and failed history limits, status.active,
// lastScheduleTime and lastSuccessfulTime, and upstream's events. After
// missed schedules it starts only the most recent one (and warns about
// more than 100), as upstream.
//
// It wakes the cluster at the next schedule time (Result.RequeueAt, plus
// upstream's 100ms): a clock advance of hours runs every schedule in it.
package cronjob

import (
	"context"
	"fmt"
	"maps"
	"sort"
	"strconv"
	"strings"
	"time"

	cron "github.com/robfig/cron/v3"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/controller"
	"github.com/konverge/konverge/controller/event"
	"github.com/konverge/konverge/controller/internal/kobj"
	"github.com/konverge/konverge/controller/internal/reconcile"
	"github.com/konverge/konverge/value"
)

// Component is the source of the controller's Events.
const Component = "cronjob-controller"

// ScheduledTimestampAnnotation is the annotation of a CronJob's Job with
// its scheduled time.
const ScheduledTimestampAnnotation = "batch.kubernetes.io/cronjob-scheduled-timestamp"

// nextScheduleDelta is the padding upstream adds to its wake-ups.
const nextScheduleDelta = 100 * time.Millisecond

// Controller is the CronJob controller. The zero value is ready to use.
type Controller struct{}

var _ controller.Controller = Controller{}

// Name implements controller.Controller.
func (Controller) Name() string { return "cronjob" }

// Sync reconciles every CronJob once.
func (Controller) Sync(ctx context.Context, c cluster.Interface, now time.Time) (controller.Result, error) {
	var res controller.Result
	cjs, err := c.List(ctx, kobj.CronJobGVK)
	if err != nil {
		return res, fmt.Errorf("cronjob: list cronjobs: %w", err)
	}
	if len(cjs.Items) == 0 {
		return res, nil
	}
	jobs, err := c.List(ctx, kobj.JobGVK)
	if err != nil {
		return res, fmt.Errorf("cronjob: list jobs: %w", err)
	}
	byOwner := map[string][]map[string]any{}
	for _, j := range jobs.Items {
		if uid := kobj.ControllerUID(j); uid != "" {
			byOwner[uid] = append(byOwner[uid], j)
		}
	}
	loop := reconcile.Loop{Name: "cronjob", Component: Component, Wait: true, Scheduled: true}
	return loop.Run(ctx, c, now, cjs.Items, func(ctx context.Context, cj map[string]any) (reconcile.Outcome, error) {
		s := &syncer{c: c, now: now, cj: cj, jobs: byOwner[kobj.UID(cj)]}
		err := s.run(ctx)
		return reconcile.Outcome{Changed: s.changed, Requeue: s.requeue}, err
	})
}

type syncer struct {
	c       cluster.Interface
	now     time.Time
	cj      map[string]any
	jobs    []map[string]any
	status  map[string]any // working copy
	changed bool
	requeue time.Time
}

func (s *syncer) record(ctx context.Context, typ, reason, msg string) {
	if err := event.Record(ctx, s.c, s.now, s.cj, typ, reason, msg, Component); err == nil {
		s.changed = true
	}
}

// recordOnce records an event that upstream's controller says once per
// sync it is woken for: once since the given time (the schedule time the
// sync is for; zero: once while the event lives).
func (s *syncer) recordOnce(ctx context.Context, since time.Time, typ, reason, msg string) {
	seen, err := event.RecordedSince(ctx, s.c, s.cj, typ, reason, msg, Component, since)
	if err != nil || seen {
		return
	}
	s.record(ctx, typ, reason, msg)
}

func (s *syncer) run(ctx context.Context) error {
	s.status, _ = value.DeepCopy(kobj.Map(s.cj, "status")).(map[string]any)
	if s.status == nil {
		s.status = map[string]any{}
	}
	update := s.cleanupFinished(ctx)
	next, upd, err := s.sync(ctx)
	update = update || upd
	if update {
		cp := maps.Clone(s.cj)
		st := s.status
		if a, ok := st["active"].([]any); ok && len(a) == 0 {
			delete(st, "active")
		}
		cp["status"] = st
		if _, uerr := s.c.UpdateStatus(ctx, cp); uerr != nil {
			if !cluster.IsNotFound(uerr) && !cluster.IsConflict(uerr) {
				return fmt.Errorf("update status: %w", uerr)
			}
		}
		s.changed = true
	}
	if !next.IsZero() {
		s.requeue = next
	}
	return err
}

func (s *syncer) active() []any { l, _ := s.status["active"].([]any); return l }

func (s *syncer) inActive(uid string) bool {
	for _, a := range s.active() {
		if m, _ := a.(map[string]any); kobj.Str(m, "uid") == uid {
			return true
		}
	}
	return false
}

func (s *syncer) inActiveByName(name string) bool {
	for _, a := range s.active() {
		if m, _ := a.(map[string]any); kobj.Str(m, "name") == name && kobj.Str(m, "namespace") == kobj.Namespace(s.cj) {
			return true
		}
	}
	return false
}

func (s *syncer) removeActive(uid string) {
	kept := []any{}
	for _, a := range s.active() {
		if m, _ := a.(map[string]any); kobj.Str(m, "uid") != uid {
			kept = append(kept, a)
		}
	}
	s.status["active"] = kept
}

// finishedType returns Complete or Failed when the Job has finished.
func finishedType(j map[string]any) string {
	for _, c := range kobj.Slice(j, "status", "conditions") {
		m, _ := c.(map[string]any)
		t := kobj.Str(m, "type")
		if (t == "Complete" || t == "Failed") && kobj.Str(m, "status") == "True" {
			return t
		}
	}
	return ""
}

// cleanupFinished deletes the oldest finished Jobs beyond the history
// limits.
func (s *syncer) cleanupFinished(ctx context.Context) bool {
	succLimit, hasSucc := kobj.Int(s.cj, "spec", "successfulJobsHistoryLimit")
	failLimit, hasFail := kobj.Int(s.cj, "spec", "failedJobsHistoryLimit")
	if !hasSucc && !hasFail {
		return false
	}
	var succ, failed []map[string]any
	for _, j := range s.jobs {
		switch finishedType(j) {
		case "Complete":
			succ = append(succ, j)
		case "Failed":
			failed = append(failed, j)
		}
	}
	update := false
	if hasSucc && s.removeOldest(ctx, succ, succLimit) {
		update = true
	}
	if hasFail && s.removeOldest(ctx, failed, failLimit) {
		update = true
	}
	return update
}

func (s *syncer) removeOldest(ctx context.Context, jobs []map[string]any, keep int64) bool {
	n := int64(len(jobs)) - keep
	if n <= 0 {
		return false
	}
	sortByStartTime(jobs)
	update := false
	for _, j := range jobs[:n] {
		if s.deleteJob(ctx, j) {
			update = true
		}
	}
	return update
}

// sortByStartTime is byJobStartTime: started before not started, then by
// start time, then by name.
func sortByStartTime(jobs []map[string]any) {
	sort.SliceStable(jobs, func(i, j int) bool {
		a, b := kobj.Str(jobs[i], "status", "startTime"), kobj.Str(jobs[j], "status", "startTime")
		if a == "" && b != "" {
			return false
		}
		if a != "" && b == "" {
			return true
		}
		ta, tb := kobj.ParseTime(a), kobj.ParseTime(b)
		if ta.Equal(tb) {
			return kobj.Name(jobs[i]) < kobj.Name(jobs[j])
		}
		return ta.Before(tb)
	})
}

// deleteJob deletes a Job (background propagation) and its reference in
// the active list.
//
// The event is recorded before the deletion (upstream records it after a
// successful one): the deletion takes the Job's pods with it in the
// embedded store, after which reading the Events again costs far more.
// A deletion that fails is the only case where the order shows, with a
// FailedDelete right after.
func (s *syncer) deleteJob(ctx context.Context, j map[string]any) bool {
	s.record(ctx, event.Normal, "SuccessfulDelete", "Deleted job "+kobj.Name(j))
	err := s.c.Delete(ctx, kobj.JobGVK, kobj.Namespace(j), kobj.Name(j), cluster.Background)
	if err != nil && !cluster.IsNotFound(err) {
		s.record(ctx, event.Warning, "FailedDelete", fmt.Sprintf("Deleted job: %v", err))
		return false
	}
	s.changed = true
	s.removeActive(kobj.UID(j))
	return true
}

// sync is syncCronJob: it returns when to wake up next.
func (s *syncer) sync(ctx context.Context) (time.Time, bool, error) {
	update := false
	children := map[string]bool{}
	for _, j := range s.jobs {
		uid := kobj.UID(j)
		children[uid] = true
		found := s.inActive(uid)
		fin := finishedType(j)
		switch {
		case !found && fin == "":
			s.recordOnce(ctx, s.lastTick(), event.Warning, "UnexpectedJob", "Saw a job that the controller did not create or forgot: "+kobj.Name(j))
		case fin != "":
			if found {
				s.removeActive(uid)
				s.record(ctx, event.Normal, "SawCompletedJob", fmt.Sprintf("Saw completed job: %s, condition: %s", kobj.Name(j), fin))
				update = true
			}
			if fin == "Complete" {
				ct := kobj.Str(j, "status", "completionTime")
				last := kobj.Str(s.status, "lastSuccessfulTime")
				if last == "" && ct != "" {
					s.status["lastSuccessfulTime"] = ct
					update = true
				} else if ct != "" && kobj.ParseTime(ct).After(kobj.ParseTime(last)) {
					s.status["lastSuccessfulTime"] = ct
					update = true
				}
			}
		}
	}
	for _, a := range append([]any{}, s.active()...) {
		m, _ := a.(map[string]any)
		uid := kobj.Str(m, "uid")
		if children[uid] {
			continue
		}
		_, err := s.c.Get(ctx, kobj.JobGVK, kobj.Str(m, "namespace"), kobj.Str(m, "name"))
		switch {
		case cluster.IsNotFound(err):
			s.record(ctx, event.Normal, "MissingJob", "Active job went missing: "+kobj.Str(m, "name"))
			s.removeActive(uid)
			update = true
		case err != nil:
			return time.Time{}, update, err
		}
	}
	if kobj.Deleting(s.cj) {
		return time.Time{}, update, nil
	}
	tz := kobj.Str(s.cj, "spec", "timeZone")
	if _, has := kobj.Map(s.cj, "spec")["timeZone"]; has {
		if _, err := time.LoadLocation(tz); err != nil {
			s.recordOnce(ctx, time.Time{}, event.Warning, "UnknownTimeZone", fmt.Sprintf("invalid timeZone: %q: %s", tz, err))
			return time.Time{}, update, nil
		}
	}
	if kobj.Bool(s.cj, "spec", "suspend") {
		return time.Time{}, update, nil
	}
	sched, err := s.schedule(ctx)
	if err != nil {
		s.recordOnce(ctx, time.Time{}, event.Warning, "UnparseableSchedule", fmt.Sprintf("unparseable schedule: %q : %s", kobj.Str(s.cj, "spec", "schedule"), err))
		return time.Time{}, update, nil
	}
	scheduled, err := s.nextScheduleTime(ctx, sched)
	if err != nil {
		s.recordOnce(ctx, time.Time{}, event.Warning, "InvalidSchedule", fmt.Sprintf("invalid schedule: %s : %s", kobj.Str(s.cj, "spec", "schedule"), err))
		return time.Time{}, update, nil
	}
	if scheduled == nil {
		return s.nextWake(sched), update, nil
	}
	if sds, ok := kobj.Int(s.cj, "spec", "startingDeadlineSeconds"); ok {
		if scheduled.Add(seconds(sds)).Before(s.now) {
			s.recordOnce(ctx, s.tickOf(sched), event.Warning, "MissSchedule", "Missed scheduled time to start a job: "+scheduled.UTC().Format(time.RFC1123Z))
			return s.nextWake(sched), update, nil
		}
	}
	name := jobName(s.cj, *scheduled)
	if s.inActiveByName(name) || kobj.ParseTime(kobj.Str(s.status, "lastScheduleTime")).Equal(*scheduled) && kobj.Str(s.status, "lastScheduleTime") != "" {
		return s.nextWake(sched), update, nil
	}
	policy := kobj.Str(s.cj, "spec", "concurrencyPolicy")
	if policy == "Forbid" && len(s.active()) > 0 {
		s.recordOnce(ctx, *scheduled, event.Normal, "JobAlreadyActive", "Not starting job because prior execution is running and concurrency policy is Forbid")
		return s.nextWake(sched), update, nil
	}
	if policy == "Replace" {
		for _, a := range append([]any{}, s.active()...) {
			m, _ := a.(map[string]any)
			j, err := s.c.Get(ctx, kobj.JobGVK, kobj.Str(m, "namespace"), kobj.Str(m, "name"))
			if err != nil {
				s.record(ctx, event.Warning, "FailedGet", fmt.Sprintf("Get job: %v", err))
				return time.Time{}, update, err
			}
			if !s.deleteJob(ctx, j) {
				return time.Time{}, update, fmt.Errorf("could not replace job %s/%s", kobj.Namespace(j), kobj.Name(j))
			}
			update = true
		}
	}
	job, err := s.jobFromTemplate(*scheduled, name)
	if err != nil {
		return time.Time{}, update, err
	}
	created, err := s.c.Create(ctx, job)
	switch {
	case cluster.IsAlreadyExists(err):
		existing, gerr := s.c.Get(ctx, kobj.JobGVK, kobj.Namespace(s.cj), name)
		if gerr != nil {
			return time.Time{}, update, gerr
		}
		if kobj.ControllerUID(existing) != kobj.UID(s.cj) || s.inActive(kobj.UID(existing)) {
			return time.Time{}, update, nil
		}
		created = existing
	case err != nil:
		if strings.Contains(err.Error(), "is being terminated") {
			return time.Time{}, update, nil
		}
		s.record(ctx, event.Warning, "FailedCreate", fmt.Sprintf("Error creating job: %v", err))
		return time.Time{}, update, err
	default:
		s.changed = true
		s.record(ctx, event.Normal, "SuccessfulCreate", "Created job "+kobj.Name(created))
	}
	ref := map[string]any{
		"kind":            "Job",
		"namespace":       kobj.Namespace(created),
		"name":            kobj.Name(created),
		"uid":             kobj.UID(created),
		"apiVersion":      "batch/v1",
		"resourceVersion": kobj.Str(created, "metadata", "resourceVersion"),
	}
	s.status["active"] = append(append([]any{}, s.active()...), ref)
	s.status["lastScheduleTime"] = kobj.FormatTime(*scheduled)
	return s.nextWake(sched), true, nil
}

func seconds(n int64) time.Duration {
	const max = int64(1<<62) / int64(time.Second)
	if n > max {
		n = max
	}
	if n < -max {
		n = -max
	}
	return time.Duration(n) * time.Second
}

// jobName is `<cronjob>-<scheduled time in minutes since the epoch>`.
func jobName(cj map[string]any, scheduled time.Time) string {
	return kobj.Name(cj) + "-" + strconv.FormatInt(scheduled.Unix()/60, 10)
}

// jobFromTemplate is getJobFromTemplate2.
func (s *syncer) jobFromTemplate(scheduled time.Time, name string) (map[string]any, error) {
	tmpl := kobj.Map(s.cj, "spec", "jobTemplate")
	loc, err := time.LoadLocation(kobj.Str(s.cj, "spec", "timeZone"))
	if err != nil {
		return nil, err
	}
	labels := map[string]any{}
	maps.Copy(labels, kobj.Map(tmpl, "metadata", "labels"))
	annotations := map[string]any{}
	maps.Copy(annotations, kobj.Map(tmpl, "metadata", "annotations"))
	annotations[ScheduledTimestampAnnotation] = scheduled.In(loc).Format(time.RFC3339)
	md := map[string]any{
		"name":            name,
		"namespace":       kobj.Namespace(s.cj),
		"annotations":     annotations,
		"ownerReferences": []any{kobj.NewControllerRef(s.cj, kobj.CronJobGVK)},
	}
	if len(labels) > 0 {
		md["labels"] = labels
	}
	job := map[string]any{"apiVersion": "batch/v1", "kind": "Job", "metadata": md}
	if spec, ok := value.DeepCopy(kobj.Map(tmpl, "spec")).(map[string]any); ok {
		job["spec"] = spec
	}
	return job, nil
}

// schedule parses the schedule as upstream: TZ= in the schedule is used
// (with a warning event), else spec.timeZone.
func (s *syncer) schedule(ctx context.Context) (sched cron.Schedule, err error) {
	spec := kobj.Str(s.cj, "spec", "schedule")
	if strings.Contains(spec, "TZ") {
		s.recordOnce(ctx, s.lastTick(), event.Warning, "UnsupportedSchedule", fmt.Sprintf("CRON_TZ or TZ used in schedule %q is not officially supported, see https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details", spec))
	} else if tz, ok := kobj.Map(s.cj, "spec")["timeZone"].(string); ok {
		if _, err := time.LoadLocation(tz); err == nil {
			spec = "TZ=" + tz + " " + spec
		}
	}
	return parse(spec)
}

// mostRecent is mostRecentScheduleTime.
func (s *syncer) mostRecent(sched cron.Schedule, withDeadline bool) (earliest time.Time, recent *time.Time, missed int64, err error) {
	earliest = kobj.ParseTime(kobj.Str(s.cj, "metadata", "creationTimestamp"))
	if lst := kobj.Str(s.status, "lastScheduleTime"); lst != "" {
		earliest = kobj.ParseTime(lst)
	}
	if sds, ok := kobj.Int(s.cj, "spec", "startingDeadlineSeconds"); ok && withDeadline {
		if d := s.now.Add(-seconds(sds)); d.After(earliest) {
			earliest = d
		}
	}
	t1 := sched.Next(earliest)
	t2 := sched.Next(t1)
	if t1.IsZero() || s.now.Before(t1) {
		return earliest, nil, 0, nil
	}
	if t2.IsZero() || s.now.Before(t2) {
		return earliest, &t1, 0, nil
	}
	between := int64(t2.Sub(t1).Round(time.Second).Seconds())
	if between < 1 {
		return earliest, nil, 0, fmt.Errorf("time difference between two schedules is less than 1 second")
	}
	elapsed := int64(s.now.Sub(t1).Seconds())
	missed = elapsed/between + 1
	var mostRecent time.Time
	potential := t1.Add(time.Duration((missed-1-1)*between) * time.Second)
	// Bounded: the walk covers about two intervals of the schedule.
	for t, n := sched.Next(potential), 0; !t.IsZero() && !t.After(s.now) && n < 100000; t, n = sched.Next(t), n+1 {
		mostRecent = t
	}
	if mostRecent.IsZero() {
		return earliest, nil, missed, nil
	}
	return earliest, &mostRecent, missed, nil
}

// nextScheduleTime is upstream's: the most recent unmet schedule time at
// or before now, with a warning when more than 100 were missed.
func (s *syncer) nextScheduleTime(ctx context.Context, sched cron.Schedule) (*time.Time, error) {
	_, recent, missed, err := s.mostRecent(sched, true)
	if recent == nil || recent.After(s.now) {
		return nil, err
	}
	if missed > 100 {
		s.recordOnce(ctx, *recent, event.Warning, "TooManyMissedTimes", "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew")
	}
	return recent, err
}

// tickOf is the schedule's last time at or before now (the one a sync
// woken now is for); zero when none since the CronJob's creation.
func (s *syncer) tickOf(sched cron.Schedule) time.Time {
	_, recent, _, err := s.mostRecent(sched, false)
	if err != nil || recent == nil {
		return time.Time{}
	}
	return *recent
}

// lastTick is tickOf for callers that have not parsed the schedule.
func (s *syncer) lastTick() time.Time {
	spec := kobj.Str(s.cj, "spec", "schedule")
	if tz, ok := kobj.Map(s.cj, "spec")["timeZone"].(string); ok && !strings.Contains(spec, "TZ") {
		spec = "TZ=" + tz + " " + spec
	}
	sched, err := parse(spec)
	if err != nil {
		return time.Time{}
	}
	return s.tickOf(sched)
}

func parse(spec string) (sched cron.Schedule, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("invalid schedule: %v", r)
		}
	}()
	return cron.ParseStandard(spec)
}

// nextWake is nextScheduleTimeDuration as a time: the next schedule time
// after the most recent one, plus upstream's 100ms.
func (s *syncer) nextWake(sched cron.Schedule) time.Time {
	earliest, recent, missed, err := s.mostRecent(sched, false)
	base := s.now
	switch {
	case err != nil:
	case recent == nil && missed == 0:
		base = earliest
	case recent != nil:
		base = *recent
	}
	next := sched.Next(base)
	if next.IsZero() {
		return time.Time{}
	}
	return next.Add(nextScheduleDelta)
}
