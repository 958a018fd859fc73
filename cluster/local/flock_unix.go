//go:build unix

package local

import (
	"os"
	"syscall"
)

// lockFile takes the exclusive lock bbolt takes on an open state file,
// without waiting.
func lockFile(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}
