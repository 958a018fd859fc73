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
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/konverge/konverge/clock"
	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/cluster/kube"
	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/internal/golden"
	"github.com/konverge/konverge/internal/realcluster"
	"github.com/konverge/konverge/kubelet"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/sim"
	"github.com/konverge/konverge/value"
)

// embedded runs a scenario on the embedded cluster on a manual clock,
// with the simulation profile of testdata/profile.yaml, which behaves as
// the stand-in kubelet of the recordings.
type embedded struct {
	st  *local.Store
	clk *clock.Clock
	r   *sim.Runner
}

func newEmbedded(t testing.TB) *embedded {
	t.Helper()
	return newEmbeddedWith(t, nil)
}

// newEmbeddedWith is newEmbedded with the nodes given (none: the one
// konverge-node).
func newEmbeddedWith(t testing.TB, nodes []kubelet.NodeSpec) *embedded {
	t.Helper()
	data, err := os.ReadFile("testdata/profile.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := kubelet.ParseProfile(data)
	if err != nil {
		t.Fatal(err)
	}
	p.Nodes = nodes
	// The scenarios without nodes were recorded with the stand-in
	// kubelet, which binds pods without looking at their claims; those
	// with nodes, with kube-scheduler.
	p.SkipVolumeBinding = len(nodes) == 0
	clk := clock.New(clock.Manual, clock.Epoch)
	st, err := local.Open(t.TempDir(), local.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	e := &embedded{st: st, clk: clk, r: sim.New(st, clk, sim.Controllers(p)...)}
	e.r.Warn = func(msg string) { t.Log(msg) }
	// A real cluster's node is there before the scenario starts.
	if _, err := e.r.Settle(context.Background()); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *embedded) cluster() cluster.Interface { return e.st }

func (e *embedded) waitFor(ctx context.Context, cond func() (bool, error), timeout time.Duration) error {
	met, err := e.r.RunUntil(ctx, cond, timeout)
	if err != nil {
		return err
	}
	if !met {
		return fmt.Errorf("not met after %s of cluster time", timeout)
	}
	return nil
}

func (e *embedded) sleep(ctx context.Context, d time.Duration) error { return e.r.Advance(ctx, d) }

func (e *embedded) quiet(rec *recorder) { rec.sync() }

// realDriver runs a scenario on the real control plane, in wall time.
type realDriver struct {
	c *kube.Cluster
}

func (r *realDriver) cluster() cluster.Interface { return r.c }

func (r *realDriver) waitFor(ctx context.Context, cond func() (bool, error), timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		ok, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not met after %s", timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (r *realDriver) sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

func (r *realDriver) quiet(*recorder) { time.Sleep(1500 * time.Millisecond) }

var nsGVK = schema.GVK{Version: "v1", Kind: "Namespace"}

// TestRecordReal plays every scenario on the real control plane
// (KONVERGE_REALCLUSTER, with kube-controller-manager) with the stand-in
// kubelet of scripts/stand-in-kubelet.py, and compares the outcome with
// the golden file, or with -update records it.
func TestRecordReal(t *testing.T) {
	kc := realcluster.Kubeconfig(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is needed for the stand-in kubelet")
	}
	c, err := kube.FromKubeconfig(kc, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range loadScenarios(t) {
		t.Run(sc.Name, func(t *testing.T) {
			// The real controllers' timing varies from run to run (a
			// retried delete, a cache that lags): a scenario fails only
			// when it differs from its recording in every attempt.
			const attempts = 3
			for i := 1; ; i++ {
				got, log := playReal(t, c, kc, sc)
				if golden.Updating() {
					check(t, sc, got)
					return
				}
				diffs := compare(t, sc, got)
				if len(diffs) == 0 {
					return
				}
				msg := fmt.Sprintf("%s differs from the recording of the real cluster (%d differences):\n%s", sc.Name, len(diffs), strings.Join(diffs, "\n"))
				if i == attempts {
					t.Errorf("attempt %d of %d: %s\nstand-in kubelet:\n%s", i, attempts, msg, log)
					return
				}
				t.Logf("attempt %d of %d: %s", i, attempts, msg)
			}
		})
	}
}

// playReal plays sc once on a fresh namespace of the real cluster and
// returns its outcome and the stand-in kubelet's log.
func playReal(t *testing.T, c *kube.Cluster, kc string, sc *Scenario) (*Golden, string) {
	t.Helper()
	ctx := context.Background()
	fresh(ctx, t, c, sc.Name)
	cmd := exec.Command("python3", "../../scripts/stand-in-kubelet.py", sc.Name)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kc)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	got := run(ctx, t, &realDriver{c: c}, sc)
	cmd.Process.Kill()
	cmd.Wait()
	return got, log.String()
}

// fresh deletes the namespace of an earlier run and waits for the
// default ServiceAccount of a new one.
func fresh(ctx context.Context, t *testing.T, c cluster.Interface, ns string) {
	t.Helper()
	if err := c.Delete(ctx, nsGVK, "", ns); err == nil {
		deadline := time.Now().Add(2 * time.Minute)
		for {
			if _, err := c.Get(ctx, nsGVK, "", ns); cluster.IsNotFound(err) {
				break
			}
			// No kubelet finishes the pods of an earlier run.
			if l, err := c.List(ctx, schema.GVK{Version: "v1", Kind: "Pod"}, cluster.InNamespace(ns)); err == nil {
				for _, p := range l.Items {
					c.Delete(ctx, schema.GVK{Version: "v1", Kind: "Pod"}, ns, name(p), cluster.GracePeriod(0))
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("namespace %s not deleted", ns)
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	// The cluster-scoped volumes and classes of an earlier run.
	for _, gvk := range []schema.GVK{pvGVK, {Group: "storage.k8s.io", Version: "v1", Kind: "StorageClass"}} {
		deadline := time.Now().Add(2 * time.Minute)
		for {
			l, err := c.List(ctx, gvk)
			if err != nil {
				t.Fatal(err)
			}
			left := 0
			for _, o := range l.Items {
				if strings.HasPrefix(name(o), ns+"-") {
					left++
					c.Delete(ctx, gvk, "", name(o))
				}
			}
			if left == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%ss of %s not deleted", gvk.Kind, ns)
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	// Their Events (in default).
	if l, err := c.List(ctx, eventGVK, cluster.InNamespace("default")); err == nil {
		for _, e := range l.Items {
			if strings.HasPrefix(str(e, "involvedObject", "name"), ns+"-") {
				c.Delete(ctx, eventGVK, "default", name(e))
			}
		}
	}
	if _, err := c.Create(ctx, map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}); err != nil {
		t.Fatal(err)
	}
	sa := schema.GVK{Version: "v1", Kind: "ServiceAccount"}
	deadline := time.Now().Add(time.Minute)
	for {
		if _, err := c.Get(ctx, sa, ns, "default"); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no default ServiceAccount in %s", ns)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestScenarios replays every recorded scenario on the embedded cluster
// and compares it with the recording, step by step and field by field.
func TestScenarios(t *testing.T) {
	for _, sc := range loadScenarios(t) {
		t.Run(sc.Name, func(t *testing.T) {
			if _, err := os.Stat(goldenPath(sc)); errors.Is(err, os.ErrNotExist) {
				t.Skipf("no recording of %s yet (TestRecordReal -update)", sc.Name)
			}
			got := run(context.Background(), t, newEmbedded(t), sc)
			check(t, sc, got)
		})
	}
}

func goldenPath(sc *Scenario) string {
	dir := sc.dir
	if dir == "" {
		dir = filepath.Join("testdata", "scenarios")
	}
	return filepath.Join(dir, sc.Name+".golden.json")
}

// check compares got with the golden file (or writes it with -update).
func check(t *testing.T, sc *Scenario, got *Golden) {
	t.Helper()
	if golden.Updating() {
		data, err := json.MarshalIndent(got, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		golden.Assert(t, goldenPath(sc), append(data, '\n'))
		return
	}
	if diffs := compare(t, sc, got); len(diffs) > 0 {
		t.Errorf("%s differs from the recording of the real cluster (%d differences):\n%s", sc.Name, len(diffs), strings.Join(diffs, "\n"))
	}
}

// compare lists where got differs from the golden file of sc.
func compare(t *testing.T, sc *Scenario, got *Golden) []string {
	t.Helper()
	data, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	wantData, err := os.ReadFile(goldenPath(sc))
	if err != nil {
		t.Fatal(err)
	}
	// Compare as JSON values (numbers as the value package reads them).
	gv, err := value.DecodeObject(data)
	if err != nil {
		t.Fatal(err)
	}
	wv, err := value.DecodeObject(wantData)
	if err != nil {
		t.Fatalf("%s: %v", goldenPath(sc), err)
	}
	var diffs []string
	gs, _ := gv["steps"].([]any)
	ws, _ := wv["steps"].([]any)
	if len(gs) != len(ws) {
		return []string{fmt.Sprintf("%d steps, want %d", len(gs), len(ws))}
	}
	for _, steps := range [][]any{gs, ws} {
		for _, st := range steps {
			if m, ok := st.(map[string]any); ok {
				if sc.EventsPerObject {
					m["events"] = byInvolvedObject(m["events"])
				}
				m["events"] = onceInARow(m["events"])
			}
		}
	}
	for i := range ws {
		step := ""
		if m, ok := ws[i].(map[string]any); ok {
			step, _ = m["name"].(string)
		}
		diff(&diffs, "step "+step, gs[i], ws[i])
	}
	return diffs
}

// onceInARow counts the same Event text twice in a row once: a real
// controller may report one action twice (a delete retried after a
// conflict, a finished Job seen again before its cache catches up).
func onceInARow(v any) any {
	evs, ok := v.([]any)
	if !ok {
		return v
	}
	var out []any
	for _, e := range evs {
		if n := len(out); n > 0 && e == out[n-1] {
			continue
		}
		out = append(out, e)
	}
	return out
}

// byInvolvedObject orders a step's Event texts ("type reason Kind/name:
// message") by involved object, keeping their order for each object.
func byInvolvedObject(v any) any {
	evs, ok := v.([]any)
	if !ok {
		return v
	}
	involved := func(e any) string {
		s, _ := e.(string)
		if f := strings.Fields(s); len(f) > 2 {
			return f[2]
		}
		return ""
	}
	out := append([]any{}, evs...)
	sort.SliceStable(out, func(i, j int) bool { return involved(out[i]) < involved(out[j]) })
	return out
}

// diff lists the paths where got and want differ.
func diff(out *[]string, path string, got, want any) {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			*out = append(*out, fmt.Sprintf("%s: got %s, want %s", path, encode(got), encode(want)))
			return
		}
		keys := map[string]bool{}
		for k := range w {
			keys[k] = true
		}
		for k := range g {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			diff(out, path+"."+k, g[k], w[k])
		}
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			*out = append(*out, fmt.Sprintf("%s:\n  got  %s\n  want %s", path, encodeList(got), encodeList(want)))
			return
		}
		for i := range w {
			diff(out, fmt.Sprintf("%s[%d]", path, i), g[i], w[i])
		}
	default:
		if !value.Equal(got, want) {
			*out = append(*out, fmt.Sprintf("%s: got %s, want %s", path, encode(got), encode(want)))
		}
	}
}

func encodeList(v any) string {
	l, ok := v.([]any)
	if !ok {
		return encode(v)
	}
	var b strings.Builder
	for _, e := range l {
		b.WriteString("\n    ")
		b.WriteString(encode(e))
	}
	return b.String()
}
