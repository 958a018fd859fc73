package diff

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/konverge/konverge/internal/parallel"
	"github.com/konverge/konverge/value"
)

// RenderOptions tune WriteUnified.
type RenderOptions struct {
	// Color writes ANSI colors (the CLI sets it on a terminal): bold file
	// headers, cyan hunk headers, red deletions, green insertions.
	Color bool
	// Context is the number of unchanged lines around changes; 0 means 3,
	// diff -u's default, and a negative value none.
	Context int
}

func (o RenderOptions) context() int {
	switch {
	case o.Context == 0:
		return 3
	case o.Context < 0:
		return 0
	}
	return o.Context
}

// Headers of the unified diff: konverge does not write temporary
// directories, so the files are named by these stable prefixes.
const (
	LivePrefix   = "live/"
	MergedPrefix = "merged/"
)

// WriteUnified writes the unified diff of every entry that changes, in the
// report's order, each as diff -u -N shows a file of kubectl's LIVE and
// MERGED directories:
//
//	diff -u -N live/apps.v1.Deployment.default.web merged/apps.v1.Deployment.default.web
//	--- live/apps.v1.Deployment.default.web
//	+++ merged/apps.v1.Deployment.default.web
//	@@ -5,7 +5,7 @@
//	...
//
// Entries are rendered in parallel.
func (r *Report) WriteUnified(w io.Writer, opts RenderOptions) error {
	texts := make([][]byte, len(r.Entries))
	errs := make([]error, len(r.Entries))
	_ = parallel.Each(context.Background(), len(r.Entries), func(i int) {
		texts[i], errs[i] = r.Entries[i].unified(opts)
	})
	for i, t := range texts {
		if errs[i] != nil {
			return fmt.Errorf("diff: %s: %w", r.Entries[i].Ref, errs[i])
		}
		if _, err := w.Write(t); err != nil {
			return err
		}
	}
	return nil
}

// unified renders one entry; nothing when it does not change.
func (e Entry) unified(opts RenderOptions) ([]byte, error) {
	if e.Action == None {
		return nil, nil
	}
	s := scratches.Get().(*scratch)
	defer s.release()
	// Both documents go into one buffer, live then merged.
	text, err := s.yaml.appendYAML(s.text[:0], e.Live)
	if err != nil {
		s.text = text
		return nil, err
	}
	split := len(text)
	text, err = s.yaml.appendYAML(text, e.Merged)
	s.text = text
	if err != nil {
		return nil, err
	}
	s.a = appendLines(s.a[:0], text[:split])
	s.b = appendLines(s.b[:0], text[split:])
	out := s.out[:0]
	header := func(prefix string, name ...string) {
		if opts.Color {
			out = append(out, colorHeader...)
		}
		out = append(out, prefix...)
		for i, n := range name {
			if i > 0 {
				out = append(out, ' ')
			}
			out = append(out, n...)
			out = e.appendName(out)
		}
		if opts.Color {
			out = append(out, colorReset...)
		}
		out = append(out, '\n')
	}
	header("diff -u -N ", LivePrefix, MergedPrefix)
	header("--- ", LivePrefix)
	header("+++ ", MergedPrefix)
	out, changed := s.unified(out, s.a, s.b, opts.context(), opts.Color)
	s.out = out
	clear(s.a)
	clear(s.b)
	if !changed {
		return nil, nil
	}
	return bytes.Clone(out), nil
}

