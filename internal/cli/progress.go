package cli

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/konverge/konverge/apply"
)

// progressLine shows how far a long apply or diff is on one line of a
// terminal ("applying 1200/10000 objects"), redrawn in place and erased at
// the end. It shows nothing during the first second, nor when its writer
// is not a terminal (a pipe, a file): output meant for programs stays
// clean.
type progressLine struct {
	w     io.Writer // nil: show nothing
	start time.Time
	now   func() time.Time

	mu    sync.Mutex
	last  time.Time
	shown bool
}

// Timing of the progress line.
const (
	progressDelay  = time.Second
	progressRedraw = 100 * time.Millisecond
)

// newProgressLine returns a progress line on w when w is a terminal.
func newProgressLine(w io.Writer) *progressLine {
	if !isCharDevice(w) {
		return &progressLine{}
	}
	return &progressLine{w: w, start: time.Now(), now: time.Now}
}

// Update shows p, at most every progressRedraw (and always the last
// object of a step).
func (l *progressLine) Update(p apply.Progress) {
	if l.w == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if now.Sub(l.start) < progressDelay || (now.Sub(l.last) < progressRedraw && p.Done != p.Total) {
		return
	}
	l.last, l.shown = now, true
	fmt.Fprintf(l.w, "\r\x1b[K%s %d/%d objects", p.Step, p.Done, p.Total)
}

// Close erases the line if it was shown; it may be called more than once.
func (l *progressLine) Close() {
	if l.w == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.shown {
		fmt.Fprint(l.w, "\r\x1b[K")
		l.shown = false
	}
}

// isCharDevice reports whether w is a terminal.
func isCharDevice(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
