package sim_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/konverge/konverge/clock"
	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/sim"
)

// TestUntilNoLimit: without a time limit, a condition that cannot hold
// ends with ErrNothingDue instead of moving the clock forever; with one,
// the clock moves to the deadline; an error of the condition is returned.
func TestUntilNoLimit(t *testing.T) {
	clk := clock.New(clock.Manual, clock.Epoch)
	st, err := local.Open(t.TempDir(), local.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r := sim.New(st, clk)
	ctx := context.Background()
	never := func() (bool, error) { return false, nil }
	if met, err := r.Until(ctx, never, 0); met || !errors.Is(err, sim.ErrNothingDue) {
		t.Fatalf("no limit: %v %v", met, err)
	}
	if got := clk.Now(); !got.Equal(clock.Epoch) {
		t.Fatalf("the clock moved to %s", got)
	}
	if met, err := r.Until(ctx, never, time.Hour); met || err != nil {
		t.Fatalf("limit: %v %v", met, err)
	}
	if got := clk.Now().Sub(clock.Epoch); got != time.Hour {
		t.Fatalf("clock at +%s, want +1h", got)
	}
	boom := errors.New("boom")
	if _, err := r.Until(ctx, func() (bool, error) { return false, boom }, time.Hour); !errors.Is(err, boom) {
		t.Fatalf("cond error: %v", err)
	}
	// A huge limit on an idle cluster: the wait stops after MaxIdle of
	// cluster time without a change, and says so, instead of moving the
	// clock by a century.
	before := clk.Now()
	met, err := r.Until(ctx, never, time.Duration(1<<63-1))
	var idle *sim.IdleError
	if met || !errors.As(err, &idle) {
		t.Fatalf("huge limit: %v %v", met, err)
	}
	if got := clk.Now().Sub(before); got != sim.MaxIdle || idle.Waited != sim.MaxIdle {
		t.Fatalf("a huge limit moved the clock by %s (error says %s), want %s", got, idle.Waited, sim.MaxIdle)
	}
	if met, err := r.Until(ctx, func() (bool, error) { return true, nil }, 0); !met || err != nil {
		t.Fatalf("met: %v %v", met, err)
	}
}
