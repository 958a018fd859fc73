package cli

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/konverge/konverge/internal/realcluster"
)

// TestRandomDeployments applies random Deployments that kube-apiserver
// accepts (commands that run for ever, exit, or sleep for absurd times;
// probes with huge periods; images that do not parse or do not exist;
// volumes the controllers cannot provide; selectors that include
// pod-template-hash; names near the limits; scheduling gates with a node
// name; bad finalizers in the template; replicas up to 100,000) to fresh
// embedded clusters, moves the clock by random amounts up to 1,000 hours
// and runs the usual commands. Every command must answer (a watchdog ends
// the test binary after propertyWatchdog), none may fail or warn because
// of a controller, and a healthy Deployment applied afterwards must roll
// out.
//
// By default two clusters with small replica counts and advances up to an
// hour (a short run; TestRealRandomDeploymentsAccepted covers every
// generator); KONVERGE_PROPERTY_DURATION=10m runs clusters until that much
// time has passed, with replicas up to 100,000 and advances up to 1,000
// hours; KONVERGE_PROPERTY_SEED replays a run.
func TestRandomDeployments(t *testing.T) {
	t.Parallel()
	propertyRuns(t, "KONVERGE_PROPERTY", 3, propertyCluster)
}

// propertyRuns runs cluster on fresh random states, as the property tests
// share it: two clusters with counts up to 20 and advances up to an hour,
// or with PREFIX_DURATION set, clusters until that much time has passed,
// with counts up to 100,000 and advances up to 1,000 hours; PREFIX_SEED
// replays a run (each cluster logs its own seed). stream tells the
// tests' random streams apart.
func propertyRuns(t *testing.T, prefix string, stream uint64, cluster func(t *testing.T, rng *rand.Rand, maxCount int, maxAdvance time.Duration, stats *propertyStats)) {
	iterations, maxCount, maxAdvance := 2, 20, time.Hour
	var until time.Time
	if v := os.Getenv(prefix + "_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("%s_DURATION=%q: %v", prefix, v, err)
		}
		until, iterations, maxCount, maxAdvance = time.Now().Add(d), 1<<30, 100_000, 1000*time.Hour
	}
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv(prefix + "_SEED"); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("%s_SEED=%q: %v", prefix, v, err)
		}
		seed = s
	}
	t.Logf("seed %d", seed)
	stats := &propertyStats{reasons: map[string]int{}}
	for i := 0; i < iterations && (until.IsZero() || time.Now().Before(until)); i++ {
		iterSeed := seed + uint64(i)
		ok := t.Run(fmt.Sprintf("cluster-%d", i), func(t *testing.T) {
			t.Logf("%s_SEED=%d", prefix, iterSeed)
			cluster(t, rand.New(rand.NewPCG(iterSeed, stream)), maxCount, maxAdvance, stats)
		})
		if !ok {
			break
		}
	}
	t.Log(stats)
}

// propertyWatchdog is how long one command may take before the test
// binary is stopped with every goroutine's stack: a hang, not slowness.
const propertyWatchdog = 5 * time.Minute

type propertyStats struct {
	mu       sync.Mutex
	clusters int
	commands int
	slowest  time.Duration
	slowCmd  string
	advanced time.Duration
	reasons  map[string]int
}

func (s *propertyStats) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var rs []string
	for r, n := range s.reasons {
		rs = append(rs, fmt.Sprintf("%s=%d", r, n))
	}
	sort.Strings(rs)
	return fmt.Sprintf("%d clusters, %d commands, %s of cluster time; slowest command %v (%s); Event reasons: %s",
		s.clusters, s.commands, s.advanced, s.slowest.Round(time.Millisecond), s.slowCmd, strings.Join(rs, " "))
}

