package cli

import (
	"bytes"
	"os"
	"testing"
	"time"

	"github.com/konverge/konverge/apply"
)

// TestProgressLine: nothing in the first second, then one line redrawn
// in place at most every 100 ms (and on the last object), erased at the
// end; nothing at all on a writer that is not a terminal.
func TestProgressLine(t *testing.T) {
	var buf bytes.Buffer
	now := time.Unix(1000, 0)
	l := &progressLine{w: &buf, start: now, now: func() time.Time { return now }}
	l.Update(apply.Progress{Step: apply.StepApply, Done: 1, Total: 3})
	if buf.Len() != 0 {
		t.Fatalf("shown in the first second: %q", buf.String())
	}
	now = now.Add(1100 * time.Millisecond)
	l.Update(apply.Progress{Step: apply.StepApply, Done: 2, Total: 3})
	now = now.Add(10 * time.Millisecond)
	l.Update(apply.Progress{Step: apply.StepApply, Done: 2, Total: 3}) // too soon
	l.Update(apply.Progress{Step: apply.StepApply, Done: 3, Total: 3}) // the last
	l.Close()
	l.Close()
	want := "\r\x1b[Kapplying 2/3 objects\r\x1b[Kapplying 3/3 objects\r\x1b[K"
	if got := buf.String(); got != want {
		t.Errorf("got %q, want %q", got, want)
	}

	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if l := newProgressLine(f); l.w != nil {
		t.Errorf("a progress line on a file")
	}
	if l := newProgressLine(&buf); l.w != nil {
		t.Errorf("a progress line on a buffer")
	}
}
