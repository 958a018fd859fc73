package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/konverge/konverge/internal/golden"
)

// The walkthroughs of the Deployment seed (deployment-v1.30.ko; the
// -v1.27.ja and -v1.17.zh pages walk the same steps) end to end through
// the root command, on an embedded cluster with a manual clock: every
// step's output is kept in a transcript compared with
// testdata/cli-rollout/<walkthrough>.txt (go test -update rewrites it),
// and the figures the seed shows are asserted explicitly. Pod-template
// hashes differ from upstream's (our hash is not upstream's); the rest
// of what the seed shows is kept equal.

const seedNginx = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: %s
  labels:
    app: nginx
spec:
  replicas: %d
  selector:
    matchLabels:
      app: nginx
  template:
    metadata:
      labels:
        app: nginx
    spec:
      containers:
      - name: nginx
        image: nginx:1.14.2
        ports:
        - containerPort: 80
`

// seedCluster is one walkthrough's embedded cluster and transcript.
type seedCluster struct {
	t     *testing.T
	state string
	dir   string
	log   strings.Builder
}

func newSeedCluster(t *testing.T) *seedCluster {
	t.Helper()
	c := &seedCluster{t: t, state: t.TempDir(), dir: t.TempDir()}
	useSimSessions(c.state)
	c.ok("cluster", "init", "--clock=manual")
	return c
}

// file writes a manifest into the walkthrough's directory.
func (c *seedCluster) file(name, content string) string {
	c.t.Helper()
	p := filepath.Join(c.dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		c.t.Fatal(err)
	}
	return p
}

// run runs one command line, logs it with its output, and returns its
// standard output, standard error and exit code.
func (c *seedCluster) run(args ...string) (string, string, int) {
	c.t.Helper()
	out, errOut, code := konvergeRun(c.t, nil, append([]string{"--state", c.state}, args...)...)
	shown := make([]string, len(args))
	for i, a := range args {
		shown[i] = strings.ReplaceAll(a, c.dir+string(filepath.Separator), "")
	}
	fmt.Fprintf(&c.log, "$ konverge %s\n%s", strings.Join(shown, " "), strings.ReplaceAll(out+errOut, c.state, "$STATE"))
	if code != 0 {
		fmt.Fprintf(&c.log, "[exit %d]\n", code)
	}
	return out, errOut, code
}

// ok runs a command that must succeed.
func (c *seedCluster) ok(args ...string) string {
	c.t.Helper()
	out, errOut, code := c.run(args...)
	if code != 0 {
		c.t.Fatalf("konverge %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// quiet runs a command that must succeed without logging it (for
// outputs with uids).
func (c *seedCluster) quiet(args ...string) string {
	c.t.Helper()
	out, errOut, code := konvergeRun(c.t, nil, append([]string{"--state", c.state}, args...)...)
	if code != 0 {
		c.t.Fatalf("konverge %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// golden compares the transcript with testdata/cli-rollout/name.txt.
func (c *seedCluster) golden(name string) {
	c.t.Helper()
	golden.Assert(c.t, filepath.Join("..", "..", "testdata", "cli-rollout", name+".txt"), []byte(c.log.String()))
}

// rsCounts reads `get rs`: name → DESIRED, CURRENT, READY.
func (c *seedCluster) rsCounts() map[string][3]int {
	c.t.Helper()
	out := c.ok("get", "rs")
	got := map[string][3]int{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		f := strings.Fields(line)
		var n [3]int
		for i := range n {
			v, err := strconv.Atoi(f[i+1])
			if err != nil {
				c.t.Fatalf("get rs: %q: %v", line, err)
			}
			n[i] = v
		}
		got[f[0]] = n
	}
	return got
}

// rsByImage maps the images of the ReplicaSets to their names.
func (c *seedCluster) rsByImage() map[string]string {
	c.t.Helper()
	out := c.ok("get", "rs", "-o", "wide", "--no-headers")
	m := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		// NAME DESIRED CURRENT READY AGE CONTAINERS IMAGES SELECTOR
		m[f[6]] = f[0]
	}
	return m
}

// deployRow reads `get deploy NAME`: READY, UP-TO-DATE, AVAILABLE.
func (c *seedCluster) deployRow(name string) [3]string {
	c.t.Helper()
	out := c.ok("get", "deploy", name, "--no-headers")
	f := strings.Fields(out)
	return [3]string{f[1], f[2], f[3]}
}

// conditions reads the Conditions section of describe: type → "status reason".
func (c *seedCluster) conditions(name string) map[string]string {
	c.t.Helper()
	out, _, code := konvergeRun(c.t, nil, "--state", c.state, "describe", "deployment", name)
	if code != 0 {
		c.t.Fatalf("describe: exit %d", code)
	}
	m := map[string]string{}
	in := false
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "Conditions:"):
			in = true
		case in && !strings.HasPrefix(line, " "):
			in = false
		case in:
			f := strings.Fields(line)
			if len(f) == 3 && f[0] != "Type" && f[0] != "----" {
				m[f[0]] = f[1] + " " + f[2]
			}
		}
	}
	return m
}

// events logs the Conditions section of describe deployment, and returns
// (and logs) the Deployment's events as "Reason: Message" in the order
// they were written (describe orders them by time; within a second the
// order of a List is that of their names, which hold the uid).
func (c *seedCluster) events(name string) []string {
	c.t.Helper()
	out, _, code := konvergeRun(c.t, nil, "--state", c.state, "describe", "deployment", name)
	if code != 0 {
		c.t.Fatalf("describe: exit %d", code)
	}
	i, j := strings.Index(out, "Conditions:"), strings.Index(out, "\nEvents:")
	if i < 0 || j < i {
		c.t.Fatalf("describe without Conditions or Events:\n%s", out)
	}
	fmt.Fprintf(&c.log, "$ konverge describe deployment %s | sed -n '/^Conditions:/,/^Events:/p'\n%s", name, out[i:j+len("\nEvents:\n")])
	raw, _, code := konvergeRun(c.t, nil, "--state", c.state, "get", "events", "-o", "json")
	if code != 0 {
		c.t.Fatalf("get events: exit %d", code)
	}
	var list struct {
		Items []struct {
			Metadata       struct{ ResourceVersion string }
			InvolvedObject struct{ Kind, Name string }
			Reason         string
			Message        string
		}
	}
	if err := json.Unmarshal([]byte(raw), &list); err != nil {
		c.t.Fatal(err)
	}
	sort.SliceStable(list.Items, func(a, b int) bool {
		ra, _ := strconv.Atoi(list.Items[a].Metadata.ResourceVersion)
		rb, _ := strconv.Atoi(list.Items[b].Metadata.ResourceVersion)
		return ra < rb
	})
	var evs []string
	for _, e := range list.Items {
		if e.InvolvedObject.Kind == "Deployment" && e.InvolvedObject.Name == name {
			evs = append(evs, e.Reason+": "+e.Message)
			fmt.Fprintf(&c.log, "  %s: %s\n", e.Reason, e.Message)
		}
	}
	return evs
}

func wantRS(t *testing.T, got map[string][3]int, name string, want [3]int) {
	t.Helper()
	if got[name] != want {
		t.Errorf("get rs: %s = %v, want %v (all: %v)", name, got[name], want, got)
	}
}

// TestSeedDeploymentCreateUpdateRollback: creating a Deployment, updating
// it, a typo in the image and rolling back, the rollout history.
func TestSeedDeploymentCreateUpdateRollback(t *testing.T) {
	t.Parallel()
	c := newSeedCluster(t)
	f := c.file("nginx-deployment.yaml", fmt.Sprintf(seedNginx, "nginx-deployment", 3))

	// Creating a Deployment.
	c.ok("apply", "-f", f)
	if got := c.deployRow("nginx-deployment"); got[0] != "0/3" || got[2] != "0" {
		t.Errorf("get deploy right after apply: %v, want READY 0/3, AVAILABLE 0", got)
	}
	c.ok("clock", "advance", "5s")
	if got := c.deployRow("nginx-deployment"); got != [3]string{"3/3", "3", "3"} {
		t.Errorf("get deploy after 5s: %v, want 3/3 3 3", got)
	}
	c.ok("rollout", "status", "deployment/nginx-deployment")
	old := c.rsByImage()["nginx:1.14.2"]
	wantRS(t, c.rsCounts(), old, [3]int{3, 3, 3})
	if out := c.ok("get", "pods", "--show-labels"); strings.Count(out, "pod-template-hash="+strings.TrimPrefix(old, "nginx-deployment-")) != 3 {
		t.Errorf("get pods --show-labels: want 3 pods with the hash of %s:\n%s", old, out)
	}

	// Updating a Deployment.
	if out := c.ok("set", "image", "deployment/nginx-deployment", "nginx=nginx:1.16.1"); out != "deployment.apps/nginx-deployment image updated\n" {
		t.Errorf("set image printed %q", out)
	}
	status := c.ok("rollout", "status", "deployment/nginx-deployment")
	if !strings.Contains(status, `Waiting for deployment "nginx-deployment" rollout to finish: 2 out of 3 new replicas have been updated...`) ||
		!strings.HasSuffix(status, "deployment \"nginx-deployment\" successfully rolled out\n") {
		t.Errorf("rollout status:\n%s", status)
	}
	for _, l := range strings.Split(strings.TrimSpace(status), "\n") {
		if strings.Count(status, l+"\n") != 1 {
			t.Errorf("rollout status printed %q more than once", l)
		}
	}
	cur := c.rsByImage()["nginx:1.16.1"]
	rs := c.rsCounts()
	wantRS(t, rs, cur, [3]int{3, 3, 3})
	wantRS(t, rs, old, [3]int{0, 0, 0})
	evs := c.events("nginx-deployment")
	want := []string{
		"ScalingReplicaSet: Scaled up replica set " + old + " from 0 to 3",
		"ScalingReplicaSet: Scaled up replica set " + cur + " from 0 to 1",
		"ScalingReplicaSet: Scaled down replica set " + old + " from 3 to 2",
		"ScalingReplicaSet: Scaled up replica set " + cur + " from 1 to 2",
		"ScalingReplicaSet: Scaled down replica set " + old + " from 2 to 1",
		"ScalingReplicaSet: Scaled up replica set " + cur + " from 2 to 3",
		"ScalingReplicaSet: Scaled down replica set " + old + " from 1 to 0",
	}
	if !reflect.DeepEqual(evs, want) {
		t.Errorf("events:\n%s\nwant (the seed's):\n%s", strings.Join(evs, "\n"), strings.Join(want, "\n"))
	}
	if got := c.conditions("nginx-deployment"); got["Available"] != "True MinimumReplicasAvailable" || got["Progressing"] != "True NewReplicaSetAvailable" {
		t.Errorf("conditions: %v", got)
	}

	// Rolling back: a typo in the image, a stuck rollout.
	c.ok("set", "image", "deployment/nginx-deployment", "nginx=nginx:1.161")
	out, errOut, code := c.run("rollout", "status", "deployment/nginx-deployment", "--timeout=30s")
	if code != 1 || !strings.Contains(out, "1 out of 3 new replicas have been updated...") || errOut != "error: timed out waiting for the condition\n" {
		t.Errorf("rollout status of the typo: exit %d\n%s%s", code, out, errOut)
	}
	bad := c.rsByImage()["nginx:1.161"]
	rs = c.rsCounts()
	wantRS(t, rs, bad, [3]int{1, 1, 0})
	wantRS(t, rs, cur, [3]int{3, 3, 3})
	wantRS(t, rs, old, [3]int{0, 0, 0})
	if out := c.ok("get", "pods"); !strings.Contains(out, "ImagePullBackOff") && !strings.Contains(out, "ErrImagePull") {
		t.Errorf("get pods: no pod failing to pull:\n%s", out)
	}
	if got := c.conditions("nginx-deployment"); got["Available"] != "True MinimumReplicasAvailable" || got["Progressing"] != "True ReplicaSetUpdated" {
		t.Errorf("conditions of the stuck rollout: %v", got)
	}
	if evs := c.events("nginx-deployment"); evs[len(evs)-1] != "ScalingReplicaSet: Scaled up replica set "+bad+" from 0 to 1" {
		t.Errorf("last event: %q", evs[len(evs)-1])
	}

	// Checking the rollout history.
	hist := c.ok("rollout", "history", "deployment/nginx-deployment")
	if hist != "deployment.apps/nginx-deployment \nREVISION  CHANGE-CAUSE\n1         <none>\n2         <none>\n3         <none>\n\n" {
		t.Errorf("rollout history:\n%q", hist)
	}
	c.ok("annotate", "deployment/nginx-deployment", `kubernetes.io/change-cause=image updated to 1.16.1`)
	c.ok("clock", "advance", "1s")
	if hist := c.ok("rollout", "history", "deployment/nginx-deployment"); !strings.Contains(hist, "3         image updated to 1.16.1\n") {
		t.Errorf("rollout history after annotate:\n%s", hist)
	}
	rev2 := c.ok("rollout", "history", "deployment/nginx-deployment", "--revision=2")
	for _, w := range []string{"deployment.apps/nginx-deployment with revision #2\nPod Template:\n", "app=nginx", "pod-template-hash=" + strings.TrimPrefix(cur, "nginx-deployment-"), "Image:         nginx:1.16.1", "Port:          80/TCP"} {
		if !strings.Contains(rev2, w) {
			t.Errorf("rollout history --revision=2: no %q in\n%s", w, rev2)
		}
	}
	if _, errOut, code := c.run("rollout", "history", "deployment/nginx-deployment", "--revision=9"); code != 1 || errOut != "error: unable to find the specified revision\n" {
		t.Errorf("history --revision=9: exit %d %q", code, errOut)
	}

	// Rolling back to a previous revision.
	out, errOut, _ = c.run("rollout", "undo", "deployment/nginx-deployment")
	if out != "deployment.apps/nginx-deployment rolled back\n" || !strings.HasPrefix(errOut, "Warning: resource deployments/nginx-deployment was previously managed with 'konverge apply'.") {
		t.Errorf("rollout undo: %q %q", out, errOut)
	}
	c.ok("rollout", "status", "deployment/nginx-deployment")
	if got := c.deployRow("nginx-deployment"); got != [3]string{"3/3", "3", "3"} {
		t.Errorf("get deploy after undo: %v", got)
	}
	rs = c.rsCounts()
	wantRS(t, rs, cur, [3]int{3, 3, 3})
	wantRS(t, rs, bad, [3]int{0, 0, 0})
	evs = c.events("nginx-deployment")
	if !contains(evs, `DeploymentRollback: Rolled back deployment "nginx-deployment" to revision 2`) ||
		!contains(evs, "ScalingReplicaSet: Scaled down replica set "+bad+" from 1 to 0") {
		t.Errorf("events after undo:\n%s", strings.Join(evs, "\n"))
	}
	if hist := c.ok("rollout", "history", "deployment/nginx-deployment"); !strings.Contains(hist, "\n1  ") || strings.Contains(hist, "\n2  ") || !strings.Contains(hist, "\n4  ") {
		t.Errorf("history after undo (revision 2 becomes 4):\n%s", hist)
	}
	// Undo to the revision that is live is skipped; to a missing one fails.
	if out := c.ok("rollout", "undo", "deployment/nginx-deployment", "--to-revision=4"); out != "deployment.apps/nginx-deployment skipped rollback (current template already matches revision 4)\n" {
		t.Errorf("undo to the live revision: %q", out)
	}
	if _, errOut, code := c.run("rollout", "undo", "deployment/nginx-deployment", "--to-revision=2"); code != 1 || errOut == "" || !strings.Contains(errOut, "error: unable to find specified revision 2 in history") {
		t.Errorf("undo --to-revision=2: exit %d %q", code, errOut)
	}
	c.ok("rollout", "undo", "deployment/nginx-deployment", "--to-revision=1")
	c.ok("rollout", "status", "deployment/nginx-deployment")
	rs = c.rsCounts()
	wantRS(t, rs, old, [3]int{3, 3, 3})
	wantRS(t, rs, cur, [3]int{0, 0, 0})
	c.golden("create-update-rollback")
}

// TestSeedDeploymentRollover: an update in the middle of a rollout stops
// the ReplicaSet being scaled up and rolls over to the newest one.
func TestSeedDeploymentRollover(t *testing.T) {
	t.Parallel()
	c := newSeedCluster(t)
	c.ok("apply", "-f", c.file("d.yaml", fmt.Sprintf(seedNginx, "nginx-deployment", 5)))
	c.ok("rollout", "status", "deployment/nginx-deployment")
	c.ok("set", "image", "deployment/nginx-deployment", "nginx=nginx:1.16.1")
	c.ok("clock", "advance", "1s")
	mid := c.rsByImage()["nginx:1.16.1"]
	if got := c.rsCounts()[mid]; got[0] == 0 || got[0] == 5 {
		t.Fatalf("%s mid-rollout: %v", mid, got)
	}
	c.ok("set", "image", "deployment/nginx-deployment", "nginx=nginx:1.17")
	c.ok("rollout", "status", "deployment/nginx-deployment")
	last := c.rsByImage()["nginx:1.17"]
	rs := c.rsCounts()
	wantRS(t, rs, last, [3]int{5, 5, 5})
	wantRS(t, rs, mid, [3]int{0, 0, 0})
	evs := c.events("nginx-deployment")
	if !contains(evs, "ScalingReplicaSet: Scaled down replica set "+mid+fmt.Sprintf(" from %d to 0", maxScaledUp(evs, mid))) {
		t.Errorf("the rolled-over ReplicaSet %s was not scaled down to 0:\n%s", mid, strings.Join(evs, "\n"))
	}
	c.golden("rollover")
}

// maxScaledUp is the largest size events scaled rs up to.
func maxScaledUp(evs []string, rs string) int {
	re := regexp.MustCompile(`Scaled up replica set ` + regexp.QuoteMeta(rs) + ` from \d+ to (\d+)`)
	n := 0
	for _, e := range evs {
		if m := re.FindStringSubmatch(e); m != nil {
			v, _ := strconv.Atoi(m[1])
			n = max(n, v)
		}
	}
	return n
}

// TestSeedDeploymentProportionalScaling: scaling during a stuck rollout
// spreads the new replicas in proportion (the seed's 10 → 15 with
// maxSurge 3, maxUnavailable 2).
func TestSeedDeploymentProportionalScaling(t *testing.T) {
	t.Parallel()
	c := newSeedCluster(t)
	m := strings.Replace(fmt.Sprintf(seedNginx, "nginx-deployment", 10), "  selector:", "  strategy:\n    rollingUpdate:\n      maxSurge: 3\n      maxUnavailable: 2\n  selector:", 1)
	c.ok("apply", "-f", c.file("d.yaml", m))
	c.ok("rollout", "status", "deployment/nginx-deployment")
	if got := c.deployRow("nginx-deployment"); got != [3]string{"10/10", "10", "10"} {
		t.Errorf("get deploy: %v", got)
	}
	old := c.rsByImage()["nginx:1.14.2"]
	c.ok("set", "image", "deployment/nginx-deployment", "nginx=nginx:sometag")
	c.ok("clock", "advance", "10s")
	bad := c.rsByImage()["nginx:sometag"]
	rs := c.rsCounts()
	wantRS(t, rs, bad, [3]int{5, 5, 0})
	wantRS(t, rs, old, [3]int{8, 8, 8})
	c.ok("scale", "deployment/nginx-deployment", "--replicas=15")
	c.ok("clock", "advance", "1s")
	if got := c.deployRow("nginx-deployment"); got != [3]string{"8/15", "7", "8"} {
		t.Errorf("get deploy after scale: %v, want the seed's READY 8/15, UP-TO-DATE 7, AVAILABLE 8", got)
	}
	c.ok("clock", "advance", "10s")
	rs = c.rsCounts()
	wantRS(t, rs, bad, [3]int{7, 7, 0})
	wantRS(t, rs, old, [3]int{11, 11, 11})
	c.golden("proportional-scaling")
}

// TestSeedDeploymentPauseResume: changes made while paused roll out as one
// new revision on resume; get rs -w shows it.
func TestSeedDeploymentPauseResume(t *testing.T) {
	t.Parallel()
	c := newSeedCluster(t)
	c.ok("apply", "-f", c.file("d.yaml", fmt.Sprintf(seedNginx, "nginx", 3)))
	c.ok("rollout", "status", "deployment/nginx")
	old := c.rsByImage()["nginx:1.14.2"]
	if out := c.ok("rollout", "pause", "deployment/nginx"); out != "deployment.apps/nginx paused\n" {
		t.Errorf("pause: %q", out)
	}
	if _, errOut, code := c.run("rollout", "pause", "deployment/nginx"); code != 1 || errOut != "error: deployments.apps \"nginx\" is already paused\n" {
		t.Errorf("second pause: exit %d %q", code, errOut)
	}
	c.ok("set", "image", "deployment/nginx", "nginx=nginx:1.16.1")
	c.ok("clock", "advance", "30s")
	if hist := c.ok("rollout", "history", "deployment/nginx"); hist != "deployment.apps/nginx \nREVISION  CHANGE-CAUSE\n1         <none>\n\n" {
		t.Errorf("history while paused: %q", hist)
	}
	if rs := c.rsCounts(); len(rs) != 1 || rs[old] != [3]int{3, 3, 3} {
		t.Errorf("get rs while paused: %v", rs)
	}
	if out := c.ok("set", "resources", "deployment/nginx", "-c=nginx", "--limits=cpu=200m,memory=512Mi"); out != "deployment.apps/nginx resource requirements updated\n" {
		t.Errorf("set resources: %q", out)
	}
	if got := c.conditions("nginx"); got["Progressing"] != "Unknown DeploymentPaused" {
		t.Errorf("conditions while paused: %v", got)
	}
	if out := c.ok("rollout", "resume", "deployment/nginx"); out != "deployment.apps/nginx resumed\n" {
		t.Errorf("resume: %q", out)
	}
	if _, errOut, code := c.run("rollout", "resume", "deployment/nginx"); code != 1 || errOut != "error: deployments.apps \"nginx\" is not paused\n" {
		t.Errorf("second resume: exit %d %q", code, errOut)
	}
	watch := c.ok("get", "rs", "-w", "--timeout=10m")
	lines := strings.Split(strings.TrimSpace(watch), "\n")
	if !strings.HasPrefix(lines[0], "NAME ") || len(lines) < 8 {
		t.Errorf("get rs -w:\n%s", watch)
	}
	rs := c.rsCounts()
	if len(rs) != 2 {
		t.Fatalf("one new ReplicaSet for the changes made while paused, got %v", rs)
	}
	cur := c.rsByImage()["nginx:1.16.1"]
	wantRS(t, rs, cur, [3]int{3, 3, 3})
	wantRS(t, rs, old, [3]int{0, 0, 0})
	last := strings.Fields(lines[len(lines)-1])
	if !reflect.DeepEqual(last[1:4], []string{"3", "3", "3"}) && !reflect.DeepEqual(last[1:4], []string{"0", "0", "0"}) {
		t.Errorf("get rs -w ends with %v", last)
	}
	if out := c.quiet("get", "deploy", "nginx", "-o", "yaml"); !strings.Contains(out, "cpu: 200m") || !strings.Contains(out, "memory: 512Mi") {
		t.Errorf("limits not set:\n%s", out)
	}
	if hist := c.ok("rollout", "history", "deployment/nginx"); !strings.HasSuffix(hist, "1         <none>\n2         <none>\n\n") {
		t.Errorf("history after resume: %q", hist)
	}
	// rollout restart: a new revision with the restartedAt annotation.
	if out := c.ok("rollout", "restart", "deployment/nginx"); out != "deployment.apps/nginx restarted\n" {
		t.Errorf("restart: %q", out)
	}
	c.ok("rollout", "status", "deployment/nginx")
	if out := c.quiet("get", "deploy", "nginx", "-o", "yaml"); !strings.Contains(out, "kubectl.kubernetes.io/restartedAt: \"2026-01-01T00:") {
		t.Errorf("no restartedAt annotation:\n%s", out)
	}
	if rs := c.rsCounts(); len(rs) != 3 {
		t.Errorf("restart made no new ReplicaSet: %v", rs)
	}
	c.golden("pause-resume")
}

// TestSeedDeploymentProgressDeadline: a rollout that cannot finish
// exceeds its progress deadline; rollout status exits 1; a good image
// recovers it.
func TestSeedDeploymentProgressDeadline(t *testing.T) {
	t.Parallel()
	c := newSeedCluster(t)
	c.ok("apply", "-f", c.file("d.yaml", fmt.Sprintf(seedNginx, "nginx-deployment", 3)))
	c.ok("rollout", "status", "deployment/nginx-deployment")
	c.ok("patch", "deployment/nginx-deployment", "-p", `{"spec":{"progressDeadlineSeconds":600}}`)
	c.ok("set", "image", "deployment/nginx-deployment", "nginx=nginx:1.161")
	out, errOut, code := c.run("rollout", "status", "deployment/nginx-deployment")
	if code != 1 || errOut != "error: deployment \"nginx-deployment\" exceeded its progress deadline\n" ||
		out != "Waiting for deployment \"nginx-deployment\" rollout to finish: 1 out of 3 new replicas have been updated...\n" {
		t.Errorf("rollout status past the deadline: exit %d\n%s%s", code, out, errOut)
	}
	if out, _ := c.ok("clock"), 0; !strings.HasPrefix(out, "2026-01-01T00:10:") {
		t.Errorf("the deadline passed at %s, want about 10m after the update", out)
	}
	if got := c.conditions("nginx-deployment"); got["Available"] != "True MinimumReplicasAvailable" || got["Progressing"] != "False ProgressDeadlineExceeded" {
		t.Errorf("conditions past the deadline: %v", got)
	}
	c.ok("set", "image", "deployment/nginx-deployment", "nginx=nginx:1.16.1")
	c.ok("rollout", "status", "deployment/nginx-deployment")
	if got := c.conditions("nginx-deployment"); got["Available"] != "True MinimumReplicasAvailable" || got["Progressing"] != "True NewReplicaSetAvailable" {
		t.Errorf("conditions after recovery: %v", got)
	}
	if out := c.ok("wait", "--for=condition=Available", "deployment/nginx-deployment"); out != "deployment.apps/nginx-deployment condition met\n" {
		t.Errorf("wait: %q", out)
	}
	c.golden("progress-deadline")
}

// TestSeedDeploymentHistoryLimit: old ReplicaSets beyond
// revisionHistoryLimit are deleted.
func TestSeedDeploymentHistoryLimit(t *testing.T) {
	t.Parallel()
	c := newSeedCluster(t)
	m := strings.Replace(fmt.Sprintf(seedNginx, "nginx-deployment", 3), "  selector:", "  revisionHistoryLimit: 2\n  selector:", 1)
	c.ok("apply", "-f", c.file("d.yaml", m))
	c.ok("rollout", "status", "deployment/nginx-deployment")
	for _, img := range []string{"nginx:1.15", "nginx:1.16.1", "nginx:1.17", "nginx:1.18"} {
		c.ok("set", "image", "deployment/nginx-deployment", "nginx="+img)
		c.ok("rollout", "status", "deployment/nginx-deployment")
	}
	rs := c.rsCounts()
	if len(rs) != 3 {
		t.Errorf("get rs: want the new ReplicaSet and 2 old ones, got %v", rs)
	}
	wantRS(t, rs, c.rsByImage()["nginx:1.18"], [3]int{3, 3, 3})
	if hist := c.ok("rollout", "history", "deployment/nginx-deployment"); !strings.HasSuffix(hist, "REVISION  CHANGE-CAUSE\n3         <none>\n4         <none>\n5         <none>\n\n") {
		t.Errorf("history: %q", hist)
	}
	c.golden("history-limit")
}

// TestSeedDeploymentRecreate: the Recreate strategy scales the old
// ReplicaSet to 0 before the new one comes up.
func TestSeedDeploymentRecreate(t *testing.T) {
	t.Parallel()
	c := newSeedCluster(t)
	m := strings.Replace(fmt.Sprintf(seedNginx, "nginx-deployment", 3), "  selector:", "  strategy:\n    type: Recreate\n  selector:", 1)
	c.ok("apply", "-f", c.file("d.yaml", m))
	c.ok("rollout", "status", "deployment/nginx-deployment")
	old := c.rsByImage()["nginx:1.14.2"]
	c.ok("set", "image", "deployment/nginx-deployment", "nginx=nginx:1.16.1")
	c.ok("rollout", "status", "deployment/nginx-deployment")
	cur := c.rsByImage()["nginx:1.16.1"]
	evs := c.events("nginx-deployment")
	want := []string{
		"ScalingReplicaSet: Scaled up replica set " + old + " from 0 to 3",
		"ScalingReplicaSet: Scaled down replica set " + old + " from 3 to 0",
		"ScalingReplicaSet: Scaled up replica set " + cur + " from 0 to 3",
	}
	if !reflect.DeepEqual(evs, want) {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(evs, "\n"), strings.Join(want, "\n"))
	}
	c.golden("recreate")
}

func contains(l []string, s string) bool {
	for _, e := range l {
		if e == s {
			return true
		}
	}
	return false
}
