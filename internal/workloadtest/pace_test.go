package workloadtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/cluster/kube"
	"github.com/konverge/konverge/internal/golden"
	"github.com/konverge/konverge/internal/realcluster"
	"github.com/konverge/konverge/schema"
)

// The pace of the controllers: kube-controller-manager gives each of its
// controllers a client limited to 20 requests a second with a burst of 30
// (its --kube-api-qps and --kube-api-burst defaults), so that a
// Deployment of 200 replicas has its pods created over some ten seconds,
// the ReplicaSet controller's Events taking their share of the requests.
// testdata/pace/*.golden.json holds, for each scenario, how many pods the
// real control plane created in each second from the first pod's on
// (creationTimestamp, recorded by TestRecordRealPace with the stand-in
// kubelet); TestPace plays it on the embedded cluster and compares.

// paceScenario is one Deployment whose pods are counted.
type paceScenario struct {
	name     string
	replicas int
}

var paceScenarios = []paceScenario{{name: "pace-200", replicas: 200}}

// Pace is the golden file: pods created per second, from the second of
// the first one.
type Pace struct {
	Replicas  int   `json:"replicas"`
	PerSecond []int `json:"perSecond"`
}

func (sc paceScenario) golden() string { return "testdata/pace/" + sc.name + ".golden.json" }

func (sc paceScenario) deployment() map[string]any {
	labels := map[string]any{"app": sc.name}
	return map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata":   map[string]any{"name": sc.name, "namespace": sc.name},
		"spec": map[string]any{
			"replicas": int64(sc.replicas),
			"selector": map[string]any{"matchLabels": labels},
			"template": map[string]any{
				"metadata": map[string]any{"labels": labels},
				"spec": map[string]any{"containers": []any{map[string]any{
					"name": "app", "image": "nginx:1.27",
				}}},
			},
		},
	}
}

// playPace creates the scenario's Deployment on d (its namespace exists)
// and returns the pace at which its pods were created.
func playPace(ctx context.Context, t testing.TB, d driver, sc paceScenario) Pace {
	t.Helper()
	c := d.cluster()
	if _, err := c.Create(ctx, sc.deployment()); err != nil {
		t.Fatalf("%s: create the Deployment: %v", sc.name, err)
	}
	podGVK := schema.GVK{Version: "v1", Kind: "Pod"}
	var pods []cluster.Object
	all := func() (bool, error) {
		l, err := c.List(ctx, podGVK, cluster.InNamespace(sc.name))
		if err != nil {
			return false, err
		}
		pods = l.Items
		return len(pods) >= sc.replicas, nil
	}
	if err := d.waitFor(ctx, all, 2*time.Minute); err != nil {
		t.Fatalf("%s: %d of %d pods: %v", sc.name, len(pods), sc.replicas, err)
	}
	return paceOf(t, pods)
}

// paceOf counts the pods created in each second from the first's.
func paceOf(t testing.TB, pods []cluster.Object) Pace {
	t.Helper()
	var times []time.Time
	for _, p := range pods {
		ts, err := time.Parse(time.RFC3339, str(p, "metadata", "creationTimestamp"))
		if err != nil {
			t.Fatalf("pod %s: creationTimestamp: %v", name(p), err)
		}
		times = append(times, ts)
	}
	sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
	out := Pace{Replicas: len(pods)}
	for _, ts := range times {
		s := int(ts.Sub(times[0]) / time.Second)
		for len(out.PerSecond) <= s {
			out.PerSecond = append(out.PerSecond, 0)
		}
		out.PerSecond[s]++
	}
	return out
}

// paceTolerance is how far the embedded cluster's pace may stray from the
// real one, in pods created so far at any second: the real controller's
// first sync starts anywhere within a second (the embedded one's at its
// start) and its Events are sent asynchronously, which moves up to a
// second's share of the first pods from one second to the next.
const paceTolerance = 15

