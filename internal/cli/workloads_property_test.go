package cli

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/konverge/konverge/internal/realcluster"
)

// TestRandomWorkloads is TestRandomDeployments for the other controllers:
// random StatefulSets, DaemonSets, Jobs (completions and parallelism up to
// 100,000, Indexed, per-index back-off, pod failure and success policies,
// deadlines and TTLs up to the int32/int64 limits), CronJobs (every-minute,
// @every, never-firing and leap-day schedules, odd time zones, huge
// starting deadlines, history limits 0 and max), HorizontalPodAutoscalers
// (min above the current count, huge max, extreme behavior policies),
// PersistentVolumes and claims, Services with many ports, ResourceQuotas
// and LimitRanges, in a namespace that may be deleted while full. After
// applying them it moves the clock by random amounts and runs get,
// describe, rollout status, wait, scale and delete. Every command must
// answer (propertyWatchdog), none may fail or warn because of a
// controller, the state must still open, and a healthy Deployment applied
// afterwards must roll out.
//
// By default two clusters with small counts and advances up to an hour;
// KONVERGE_WORKLOADS_DURATION=10m runs clusters until that much time has
// passed, with counts up to 100,000 and advances up to 1,000 hours;
// KONVERGE_WORKLOADS_SEED replays a run.
func TestRandomWorkloads(t *testing.T) {
	t.Parallel()
	propertyRuns(t, "KONVERGE_WORKLOADS", 5, workloadsCluster)
}

// workloadRef is an object the commands act on.
type workloadRef struct{ kind, name string }

