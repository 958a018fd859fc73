package clicheck

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/konverge/konverge/internal/cli"
	"github.com/konverge/konverge/kubelet"
)

// dir is where the scenarios and their golden files are, relative to this
// package.
const dir = "../../testdata/kubectl"

// knownFile lists the checks known to differ from kubectl, one
// "scenario: $ command" per line; the test fails when any other check
// differs, and when a listed one no longer does.
const knownFile = "known-differences.list"

// updatingKnown reports whether the test rewrites knownFile with the
// checks that differ (KONVERGE_CLICHECK_KNOWN=update).
func updatingKnown() bool { return os.Getenv("KONVERGE_CLICHECK_KNOWN") == "update" }

func readKnown(path string) (map[string]bool, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return map[string]bool{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			out[l] = true
		}
	}
	return out, nil
}

func writeKnown(path string, ids []string) error {
	var b strings.Builder
	b.WriteString("# Checks of testdata/kubectl whose konverge output differs from kubectl's\n")
	b.WriteString("# (rewritten by KONVERGE_CLICHECK_KNOWN=update go test ./internal/clicheck).\n")
	for _, id := range ids {
		b.WriteString(id + "\n")
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// runFunc runs one command line of a scenario.
type runFunc func(t *testing.T, st step) result

// mode is how the scenarios run: "" replays them through konverge on the
// embedded cluster against the golden files; "record" runs them through
// kubectl on a fresh real control plane per scenario and rewrites the
// golden files; "real" runs them through konverge --kubeconfig on a fresh
// real control plane per scenario and compares with the golden files.
func mode() string { return os.Getenv("KONVERGE_CLICHECK") }

// TestKubectlChecks compares konverge's output with kubectl's recorded
// output, check by check.
func TestKubectlChecks(t *testing.T) {
	scs, err := loadScenarios(dir)
	if err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(abs)
	known, err := readKnown(filepath.Join(abs, knownFile))
	if err != nil {
		t.Fatal(err)
	}
	total, same := 0, 0
	var failed []string
	for _, sc := range scs {
		t.Run(sc.name, func(t *testing.T) {
			var run runFunc
			switch mode() {
			case "":
				run = embedded(t, sc)
			case "record":
				run = kubectl(t, sc)
			case "real":
				run = konvergeReal(t, sc)
			default:
				t.Fatalf("KONVERGE_CLICHECK=%q: want record or real", mode())
			}
			var got bytes.Buffer
			var blocks []string
			// checkID names a check in knownFile; a command repeated in
			// a scenario gets its occurrence number.
			seenCmd := map[string]int{}
			checkID := func(text string) string {
				seenCmd[text]++
				if n := seenCmd[text]; n > 1 {
					return fmt.Sprintf("%s: $ %s (%d)", sc.name, text, n)
				}
				return sc.name + ": $ " + text
			}
			var ids []string
			for i, st := range sc.steps {
				r := run(t, st)
				if !st.check {
					if r.code != 0 || r.interrupted {
						msg := fmt.Sprintf("%s.txt:%d: step %q failed (exit %d):\n%s%s", sc.name, st.line, st.text, r.code, r.stdout, r.stderr)
						if mode() != "" {
							t.Fatal(msg)
						}
						// The checks after a failed step count as differing.
						for _, c := range sc.steps[i:] {
							if !c.check {
								continue
							}
							total++
							id := checkID(c.text)
							failed = append(failed, id)
							if !known[id] {
								t.Errorf("%s: not run: %s", id, msg)
							}
						}
						return
					}
					continue
				}
				// Paths of this checkout differ from the recording's.
				r.stdout = strings.ReplaceAll(r.stdout, abs, "$TESTDATA")
				r.stderr = strings.ReplaceAll(r.stderr, abs, "$TESTDATA")
				var b bytes.Buffer
				render(&b, sc, st, r)
				ids = append(ids, checkID(st.text))
				got.Write(b.Bytes())
				blocks = append(blocks, b.String())
			}
			golden := filepath.Join(abs, sc.name+".golden")
			if mode() == "record" {
				if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (record it with scripts/record-kubectl-checks.sh)", err)
			}
			wantBlocks := splitGolden(string(want))
			if len(wantBlocks) != len(blocks) {
				t.Fatalf("%s.golden has %d checks, the scenario %d: record it again", sc.name, len(wantBlocks), len(blocks))
			}
			for i, b := range blocks {
				total++
				id := ids[i]
				if comparable(b) == comparable(wantBlocks[i]) {
					same++
					if known[id] && mode() == "" && !updatingKnown() {
						t.Errorf("%s is listed in %s but is now identical to kubectl: remove it from the list", id, knownFile)
					}
					continue
				}
				failed = append(failed, id)
				if known[id] && mode() == "" {
					if os.Getenv("KONVERGE_CLICHECK_VERBOSE") != "" {
						t.Logf("known difference:\n--- konverge\n%s--- kubectl\n%s", b, wantBlocks[i])
					}
					continue
				}
				t.Errorf("check differs from kubectl:\n--- konverge\n%s--- kubectl\n%s", b, wantBlocks[i])
			}
		})
	}
	if mode() != "record" {
		t.Logf("%d of %d checks identical to kubectl", same, total)
		for _, f := range failed {
			t.Logf("differs: %s", f)
		}
	}
	if mode() == "" && updatingKnown() {
		if err := writeKnown(filepath.Join(abs, knownFile), failed); err != nil {
			t.Fatal(err)
		}
	}
}

// stdinOf reads a step's standard input.
func stdinOf(t *testing.T, st step) []byte {
	if st.stdin == "" {
		return nil
	}
	b, err := os.ReadFile(st.stdin)
	if err != nil {
		t.Fatalf("line %d: %v", st.line, err)
	}
	return b
}

// runKonverge runs konverge in this process with args.
func runKonverge(ctx context.Context, args []string, stdin []byte) result {
	var out, errOut bytes.Buffer
	cmd := cli.NewRootCmd(cli.Streams{In: bytes.NewReader(stdin), Out: &out, ErrOut: &errOut})
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(ctx)
	code := 0
	if err != nil {
		code = 1
		var exit *cli.ExitError
		if errors.As(err, &exit) {
			code = exit.Code
			if exit.Err != nil {
				fmt.Fprintln(&errOut, "error:", exit.Err)
			}
		} else {
			fmt.Fprintln(&errOut, "error:", err)
		}
	}
	return result{stdout: out.String(), stderr: errOut.String(), code: code, interrupted: ctx.Err() != nil}
}

// embedded runs the steps through konverge on a new embedded cluster with
// a manual clock.
func embedded(t *testing.T, sc scenario) runFunc {
	state := t.TempDir()
	initArgs := []string{"--state", state, "cluster", "init", "--clock=manual"}
	if sc.profile != "" {
		initArgs = append(initArgs, "--sim-profile", sc.profile)
	}
	if r := runKonverge(context.Background(), initArgs, nil); r.code != 0 {
		t.Fatalf("cluster init: %s", r.stderr)
	}
	return func(t *testing.T, st step) result {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if st.interrupt > 0 {
			ctx, cancel = context.WithTimeout(ctx, st.interrupt)
			defer cancel()
		}
		return runKonverge(ctx, append([]string{"--state", state}, st.args...), stdinOf(t, st))
	}
}

// freshCluster starts a new real control plane for sc with
// scripts/realcluster.sh (in REALCLUSTER_HOME) and returns its kubeconfig.
func freshCluster(t *testing.T, sc scenario) (home, kubeconfig string) {
	home = os.Getenv("REALCLUSTER_HOME")
	if home == "" {
		t.Fatal("REALCLUSTER_HOME must name the real control plane's directory (see scripts/realcluster.sh)")
	}
	script, err := filepath.Abs("../../scripts/realcluster.sh")
	if err != nil {
		t.Fatal(err)
	}
	down := exec.Command(script, "down")
	_ = down.Run()
	args := []string{"up"}
	if sc.controllers {
		args = append(args, "--with-controllers")
	}
	if sc.profile != "" {
		args = append(args, "--with-scheduler")
	}
	up := exec.Command(script, args...)
	if out, err := up.CombinedOutput(); err != nil {
		t.Fatalf("realcluster.sh up: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command(script, "down").Run() })
	kc := filepath.Join(home, "kubeconfig")
	if sc.profile != "" {
		startNodes(t, sc.profile, kc, filepath.Join(home, "bin", "kubectl"))
	}
	return home, kc
}

// startNodes runs scripts/multinode-kubelet.py for the nodes of a
// simulation profile (the pods of namespace default) until the test
// ends, once every node is registered.
func startNodes(t *testing.T, profile, kc, kubectl string) {
	data, err := os.ReadFile(profile)
	if err != nil {
		t.Fatal(err)
	}
	p, err := kubelet.ParseProfile(data)
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := json.Marshal(p.Nodes)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "nodes.json")
	if err := os.WriteFile(file, nodes, 0o600); err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs("../../scripts/multinode-kubelet.py")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("python3", script, file, "default")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kc)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	for deadline := time.Now().Add(time.Minute); ; {
		out, _ := exec.Command(kubectl, "--kubeconfig", kc, "get", "nodes", "-o", "name").Output()
		if strings.Count(string(out), "\n") == len(p.Nodes) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the nodes of %s did not register:\n%s", profile, log.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	// A moment for kube-scheduler's cache.
	time.Sleep(2 * time.Second)
}

// kubectl runs the steps through the real kubectl on a fresh control plane.
func kubectl(t *testing.T, sc scenario) runFunc {
	home, kc := freshCluster(t, sc)
	bin := filepath.Join(home, "bin", "kubectl")
	return func(t *testing.T, st step) result {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, st.args...)
		cmd.Env = append(os.Environ(), "KUBECONFIG="+kc)
		cmd.Stdin = bytes.NewReader(stdinOf(t, st))
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if st.interrupt > 0 {
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			time.AfterFunc(st.interrupt, func() { _ = cmd.Process.Signal(os.Interrupt) })
			_ = cmd.Wait()
			return result{stdout: out.String(), stderr: errOut.String(), interrupted: true}
		}
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("line %d: %v", st.line, err)
		}
		return result{stdout: out.String(), stderr: errOut.String(), code: code}
	}
}

// konvergeReal runs the steps through konverge --kubeconfig on a fresh
// control plane.
func konvergeReal(t *testing.T, sc scenario) runFunc {
	_, kc := freshCluster(t, sc)
	return func(t *testing.T, st step) result {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if st.interrupt > 0 {
			ctx, cancel = context.WithTimeout(ctx, st.interrupt)
			defer cancel()
		}
		return runKonverge(ctx, append([]string{"--kubeconfig", kc}, st.args...), stdinOf(t, st))
	}
}
