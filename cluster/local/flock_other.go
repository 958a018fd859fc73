//go:build !unix

package local

import "os"

// lockFile is a no-op where bbolt does not use flock.
func lockFile(*os.File) error { return nil }
