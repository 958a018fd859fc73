package diff

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/konverge/konverge/apply"
	"github.com/konverge/konverge/manifest"
)

// Unified is a diff rendered as text while it was computed
// (Differ.RunUnified): the unified diff of every object that changes, in
// the report's order, and what the exit status and the warnings need; not
// the objects themselves.
type Unified struct {
	entries []unifiedEntry
}

// unifiedEntry is what Unified keeps of an Entry.
type unifiedEntry struct {
	name     string
	action   Action
	warnings []string
	text     []byte
	err      error
}

// RunUnified is Run followed by Report.WriteUnified with opts, in a
// fraction of the memory: each object's diff is rendered as soon as the
// dry run has its result, on other goroutines while the dry run goes on,
// and only its text is kept, so that the live and merged objects of a
// large diff are never all held at once. Unified.WriteTo writes byte for
// byte what WriteUnified writes of Run's report. Errors are Run's, then
// the first rendering error in the report's order, and no Unified.
func (d *Differ) RunUnified(ctx context.Context, objs []manifest.Object, opts RenderOptions) (*Unified, error) {
	aopts, showPruned := d.dryRunOptions()
	workers := runtime.GOMAXPROCS(0)
	results := make(chan apply.Result, 4*workers)
	u := &Unified{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for res := range results {
				e := d.entry(res)
				ue := unifiedEntry{name: e.Name(), action: e.Action, warnings: e.Warnings}
				ue.text, ue.err = e.unified(opts)
				if ue.err != nil {
					ue.err = fmt.Errorf("diff: %s: %w", e.Ref, ue.err)
				}
				mu.Lock()
				u.entries = append(u.entries, ue)
				mu.Unlock()
			}
		}()
	}
	aopts.OnResult = func(res apply.Result) {
		if res.Action == apply.Pruned && !showPruned {
			return
		}
		results <- res
	}
	_, err := apply.New(d.c, aopts).Apply(ctx, objs)
	close(results)
	wg.Wait()
	if err != nil {
		return nil, err
	}
	// Names are unique (they are kubectl's file names), so that the order
	// is Run's whatever order the results came in.
	slices.SortFunc(u.entries, func(a, b unifiedEntry) int { return strings.Compare(a.name, b.name) })
	for _, e := range u.entries {
		if e.err != nil {
			return nil, e.err
		}
	}
	return u, nil
}

// HasDifferences reports whether applying would change anything, as
// Report.HasDifferences.
func (u *Unified) HasDifferences() bool {
	for _, e := range u.entries {
		if e.action != None {
			return true
		}
	}
	return false
}

// ExitCode is kubectl diff's exit status of the diff: 0 when there are no
// differences, 1 when there are (ExitCode of Run's report).
func (u *Unified) ExitCode() int {
	if u.HasDifferences() {
		return 1
	}
	return 0
}

// Warnings are apply's warnings about the objects, in the report's order
// (kubectl diff prints them on standard error).
func (u *Unified) Warnings() []string {
	var out []string
	for _, e := range u.entries {
		out = append(out, e.warnings...)
	}
	return out
}

// WriteTo writes the unified diff, as Report.WriteUnified writes it.
func (u *Unified) WriteTo(w io.Writer) (int64, error) {
	// The entries' texts go out in writes of up to 64 KiB, not one
	// write (a system call, to a file) each.
	bw := bufio.NewWriterSize(w, 64<<10)
	var n int64
	for _, e := range u.entries {
		if len(e.text) == 0 {
			continue
		}
		m, err := bw.Write(e.text)
		n += int64(m)
		if err != nil {
			return n - int64(bw.Buffered()), err
		}
	}
	if err := bw.Flush(); err != nil {
		return n - int64(bw.Buffered()), err
	}
	return n, nil
}
