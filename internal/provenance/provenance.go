// Package provenance finds passages of konverge's product files that stand,
// line for line, in the sources of the modules konverge builds with.
//
// konverge's rule is that its code and words are its own: facts about
// Kubernetes carry over, upstream code and prose do not. A passage counts as
// taken when Window or more consecutive non-trivial lines of a product file
// equal lines of an upstream file after white space is folded. Trivial lines
// (blank, punctuation only, the package clause, the lines of an import block)
// are dropped on both sides before windows are formed, so that a copy cannot
// hide behind a changed blank line or brace.
//
// The search hashes every window of the product files first (a few hundred
// thousand), then streams the upstream files once and looks each of their
// windows up: memory stays in proportion to konverge, time to the upstream
// sources read.
package provenance

import (
	"bufio"
	"bytes"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"unicode"
)

// Window is the number of consecutive non-trivial lines that make a match.
const Window = 6

// Line is one non-trivial line of a file: its folded text and where it was.
type Line struct {
	Text string
	No   int // 1-based line number in the file
}

// Lines returns the non-trivial lines of a Go or template source, white
// space folded to single spaces. With rename, "konverge" reads as "kubectl",
// so that upstream text with only the name changed still matches.
func Lines(src []byte, rename bool) []Line {
	var out []Line
	inImport := false
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	no := 0
	for sc.Scan() {
		no++
		text := strings.Join(strings.Fields(sc.Text()), " ")
		if rename {
			text = strings.ReplaceAll(text, "konverge", "kubectl")
		}
		switch {
		case inImport:
			if text == ")" {
				inImport = false
			}
			continue
		case text == "import (":
			inImport = true
			continue
		case strings.HasPrefix(text, "import \""), strings.HasPrefix(text, "package "):
			continue
		}
		if trivial(text) {
			continue
		}
		out = append(out, Line{Text: text, No: no})
	}
	return out
}

// trivial reports a line that says nothing of its own: blank, or made only
// of punctuation (closing braces and the like).
func trivial(text string) bool {
	for _, r := range text {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

// windowHashes returns the hash of every window of n consecutive lines;
// element i covers lines[i : i+n].
func windowHashes(lines []Line, n int) []uint64 {
	if len(lines) < n {
		return nil
	}
	hs := make([]uint64, 0, len(lines)-n+1)
	h := fnv.New64a()
	for i := 0; i+n <= len(lines); i++ {
		h.Reset()
		for _, l := range lines[i : i+n] {
			h.Write([]byte(l.Text))
			h.Write([]byte{'\n'})
		}
		hs = append(hs, h.Sum64())
	}
	return hs
}

// File is a product file to check: its path relative to the repository and
// its contents.
type File struct {
	Path string
	Src  []byte
}

// Run is a passage of a product file found upstream: lines From to To
// (1-based, inclusive) of Path; Upstream names one place it stands.
type Run struct {
	Path     string
	From, To int
	Lines    int // non-trivial lines in the run
	Upstream string
	Text     []string
}

func (r Run) String() string {
	return fmt.Sprintf("%s:%d-%d (%d lines) = %s", r.Path, r.From, r.To, r.Lines, r.Upstream)
}

// Scan reports the runs of Window or more non-trivial lines of the product
// files that stand in an upstream file below one of roots (files ending in
// .go or .tmpl; test files and testdata included, since a copy is a copy
// wherever it came from).
func Scan(product []File, roots []string) ([]Run, error) {
	type place struct {
		file  int
		index int
	}
	lines := make([][]Line, len(product))
	want := map[uint64][]place{}
	for fi, f := range product {
		lines[fi] = Lines(f.Src, true)
		for i, h := range windowHashes(lines[fi], Window) {
			want[h] = append(want[h], place{fi, i})
		}
	}

	// Stream the upstream files; remember, for each matched window hash,
	// one upstream place and the window's text to confirm the match.
	var (
		mu    sync.Mutex
		found = map[uint64]string{}
		texts = map[uint64]string{}
	)
	paths := make(chan string, 256)
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range paths {
				src, err := os.ReadFile(p)
				if err != nil {
					select {
					case errs <- err:
					default:
					}
					continue
				}
				ul := Lines(src, false)
				for i, h := range windowHashes(ul, Window) {
					if _, ok := want[h]; !ok {
						continue
					}
					mu.Lock()
					if _, seen := found[h]; !seen {
						found[h] = fmt.Sprintf("%s:%d", p, ul[i].No)
						texts[h] = joinText(ul[i : i+Window])
					}
					mu.Unlock()
				}
			}
		}()
	}
	var walkErr error
	for _, root := range roots {
		walkErr = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				return nil
			}
			if strings.HasSuffix(p, ".go") || strings.HasSuffix(p, ".tmpl") {
				paths <- p
			}
			return nil
		})
		if walkErr != nil {
			break
		}
	}
	close(paths)
	wg.Wait()
	if walkErr != nil {
		return nil, fmt.Errorf("reading upstream sources: %w", walkErr)
	}
	select {
	case err := <-errs:
		return nil, fmt.Errorf("reading upstream sources: %w", err)
	default:
	}

	// Mark the product lines covered by confirmed windows, then merge
	// overlapping windows into runs.
	var runs []Run
	for fi, f := range product {
		ls := lines[fi]
		hs := windowHashes(ls, Window)
		covered := make([]string, len(ls)) // upstream place per line, "" if none
		for i, h := range hs {
			up, ok := found[h]
			if !ok || texts[h] != joinText(ls[i:i+Window]) {
				continue
			}
			for j := i; j < i+Window; j++ {
				if covered[j] == "" {
					covered[j] = up
				}
			}
		}
		for i := 0; i < len(ls); {
			if covered[i] == "" {
				i++
				continue
			}
			j := i
			var text []string
			for j < len(ls) && covered[j] != "" {
				text = append(text, ls[j].Text)
				j++
			}
			runs = append(runs, Run{Path: f.Path, From: ls[i].No, To: ls[j-1].No, Lines: j - i, Upstream: covered[i], Text: text})
			i = j
		}
	}
	sort.Slice(runs, func(a, b int) bool {
		if runs[a].Path != runs[b].Path {
			return runs[a].Path < runs[b].Path
		}
		return runs[a].From < runs[b].From
	})
	return runs, nil
}

func joinText(ls []Line) string {
	var b strings.Builder
	for _, l := range ls {
		b.WriteString(l.Text)
		b.WriteByte('\n')
	}
	return b.String()
}
