package fidelity

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/konverge/konverge/internal/cli"
	"github.com/konverge/konverge/value"
)

const root = "../../testdata/fidelity"

// TestEmbeddedMatchesRealServer runs every case of the corpus against the
// embedded cluster and compares each command's exit code, output and
// printed objects with what the real control plane answered. A case listed
// in testdata/fidelity/known-differences must differ (remove it once it
// does not); every other case must be identical.
func TestEmbeddedMatchesRealServer(t *testing.T) {
	cases, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	known, err := knownDifferences(filepath.Join(root, "known-differences"))
	if err != nil {
		t.Fatal(err)
	}
	identical := map[string]int{}
	total := map[string]int{}
	var mismatched []string
	for _, c := range cases {
		golden, err := os.ReadFile(GoldenPath(root, c))
		if err != nil {
			t.Errorf("%s: no recording (go run ./internal/fidelity/record -run '^%s$'): %v", c.Name, c.Name, err)
			continue
		}
		group, _, _ := strings.Cut(c.Name, "/")
		total[group]++
		t.Run(c.Name, func(t *testing.T) {
			diffs := runCase(t, c, golden)
			_, isKnown := known[c.Name]
			switch {
			case len(diffs) == 0 && isKnown:
				t.Errorf("identical now: remove %s from testdata/fidelity/known-differences", c.Name)
			case len(diffs) == 0:
				identical[group]++
			case isKnown:
				mismatched = append(mismatched, c.Name)
				t.Logf("known difference (%s):\n  %s", known[c.Name], strings.Join(diffs, "\n  "))
			default:
				mismatched = append(mismatched, c.Name)
				t.Errorf("differs from the real API server:\n  %s", strings.Join(diffs, "\n  "))
			}
		})
	}
	var parts []string
	for _, g := range Groups {
		if total[g] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d/%d", g, identical[g], total[g]))
		}
	}
	t.Logf("identical to the real API server: %s", strings.Join(parts, ", "))
}

// runCase runs the steps of c in a fresh embedded cluster and returns how
// the outcomes differ from the recording.
func runCase(t *testing.T, c Case, golden []byte) []string {
	wantV, err := value.Decode(golden)
	if err != nil {
		t.Fatalf("golden file: %v", err)
	}
	want, _ := wantV.(map[string]any)
	wantSteps, _ := want["steps"].([]any)
	state := t.TempDir()
	var got []any
	var run [][]string
	for _, args := range c.Steps {
		if args[0] == Sleep {
			if SleepAdvances(args) {
				if _, stderr, code := konverge(t, state, c.Dir, []string{"clock", "advance", args[1] + "s"}); code != 0 {
					t.Fatalf("clock advance %ss: %s", args[1], stderr)
				}
			}
			continue
		}
		expanded, err := Expand(args, func(resource, name, namespace string) (string, error) {
			get := []string{"get", resource, name, "-o", "jsonpath={.metadata.uid}"}
			if namespace != "" {
				get = append(get, "-n", namespace)
			}
			out, stderr, code := konverge(t, state, c.Dir, get)
			if code != 0 {
				return "", errors.New(stderr)
			}
			return out, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		run = append(run, args)
		stdout, stderr, code := konverge(t, state, c.Dir, expanded)
		step, err := Outcome(args, code, stdout, stderr)
		if err != nil {
			t.Fatal(err)
		}
		data, err := Encode(Recording{Steps: []Step{step}})
		if err != nil {
			t.Fatal(err)
		}
		v, err := value.Decode(data)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, v.(map[string]any)["steps"].([]any)[0])
	}
	var diffs []string
	if len(got) != len(wantSteps) {
		return []string{fmt.Sprintf("%d steps recorded, %d run (record the case again)", len(wantSteps), len(got))}
	}
	for i := range got {
		for _, d := range Diff(comparable(wantSteps[i]), comparable(got[i])) {
			diffs = append(diffs, fmt.Sprintf("step %d (%s): %s", i+1, strings.Join(run[i], " "), d))
		}
	}
	return diffs
}

// comparable is a step as compared: error lines reduced to the API
// server's message, without the prefix each client words its own way
// (kubectl's `Error from server (Forbidden): error when creating "f.yaml": `,
// konverge's `error: apply: f.yaml#1 (line 1) pod/web: `).
func comparable(step any) any {
	m, ok := step.(map[string]any)
	if !ok {
		return step
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	if s, ok := m["stderr"].(string); ok {
		lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
		for i, l := range lines {
			lines[i] = serverMessage(l)
		}
		out["stderr"] = strings.Join(lines, "\n")
	}
	return out
}

var (
	kubectlPrefix  = regexp.MustCompile(`^Error from server \([A-Za-z]+\): (error when [a-z ]+ "[^"]*": )?`)
	konvergePrefix = regexp.MustCompile(`^error: (apply|create|replace|delete|patch): \S+#\d+ \(line \d+\) \S+: `)
)

func serverMessage(line string) string {
	if m := kubectlPrefix.FindString(line); m != "" {
		return strings.TrimPrefix(line, m)
	}
	if m := konvergePrefix.FindString(line); m != "" {
		return strings.TrimPrefix(line, m)
	}
	return strings.TrimPrefix(line, "error: ")
}

// konverge runs one command line of a case against the state in-process,
// with file arguments relative to dir.
func konverge(t *testing.T, state, dir string, args []string) (stdout, stderr string, code int) {
	t.Helper()
	full := []string{"--state", state}
	for i := 0; i < len(args); i++ {
		a := args[i]
		full = append(full, a)
		switch a {
		case "-f", "--filename", "-k", "--kustomize", "--patch-file":
			if i+1 < len(args) && args[i+1] != "-" {
				i++
				full = append(full, filepath.Join(dir, args[i]))
			}
		}
	}
	var out, errOut bytes.Buffer
	cmd := cli.NewRootCmd(cli.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	cmd.SetArgs(full)
	err := cmd.ExecuteContext(context.Background())
	var ee *cli.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.Code
		if ee.Err != nil {
			fmt.Fprintln(&errOut, "error:", ee.Err)
		}
	default:
		code = 1
		fmt.Fprintln(&errOut, "error:", err)
	}
	return out.String(), errOut.String(), code
}

// knownDifferences reads "case reason..." lines.
func knownDifferences(path string) (map[string]string, error) {
	out := map[string]string{}
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, reason, _ := strings.Cut(line, " ")
		out[name] = strings.TrimSpace(reason)
	}
	return out, sc.Err()
}
