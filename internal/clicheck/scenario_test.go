package clicheck

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

// step is one line of a scenario: a command to run, compared (a check) or
// not (a setup step).
type step struct {
	check bool
	// text is the line as written, without its "$ " or "> ".
	text string
	args []string
	// stdin is the file given with "< FILE", "" for none.
	stdin string
	// interrupt, when set, stops the command after this long (a watch).
	interrupt time.Duration
	line      int
}

// scenario is one file of testdata/kubectl.
type scenario struct {
	name        string
	controllers bool
	// profile is a simulation profile with nodes: (#! profile FILE): the
	// recording runs kube-scheduler and scripts/multinode-kubelet.py
	// with its nodes (pods of namespace default), the embedded cluster
	// is initialized with it.
	profile string
	// unordered compares the lines of each check's output as sets
	// (#! unordered): kubectl drain evicts concurrently.
	unordered bool
	steps     []step
}

// loadScenarios reads every scenario under dir, sorted by name.
func loadScenarios(dir string) ([]scenario, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	var out []scenario
	for _, p := range paths {
		sc, err := parseScenario(p)
		if err != nil {
			return nil, err
		}
		out = append(out, sc)
	}
	return out, nil
}

func parseScenario(path string) (scenario, error) {
	f, err := os.Open(path)
	if err != nil {
		return scenario{}, err
	}
	defer f.Close()
	sc := scenario{name: strings.TrimSuffix(filepath.Base(path), ".txt")}
	s := bufio.NewScanner(f)
	n := 0
	for s.Scan() {
		n++
		l := strings.TrimSpace(s.Text())
		switch {
		case l == "":
			continue
		case strings.HasPrefix(l, "#!"):
			ds := strings.Fields(l[2:])
			for i := 0; i < len(ds); i++ {
				switch d := ds[i]; d {
				case "controllers":
					sc.controllers = true
				case "unordered":
					sc.unordered = true
				case "profile":
					if i+1 == len(ds) {
						return sc, fmt.Errorf("%s:%d: profile needs a file", path, n)
					}
					i++
					sc.profile = ds[i]
					sc.controllers = true
				default:
					return sc, fmt.Errorf("%s:%d: unknown directive %q", path, n, d)
				}
			}
			continue
		case strings.HasPrefix(l, "#"):
			continue
		case strings.HasPrefix(l, "$ "), strings.HasPrefix(l, "> "):
		default:
			return sc, fmt.Errorf("%s:%d: a line starts with \"$ \" (check), \"> \" (step) or \"#\"", path, n)
		}
		st := step{check: l[0] == '$', text: strings.TrimSpace(l[2:]), line: n}
		if d, rest, ok := strings.Cut(st.text, " "); ok && strings.HasPrefix(d, "@") {
			dur, err := time.ParseDuration(d[1:])
			if err != nil {
				return sc, fmt.Errorf("%s:%d: %v", path, n, err)
			}
			st.interrupt = dur
			st.text = strings.TrimSpace(rest)
		}
		words, err := splitWords(st.text)
		if err != nil {
			return sc, fmt.Errorf("%s:%d: %v", path, n, err)
		}
		if k := len(words); k >= 2 && words[k-2] == "<" {
			st.stdin = words[k-1]
			words = words[:k-2]
		}
		st.args = words
		sc.steps = append(sc.steps, st)
	}
	return sc, s.Err()
}

// splitWords splits a command line as a POSIX shell does, with single
// quotes, double quotes and backslashes (no expansions).
func splitWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'':
			inWord = true
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unterminated single quote")
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case c == '"':
			inWord = true
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, fmt.Errorf("unterminated double quote")
			}
		case c == '\\' && i+1 < len(s):
			inWord = true
			i++
			cur.WriteByte(s[i])
		default:
			inWord = true
			cur.WriteByte(c)
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// result is what one command printed and how it ended.
type result struct {
	stdout, stderr string
	code           int
	interrupted    bool
}