func propertyCluster(t *testing.T, rng *rand.Rand, maxReplicas int, maxAdvance time.Duration, stats *propertyStats) {
	c := newPropertyCluster(t)
	// run runs a command that must answer; exit 1 is accepted only with
	// an error containing allowed, or one of its "|"-separated parts
	// (when not "").
	runAllow := func(allowed string, args ...string) string {
		t.Helper()
		line := strings.Join(args, " ")
		dog := time.AfterFunc(propertyWatchdog, func() {
			buf := make([]byte, 1<<22)
			buf = buf[:runtime.Stack(buf, true)]
			fmt.Fprintf(os.Stderr, "konverge %s has not answered after %v:\n%s\n", line, propertyWatchdog, buf)
			os.Exit(3)
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
		if strings.Contains(errOut, "controller failed") || strings.Contains(errOut, "panic") {
			t.Fatalf("konverge %s: a controller failed:\n%s", line, errOut)
		}
		if code != 0 && (allowed == "" || code != 1 || !slices.ContainsFunc(strings.Split(allowed, "|"), func(a string) bool { return strings.Contains(errOut, a) })) {
			t.Fatalf("konverge %s: exit %d (after %v)\n%s%s", line, code, took, out, errOut)
		}
		return out
	}
	run := func(args ...string) string {
		t.Helper()
		return runAllow("", args...)
	}
	n := 1 + rng.IntN(3)
	var docs, names []string
	for i := range n {
		name, doc := randomDeployment(rng, i, maxReplicas)
		docs, names = append(docs, doc), append(names, name)
	}
	manifest := strings.Join(docs, "---\n")
	t.Logf("manifest:\n%s", manifest)
	run("apply", "-f", c.file("random.yaml", manifest))
	for range 1 + rng.IntN(3) {
		d := min(randomAdvance(rng), maxAdvance)
		stats.mu.Lock()
		stats.advanced += d
		stats.mu.Unlock()
		run("clock", "advance", d.String())
		run("get", "pods")
		run("get", "deploy,rs")
		switch rng.IntN(6) {
		case 0:
			runAllow("can't restart paused deployment", "rollout", "restart", "deployment/"+names[rng.IntN(len(names))])
		case 1:
			run("scale", "deployment/"+names[rng.IntN(len(names))], "--replicas="+strconv.Itoa(rng.IntN(min(maxReplicas, 20)+1)))
		case 2:
			run("describe", "deployment", names[rng.IntN(len(names))])
		case 3:
			if maxAdvance < 1000*time.Hour {
				break // a long wait for a short run
			}
			// May time out or pass its deadline: the Deployment need not
			// be healthy.
			runAllow("error:", "rollout", "status", "deployment/"+names[rng.IntN(len(names))], "--timeout=1m")
		}
	}
	var events map[string]any
	if err := yaml.Unmarshal([]byte(run("get", "events", "-o", "json")), &events); err != nil {
		t.Fatal(err)
	}
	items, _ := events["items"].([]any)
	stats.mu.Lock()
	for _, e := range items {
		stats.reasons[fmt.Sprint(get(e, "reason"))]++
	}
	stats.clusters++
	stats.mu.Unlock()

	// A healthy Deployment still rolls out next to them.
	run("apply", "-f", c.file("healthy.yaml", strings.ReplaceAll(robustDeployment("healthy", 2, plainContainer, "", ""), "robust", "healthy")))
	if strings.Contains(manifest, "pod-template-hash: abc") {
		// Known limit: a Deployment whose selector carries its own
		// pod-template-hash makes ReplicaSets without end (as the real
		// controller does, at its client's rate), and releases each.
		// Each one the ReplicaSet controller then syncs (upstream's
		// too: a pod create, an Event, a status write, retried with
		// back-off when its pods are refused) holds that controller's
		// client at its rate limit, so the healthy ReplicaSet waits its
		// turn behind them: the wait may run out of cluster time or of
		// the command's work first. It must still answer, and
		// truthfully.
		runAllow("work limit|timed out waiting", "rollout", "status", "deployment/healthy", "--timeout=10m")
	} else {
		run("rollout", "status", "deployment/healthy", "--timeout=10m")
	}
	// And everything goes away.
	run("delete", "deployment", "--all")
	run("clock", "advance", "10m")
	// (A Deployment whose selector includes pod-template-hash releases
	// the ReplicaSets it makes, as the real controller does: they stay.)
	var rss map[string]any
	if err := yaml.Unmarshal([]byte(run("get", "rs", "-o", "json")), &rss); err != nil {
		t.Fatal(err)
	}
	rsItems, _ := rss["items"].([]any)
	for _, rs := range rsItems {
		if owners, _ := get(rs, "metadata.ownerReferences").([]any); len(owners) > 0 {
			t.Errorf("ReplicaSet %s still owned 10 minutes after its Deployment was deleted: %v", get(rs, "metadata.name"), owners)
		}
	}
}

// randomAdvance is a random clock advance up to 1,000 hours, mostly short.
func randomAdvance(rng *rand.Rand) time.Duration {
	switch rng.IntN(5) {
	case 0:
		return time.Duration(1+rng.IntN(60)) * time.Second
	case 1:
		return time.Duration(1+rng.IntN(60)) * time.Minute
	case 2:
		return time.Duration(1+rng.IntN(24)) * time.Hour
	case 3:
		return time.Duration(1+rng.IntN(1000)) * time.Hour
	}
	return 1000 * time.Hour
}

func pick[T any](rng *rand.Rand, xs ...T) T { return xs[rng.IntN(len(xs))] }

// randomName is a DNS label of about n characters.
func randomName(rng *rand.Rand, prefix string, n int) string {
	const letters = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := []byte(prefix)
	for len(b) < n {
		b = append(b, letters[rng.IntN(len(letters))])
	}
	for len(b) > 1 && (b[len(b)-1] == '-' || b[len(b)-1] == '.') {
		b = b[:len(b)-1]
	}
	return string(b)
}

// randomDeployment returns a Deployment kube-apiserver accepts, its name
// unique by i.
func randomDeployment(rng *rand.Rand, i, maxReplicas int) (string, string) {
	prefix := fmt.Sprintf("d%d-", i)
	var name string
	switch rng.IntN(4) {
	case 0:
		name = randomName(rng, prefix, 3+rng.IntN(10))
	case 1:
		name = randomName(rng, prefix, 50+rng.IntN(14))
	case 2:
		// Pod names are cut, ReplicaSet names are not: long names make
		// ReplicaSets, pods and Events that pass the limits.
		name = randomName(rng, prefix, 200+rng.IntN(54))
	default:
		name = randomName(rng, prefix, 20)
	}
	replicas := rng.IntN(6)
	switch rng.IntN(10) {
	case 0:
		replicas = rng.IntN(maxReplicas + 1)
	case 1:
		replicas = 0
	}
	app := fmt.Sprintf("app%d", i)
	labels := map[string]any{"app": app}
	selector := map[string]any{"matchLabels": map[string]any{"app": app}}
	switch rng.IntN(8) {
	case 0:
		// Never converges: the controller's pods carry another hash.
		labels["pod-template-hash"] = "abc"
		selector["matchLabels"].(map[string]any)["pod-template-hash"] = "abc"
	case 1:
		selector["matchExpressions"] = []any{map[string]any{"key": "pod-template-hash", "operator": "DoesNotExist"}}
	case 2:
		selector["matchExpressions"] = []any{map[string]any{"key": "tier", "operator": "NotIn", "values": []any{"db"}}}
	}
	tmeta := map[string]any{"labels": labels}
	switch rng.IntN(10) {
	case 0:
		tmeta["finalizers"] = []any{"not a valid finalizer!"}
	case 1:
		tmeta["finalizers"] = []any{"example.com/keep"}
	case 2:
		tmeta["annotations"] = map[string]any{"note": strings.Repeat("n", rng.IntN(5000))}
	}
	spec := map[string]any{}
	var containers []any
	for k := range 1 + rng.IntN(3) {
		containers = append(containers, randomContainer(rng, fmt.Sprintf("c%d", k)))
	}
	spec["containers"] = containers
	if rng.IntN(5) == 0 {
		init := randomContainer(rng, "init")
		if rng.IntN(2) == 0 {
			init["restartPolicy"] = "Always" // a sidecar
		} else {
			delete(init, "livenessProbe")
			delete(init, "readinessProbe")
			delete(init, "startupProbe")
		}
		spec["initContainers"] = []any{init}
	}
	switch rng.IntN(8) {
	case 0:
		spec["nodeName"] = "konverge-node"
		spec["schedulingGates"] = []any{map[string]any{"name": "example.com/gate"}}
	case 1:
		spec["schedulingGates"] = []any{map[string]any{"name": "example.com/gate"}}
	case 2:
		spec["nodeName"] = pick(rng, "konverge-node", "no-such-node")
	case 3:
		spec["serviceAccountName"] = "nosuch"
	}
	if rng.IntN(4) == 0 {
		spec["terminationGracePeriodSeconds"] = pick(rng, 0, 1, 30, 3600, 9223372036)
	}
	if v := randomVolumes(rng); v != nil {
		spec["volumes"] = v
	}
	d := map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{
			"replicas": replicas,
			"selector": selector,
			"template": map[string]any{"metadata": tmeta, "spec": spec},
		},
	}
	ds := d["spec"].(map[string]any)
	switch rng.IntN(4) {
	case 0:
		ds["strategy"] = map[string]any{"type": "Recreate"}
	case 1:
		surge, unavail := pick[any](rng, 0, 1, "25%", "100%"), pick[any](rng, 1, 0, "50%", "100%")
		if surge == 0 && unavail == 0 {
			unavail = 1
		}
		ds["strategy"] = map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"maxSurge": surge, "maxUnavailable": unavail}}
	}
	switch rng.IntN(4) {
	case 0:
		ds["minReadySeconds"] = pick(rng, 0, 10, 2147483646)
		ds["progressDeadlineSeconds"] = 2147483647
	case 1:
		ds["progressDeadlineSeconds"] = pick(rng, 1, 600, 2147483647)
	case 2:
		ds["revisionHistoryLimit"] = pick(rng, 0, 1, 2147483647)
	}
	if rng.IntN(10) == 0 {
		ds["paused"] = true
	}
	out, err := yaml.Marshal(d)
	if err != nil {
		panic(err)
	}
	return name, string(out)
}

