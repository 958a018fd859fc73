package cronjob_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/konverge/konverge/clock"
	"github.com/konverge/konverge/controller"
	"github.com/konverge/konverge/controller/cronjob"
	"github.com/konverge/konverge/controller/internal/ctrltest"
	"github.com/konverge/konverge/controller/internal/kobj"
)

// jobName is the name of the Job of cronjob cj for the schedule time
// minute m after the test's epoch: <cronjob>-<scheduled time in minutes
// since the Unix epoch>.
func jobName(cj string, m int) string {
	return fmt.Sprintf("%s-%d", cj, clock.Epoch.Add(time.Duration(m)*time.Minute).Unix()/60)
}

func cronJob(name string, spec map[string]any) map[string]any {
	s := map[string]any{
		"schedule": "*/1 * * * *",
		"jobTemplate": map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"restartPolicy": "Never",
			"containers":    []any{map[string]any{"name": "c", "image": "busybox:1.36"}},
		}}}},
	}
	for k, v := range spec {
		s[k] = v
	}
	return map[string]any{
		"apiVersion": "batch/v1", "kind": "CronJob",
		"metadata": map[string]any{"name": name, "namespace": "default"},
		"spec":     s,
	}
}

// finish is the test's Job controller: every Job of the namespace without
// a final condition ends with condition typ (Complete or Failed) at the
// cluster time.
func finish(e *ctrltest.Env, typ string) {
	e.TB.Helper()
	for _, j := range e.List(kobj.JobGVK, "default") {
		if kobj.Condition(j, "Complete") != nil || kobj.Condition(j, "Failed") != nil {
			continue
		}
		now := kobj.FormatTime(e.Now())
		cond := func(t string) map[string]any {
			return map[string]any{"type": t, "status": "True", "lastProbeTime": now, "lastTransitionTime": now}
		}
		st := map[string]any{"startTime": kobj.Str(j, "metadata", "creationTimestamp")}
		if typ == "Complete" {
			st["conditions"] = []any{cond("SuccessCriteriaMet"), cond("Complete")}
			st["succeeded"] = int64(1)
			st["completionTime"] = now
		} else {
			st["conditions"] = []any{cond("FailureTarget"), cond("Failed")}
			st["failed"] = int64(1)
		}
		j["status"] = st
		e.UpdateStatus(j)
	}
}

// step moves the clock to minute at (plus a second) after the epoch,
// finishes the running Jobs first when finish is set, and syncs until the
// controller writes nothing.
type step struct {
	at     int
	finish string
}

