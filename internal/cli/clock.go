package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/konverge/konverge/clock"
)

// newClockCmd is konverge clock: the embedded cluster's virtual time.
// Its one subcommand, advance, is listed in commands.go.
func newClockCmd(g *Globals) *cobra.Command {
	return &cobra.Command{
		Use:   "clock",
		Short: "Print the embedded cluster's time and clock mode",
		Long: `Print the embedded cluster's virtual time (RFC 3339) and its clock mode
(wall or manual; see "konverge cluster init --help"), after catching a wall
clock up to the wall time.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			g.complete(cmd)
			return runClock(cmd.Context(), g, 0, false)
		},
	}
}

// newClockAdvanceCmd is konverge clock advance.
func newClockAdvanceCmd(g *Globals) *cobra.Command {
	return &cobra.Command{
		Use:   "advance DURATION",
		Short: "Move the embedded cluster's time forward",
		Long: `Move the embedded cluster's virtual time forward by DURATION (a Go duration:
30s, 5m, 1h30m), running the controllers and the simulated kubelet at every
moment they have work due on the way, in order.

With a manual clock this is how time moves. With a wall clock it moves the
cluster ahead of the wall clock; the cluster time then stays put until the
wall clock catches up.`,
		Example: "  konverge clock advance 30s",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			g.complete(cmd)
			d, err := time.ParseDuration(args[0])
			if err != nil {
				return fmt.Errorf("clock advance: %w", err)
			}
			if d < 0 {
				return fmt.Errorf("clock advance: %s: the clock does not go back", args[0])
			}
			return runClock(cmd.Context(), g, d, true)
		},
	}
}

func runClock(ctx context.Context, g *Globals, d time.Duration, advance bool) error {
	s, err := g.Open(ctx)
	if err != nil {
		return err
	}
	defer s.Close(ctx)
	r := s.Sim()
	if r == nil {
		return fmt.Errorf("clock: the embedded cluster has no virtual clock")
	}
	if now := r.Clock.Now(); advance && (d > clock.Max.Sub(now) || now.After(clock.Max)) {
		return fmt.Errorf("clock advance %s: the cluster time would pass %s, the latest it can be (Event names carry it in nanoseconds since 1970); nothing changed", d, clock.Max.Format(time.RFC3339))
	}
	if advance {
		if err := r.Advance(ctx, d); err != nil {
			return err
		}
		if at := r.Stopped(); !at.IsZero() && g.ErrOut != nil {
			// The clock moved, as asked; what was due on the way was not
			// all run at its own time.
			fmt.Fprintf(g.ErrOut, "warning: the embedded cluster did not catch up fully: its controllers reached the work limit of one command at %s and the clock moved on to %s; they go on from there (what was due in between was not run at its own time: a CronJob makes one Job for the schedules it missed)\n",
				at.UTC().Format(time.RFC3339), r.Clock.Now().UTC().Format(time.RFC3339))
		}
	}
	now, mode := s.Clock.Now(), s.Clock.Mode()
	if err := s.Close(ctx); err != nil {
		return err
	}
	fmt.Fprintf(g.Out, "%s %s\n", now.Format(time.RFC3339), mode)
	return nil
}
