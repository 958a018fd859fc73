package fidelity

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Groups are the directories of testdata/fidelity that hold cases.
var Groups = []string{"kinds", "stories", "projects", "ssa"}

// Case is one entry of the corpus: commands run, in order, in Dir.
type Case struct {
	// Name is "<group>/<name>", the golden file's path without .json.
	Name string
	// Dir is where the commands run (-f paths are relative to it).
	Dir string
	// Steps are kubectl command lines without the word kubectl.
	Steps [][]string
	// Cleanup are command lines only the recording runs, after the case
	// (lines "cleanup ARGS..." of the steps file): what deleting the
	// case's files does not delete.
	Cleanup [][]string
}

// Sleep is the step that only the recording carries out, to let the real
// control plane's controllers act (`sleep SECONDS`); the embedded cluster
// settles its controllers within each command. With a third word, `clock`
// (`sleep SECONDS clock`), the embedded cluster's clock moves as much
// (`konverge clock advance`): for what the real control plane does at its
// own pace, on a timer, rather than as soon as it can.
const Sleep = "sleep"

// SleepAdvances reports whether a Sleep step moves the embedded
// cluster's clock too.
func SleepAdvances(args []string) bool { return len(args) > 2 && args[2] == "clock" }

// uidRef is a placeholder of a step's words: "{{uid RESOURCE NAME
// NAMESPACE}}" stands for the uid of that object at the time of the step
// (a namespace "-" for a cluster-scoped one).
var uidRef = regexp.MustCompile(`\{\{uid ([^ }]+) ([^ }]+) ([^ }]+)\}\}`)

// Expand replaces the uid placeholders of a step's words with what uid
// returns for them: an ownerReference to an object of the case needs its
// uid, which the server chose.
func Expand(args []string, uid func(resource, name, namespace string) (string, error)) ([]string, error) {
	out := make([]string, len(args))
	var err error
	for i, a := range args {
		out[i] = uidRef.ReplaceAllStringFunc(a, func(m string) string {
			p := uidRef.FindStringSubmatch(m)
			ns := p[3]
			if ns == "-" {
				ns = ""
			}
			v, e := uid(p[1], p[2], ns)
			if e != nil && err == nil {
				err = fmt.Errorf("%s: %w", m, e)
			}
			return v
		})
	}
	return out, err
}

// Load reads every case under root (testdata/fidelity).
func Load(root string) ([]Case, error) {
	var out []Case
	for _, g := range Groups {
		entries, err := os.ReadDir(filepath.Join(root, g))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			path := filepath.Join(root, g, e.Name())
			if !e.IsDir() {
				if g != "kinds" || !isManifest(e.Name()) {
					continue
				}
				out = append(out, Case{
					Name:  g + "/" + strings.TrimSuffix(e.Name(), filepath.Ext(e.Name())),
					Dir:   filepath.Join(root, g),
					Steps: [][]string{{"apply", "-f", e.Name(), "-o", "json"}},
				})
				continue
			}
			data, err := os.ReadFile(filepath.Join(path, "steps"))
			if err != nil {
				return nil, fmt.Errorf("case %s/%s: %w", g, e.Name(), err)
			}
			lines, err := ParseSteps(string(data))
			if err != nil {
				return nil, fmt.Errorf("case %s/%s: steps: %w", g, e.Name(), err)
			}
			c := Case{Name: g + "/" + e.Name(), Dir: path}
			for _, l := range lines {
				if l[0] == "cleanup" {
					c.Cleanup = append(c.Cleanup, l[1:])
				} else {
					c.Steps = append(c.Steps, l)
				}
			}
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func isManifest(name string) bool {
	switch filepath.Ext(name) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// GoldenPath is where the recording of c is kept under root.
func GoldenPath(root string, c Case) string {
	return filepath.Join(root, "golden", c.Name+".json")
}

// Namespace is the namespace a case runs in on the real control plane.
func Namespace(c Case) string {
	ns := "fid-" + strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			return r
		}
		return '-'
	}, strings.ToLower(c.Name))
	if len(ns) > 63 {
		ns = ns[:63]
	}
	return strings.TrimRight(ns, "-")
}

// ParseSteps splits a steps file into command lines.
func ParseSteps(text string) ([][]string, error) {
	var steps [][]string
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		words, err := splitWords(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		steps = append(steps, words)
	}
	return steps, nil
}

// splitWords splits a line as a shell does: blanks separate words, single
// quotes keep everything, double quotes keep all but \" and \\.
func splitWords(line string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'':
			end := strings.IndexByte(line[i+1:], '\'')
			if end < 0 {
				return nil, fmt.Errorf("unterminated single quote")
			}
			cur.WriteString(line[i+1 : i+1+end])
			i += end + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' && i+1 < len(line) && (line[i+1] == '"' || line[i+1] == '\\') {
					i++
				}
				cur.WriteByte(line[i])
			}
			if i >= len(line) {
				return nil, fmt.Errorf("unterminated double quote")
			}
			inWord = true
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
