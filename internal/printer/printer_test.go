package printer

import (
	"bytes"
	"testing"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/schema"
	"sigs.k8s.io/yaml"
)

func TestHumanDuration(t *testing.T) {
	cases := []struct {
		d    time.Duration
		want string
	}{
		{-2 * time.Second, "<invalid>"},
		{-time.Second, "0s"},
		{0, "0s"},
		{59 * time.Second, "59s"},
		{119 * time.Second, "119s"},
		{2*time.Minute + 3*time.Second, "2m3s"},
		{5 * time.Minute, "5m"},
		{10 * time.Minute, "10m"},
		{179 * time.Minute, "179m"},
		{3 * time.Hour, "3h"},
		{3*time.Hour + 30*time.Minute, "3h30m"},
		{8 * time.Hour, "8h"},
		{47 * time.Hour, "47h"},
		{48 * time.Hour, "2d"},
		{50 * time.Hour, "2d2h"},
		{8 * 24 * time.Hour, "8d"},
		{400 * 24 * time.Hour, "400d"},
		{2 * 365 * 24 * time.Hour, "2y"},
		{(3*365 + 10) * 24 * time.Hour, "3y10d"},
		{9 * 365 * 24 * time.Hour, "9y"},
	}
	for _, c := range cases {
		if got := HumanDuration(c.d); got != c.want {
			t.Errorf("HumanDuration(%v) = %q, want %q", c.d, got, c.want)
		}
	}
	if got := Since(time.Time{}, time.Now()); got != "<unknown>" {
		t.Errorf("Since(zero) = %q", got)
	}
}

func obj(t *testing.T, y string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(y), &m); err != nil {
		t.Fatal(err)
	}
	return normalize(m).(map[string]any)
}

// normalize turns float64 integers into int64 as package value decodes.
func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normalize(e)
		}
	case []any:
		for i, e := range x {
			x[i] = normalize(e)
		}
	case float64:
		if x == float64(int64(x)) {
			return int64(x)
		}
	}
	return v
}

var now = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func TestSummarizePod(t *testing.T) {
	cases := []struct {
		name, pod              string
		ready, status, restart string
	}{
		{"pending no status", `
spec: {containers: [{name: a}]}
status: {phase: Pending}`, "0/1", "Pending", "0"},
		{"container creating", `
spec: {containers: [{name: a}]}
status: {phase: Pending, containerStatuses: [{name: a, ready: false, restartCount: 0, state: {waiting: {reason: ContainerCreating}}}]}`, "0/1", "ContainerCreating", "0"},
		{"running ready", `
spec: {containers: [{name: a}, {name: b}]}
status: {phase: Running, conditions: [{type: Ready, status: "True"}], containerStatuses: [
  {name: a, ready: true, restartCount: 0, state: {running: {startedAt: "2026-01-01T11:00:00Z"}}},
  {name: b, ready: true, restartCount: 0, state: {running: {startedAt: "2026-01-01T11:00:00Z"}}}]}`, "2/2", "Running", "0"},
		{"err image pull", `
spec: {containers: [{name: a}]}
status: {phase: Pending, containerStatuses: [{name: a, ready: false, restartCount: 0, state: {waiting: {reason: ErrImagePull}}}]}`, "0/1", "ErrImagePull", "0"},
		{"crash loop with restarts", `
spec: {containers: [{name: a}]}
status: {phase: Running, containerStatuses: [{name: a, ready: false, restartCount: 5,
  state: {waiting: {reason: CrashLoopBackOff}},
  lastState: {terminated: {exitCode: 1, reason: Error, finishedAt: "2026-01-01T11:55:00Z"}}}]}`, "0/1", "CrashLoopBackOff", "5 (5m ago)"},
		{"completed", `
spec: {containers: [{name: a}]}
status: {phase: Succeeded, containerStatuses: [{name: a, ready: false, restartCount: 0, state: {terminated: {exitCode: 0, reason: Completed}}}]}`, "0/1", "Completed", "0"},
		{"error exit", `
spec: {containers: [{name: a}]}
status: {phase: Failed, containerStatuses: [{name: a, ready: false, restartCount: 0, state: {terminated: {exitCode: 2}}}]}`, "0/1", "ExitCode:2", "0"},
		{"completed but sidecar running not ready", `
spec: {containers: [{name: a}, {name: b}]}
status: {phase: Running, containerStatuses: [
  {name: a, ready: true, state: {running: {}}},
  {name: b, ready: false, state: {terminated: {exitCode: 0, reason: Completed}}}]}`, "1/2", "NotReady", "0"},
		{"terminating", `
metadata: {deletionTimestamp: "2026-01-01T11:59:00Z"}
spec: {containers: [{name: a}]}
status: {phase: Running, containerStatuses: [{name: a, ready: true, state: {running: {}}}]}`, "1/1", "Terminating", "0"},
		{"init waiting", `
spec: {initContainers: [{name: i}], containers: [{name: a}]}
status: {phase: Pending, initContainerStatuses: [{name: i, state: {running: {}}}], containerStatuses: [{name: a, state: {waiting: {reason: PodInitializing}}}]}`, "0/1", "Init:0/1", "0"},
		{"init crash", `
spec: {initContainers: [{name: i}], containers: [{name: a}]}
status: {phase: Pending, initContainerStatuses: [{name: i, restartCount: 2, state: {waiting: {reason: CrashLoopBackOff}}}]}`, "0/1", "Init:CrashLoopBackOff", "2"},
		{"sidecar init counted", `
spec: {initContainers: [{name: s, restartPolicy: Always}], containers: [{name: a}]}
status: {phase: Running, conditions: [{type: Initialized, status: "True"}, {type: Ready, status: "True"}],
  initContainerStatuses: [{name: s, started: true, ready: true, state: {running: {}}}],
  containerStatuses: [{name: a, ready: true, state: {running: {}}}]}`, "2/2", "Running", "0"},
		{"scheduling gated", `
spec: {containers: [{name: a}]}
status: {phase: Pending, conditions: [{type: PodScheduled, status: "False", reason: SchedulingGated}]}`, "0/1", "SchedulingGated", "0"},
		{"evicted", `
spec: {containers: [{name: a}]}
status: {phase: Failed, reason: Evicted}`, "0/1", "Evicted", "0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := SummarizePod(obj(t, c.pod), now)
			want := PodSummary{Ready: c.ready, Status: c.status, Restarts: c.restart}
			if got != want {
				t.Errorf("got %+v, want %+v", got, want)
			}
		})
	}
}