func workloadsCluster(t *testing.T, rng *rand.Rand, maxCount int, maxAdvance time.Duration, stats *propertyStats) {
	c := newSeedCluster(t)
	runAllow := func(allowed string, args ...string) string {
		t.Helper()
		line := strings.Join(args, " ")
		dog := time.AfterFunc(propertyWatchdog, func() {
			propertyHang(line)
		})
		start := time.Now()
		out, errOut, code := konvergeRun(t, nil, append([]string{"--state", c.state}, args...)...)
		took := time.Since(start)
		dog.Stop()
		stats.mu.Lock()
		stats.commands++
		if took > stats.slowest {
			stats.slowest, stats.slowCmd = took, line
		}
		stats.mu.Unlock()
		if took > 5*time.Second {
			t.Logf("slow: konverge %s took %v", line, took.Round(time.Millisecond))
		}
		if strings.Contains(errOut, "controller failed") || strings.Contains(errOut, "failed at") || strings.Contains(errOut, "panic") {
			t.Fatalf("konverge %s: a controller failed:\n%s", line, errOut)
		}
		if code != 0 && (allowed == "" || code != 1 || !containsAny(errOut, strings.Split(allowed, "|"))) {
			t.Fatalf("konverge %s: exit %d (after %v)\n%s%s", line, code, took, out, errOut)
		}
		return out
	}
	run := func(args ...string) string {
		t.Helper()
		return runAllow("", args...)
	}
	ns := "default"
	var docs []map[string]any
	if rng.IntN(3) == 0 {
		ns = randomName(rng, "ns-", 4+rng.IntN(20))
		docs = append(docs, map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}})
	}
	docs = append(docs, map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "marker"}})
	var refs []workloadRef
	for i := range 1 + rng.IntN(4) {
		objs, ref := randomWorkload(rng, i, maxCount, refs)
		for _, o := range objs {
			if o["clusterScoped"] == true {
				delete(o, "clusterScoped")
				continue
			}
			o["metadata"].(map[string]any)["namespace"] = ns
		}
		docs = append(docs, objs...)
		if ref.kind != "" {
			refs = append(refs, ref)
		}
	}
	// Quotas and limits go second: the first apply would be refused as a
	// whole when they refuse one of its objects.
	var parts, limits []string
	for _, d := range docs {
		b, err := yaml.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		if k := d["kind"]; k == "ResourceQuota" || k == "LimitRange" {
			limits = append(limits, string(b))
		} else {
			parts = append(parts, string(b))
		}
	}
	manifest := strings.Join(parts, "---\n")
	t.Logf("manifest:\n%s", manifest)
	run("apply", "-f", c.file("random.yaml", manifest))
	if len(limits) > 0 {
		t.Logf("limits:\n%s", strings.Join(limits, "---\n"))
		run("apply", "-f", c.file("limits.yaml", strings.Join(limits, "---\n")))
	}
	nsArgs := []string{"-n", ns}
	deleted := false
	for range 1 + rng.IntN(4) {
		d := min(randomAdvance(rng), maxAdvance)
		stats.mu.Lock()
		stats.advanced += d
		stats.mu.Unlock()
		run("clock", "advance", d.String())
		run(append(nsArgs, "get", "all")...)
		if len(refs) == 0 {
			continue
		}
		r := refs[rng.IntN(len(refs))]
		switch rng.IntN(9) {
		case 0:
			runAllow("not found", append(nsArgs, "describe", r.kind, r.name)...)
		case 1:
			if r.kind == "statefulset" || r.kind == "daemonset" {
				runAllow("error:|not found", append(nsArgs, "rollout", "status", r.kind+"/"+r.name, "--timeout="+pick(rng, "1s", "1m", "10m"))...)
			}
		case 2:
			if r.kind == "job" {
				runAllow("error:|not found", append(nsArgs, "wait", "--for=condition="+pick(rng, "complete", "failed", "SuccessCriteriaMet"), "job/"+r.name, "--timeout="+pick(rng, "0s", "1m", "1h", "2562047h"))...)
			}
		case 3:
			if r.kind == "statefulset" {
				n := rng.IntN(min(maxCount, 20) + 1)
				if maxCount > 20 && rng.IntN(4) == 0 {
					n = 2147483647
				}
				runAllow("not found", append(nsArgs, "scale", r.kind+"/"+r.name, "--replicas="+strconv.Itoa(n))...)
			}
		case 4:
			runAllow("not found", append(nsArgs, "delete", r.kind, r.name, "--wait=false")...)
		case 5:
			run(append(nsArgs, "get", "events")...)
		case 6:
			run(append(nsArgs, "get", "pvc,pv,svc,endpoints,hpa,quota,limits")...)
		case 7:
			if ns != "default" && !deleted {
				run("delete", "namespace", ns, "--wait=false")
				deleted = true
			}
		}
	}
	var events map[string]any
	if err := yaml.Unmarshal([]byte(run("get", "events", "-A", "-o", "json")), &events); err != nil {
		t.Fatal(err)
	}
	items, _ := events["items"].([]any)
	stats.mu.Lock()
	for _, e := range items {
		stats.reasons[fmt.Sprint(get(e, "reason"))]++
	}
	stats.clusters++
	stats.mu.Unlock()

	// A healthy Deployment still rolls out next to them (in a namespace
	// of its own: theirs may be bound by a quota or terminating).
	run("create", "namespace", "healthy")
	run("-n", "healthy", "apply", "-f", c.file("healthy.yaml", strings.ReplaceAll(robustDeployment("healthy", 2, plainContainer, "", ""), "robust", "healthy")))
	run("-n", "healthy", "rollout", "status", "deployment/healthy", "--timeout=10m")
	run("delete", "deploy,sts,ds,job,cronjob,hpa,svc,pvc,quota,limits", "--all", "-A", "--wait=false")
	run("clock", "advance", "10m")
	run("get", "all", "-A")
}

// propertyHang ends the test binary with every goroutine's stack.
func propertyHang(line string) {
	buf := make([]byte, 1<<22)
	buf = buf[:runtime.Stack(buf, true)]
	fmt.Fprintf(os.Stderr, "konverge %s has not answered after %v:\n%s\n", line, propertyWatchdog, buf)
	os.Exit(3)
}

// int32Max and int64Max are the API's limits of int32 and int64 fields.
const (
	int32Max = 2147483647
	int64Max = 9223372036854775807
)

// randomCount is mostly small, sometimes up to max.
func randomCount(rng *rand.Rand, max int) int {
	switch rng.IntN(8) {
	case 0:
		return rng.IntN(max + 1)
	case 1:
		return max
	case 2:
		return 0
	}
	return rng.IntN(min(max, 5) + 1)
}