// comparePace lists how got differs from want: the seconds the creation
// took (one more or less is the phase of the first second), and the pods
// created by the end of each second.
func comparePace(got, want Pace) []string {
	var diffs []string
	if got.Replicas != want.Replicas {
		diffs = append(diffs, fmt.Sprintf("%d pods, want %d", got.Replicas, want.Replicas))
	}
	if d := len(got.PerSecond) - len(want.PerSecond); d < -1 || d > 1 {
		diffs = append(diffs, fmt.Sprintf("the pods were created over %d seconds, want %d (±1)", len(got.PerSecond), len(want.PerSecond)))
	}
	var g, w int
	for s := range max(len(got.PerSecond), len(want.PerSecond)) {
		if s < len(got.PerSecond) {
			g += got.PerSecond[s]
		}
		if s < len(want.PerSecond) {
			w += want.PerSecond[s]
		}
		if g-w > paceTolerance || w-g > paceTolerance {
			diffs = append(diffs, fmt.Sprintf("by second %d: %d pods created, want %d (±%d)", s, g, w, paceTolerance))
		}
	}
	return diffs
}

func readPace(t testing.TB, sc paceScenario) Pace {
	t.Helper()
	data, err := os.ReadFile(sc.golden())
	if err != nil {
		t.Fatalf("%v (TestRecordRealPace -update records it)", err)
	}
	var p Pace
	if err := json.Unmarshal(data, &p); err != nil {
		t.Fatalf("%s: %v", sc.golden(), err)
	}
	return p
}

// TestPace creates each pace scenario's Deployment on the embedded cluster
// and compares the pace of its pods with the real control plane's.
func TestPace(t *testing.T) {
	for _, sc := range paceScenarios {
		t.Run(sc.name, func(t *testing.T) {
			want := readPace(t, sc)
			ctx := context.Background()
			e := newEmbedded(t)
			if _, err := e.st.Create(ctx, map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": sc.name}}); err != nil {
				t.Fatal(err)
			}
			got := playPace(ctx, t, e, sc)
			t.Logf("pods per second %v, the real control plane's %v", got.PerSecond, want.PerSecond)
			if diffs := comparePace(got, want); len(diffs) > 0 {
				t.Errorf("%s: pods per second %v, the real control plane's %v:\n%s", sc.name, got.PerSecond, want.PerSecond, strings.Join(diffs, "\n"))
			}
		})
	}
}

// TestRecordRealPace plays the pace scenarios on the real control plane
// (KONVERGE_REALCLUSTER, with kube-controller-manager) with the stand-in
// kubelet, and compares them with their recordings, or with -update
// records them.
func TestRecordRealPace(t *testing.T) {
	kc := realcluster.Kubeconfig(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is needed for the stand-in kubelet")
	}
	c, err := kube.FromKubeconfig(kc, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range paceScenarios {
		t.Run(sc.name, func(t *testing.T) {
			ctx := context.Background()
			const attempts = 3
			for i := 1; ; i++ {
				fresh(ctx, t, c, sc.name)
				cmd := exec.Command("python3", "../../scripts/stand-in-kubelet.py", sc.name)
				cmd.Env = append(os.Environ(), "KUBECONFIG="+kc)
				var log bytes.Buffer
				cmd.Stdout, cmd.Stderr = &log, &log
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				got := playPace(ctx, t, &realDriver{c: c}, sc)
				cmd.Process.Kill()
				cmd.Wait()
				t.Logf("attempt %d: pods per second %v", i, got.PerSecond)
				if golden.Updating() {
					data, _ := json.MarshalIndent(got, "", "  ")
					golden.Assert(t, sc.golden(), append(data, '\n'))
					return
				}
				diffs := comparePace(got, readPace(t, sc))
				if len(diffs) == 0 {
					return
				}
				if i == attempts {
					t.Errorf("attempt %d of %d: %s differs from its recording:\n%s", i, attempts, sc.name, strings.Join(diffs, "\n"))
					return
				}
			}
		})
	}
}