// render writes a check and its masked result as the golden files hold
// it; in a scenario with a profile the generated suffixes of pod names
// are masked too, and in an unordered one the lines are sorted.
func render(b *bytes.Buffer, sc scenario, st step, r result) {
	fmt.Fprintf(b, "$ %s\n", st.text)
	if sc.profile != "" {
		r.stdout = podSuffix.ReplaceAllString(r.stdout, "$1-<id>")
		r.stderr = podSuffix.ReplaceAllString(r.stderr, "$1-<id>")
	}
	if sc.unordered {
		r.stdout, r.stderr = sortedLines(r.stdout), sortedLines(r.stderr)
	}
	out := mask(r.stdout)
	b.WriteString(out)
	if out != "" && !strings.HasSuffix(out, "\n") {
		b.WriteString("\n--- (no newline at end)\n")
	}
	if e := mask(r.stderr); e != "" {
		b.WriteString("--- stderr\n")
		b.WriteString(e)
		if !strings.HasSuffix(e, "\n") {
			b.WriteString("\n--- (no newline at end)\n")
		}
	}
	if r.interrupted {
		b.WriteString("--- interrupted\n")
	} else {
		fmt.Fprintf(b, "--- exit %d\n", r.code)
	}
}

// podSuffix is the random suffix of a generated pod name
// (rand.SafeEncodeString's alphabet, five characters).
var podSuffix = regexp.MustCompile(`\b([a-z0-9]+(-[a-z0-9]+)*)-[bcdfghjklmnpqrstvwxz2456789]{5}\b`)

// sortedLines sorts the lines of s.
func sortedLines(s string) string {
	if s == "" {
		return s
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if !strings.HasSuffix(lines[len(lines)-1], "\n") {
		return s
	}
	sort.Strings(lines)
	return strings.Join(lines, "")
}

// splitGolden cuts a golden file into its checks' blocks.
func splitGolden(s string) []string {
	var blocks []string
	var cur strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		cur.WriteString(l)
		if strings.HasPrefix(l, "--- exit ") || l == "--- interrupted\n" {
			blocks = append(blocks, cur.String())
			cur.Reset()
		}
	}
	if cur.Len() > 0 {
		blocks = append(blocks, cur.String())
	}
	return blocks
}

var masks = []struct {
	re   *regexp.Regexp
	with string
}{
	// The program's name in messages ("See 'kubectl get -h'").
	{regexp.MustCompile(`\bkubectl([ '"])`), "konverge$1"},
	{regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`), "<uid>"},
	{regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`), "<time>"},
	{regexp.MustCompile(`(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d\d:\d\d:\d\d [+-]\d{4}`), "<time>"},
	{regexp.MustCompile(`("?resourceVersion"?: ?)"\d+"`), `$1"<rv>"`},
	{regexp.MustCompile(`("?(generation|observedGeneration)"?: ?)\d+`), `$1<n>`},
	{regexp.MustCompile(`:3[0-2]\d{3}/`), ":<nodeport>/"},
	{regexp.MustCompile(`(nodePort"?: )3[0-2]\d{3}\b`), "${1}<nodeport>"},
	// Event names: the object's name and a hexadecimal time stamp.
	{regexp.MustCompile(`\.[0-9a-f]{16,}\b`), ".<event>"},
}

// padded are masks of values whose width varies between clusters (ages,
// addresses): the value and the spaces after it become one placeholder and
// one space, so that the table columns after it still compare.
var padded = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`\b\d+\.\d+\.\d+\.\d+\b *`), "<ip>"},
	{regexp.MustCompile(`\b\d+[smhdy](\d+[smh])?\b *`), "<age>"},
}

// mask replaces what differs between two clusters by placeholders.
func mask(s string) string {
	for _, m := range masks {
		s = m.re.ReplaceAllString(s, m.with)
	}
	for _, m := range padded {
		s = m.re.ReplaceAllStringFunc(s, func(v string) string {
			if strings.HasSuffix(v, " ") {
				return m.with + " "
			}
			return m.with
		})
	}
	return s
}

var columnGap = regexp.MustCompile(`(\S)  +`)

// comparable is a check's block as compared: where a cluster-assigned
// address was masked, the width of its column (and so the padding of the
// header and cells) depends on the address, so runs of spaces between
// cells compare as one gap there.
func comparable(block string) string {
	if !strings.Contains(block, "<ip>") {
		return block
	}
	return columnGap.ReplaceAllString(block, "$1   ")
}