// randomPodTemplate is a template whose pods carry labels.
func randomPodTemplate(rng *rand.Rand, labels map[string]any, restartPolicy string) map[string]any {
	// (activeDeadlineSeconds: only Job templates may set it.)
	spec := map[string]any{"containers": []any{randomContainer(rng, "c")}}
	if restartPolicy != "" {
		spec["restartPolicy"] = restartPolicy
	}
	if v := randomVolumes(rng); v != nil && rng.IntN(3) == 0 {
		spec["volumes"] = v
	} else {
		c := spec["containers"].([]any)[0].(map[string]any)
		delete(c, "volumeMounts")
	}
	if rng.IntN(6) == 0 {
		spec["terminationGracePeriodSeconds"] = pick[any](rng, 0, 30, 9223372036)
	}
	return map[string]any{"metadata": map[string]any{"labels": labels}, "spec": spec}
}

// randomWorkload returns objects kube-apiserver accepts (names unique by
// i) and the main one for the commands (kind "" for none).
func randomWorkload(rng *rand.Rand, i, maxCount int, refs []workloadRef) ([]map[string]any, workloadRef) {
	name := randomName(rng, fmt.Sprintf("w%d-", i), pick(rng, 4, 12, 40, 52))
	app := fmt.Sprintf("app%d", i)
	labels := map[string]any{"app": app}
	obj := func(apiVersion, kind string, spec map[string]any) map[string]any {
		return map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": name}, "spec": spec}
	}
	switch rng.IntN(9) {
	case 0:
		return randomStatefulSet(rng, name, app, maxCount, obj), workloadRef{"statefulset", name}
	case 1:
		spec := map[string]any{
			"selector": map[string]any{"matchLabels": labels},
			"template": randomPodTemplate(rng, labels, ""),
		}
		switch rng.IntN(3) {
		case 0:
			spec["updateStrategy"] = map[string]any{"type": "OnDelete"}
		case 1:
			surge, unavail := pick[any](rng, 0, 1, "100%", int32Max), pick[any](rng, 0, 1, "50%", int32Max)
			if surge == 0 && unavail == 0 {
				unavail = 1
			}
			if surge != 0 && unavail != 0 {
				surge = 0
			}
			spec["updateStrategy"] = map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"maxSurge": surge, "maxUnavailable": unavail}}
		}
		if rng.IntN(3) == 0 {
			spec["minReadySeconds"] = pick(rng, 0, 10, int32Max)
		}
		if rng.IntN(3) == 0 {
			spec["revisionHistoryLimit"] = pick(rng, 0, int32Max)
		}
		if rng.IntN(4) == 0 {
			spec["template"].(map[string]any)["spec"].(map[string]any)["nodeSelector"] = map[string]any{"disk": "ssd"}
		}
		return []map[string]any{obj("apps/v1", "DaemonSet", spec)}, workloadRef{"daemonset", name}
	case 2, 3:
		return []map[string]any{obj("batch/v1", "Job", randomJobSpec(rng, labels, maxCount))}, workloadRef{"job", name}
	case 4:
		return []map[string]any{randomCronJob(rng, name, labels, maxCount)}, workloadRef{"cronjob", name}
	case 5:
		return randomHPA(rng, name, app, maxCount, obj, refs), workloadRef{"hpa", name}
	case 6:
		return randomVolumesObjects(rng, name, i), workloadRef{"pvc", name}
	case 7:
		var ports []any
		for p := range 1 + rng.IntN(pick(rng, 3, 100)) {
			port := map[string]any{"name": fmt.Sprintf("p%d", p), "port": 1 + (p*7919)%65535, "targetPort": pick[any](rng, 80, 65535, "http")}
			if rng.IntN(4) == 0 {
				port["protocol"] = pick(rng, "UDP", "SCTP")
			}
			ports = append(ports, port)
		}
		spec := map[string]any{"ports": ports}
		switch rng.IntN(4) {
		case 0:
			spec["clusterIP"] = "None"
		case 1:
			spec["type"] = "NodePort"
			if len(ports) > 20 {
				spec["type"] = "ClusterIP"
			}
		}
		if rng.IntN(4) != 0 {
			other := "app" + strconv.Itoa(rng.IntN(i+1))
			spec["selector"] = map[string]any{"app": other}
		}
		return []map[string]any{obj("v1", "Service", spec)}, workloadRef{"service", name}
	default:
		return randomQuota(rng, name), workloadRef{}
	}
}

