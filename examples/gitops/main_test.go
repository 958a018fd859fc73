package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/konverge/konverge/internal/golden"
)

// TestStory runs the sync loop's story and compares what it prints with
// testdata/output.txt (rewritten with -update): the first sync creates and
// waits, the second has nothing to do, the third names the hand edit (and
// not the autoscaler's replicas), reverts it and waits for the rollout,
// the fourth has nothing to do.
func TestStory(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), &out, "manifests"); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	golden.Assert(t, "testdata/output.txt", out.Bytes())
}
