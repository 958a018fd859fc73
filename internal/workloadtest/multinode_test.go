package workloadtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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

// The scheduling scenarios of testdata/multinode: each declares its
// nodes; the embedded cluster runs them as its simulation profile's
// nodes:, the real control plane (with kube-scheduler) through
// scripts/multinode-kubelet.py, which registers them and runs the pods
// kube-scheduler binds.

const multinodeDir = "testdata/multinode"

var nodeGVK = schema.GVK{Version: "v1", Kind: "Node"}

// TestMultinodeScenarios replays every recorded scheduling scenario on
// the embedded cluster and compares it with the recording.
func TestMultinodeScenarios(t *testing.T) {
	for _, sc := range loadScenariosIn(t, multinodeDir) {
		t.Run(sc.Name, func(t *testing.T) {
			if _, err := os.Stat(goldenPath(sc)); errors.Is(err, os.ErrNotExist) {
				t.Skipf("no recording of %s yet (TestRecordRealMultinode -update)", sc.Name)
			}
			got := run(context.Background(), t, newEmbeddedWith(t, sc.Nodes), sc)
			check(t, sc, tiedNodes(sc, got))
		})
	}
}

// TestRecordRealMultinode plays the scheduling scenarios on the real
// control plane (KONVERGE_REALCLUSTER, started with --with-controllers
// --with-scheduler) and compares them with their recordings, or with
// -update records them.
func TestRecordRealMultinode(t *testing.T) {
	kc := realcluster.Kubeconfig(t)
	realcluster.RequireScheduler(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is needed for multinode-kubelet.py")
	}
	c, err := kube.FromKubeconfig(kc, "")
	if err != nil {
		t.Fatal(err)
	}
	all := loadScenariosIn(t, multinodeDir)
	for _, sc := range all {
		t.Run(sc.Name, func(t *testing.T) {
			// The pods of the other scenarios would hold room on nodes
			// of the same names, and their controllers (a DaemonSet, a
			// Deployment) would make more: their namespaces go.
			for _, other := range all {
				if other.Name != sc.Name {
					dropNamespace(context.Background(), t, c, other.Name)
				}
				clearPods(context.Background(), t, c, other.Name)
			}
			const attempts = 3
			for i := 1; ; i++ {
				got, log := playRealMultinode(t, c, kc, sc)
				got = tiedNodes(sc, got)
				if golden.Updating() {
					check(t, sc, got)
					return
				}
				diffs := compare(t, sc, got)
				if len(diffs) == 0 {
					return
				}
				msg := sc.Name + " differs from the recording of the real cluster:\n" + strings.Join(diffs, "\n")
				if i == attempts {
					t.Errorf("attempt %d of %d: %s\nmultinode kubelet:\n%s", i, attempts, msg, log)
					return
				}
				t.Logf("attempt %d of %d: %s", i, attempts, msg)
			}
		})
	}
}

func playRealMultinode(t *testing.T, c *kube.Cluster, kc string, sc *Scenario) (*Golden, string) {
	t.Helper()
	ctx := context.Background()
	removeNodes(ctx, t, c)
	fresh(ctx, t, c, sc.Name)
	nodes, err := json.Marshal(sc.Nodes)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "nodes.json")
	if err := os.WriteFile(file, nodes, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("python3", "../../scripts/multinode-kubelet.py", file, sc.Name)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kc)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
		removeNodes(ctx, t, c)
	}()
	// Every node registered, and a moment for kube-scheduler's cache.
	deadline := time.Now().Add(time.Minute)
	for {
		l, err := c.List(ctx, nodeGVK)
		if err == nil && len(l.Items) == len(sc.Nodes) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the nodes did not register:\n%s", log.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(2 * time.Second)
	got := run(ctx, t, &realDriver{c: c}, sc)
	return got, log.String()
}

// removeNodes deletes every Node (those of an earlier scenario, the
// stand-in kubelet's).
func removeNodes(ctx context.Context, t *testing.T, c cluster.Interface) {
	t.Helper()
	l, err := c.List(ctx, nodeGVK)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range l.Items {
		if err := c.Delete(ctx, nodeGVK, "", name(n)); err != nil && !cluster.IsNotFound(err) {
			t.Fatal(err)
		}
	}
}

// dropNamespace deletes namespace ns (without waiting for it to go).
func dropNamespace(ctx context.Context, t *testing.T, c cluster.Interface, ns string) {
	t.Helper()
	if err := c.Delete(ctx, nsGVK, "", ns); err != nil && !cluster.IsNotFound(err) && !cluster.IsConflict(err) {
		t.Fatal(err)
	}
}

// clearPods deletes the pods of namespace ns at once.
func clearPods(ctx context.Context, t *testing.T, c cluster.Interface, ns string) {
	t.Helper()
	podGVK := schema.GVK{Version: "v1", Kind: "Pod"}
	l, err := c.List(ctx, podGVK, cluster.InNamespace(ns))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range l.Items {
		if err := c.Delete(ctx, podGVK, ns, name(p), cluster.GracePeriod(0)); err != nil && !cluster.IsNotFound(err) {
			t.Fatal(err)
		}
	}
}

// generatedNumber is the number the masker gives a generated name
// ("web-5d4f8b7c9f-#3").
var generatedNumber = regexp.MustCompile(`#[0-9]+`)

// tiedNodes, for a scenario that asks for it, forgets which pod of a
// generated name runs where and keeps how many run on each node: the
// pods lose their names and nodes (podsPerNode counts them), the
// generated names in ops and Events lose their numbers, and both are
// compared as sets. kube-scheduler picks among equally good nodes at
// random, and the DaemonSet controller creates its pods in no fixed
// order; the counts are what they decide.
func tiedNodes(sc *Scenario, g *Golden) *Golden {
	if !sc.TiedNodes {
		return g
	}
	for i := range g.Steps {
		st := &g.Steps[i]
		perNode := map[string]int{}
		var pods []map[string]any
		for _, p := range st.Objects["pods"] {
			n, _ := p["name"].(string)
			if !generatedNumber.MatchString(n) {
				pods = append(pods, p)
				continue
			}
			q := map[string]any{}
			for k, v := range p {
				q[k] = v
			}
			node, _ := q["node"].(string)
			perNode[node]++
			delete(q, "name")
			delete(q, "node")
			pods = append(pods, q)
		}
		sort.SliceStable(pods, func(a, b int) bool { return encode(pods[a]) < encode(pods[b]) })
		if len(pods) > 0 {
			st.Objects["pods"] = pods
		}
		if len(perNode) > 0 {
			var counts []map[string]any
			for node, n := range perNode {
				counts = append(counts, map[string]any{"node": node, "pods": n})
			}
			sort.Slice(counts, func(a, b int) bool { return fmt.Sprint(counts[a]["node"]) < fmt.Sprint(counts[b]["node"]) })
			st.Objects["podsPerNode"] = counts
		}
		for _, l := range []*[]string{&st.Ops, &st.Events} {
			for j, s := range *l {
				(*l)[j] = generatedNumber.ReplaceAllString(s, "#*")
			}
			sort.Strings(*l)
		}
	}
	return g
}