func randomStatefulSet(rng *rand.Rand, name, app string, maxCount int, obj func(string, string, map[string]any) map[string]any) []map[string]any {
	labels := map[string]any{"app": app}
	spec := map[string]any{
		"replicas":    randomCount(rng, maxCount),
		"serviceName": name,
		"selector":    map[string]any{"matchLabels": labels},
		"template":    randomPodTemplate(rng, labels, ""),
	}
	if rng.IntN(2) == 0 {
		spec["podManagementPolicy"] = "Parallel"
	}
	switch rng.IntN(3) {
	case 0:
		spec["updateStrategy"] = map[string]any{"type": "OnDelete"}
	case 1:
		ru := map[string]any{"partition": pick(rng, 0, 1, int32Max)}
		if rng.IntN(2) == 0 {
			ru["maxUnavailable"] = pick[any](rng, 1, "100%", int32Max)
		}
		spec["updateStrategy"] = map[string]any{"type": "RollingUpdate", "rollingUpdate": ru}
	}
	if rng.IntN(4) == 0 {
		spec["ordinals"] = map[string]any{"start": pick(rng, 1, 1000, int32Max)}
	}
	if rng.IntN(3) == 0 {
		spec["minReadySeconds"] = pick(rng, 0, 10, int32Max)
	}
	if rng.IntN(3) == 0 {
		spec["revisionHistoryLimit"] = pick(rng, 0, int32Max)
	}
	if rng.IntN(3) == 0 {
		spec["volumeClaimTemplates"] = []any{map[string]any{
			"metadata": map[string]any{"name": randomName(rng, "data", pick(rng, 4, 63))},
			"spec": map[string]any{
				"accessModes":      []any{"ReadWriteOnce"},
				"storageClassName": pick[any](rng, "standard", "nosuch", ""),
				"resources":        map[string]any{"requests": map[string]any{"storage": pick(rng, "1Gi", "1e15", "8Ei")}},
			},
		}}
		if rng.IntN(2) == 0 {
			spec["persistentVolumeClaimRetentionPolicy"] = map[string]any{
				"whenDeleted": pick(rng, "Retain", "Delete"), "whenScaled": pick(rng, "Retain", "Delete"),
			}
		}
	}
	out := []map[string]any{obj("apps/v1", "StatefulSet", spec)}
	if rng.IntN(2) == 0 {
		svc := obj("v1", "Service", map[string]any{"clusterIP": "None", "selector": labels,
			"ports": []any{map[string]any{"name": "http", "port": 80}}})
		out = append(out, svc)
	}
	return out
}