func randomContainer(rng *rand.Rand, name string) map[string]any {
	c := map[string]any{
		"name": name,
		"image": pick(rng, "nginx:1.16.1", "busybox:1.36", "alpine:3.20", "nginx 1.16.1", "Nginx:Latest",
			"registry.example.com:5000/team/app@sha256:"+strings.Repeat("ab", 32), "no-such-registry.invalid/app:v1",
			"nginx:"+strings.Repeat("t", 128)),
	}
	switch rng.IntN(14) {
	case 0:
		c["command"] = []any{"sleep", "infinity"}
	case 1:
		c["command"] = []any{"sleep", pick(rng, "1e309", "99999999999999999", "-1", "0", "abc", "1d", "3600")}
	case 2:
		c["command"] = []any{"sh", "-c", fmt.Sprintf("sleep %d; exit %d", rng.IntN(100), rng.IntN(256))}
	case 3:
		c["command"] = []any{pick(rng, "true", "false")}
	case 4:
		c["command"] = []any{"sh", "-c", "while true; do sleep 1; done"}
	case 5:
		c["command"] = []any{"/bin/server"}
		c["args"] = []any{"--port=8080"}
	case 6:
		c["command"] = []any{"tail", "-f", "/dev/null"}
	case 7:
		c["command"] = []any{"sh", "-c", "exit " + strconv.Itoa(rng.IntN(256))}
	case 8:
		c["command"] = []any{"sh", "-c", "sleep 99999999999999999"}
	}
	probe := func() map[string]any {
		p := map[string]any{}
		switch rng.IntN(3) {
		case 0:
			p["httpGet"] = map[string]any{"path": "/", "port": pick[any](rng, 80, 8080, "http")}
		case 1:
			p["tcpSocket"] = map[string]any{"port": pick(rng, 80, 65535)}
		default:
			p["exec"] = map[string]any{"command": []any{pick(rng, "true", "false", "cat")}}
		}
		p["periodSeconds"] = pick(rng, 1, 10, 2147483647)
		p["initialDelaySeconds"] = pick(rng, 0, 5, 2147483647)
		p["timeoutSeconds"] = pick(rng, 1, 2147483647)
		p["failureThreshold"] = pick(rng, 1, 3, 2147483647)
		return p
	}
	if name == "http" || rng.IntN(2) == 0 {
		c["ports"] = []any{map[string]any{"name": "http", "containerPort": 80}}
	}
	if rng.IntN(3) == 0 {
		c["livenessProbe"] = probe()
	}
	if rng.IntN(3) == 0 {
		p := probe()
		p["successThreshold"] = pick(rng, 1, 2147483647)
		c["readinessProbe"] = p
	}
	if rng.IntN(5) == 0 {
		c["startupProbe"] = probe()
	}
	if rng.IntN(4) == 0 {
		c["resources"] = map[string]any{"requests": map[string]any{
			"cpu":    pick(rng, "1m", "0.5", "1e3", "9223372036854775807", "100"),
			"memory": pick(rng, "1Ki", "100Mi", "1e9", "8Ei", "0.5Gi"),
		}}
	}
	if rng.IntN(4) == 0 {
		c["volumeMounts"] = []any{map[string]any{"name": "scratch", "mountPath": "/scratch"}}
	}
	return c
}

