package sim

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/konverge/konverge/clock"
	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/kubelet"
)

// Cluster is an embedded cluster ready to be waited on: the store
// (cluster/local), a manual virtual clock and every controller of
// Controllers with the default kubelet profile, bound together. It is a
// cluster.Interface for apply, diff and the rest, a wait.Driver for
// wait.ForCurrent (which uses it without being told when Options.Driver
// is nil), and says with Revision whether anything was written.
//
//	c, err := sim.Open("") // a temporary cluster; Close removes it
//	results, err := apply.New(c, apply.Options{}).Apply(ctx, objs)
//	_, err = wait.ForCurrent(ctx, c, refs, wait.Options{Timeout: 5 * time.Minute})
//
// It replaces the four steps of earlier versions (clock.New,
// local.Open with the clock, New with Controllers, and wait.Options'
// Driver), which still work.
type Cluster struct {
	*local.Store
	// Clock is the cluster's time: manual, at clock.Epoch in a new state,
	// where it was left in an existing one. Only waits and Runner move it.
	Clock *clock.Clock
	// Runner runs the controllers on Clock: Settle, Advance, RunUntil.
	Runner *Runner
	// temp is the directory Close removes ("" for one the caller gave).
	temp string
}

// Open opens the embedded cluster whose state is in dir (created if
// needed) with its controllers on a manual virtual clock; dir "" means a
// new temporary directory, which Close removes.
func Open(dir string) (*Cluster, error) {
	var temp string
	if dir == "" {
		d, err := os.MkdirTemp("", "konverge-sim")
		if err != nil {
			return nil, fmt.Errorf("sim: open: %w", err)
		}
		dir, temp = d, d
	}
	clk := clock.New(clock.Manual, clock.Epoch)
	st, err := local.Open(dir, local.Options{Clock: clk})
	if err != nil {
		if temp != "" {
			os.RemoveAll(temp)
		}
		return nil, fmt.Errorf("sim: open: %w", err)
	}
	if _, err := clk.Load(context.Background(), st); err != nil {
		st.Close()
		if temp != "" {
			os.RemoveAll(temp)
		}
		return nil, fmt.Errorf("sim: open: %w", err)
	}
	return &Cluster{Store: st, Clock: clk, Runner: New(st, clk, Controllers(kubelet.DefaultProfile())...), temp: temp}, nil
}

// Until fast-forwards the cluster until cond holds, as Runner.Until: the
// Cluster is a wait.Driver.
func (c *Cluster) Until(ctx context.Context, cond func() (bool, error), timeout time.Duration) (bool, error) {
	return c.Runner.Until(ctx, cond, timeout)
}

// Revision returns the store's revision (see the function Revision): it
// moves with every write, so that two calls tell whether anything was
// written between them.
func (c *Cluster) Revision(ctx context.Context) (uint64, error) {
	return Revision(ctx, c.Store)
}

// Close closes the store, and removes the directory of a temporary
// cluster.
func (c *Cluster) Close() error {
	err := c.Store.Close()
	if c.temp != "" {
		if rerr := os.RemoveAll(c.temp); err == nil {
			err = rerr
		}
	}
	return err
}