func TestTableWrite(t *testing.T) {
	res := cluster.Resource{GVK: schema.GVK{Group: "apps", Version: "v1", Kind: "Deployment"}, Namespaced: true}
	d := obj(t, `
metadata: {name: nginx-deployment, namespace: default, creationTimestamp: "2026-01-01T11:59:42Z", labels: {app: nginx}}
spec:
  replicas: 3
  selector: {matchLabels: {app: nginx}}
  template: {spec: {containers: [{name: nginx, image: "nginx:1.14.2"}]}}
status: {readyReplicas: 3, updatedReplicas: 3, availableReplicas: 3}`)
	cases := []struct {
		name string
		opts Options
		want string
	}{
		{"default", Options{}, "NAME               READY   UP-TO-DATE   AVAILABLE   AGE\nnginx-deployment   3/3     3            3           18s\n"},
		{"wide", Options{Wide: true}, "NAME               READY   UP-TO-DATE   AVAILABLE   AGE   CONTAINERS   IMAGES         SELECTOR\nnginx-deployment   3/3     3            3           18s   nginx        nginx:1.14.2   app=nginx\n"},
		{"labels namespace kind", Options{ShowLabels: true, WithNamespace: true, WithKind: true},
			"NAMESPACE   NAME                               READY   UP-TO-DATE   AVAILABLE   AGE   LABELS\ndefault     deployment.apps/nginx-deployment   3/3     3            3           18s   app=nginx\n"},
		{"no headers", Options{NoHeaders: true}, "nginx-deployment   3/3   3     3     18s\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.opts.Now = now
			var buf bytes.Buffer
			tw := NewTabWriter(&buf)
			if err := NewTable(res, []map[string]any{d}, c.opts).Write(tw, c.opts); err != nil {
				t.Fatal(err)
			}
			tw.Flush()
			if buf.String() != c.want {
				t.Errorf("got\n%s\nwant\n%s", buf.String(), c.want)
			}
		})
	}
}

func TestFormatLabelSelector(t *testing.T) {
	sel := obj(t, `{matchLabels: {b: "2", a: "1"}, matchExpressions: [{key: env, operator: In, values: [prod, dev]}, {key: canary, operator: DoesNotExist}]}`)
	if got, want := FormatLabelSelector(sel), "a=1,b=2,!canary,env in (dev,prod)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := FormatLabelSelector(map[string]any{}); got != "<none>" {
		t.Errorf("empty selector: %q", got)
	}
}
