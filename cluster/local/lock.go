package local

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrLocked is the cause of a *LockedError, for errors.Is.
var ErrLocked = errors.New("state is in use by another konverge process")

// LockedError reports that another process held the state for longer than
// Options.LockTimeout.
type LockedError struct {
	// Dir is the state directory.
	Dir string
	// PID is the holder's process id as it recorded it, or 0 if unknown.
	PID int
}

func (e *LockedError) Error() string {
	if e.PID > 0 {
		return fmt.Sprintf("konverge: state %s is in use by another konverge process (pid %d)", e.Dir, e.PID)
	}
	return fmt.Sprintf("konverge: state %s is in use by another konverge process", e.Dir)
}

// Is makes errors.Is(err, ErrLocked) hold.
func (e *LockedError) Is(target error) bool { return target == ErrLocked }

// The holder of the database lock records its pid beside it, only to name
// itself in other processes' errors: the lock itself is bbolt's flock.

func writePID(dir string) {
	_ = os.WriteFile(filepath.Join(dir, pidFile), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600)
}

func readPID(dir string) int {
	b, err := os.ReadFile(filepath.Join(dir, pidFile))
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0
	}
	return pid
}

// removePID removes the pid file if it is still ours.
func removePID(dir string) {
	if readPID(dir) == os.Getpid() {
		_ = os.Remove(filepath.Join(dir, pidFile))
	}
}