func randomJobSpec(rng *rand.Rand, labels map[string]any, maxCount int) map[string]any {
	restart := pick(rng, "Never", "OnFailure")
	spec := map[string]any{}
	completions := randomCount(rng, maxCount)
	indexed := rng.IntN(2) == 0
	if rng.IntN(5) != 0 || indexed {
		if indexed && completions == 0 {
			completions = 1
		}
		spec["completions"] = completions
	}
	spec["parallelism"] = randomCount(rng, maxCount)
	if indexed {
		spec["completionMode"] = "Indexed"
		if rng.IntN(2) == 0 {
			spec["backoffLimitPerIndex"] = pick(rng, 0, 1, int32Max)
			if rng.IntN(2) == 0 {
				spec["maxFailedIndexes"] = rng.IntN(completions + 1)
			}
		}
		if rng.IntN(3) == 0 {
			rule := map[string]any{}
			if rng.IntN(2) == 0 {
				rule["succeededCount"] = 1 + rng.IntN(completions)
			} else {
				last := rng.IntN(completions)
				rule["succeededIndexes"] = "0-" + strconv.Itoa(last)
				if last == 0 {
					rule["succeededIndexes"] = "0"
				}
				if rng.IntN(2) == 0 {
					rule["succeededCount"] = 1 + rng.IntN(last+1)
				}
			}
			spec["successPolicy"] = map[string]any{"rules": []any{rule}}
		}
	}
	if _, perIndex := spec["backoffLimitPerIndex"]; !perIndex && rng.IntN(2) == 0 {
		spec["backoffLimit"] = pick(rng, 0, 1, 6, int32Max)
	}
	if rng.IntN(3) == 0 {
		restart = "Never"
		var rules []any
		for range 1 + rng.IntN(3) {
			action := pick(rng, "FailJob", "Ignore", "Count")
			if _, perIndex := spec["backoffLimitPerIndex"]; perIndex && rng.IntN(2) == 0 {
				action = "FailIndex"
			}
			rule := map[string]any{"action": action}
			if rng.IntN(2) == 0 {
				op := pick(rng, "In", "NotIn")
				values := []any{1, 2, 3, 255}
				if op == "NotIn" {
					values = []any{0}
				}
				rule["onExitCodes"] = map[string]any{"operator": op, "values": values}
			} else {
				rule["onPodConditions"] = []any{map[string]any{"type": "DisruptionTarget", "status": "True"}}
			}
			rules = append(rules, rule)
		}
		spec["podFailurePolicy"] = map[string]any{"rules": rules}
		if rng.IntN(2) == 0 {
			spec["podReplacementPolicy"] = "Failed"
		}
	} else if rng.IntN(4) == 0 {
		spec["podReplacementPolicy"] = pick(rng, "Failed", "TerminatingOrFailed")
	}
	if rng.IntN(3) == 0 {
		spec["activeDeadlineSeconds"] = pick[any](rng, 1, 600, int64Max)
	}
	if rng.IntN(3) == 0 {
		spec["ttlSecondsAfterFinished"] = pick(rng, 0, 1, int32Max)
	}
	if rng.IntN(8) == 0 {
		spec["suspend"] = true
	}
	tmpl := randomPodTemplate(rng, labels, restart)
	if rng.IntN(6) == 0 {
		tmpl["spec"].(map[string]any)["activeDeadlineSeconds"] = pick(rng, 1, 60, int32Max)
	}
	c := tmpl["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
	// Jobs are about endings: mostly commands that end.
	if rng.IntN(3) != 0 {
		c["command"] = []any{"sh", "-c", pick(rng, "exit 0", "exit 1", "exit 3", "sleep 5; exit 255", "true", "false", "sleep 60")}
		delete(c, "livenessProbe")
		delete(c, "startupProbe")
	}
	spec["template"] = tmpl
	return spec
}

func randomCronJob(rng *rand.Rand, name string, labels map[string]any, maxCount int) map[string]any {
	// CronJob names are at most 52 characters.
	if len(name) > 52 {
		name = strings.TrimRight(name[:52], "-.")
	}
	job := randomJobSpec(rng, labels, min(maxCount, 50))
	spec := map[string]any{
		"schedule": pick(rng, "* * * * *", "@every 1m", "@every 1s", "@hourly", "*/59 * * * *", "0 0 29 2 *", "0 0 31 2 *",
			"59 23 31 12 *", "0 0 * * 0", "@yearly", "30 2 * * *"),
		"jobTemplate": map[string]any{"spec": job},
	}
	if rng.IntN(2) == 0 {
		spec["timeZone"] = pick(rng, "UTC", "Etc/GMT-14", "Etc/GMT+12", "America/New_York", "Asia/Kathmandu", "Australia/Lord_Howe", "Pacific/Chatham")
	}
	if rng.IntN(2) == 0 {
		spec["startingDeadlineSeconds"] = pick[any](rng, 0, 1, 10, 200, int64Max)
	}
	if rng.IntN(2) == 0 {
		spec["concurrencyPolicy"] = pick(rng, "Allow", "Forbid", "Replace")
	}
	if rng.IntN(2) == 0 {
		spec["successfulJobsHistoryLimit"] = pick(rng, 0, 1, int32Max)
	}
	if rng.IntN(2) == 0 {
		spec["failedJobsHistoryLimit"] = pick(rng, 0, 1, int32Max)
	}
	if rng.IntN(8) == 0 {
		spec["suspend"] = true
	}
	return map[string]any{"apiVersion": "batch/v1", "kind": "CronJob", "metadata": map[string]any{"name": name}, "spec": spec}
}

func randomHPA(rng *rand.Rand, name, app string, maxCount int, obj func(string, string, map[string]any) map[string]any, refs []workloadRef) []map[string]any {
	var out []map[string]any
	target := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": name}
	switch {
	case len(refs) > 0 && rng.IntN(2) == 0:
		r := refs[rng.IntN(len(refs))]
		kinds := map[string]string{"statefulset": "StatefulSet", "daemonset": "DaemonSet", "job": "Job", "cronjob": "CronJob", "hpa": "HorizontalPodAutoscaler", "pvc": "PersistentVolumeClaim", "service": "Service"}
		target = map[string]any{"apiVersion": "apps/v1", "kind": kinds[r.kind], "name": r.name}
	case rng.IntN(3) != 0:
		_, doc := randomDeployment(rng, 0, min(maxCount, 20))
		var d map[string]any
		if err := yaml.Unmarshal([]byte(doc), &d); err != nil {
			panic(err)
		}
		d["metadata"] = map[string]any{"name": name}
		out = append(out, d)
	}
	minR := pick(rng, 1, 3, 50)
	maxR := pick(rng, minR, 100, int32Max)
	spec := map[string]any{"scaleTargetRef": target, "minReplicas": minR, "maxReplicas": maxR}
	if rng.IntN(2) == 0 {
		spec["metrics"] = []any{map[string]any{"type": "Resource", "resource": map[string]any{"name": "cpu",
			"target": map[string]any{"type": "Utilization", "averageUtilization": pick(rng, 1, 50, int32Max)}}}}
	}
	if rng.IntN(2) == 0 {
		rules := func() map[string]any {
			r := map[string]any{
				"stabilizationWindowSeconds": pick(rng, 0, 1, 3600),
				"selectPolicy":               pick(rng, "Max", "Min", "Disabled"),
				"policies": []any{
					map[string]any{"type": "Pods", "value": pick(rng, 1, int32Max), "periodSeconds": pick(rng, 1, 1800)},
					map[string]any{"type": "Percent", "value": pick(rng, 1, 100, int32Max), "periodSeconds": pick(rng, 1, 1800)},
				},
			}
			return r
		}
		spec["behavior"] = map[string]any{"scaleUp": rules(), "scaleDown": rules()}
	}
	return append(out, obj("autoscaling/v2", "HorizontalPodAutoscaler", spec))
}

func randomVolumesObjects(rng *rand.Rand, name string, i int) []map[string]any {
	var out []map[string]any
	class := pick[any](rng, "", "standard", "nosuch", nil)
	size := pick(rng, "1Ki", "1Gi", "1e15", "8Ei")
	pvName := fmt.Sprintf("pv-%d-%s", i, randomName(rng, "", 6))
	claim := map[string]any{
		"accessModes": []any{pick(rng, "ReadWriteOnce", "ReadWriteMany", "ReadOnlyMany", "ReadWriteOncePod")},
		"resources":   map[string]any{"requests": map[string]any{"storage": size}},
	}
	if class != nil {
		claim["storageClassName"] = class
	}
	if rng.IntN(3) == 0 {
		claim["volumeName"] = pick(rng, pvName, "nosuch-pv")
	}
	if rng.IntN(4) == 0 {
		claim["selector"] = map[string]any{"matchLabels": map[string]any{"tier": pick(rng, "fast", "none")}}
	}
	out = append(out, map[string]any{"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": map[string]any{"name": name}, "spec": claim})
	for k := range rng.IntN(3) {
		pv := map[string]any{
			"capacity":                      map[string]any{"storage": pick(rng, "1Ki", "1Gi", "1e15", "8Ei")},
			"accessModes":                   []any{pick(rng, "ReadWriteOnce", "ReadWriteMany")},
			"persistentVolumeReclaimPolicy": pick(rng, "Retain", "Delete"),
			"hostPath":                      map[string]any{"path": "/tmp/" + pvName},
		}
		if class != nil && class != "" {
			pv["storageClassName"] = class
		}
		if rng.IntN(3) == 0 {
			pv["claimRef"] = map[string]any{"name": pick(rng, name, "someone-else"), "namespace": "default"}
		}
		meta := map[string]any{"name": fmt.Sprintf("%s-%d", pvName, k)}
		if k == 0 {
			meta["name"] = pvName
		}
		if rng.IntN(2) == 0 {
			meta["labels"] = map[string]any{"tier": "fast"}
		}
		// PersistentVolumes are cluster-scoped: the namespace set by the
		// caller is dropped by the API (kubectl would refuse it with -n;
		// keep the manifests clean).
		out = append(out, map[string]any{"apiVersion": "v1", "kind": "PersistentVolume", "metadata": meta, "spec": pv, "clusterScoped": true})
	}
	return out
}

func randomQuota(rng *rand.Rand, name string) []map[string]any {
	hard := map[string]any{}
	for _, k := range []string{"requests.cpu", "limits.memory", "requests.storage"} {
		if rng.IntN(3) == 0 {
			hard[k] = pick(rng, "0", "1", "10", "100m", "9223372036854775807")
		}
	}
	// Counts are integers.
	for _, k := range []string{"count/jobs.batch", "persistentvolumeclaims", "services"} {
		if rng.IntN(3) == 0 {
			hard[k] = pick(rng, "0", "1", "10", "9223372036854775807")
		}
	}
	hard["pods"] = pick(rng, "0", "1", "5", "1000000")
	out := []map[string]any{{"apiVersion": "v1", "kind": "ResourceQuota", "metadata": map[string]any{"name": name}, "spec": map[string]any{"hard": hard}}}
	if rng.IntN(2) == 0 {
		limit := map[string]any{"type": "Container"}
		// default <= max, as the API requires.
		switch rng.IntN(3) {
		case 0:
			limit["default"] = map[string]any{"cpu": pick(rng, "100m", "1", "1e3"), "memory": pick(rng, "64Mi", "8Ei")}
		case 1:
			limit["max"] = map[string]any{"cpu": pick(rng, "1", "1e3"), "memory": pick(rng, "8Ei", "1Gi")}
		default:
			limit["default"] = map[string]any{"cpu": pick(rng, "100m", "1"), "memory": pick(rng, "64Mi", "1Gi")}
			limit["max"] = map[string]any{"cpu": pick(rng, "1", "1e3"), "memory": pick(rng, "8Ei", "1Gi")}
		}
		if rng.IntN(3) == 0 {
			limit["maxLimitRequestRatio"] = map[string]any{"cpu": pick(rng, "1", "10")}
		}
		if len(limit) == 1 {
			limit["defaultRequest"] = map[string]any{"cpu": "10m"}
		}
		out = append(out, map[string]any{"apiVersion": "v1", "kind": "LimitRange", "metadata": map[string]any{"name": name}, "spec": map[string]any{"limits": []any{limit}}})
	}
	return out
}

// TestRealRandomWorkloadsAccepted checks the generator of
// TestRandomWorkloads against kube-apiserver: a server-side dry run of 200
// random workloads is accepted, and the embedded cluster accepts them too.
func TestRealRandomWorkloadsAccepted(t *testing.T) {
	kc := realcluster.Kubeconfig(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 5))
	ns := fmt.Sprintf("random-%d", time.Now().UnixNano()%1e9)
	var docs []string
	var refs []workloadRef
	for i := range 200 {
		objs, ref := randomWorkload(rng, i, 100_000, refs)
		if ref.kind != "" {
			refs = append(refs, ref)
		}
		for _, o := range objs {
			if o["clusterScoped"] == true {
				continue // PersistentVolumes: not in a dry run by namespace
			}
			b, err := yaml.Marshal(o)
			if err != nil {
				t.Fatal(err)
			}
			docs = append(docs, string(b))
		}
	}
	file := filepath.Join(t.TempDir(), "random.yaml")
	writeFile(t, file, []byte(strings.Join(docs, "---\n")))
	if _, errOut, code := kubectlRun(t, kc, nil, "create", "namespace", ns); code != 0 {
		t.Fatalf("create namespace: %s", errOut)
	}
	defer kubectlRun(t, kc, nil, "delete", "namespace", ns, "--wait=false")
	out, errOut, code := kubectlRun(t, kc, nil, "-n", ns, "create", "--dry-run=server", "-f", file)
	if code != 0 {
		t.Fatalf("kube-apiserver refuses generated workloads (exit %d):\n%s", code, errOut)
	}
	if n := strings.Count(out, "created (server dry run)"); n != len(docs) {
		t.Errorf("%d of %d created (server dry run):\n%s", n, len(docs), out)
	}
	c := newSeedCluster(t)
	c.ok("create", "namespace", ns)
	c.ok("-n", ns, "create", "--dry-run=server", "-f", file)
}

func containsAny(s string, parts []string) bool {
	for _, p := range parts {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}