// randomVolumes always has a volume "scratch" (containers may mount it).
func randomVolumes(rng *rand.Rand) []any {
	vols := []any{map[string]any{"name": "scratch", "emptyDir": map[string]any{}}}
	for range rng.IntN(3) {
		name := randomName(rng, "v", 1+rng.IntN(63))
		var v map[string]any
		switch rng.IntN(6) {
		case 0:
			v = map[string]any{"configMap": map[string]any{"name": "nosuch"}}
		case 1:
			v = map[string]any{"secret": map[string]any{"secretName": "nosuch", "optional": rng.IntN(2) == 0}}
		case 2:
			v = map[string]any{"projected": map[string]any{"sources": []any{
				map[string]any{"serviceAccountToken": map[string]any{"path": "token", "expirationSeconds": pick(rng, 600, 4294967296)}}}}}
		case 3:
			v = map[string]any{"ephemeral": map[string]any{"volumeClaimTemplate": map[string]any{"spec": map[string]any{
				"accessModes": []any{"ReadWriteOnce"},
				"resources":   map[string]any{"requests": map[string]any{"storage": pick(rng, "1Gi", "1e15")}}}}}}
		case 4:
			v = map[string]any{"persistentVolumeClaim": map[string]any{"claimName": "nosuch"}}
		default:
			v = map[string]any{"downwardAPI": map[string]any{"items": []any{
				map[string]any{"path": "labels", "fieldRef": map[string]any{"fieldPath": "metadata.labels"}}}}}
		}
		v["name"] = name
		dup := false
		for _, o := range vols {
			if o.(map[string]any)["name"] == name {
				dup = true
			}
		}
		if !dup {
			vols = append(vols, v)
		}
	}
	return vols
}

