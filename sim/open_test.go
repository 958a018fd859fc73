package sim_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/konverge/konverge/clock"
	"github.com/konverge/konverge/sim"
)

// TestOpenKeepsTime: a cluster opened again from its directory resumes at
// the time it was left, and a temporary cluster's directory goes with
// Close.
func TestOpenKeepsTime(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	c, err := sim.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Runner.Advance(ctx, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	c, err = sim.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Clock.Now().Sub(clock.Epoch); got != time.Hour {
		t.Errorf("reopened at epoch+%v, want epoch+1h", got)
	}
	c.Close()
	if _, err := os.Stat(dir); err != nil {
		t.Errorf("a given directory must stay: %v", err)
	}

	tmp, err := sim.Open("")
	if err != nil {
		t.Fatal(err)
	}
	d := tmp.Dir()
	tmp.Close()
	if _, err := os.Stat(d); !os.IsNotExist(err) {
		t.Errorf("temporary directory %s left behind: %v", d, err)
	}
}
