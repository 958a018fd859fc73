package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/konverge/konverge/internal/golden"
)

// konvergeRun runs the konverge command line args through the cobra root
// as cmd/konverge's main does, and returns what it printed and its exit
// status.
func konvergeRun(t testing.TB, stdin io.Reader, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	var out, errOut bytes.Buffer
	root := NewRootCmd(Streams{In: stdin, Out: &out, ErrOut: &errOut})
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	code = exitCodeOf(err, &errOut)
	return out.String(), errOut.String(), code
}

// exitCodeOf is main's handling of the error a command returns.
func exitCodeOf(err error, errOut io.Writer) int {
	if err == nil {
		return 0
	}
	var exit *ExitError
	if errors.As(err, &exit) {
		if exit.Err != nil {
			fmt.Fprintln(errOut, "error:", exit.Err)
		}
		return exit.Code
	}
	fmt.Fprintln(errOut, "error:", err)
	return 1
}

// Patterns of what changes from run to run in the output of commands:
// uids, timestamps, resourceVersions and the state directory.
var (
	uidPattern  = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	timePattern = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`)
	// resourceVersions count every write of the store, the controllers'
	// too, which the tests of commands do not pin.
	rvPattern = regexp.MustCompile(`("?resourceVersion"?: )"\d+"`)
)

func normalizeOutput(s, state string) string {
	s = uidPattern.ReplaceAllString(s, "<uid>")
	s = timePattern.ReplaceAllString(s, "<time>")
	s = rvPattern.ReplaceAllString(s, `$1"<rv>"`)
	if state != "" {
		s = strings.ReplaceAll(s, state, "<state>")
	}
	return s
}

// TestCLIGolden runs the command lines of every testdata/cli/<case>/cmd.txt
// against a new embedded cluster, in the case's directory, and compares
// what they print and their exit statuses with testdata/cli/<case>/out.txt.
//
// cmd.txt holds one konverge command line a line ("#" starts a comment),
// split into arguments on blanks, with '...' quoting; "< FILE" at the end
// feeds FILE to standard input, and leading NAME=VALUE words set
// environment variables for that command only.
func TestCLIGolden(t *testing.T) {
	dirs, err := filepath.Glob("../../testdata/cli/*/cmd.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Fatal("no cases under testdata/cli")
	}
	for _, f := range dirs {
		dir, err := filepath.Abs(filepath.Dir(f))
		if err != nil {
			t.Fatal(err)
		}
		t.Run(filepath.Base(dir), func(t *testing.T) {
			runGoldenCase(t, dir)
		})
	}
}

func runGoldenCase(t *testing.T, dir string) {
	script, err := os.ReadFile(filepath.Join(dir, "cmd.txt"))
	if err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	t.Chdir(dir)
	var got strings.Builder
	for _, line := range strings.Split(string(script), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		words, err := splitWords(line)
		if err != nil {
			t.Fatalf("cmd.txt: %q: %v", line, err)
		}
		var env [][2]string
		for len(words) > 0 && strings.Contains(words[0], "=") && !strings.HasPrefix(words[0], "-") {
			k, v, _ := strings.Cut(words[0], "=")
			env = append(env, [2]string{k, v})
			words = words[1:]
		}
		var stdin io.Reader
		if n := len(words); n >= 2 && words[n-2] == "<" {
			b, err := os.ReadFile(words[n-1])
			if err != nil {
				t.Fatal(err)
			}
			stdin = bytes.NewReader(b)
			words = words[:n-2]
		}
		if len(words) == 0 || words[0] != "konverge" {
			t.Fatalf("cmd.txt: %q: a line must run konverge", line)
		}
		restore := setEnv(t, env)
		stdout, stderr, code := konvergeRun(t, stdin, append([]string{"--state", state}, words[1:]...)...)
		restore()
		fmt.Fprintf(&got, "$ %s\n%s", line, stdout)
		if stderr != "" {
			fmt.Fprintf(&got, "[stderr]\n%s", stderr)
		}
		if code != 0 {
			fmt.Fprintf(&got, "[exit %d]\n", code)
		}
	}
	// The Secret values of the cases must never show.
	for _, secret := range []string{"hunter2-original", "correct-horse-battery", "prune-me-secret-token"} {
		if strings.Contains(got.String(), secret) {
			t.Errorf("the output shows the secret value %q", secret)
		}
	}
	golden.Assert(t, filepath.Join(dir, "out.txt"), []byte(normalizeOutput(got.String(), state)))
}

// setEnv sets environment variables until the returned function runs.
func setEnv(t *testing.T, env [][2]string) func() {
	type old struct {
		k, v string
		ok   bool
	}
	var olds []old
	for _, kv := range env {
		v, ok := os.LookupEnv(kv[0])
		olds = append(olds, old{kv[0], v, ok})
		if err := os.Setenv(kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	return func() {
		for _, o := range olds {
			if o.ok {
				os.Setenv(o.k, o.v)
			} else {
				os.Unsetenv(o.k)
			}
		}
	}
}

// splitWords splits a command line on blanks, with '...' and "..." quoting.
func splitWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote = r
			inWord = true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, errors.New("unterminated quote")
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