// TestRealRandomDeploymentsAccepted checks the generator of
// TestRandomDeployments against kube-apiserver: a server-side dry run of
// 200 random Deployments (of every generator, replicas up to 100,000) is
// accepted as a whole.
func TestRealRandomDeploymentsAccepted(t *testing.T) {
	kc := realcluster.Kubeconfig(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 3))
	var docs []string
	for i := range 200 {
		_, doc := randomDeployment(rng, i, 100_000)
		docs = append(docs, doc)
	}
	file := filepath.Join(t.TempDir(), "random.yaml")
	writeFile(t, file, []byte(strings.Join(docs, "---\n")))
	ns := fmt.Sprintf("random-%d", time.Now().UnixNano()%1e9)
	if _, errOut, code := kubectlRun(t, kc, nil, "create", "namespace", ns); code != 0 {
		t.Fatalf("create namespace: %s", errOut)
	}
	defer kubectlRun(t, kc, nil, "delete", "namespace", ns, "--wait=false")
	out, errOut, code := kubectlRun(t, kc, nil, "-n", ns, "create", "--dry-run=server", "-f", file)
	if code != 0 {
		t.Fatalf("kube-apiserver refuses generated Deployments (exit %d):\n%s", code, errOut)
	}
	if n := strings.Count(out, "created (server dry run)"); n != len(docs) {
		t.Errorf("%d of %d created (server dry run):\n%s", n, len(docs), out)
	}
	// The embedded cluster accepts them too.
	c := newSeedCluster(t)
	c.ok("create", "--dry-run=server", "-f", file)
}

// propertyNodes is the simulation profile of the property test's clusters:
// konverge-node with room for far more than its default 110 pods. A random
// Deployment whose selector names pod-template-hash releases every
// ReplicaSet it makes and makes another, as kube-controller-manager does;
// each command's work limit bounds how many (a few hundred), but over the
// test's commands their pods would fill a 110-pod node, and the healthy
// Deployment applied at the end would rightly stay Pending. What the test
// asks is that nothing hangs, crashes or stops the controllers, not how
// many pods a node takes (TestRobustness covers that).
const propertyNodes = `nodes:
- name: konverge-node
  capacity: {pods: "100000"}
`

func newPropertyCluster(t *testing.T) *seedCluster {
	t.Helper()
	c := &seedCluster{t: t, state: t.TempDir(), dir: t.TempDir()}
	useSimSessions(c.state)
	c.ok("cluster", "init", "--clock=manual", "--sim-profile", c.file("profile.yaml", propertyNodes))
	return c
}
