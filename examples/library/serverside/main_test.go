package main

import (
	"testing"

	"github.com/konverge/konverge/internal/golden"
)

// TestOutput runs the program and compares what it prints with
// testdata/output.txt, which docs/library.md shows.
func TestOutput(t *testing.T) {
	golden.Assert(t, "testdata/output.txt", golden.Stdout(t, main))
}