// WriteJSON writes the report for tools, as an indented JSON list with one
// element per object:
//
//	[
//	  {
//	    "ref": {"group": "apps", "version": "v1", "kind": "Deployment", "namespace": "default", "name": "web"},
//	    "name": "deployment.apps/web",
//	    "source": "deploy/web.yaml#1 (line 1)",
//	    "action": "update",
//	    "live": {...},
//	    "merged": {...},
//	    "patch": {...},
//	    "patchType": "application/strategic-merge-patch+json"
//	  }
//	]
//
// action is create, update, delete or none; live is null for create,
// merged null for delete; patch and patchType appear when apply would send
// a patch; source is "" for objects shown because they would be pruned.
// live and merged are cleaned and masked as Entry says.
func (r *Report) WriteJSON(w io.Writer) error {
	list := make([]any, len(r.Entries))
	for i, e := range r.Entries {
		el := map[string]any{
			"ref": map[string]any{
				"group":     e.Ref.Group,
				"version":   e.Ref.Version,
				"kind":      e.Ref.Kind,
				"namespace": e.Ref.Namespace,
				"name":      e.Ref.Name,
			},
			"name":   e.Ref.String(),
			"source": e.Source.String(),
			"action": string(e.Action),
			"live":   nilIfEmpty(e.Live),
			"merged": nilIfEmpty(e.Merged),
		}
		if e.Patch != nil {
			el["patch"] = e.Patch
			el["patchType"] = string(e.PatchType)
		}
		list[i] = el
	}
	b, err := value.Encode(list)
	if err != nil {
		return fmt.Errorf("diff: %w", err)
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, b, "", "  "); err != nil {
		return fmt.Errorf("diff: %w", err)
	}
	buf.WriteByte('\n')
	_, err = w.Write(buf.Bytes())
	return err
}

func nilIfEmpty(m map[string]any) any {
	if m == nil {
		return nil
	}
	return m
}

// EnvExternalDiff is the environment variable that names an external diff
// program, as KUBECTL_EXTERNAL_DIFF does for kubectl.
const EnvExternalDiff = "KONVERGE_EXTERNAL_DIFF"

// EnvKubectlExternalDiff is kubectl's variable for the same, which the CLI
// honours when EnvExternalDiff is not set.
const EnvKubectlExternalDiff = "KUBECTL_EXTERNAL_DIFF"

// validArg is what kubectl keeps of the arguments in KUBECTL_EXTERNAL_DIFF.
var validArg = regexp.MustCompile(`^[a-zA-Z0-9-=]+$`)

// RunExternal writes the report into two temporary directories, LIVE-* and
// MERGED-*, one file per object named as Entry.Name (absent objects have no
// file), and runs command on them as kubectl diff does with
// KUBECTL_EXTERNAL_DIFF: the program is the first word of command, its
// other words are arguments if they consist of letters, digits, '-' and '='
// only, and the two directories follow. It returns the program's exit
// status when it is 0 or 1 (no differences, differences), and an error
// otherwise. The directories are removed afterwards.
func (r *Report) RunExternal(command string, stdout, stderr io.Writer) (int, error) {
	words := strings.Split(command, " ")
	if words[0] == "" {
		return 2, fmt.Errorf("diff: empty %s", EnvExternalDiff)
	}
	var args []string
	for _, w := range words[1:] {
		if validArg.MatchString(w) {
			args = append(args, w)
		}
	}
	live, err := os.MkdirTemp("", "LIVE-")
	if err != nil {
		return 2, fmt.Errorf("diff: %w", err)
	}
	defer os.RemoveAll(live)
	merged, err := os.MkdirTemp("", "MERGED-")
	if err != nil {
		return 2, fmt.Errorf("diff: %w", err)
	}
	defer os.RemoveAll(merged)
	for _, e := range r.Entries {
		if err := writeFile(live, e.Name(), e.Live); err != nil {
			return 2, err
		}
		if err := writeFile(merged, e.Name(), e.Merged); err != nil {
			return 2, err
		}
	}
	cmd := exec.Command(words[0], append(args, live, merged)...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err = cmd.Run()
	if err == nil {
		return 0, nil
	}
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 {
		return 1, nil
	}
	return 2, fmt.Errorf("failed to run %q: %v", words[0], err)
}

func writeFile(dir, name string, obj map[string]any) error {
	if obj == nil {
		return nil
	}
	b, err := YAML(obj)
	if err != nil {
		return fmt.Errorf("diff: %s: %w", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
		return fmt.Errorf("diff: %w", err)
	}
	return nil
}
