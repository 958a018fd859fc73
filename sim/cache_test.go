package sim_test

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/sim"
)

// unbatched hides the *local.Store from the Runner: every call is its own
// transaction and no list is cached.
type unbatched struct{ *local.Store }

// scenario drives Deployments through creation, rollouts (rolling and
// recreate), scaling, pausing, direct pod deletion and cascading deletion,
// and returns what the controllers left, without uids and times.
func scenario(t *testing.T, cached bool) string {
	ctx := context.Background()
	st, clk := open(t)
	var c cluster.Interface = st
	if !cached {
		c = unbatched{st}
	}
	r := sim.New(c, clk, sim.Controllers(nil)...)
	step := func(d time.Duration) {
		t.Helper()
		if err := r.Advance(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	edit := func(name string, fn func(d map[string]any)) {
		t.Helper()
		d, err := st.Get(ctx, deployGVK, "default", name)
		if err != nil {
			t.Fatal(err)
		}
		fn(d)
		if _, err := st.Update(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	spec := func(d map[string]any) map[string]any { return d["spec"].(map[string]any) }
	image := func(img string) func(map[string]any) {
		return func(d map[string]any) {
			spec(d)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["image"] = img
		}
	}
	for i := range 4 {
		d := deployment(fmt.Sprintf("web%d", i), "nginx:1.16.1", int64(2+i))
		if i == 1 {
			spec(d)["strategy"] = map[string]any{"type": "Recreate"}
		}
		if i == 2 {
			c := spec(d)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
			c["readinessProbe"] = map[string]any{"httpGet": map[string]any{"path": "/", "port": int64(80)}, "periodSeconds": int64(3)}
			spec(d)["minReadySeconds"] = int64(5)
		}
		if _, err := st.Create(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	// Jobs that go with their pods (cascading deletions in a sync): a
	// CronJob keeping one finished Job, and Jobs deleted when finished.
	if _, err := st.Create(ctx, map[string]any{
		"apiVersion": "batch/v1", "kind": "CronJob",
		"metadata": map[string]any{"name": "tick", "namespace": "default"},
		"spec": map[string]any{"schedule": "* * * * *", "successfulJobsHistoryLimit": int64(1), "jobTemplate": map[string]any{
			"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
				"restartPolicy": "Never",
				"containers":    []any{map[string]any{"name": "c", "image": "busybox:1.36", "command": []any{"true"}}},
			}}},
		}},
	}); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if _, err := st.Create(ctx, map[string]any{
			"apiVersion": "batch/v1", "kind": "Job",
			"metadata": map[string]any{"name": fmt.Sprintf("once%d", i), "namespace": "default"},
			"spec": map[string]any{"ttlSecondsAfterFinished": int64(i * 30), "template": map[string]any{"spec": map[string]any{
				"restartPolicy": "Never",
				"containers":    []any{map[string]any{"name": "c", "image": "busybox:1.36", "command": []any{"sleep", "5"}}},
			}}},
		}); err != nil {
			t.Fatal(err)
		}
	}
	// A DaemonSet with minReadySeconds, updated below.
	if _, err := st.Create(ctx, map[string]any{
		"apiVersion": "apps/v1", "kind": "DaemonSet",
		"metadata": map[string]any{"name": "agent", "namespace": "default"},
		"spec": map[string]any{"minReadySeconds": int64(3), "selector": map[string]any{"matchLabels": map[string]any{"app": "agent"}},
			"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "agent"}},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "a", "image": "nginx:1.16.1"}}}}},
	}); err != nil {
		t.Fatal(err)
	}
	// A StatefulSet of ordered pods, updated below.
	if _, err := st.Create(ctx, map[string]any{
		"apiVersion": "apps/v1", "kind": "StatefulSet",
		"metadata": map[string]any{"name": "db", "namespace": "default"},
		"spec": map[string]any{"replicas": int64(3), "serviceName": "db", "selector": map[string]any{"matchLabels": map[string]any{"app": "db"}},
			"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "db"}},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "d", "image": "nginx:1.16.1"}}}}},
	}); err != nil {
		t.Fatal(err)
	}
	// Services: numeric and named target ports, not-ready pods, one
	// selecting every pod, one deleted, a pod moved out of a selector.
	for _, svc := range []map[string]any{
		{"name": "web0", "selector": map[string]any{"app": "web0"}, "ports": []any{
			map[string]any{"name": "a", "port": int64(80), "targetPort": int64(8080)},
			map[string]any{"name": "b", "port": int64(81), "targetPort": "http"},
		}},
		{"name": "web2", "selector": map[string]any{"app": "web2"}, "ports": []any{map[string]any{"port": int64(80)}}},
		{"name": "web1", "selector": map[string]any{"app": "web1"}, "ports": []any{map[string]any{"port": int64(80)}}},
		{"name": "all", "selector": map[string]any{"app": "web3"}, "clusterIP": "None"},
	} {
		spec := map[string]any{"selector": svc["selector"]}
		if p, ok := svc["ports"]; ok {
			spec["ports"] = p
		}
		if ip, ok := svc["clusterIP"]; ok {
			spec["clusterIP"] = ip
		}
		if _, err := st.Create(ctx, map[string]any{"apiVersion": "v1", "kind": "Service",
			"metadata": map[string]any{"name": svc["name"], "namespace": "default"}, "spec": spec}); err != nil {
			t.Fatal(err)
		}
	}
	step(time.Minute)
	for i := range 4 {
		edit(fmt.Sprintf("web%d", i), image("nginx:1.14.2"))
	}
	ds, err := st.Get(ctx, schema.GVK{Group: "apps", Version: "v1", Kind: "DaemonSet"}, "default", "agent")
	if err != nil {
		t.Fatal(err)
	}
	image("nginx:1.14.2")(ds)
	if _, err := st.Update(ctx, ds); err != nil {
		t.Fatal(err)
	}
	sts, err := st.Get(ctx, schema.GVK{Group: "apps", Version: "v1", Kind: "StatefulSet"}, "default", "db")
	if err != nil {
		t.Fatal(err)
	}
	image("nginx:1.14.2")(sts)
	if _, err := st.Update(ctx, sts); err != nil {
		t.Fatal(err)
	}
	step(3 * time.Second)
	edit("web0", func(d map[string]any) { spec(d)["replicas"] = int64(7) })
	edit("web3", func(d map[string]any) { spec(d)["paused"] = true })
	step(time.Minute)
	edit("web3", func(d map[string]any) { spec(d)["paused"] = false; spec(d)["replicas"] = int64(1) })

	pods, err := st.List(ctx, podGVK)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items[:3] {
		md := p["metadata"].(map[string]any)
		if err := st.Delete(ctx, podGVK, "default", md["name"].(string)); err != nil {
			t.Fatal(err)
		}
	}
	step(2 * time.Second)
	if err := st.Delete(ctx, deployGVK, "default", "web1"); err != nil {
		t.Fatal(err)
	}
	if err := st.Delete(ctx, schema.GVK{Version: "v1", Kind: "Service"}, "default", "web1"); err != nil {
		t.Fatal(err)
	}
	pods, err = st.List(ctx, podGVK)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		md := p["metadata"].(map[string]any)
		if l, _ := md["labels"].(map[string]any); l["app"] == "web0" {
			l["app"] = "moved"
			if _, err := st.Update(ctx, p); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	edit("web2", image("nginx:broken-tag-that-does-not-pull"))
	// A Service changed while its pods do not.
	svc, err := st.Get(ctx, schema.GVK{Version: "v1", Kind: "Service"}, "default", "all")
	if err != nil {
		t.Fatal(err)
	}
	spec(svc)["ports"] = []any{map[string]any{"name": "x", "port": int64(90)}}
	svc["metadata"].(map[string]any)["labels"] = map[string]any{"tier": "front"}
	if _, err := st.Update(ctx, svc); err != nil {
		t.Fatal(err)
	}
	step(10 * time.Minute)

	var out []string
	for _, gvk := range []schema.GVK{deployGVK, {Group: "apps", Version: "v1", Kind: "ReplicaSet"}, podGVK,
		{Group: "batch", Version: "v1", Kind: "Job"}, {Group: "batch", Version: "v1", Kind: "CronJob"},
		{Group: "apps", Version: "v1", Kind: "DaemonSet"}, {Group: "apps", Version: "v1", Kind: "StatefulSet"},
		{Version: "v1", Kind: "Endpoints"}, {Group: "discovery.k8s.io", Version: "v1", Kind: "EndpointSlice"}} {
		l, err := st.List(ctx, gvk)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range l.Items {
			md := o["metadata"].(map[string]any)
			switch gvk.Kind {
			case "Endpoints":
				out = append(out, fmt.Sprint(gvk.Kind, " ", md["name"], " ", strip(o["subsets"]), " ", strip(md["annotations"]), " managed ", strip(md["managedFields"])))
				continue
			case "EndpointSlice":
				// Named with a random suffix.
				out = append(out, fmt.Sprint(gvk.Kind, " ", strip(md["labels"]), " ", strip(o["ports"]), " ", strip(o["endpoints"]), " ", strip(md["annotations"]), " managed ", strip(md["managedFields"])))
				continue
			}
			out = append(out, fmt.Sprint(gvk.Kind, " ", md["name"], " ", md["deletionTimestamp"] != nil, " ", strip(o["status"]), " managed ", strip(md["managedFields"])))
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

var uidPattern = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// strip drops what differs between two runs: uids (and what is derived
// from them) and nothing else.
func strip(v any) string {
	s := uidPattern.ReplaceAllString(fmt.Sprint(v), "UID")
	var b strings.Builder
	for _, f := range strings.Fields(s) {
		if strings.Contains(f, "containerd://") {
			continue
		}
		b.WriteString(f)
		b.WriteByte(' ')
	}
	return b.String()
}

// cachedScenario is scenario(t, true) with checkShared on and incremental
// syncs, the run that TestListCacheSameResult and TestIncrementalSameResult
// both compare against: it is run once, by the first of them.
var cachedScenario struct {
	sync.Mutex
	result string
}

func cachedIncremental(t *testing.T) string {
	t.Helper()
	cachedScenario.Lock()
	defer cachedScenario.Unlock()
	if cachedScenario.result == "" {
		*sim.CheckShared = true
		defer func() { *sim.CheckShared = false }()
		cachedScenario.result = scenario(t, true)
	}
	return cachedScenario.result
}

// The list cache (with checkShared: no controller changes a listed
// object) leaves the same cluster as running every call on its own.
func TestListCacheSameResult(t *testing.T) {
	a := cachedIncremental(t)
	*sim.CheckShared = true
	defer func() { *sim.CheckShared = false }()
	b := scenario(t, false)
	if a != b {
		t.Errorf("cached and uncached runs differ:\n%s", lineDiff(a, b))
	}
	for _, want := range []string{"DaemonSet agent ", "Pod agent-", "StatefulSet db ", "Pod db-2 ", "Endpoints web0 ", "Endpoints web2 ", "Endpoints all ", "kubernetes.io/service-name:web0"} {
		if !strings.Contains(a, want) {
			t.Errorf("scenario left no %q:\n%s", want, a)
		}
	}
	if strings.Contains(a, "Endpoints web1 ") {
		t.Errorf("the Endpoints of a deleted Service stayed:\n%s", a)
	}
	if !strings.Contains(a, "Pod ") || !strings.Contains(a, "nginx:1.14.2") {
		t.Errorf("scenario left no pods of the new image:\n%s", a)
	}
	if !strings.Contains(a, "Job tick-") || strings.Contains(a, "Job once") {
		t.Errorf("scenario: want one Job of the CronJob and none of the Jobs with a time to live:\n%s", a)
	}
}

// The incremental controllers (SyncChanged) leave the same cluster as
// full syncs on the same cache.
func TestIncrementalSameResult(t *testing.T) {
	a := cachedIncremental(t)
	*sim.CheckShared = true
	defer func() { *sim.CheckShared = false }()
	sim.FullSyncs = true
	defer func() { sim.FullSyncs = false }()
	b := scenario(t, true)
	if a != b {
		t.Errorf("incremental and full syncs differ:\n%s", lineDiff(a, b))
	}
}

// lineDiff lists the lines of a not in b (-) and of b not in a (+).
func lineDiff(a, b string) string {
	in := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, l := range strings.Split(s, "\n") {
			m[l] = true
		}
		return m
	}
	ia, ib := in(a), in(b)
	var out []string
	for _, l := range strings.Split(a, "\n") {
		if !ib[l] {
			out = append(out, "- "+l)
		}
	}
	for _, l := range strings.Split(b, "\n") {
		if !ia[l] {
			out = append(out, "+ "+l)
		}
	}
	return strings.Join(out, "\n")
}