// TestSchedules: the Jobs, Events and status of CronJobs over a few
// minutes of schedule, as the cronjob-* scenarios of internal/workloadtest
// recorded them from kube-controller-manager (names and messages).
func TestSchedules(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spec  map[string]any
		steps []step
		// jobs are the Jobs left, by schedule minute; active the minutes
		// of status.active.
		jobs, active   []int
		events         []string // %s: the Job of that minute, by jobs' order in evMinutes
		evMinutes      []int
		lastSuccessful bool
	}{
		{
			name:      "first schedule",
			steps:     []step{{at: 0}, {at: 1}},
			jobs:      []int{1},
			active:    []int{1},
			events:    []string{"Normal SuccessfulCreate CronJob/cj: Created job %s"},
			evMinutes: []int{1},
		},
		{
			name:  "Forbid skips while a Job runs",
			spec:  map[string]any{"concurrencyPolicy": "Forbid"},
			steps: []step{{at: 1}, {at: 2}},
			jobs:  []int{1}, active: []int{1},
			events: []string{
				"Normal SuccessfulCreate CronJob/cj: Created job %s",
				"Normal JobAlreadyActive CronJob/cj: Not starting job because prior execution is running and concurrency policy is Forbid",
			},
			evMinutes: []int{1, 0},
		},
		{
			name:  "Replace deletes the running Job",
			spec:  map[string]any{"concurrencyPolicy": "Replace"},
			steps: []step{{at: 1}, {at: 2}},
			jobs:  []int{2}, active: []int{2},
			events: []string{
				"Normal SuccessfulCreate CronJob/cj: Created job %s",
				"Normal SuccessfulDelete CronJob/cj: Deleted job %s",
				"Normal SuccessfulCreate CronJob/cj: Created job %s",
			},
			evMinutes: []int{1, 1, 2},
		},
		{
			name:  "Allow runs them side by side",
			steps: []step{{at: 1}, {at: 2}},
			jobs:  []int{1, 2}, active: []int{1, 2},
			events: []string{
				"Normal SuccessfulCreate CronJob/cj: Created job %s",
				"Normal SuccessfulCreate CronJob/cj: Created job %s",
			},
			evMinutes: []int{1, 2},
		},
		{
			name:  "successful history",
			spec:  map[string]any{"successfulJobsHistoryLimit": int64(2), "failedJobsHistoryLimit": int64(1)},
			steps: []step{{at: 1}, {at: 2, finish: "Complete"}, {at: 3, finish: "Complete"}, {at: 3, finish: "Complete"}},
			jobs:  []int{2, 3},
			events: []string{
				"Normal SuccessfulCreate CronJob/cj: Created job %s",
				"Normal SawCompletedJob CronJob/cj: Saw completed job: %s, condition: Complete",
				"Normal SuccessfulCreate CronJob/cj: Created job %s",
				"Normal SawCompletedJob CronJob/cj: Saw completed job: %s, condition: Complete",
				"Normal SuccessfulCreate CronJob/cj: Created job %s",
				"Normal SuccessfulDelete CronJob/cj: Deleted job %s",
				"Normal SawCompletedJob CronJob/cj: Saw completed job: %s, condition: Complete",
			},
			evMinutes:      []int{1, 1, 2, 2, 3, 1, 3},
			lastSuccessful: true,
		},
		{
			name:  "failed history",
			spec:  map[string]any{"failedJobsHistoryLimit": int64(1)},
			steps: []step{{at: 1}, {at: 2, finish: "Failed"}, {at: 2, finish: "Failed"}},
			jobs:  []int{2},
			events: []string{
				"Normal SuccessfulCreate CronJob/cj: Created job %s",
				"Normal SawCompletedJob CronJob/cj: Saw completed job: %s, condition: Failed",
				"Normal SuccessfulCreate CronJob/cj: Created job %s",
				"Normal SuccessfulDelete CronJob/cj: Deleted job %s",
				"Normal SawCompletedJob CronJob/cj: Saw completed job: %s, condition: Failed",
			},
			evMinutes: []int{1, 1, 2, 1, 2},
		},
		{
			name:  "suspended",
			spec:  map[string]any{"suspend": true},
			steps: []step{{at: 1}, {at: 5}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := ctrltest.New(t)
			e.Create(cronJob("cj", tc.spec))
			ctl := cronjob.Controller{}
			for _, s := range tc.steps {
				if s.finish != "" {
					finish(e, s.finish)
				}
				e.Clock.Set(clock.Epoch.Add(time.Duration(s.at)*time.Minute + time.Second))
				e.Settle([]controller.Controller{ctl})
			}
			var want []string
			for _, m := range tc.jobs {
				want = append(want, jobName("cj", m))
			}
			if got := e.Names(kobj.JobGVK, "default"); !slices.Equal(got, want) {
				t.Errorf("jobs %v, want %v", got, want)
			}
			cj := e.Get(kobj.CronJobGVK, "default", "cj")
			var active []string
			for _, a := range kobj.Slice(cj, "status", "active") {
				active = append(active, kobj.Str(a.(map[string]any), "name"))
			}
			var wantActive []string
			for _, m := range tc.active {
				wantActive = append(wantActive, jobName("cj", m))
			}
			if !slices.Equal(active, wantActive) {
				t.Errorf("status.active %v, want %v", active, wantActive)
			}
			var wantEvents []string
			for i, ev := range tc.events {
				if strings.Contains(ev, "%s") {
					ev = fmt.Sprintf(ev, jobName("cj", tc.evMinutes[i]))
				}
				wantEvents = append(wantEvents, ev)
			}
			if got := e.Events("default"); !slices.Equal(got, wantEvents) {
				t.Errorf("events\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantEvents, "\n"))
			}
			if got := kobj.Str(cj, "status", "lastSuccessfulTime") != ""; got != tc.lastSuccessful {
				t.Errorf("lastSuccessfulTime set: %v, want %v", got, tc.lastSuccessful)
			}
			if len(tc.jobs) > 0 {
				if got := kobj.Str(cj, "status", "lastScheduleTime"); got != kobj.FormatTime(clock.Epoch.Add(time.Duration(tc.jobs[len(tc.jobs)-1])*time.Minute)) {
					t.Errorf("lastScheduleTime %s", got)
				}
			}
		})
	}
}

// TestJobAndWakeUp: the Job a schedule creates (owner, scheduled-time
// annotation, template), and the next wake-up: the next schedule time plus
// upstream's 100ms, as work due at its own time (Scheduled).
func TestJobAndWakeUp(t *testing.T) {
	e := ctrltest.New(t)
	e.Create(cronJob("cj", nil))
	res := e.Sync(cronjob.Controller{})
	want := clock.Epoch.Add(time.Minute + 100*time.Millisecond)
	if !res.RequeueAt.Equal(want) || !res.Scheduled.Equal(want) || res.Changed {
		t.Fatalf("before the first schedule: %+v, want a wake-up (and schedule) at %v and no write", res, want)
	}
	e.Clock.Set(clock.Epoch.Add(time.Minute))
	res = e.Sync(cronjob.Controller{})
	if !res.Changed {
		t.Fatal("at the first schedule: nothing written")
	}
	if want := clock.Epoch.Add(2*time.Minute + 100*time.Millisecond); !res.Scheduled.Equal(want) {
		t.Errorf("next schedule %v, want %v", res.Scheduled, want)
	}
	j := e.Get(kobj.JobGVK, "default", jobName("cj", 1))
	if ref := kobj.ControllerRef(j); ref == nil || ref["kind"] != "CronJob" || ref["name"] != "cj" || ref["blockOwnerDeletion"] != true {
		t.Errorf("job's controller reference %v", ref)
	}
	if got := kobj.Annotation(j, cronjob.ScheduledTimestampAnnotation); got != kobj.FormatTime(clock.Epoch.Add(time.Minute)) {
		t.Errorf("scheduled timestamp %q", got)
	}
	if c := kobj.Slice(j, "spec", "template", "spec", "containers"); len(c) != 1 || c[0].(map[string]any)["image"] != "busybox:1.36" {
		t.Errorf("containers %v", c)
	}
}
