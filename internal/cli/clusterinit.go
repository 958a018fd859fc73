package cli

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/konverge/konverge/clock"
	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/kubelet"
	"github.com/konverge/konverge/sim"
)

// newClusterCmd is konverge cluster, whose subcommands (init, reset) are
// listed in commands.go.
func newClusterCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "cluster",
		Short: "Manage the embedded cluster",
	}
}

// ClusterInitOptions are the flags of `konverge cluster init`.
type ClusterInitOptions struct {
	*Globals
	Clock      string
	Profile    string
	StartTime  string
	Force      bool
	ShowConfig bool
	// Reset moves the state file aside first (cluster reset).
	Reset bool
}

// NewClusterResetCmd returns `konverge cluster reset`.
func NewClusterResetCmd(o *ClusterInitOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "reset",
		Short: "Start the embedded cluster over, keeping the old state file aside",
		Long: `Move the embedded cluster's state file (--state DIR/state.db) aside, to
DIR/state.db.<time>.bak, and create an empty cluster in its place, with the
clock and simulation profile the flags give (as "konverge cluster init").

This is the way out of a state file konverge cannot use (damaged, truncated,
empty, of another program or of a newer konverge): nothing is deleted, the
old file stays next to the new one. It fails while another konverge process
uses the state.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.complete(cmd)
			return o.Run(cmd.Context())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Clock, "clock", "wall", "how the cluster time moves: wall or manual")
	f.StringVar(&o.Profile, "sim-profile", "", "simulation profile (YAML) of the simulated node; default: the built-in one")
	f.StringVar(&o.StartTime, "start-time", "", "cluster time at which a manual clock starts, RFC 3339 (default 2026-01-01T00:00:00Z)")
	return cmd
}

// NewClusterInitCmd returns `konverge cluster init`.
func NewClusterInitCmd(o *ClusterInitOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Create the embedded cluster and set its clock and simulation profile",
		Long: `Create the embedded cluster in --state (default $KONVERGE_STATE, else ./.konverge)
and record how its virtual clock moves and how its simulated node behaves.

Clock modes:
  wall    (default) the cluster time follows the wall clock: every command first
          runs what the controllers and the kubelet would have done since the
          last one. Waiting commands (rollout status) fast-forward instead of
          sleeping, and "konverge clock advance" moves the cluster ahead of the
          wall clock, which then waits for the wall clock to catch up.
  manual  the cluster time moves only with "konverge clock advance" and waiting
          commands; it starts at --start-time (default 2026-01-01T00:00:00Z), so
          that runs are reproducible.

--sim-profile FILE gives the simulation profile (which images pull, how long
containers take to start, which exit, what probes answer); without it the
default profile is used (print it with --show-profile).

Any command creates the state on first use with a wall clock and the default
profile; init on a state that already has a clock fails unless --force, which
resets the clock and the profile (objects are kept).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.complete(cmd)
			return o.Run(cmd.Context())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Clock, "clock", "wall", "how the cluster time moves: wall or manual")
	f.StringVar(&o.Profile, "sim-profile", "", "simulation profile (YAML) of the simulated node; default: the built-in one")
	f.StringVar(&o.StartTime, "start-time", "", "cluster time at which a manual clock starts, RFC 3339 (default 2026-01-01T00:00:00Z)")
	f.BoolVar(&o.Force, "force", false, "re-initialize the clock and profile of an existing state (objects are kept)")
	f.BoolVar(&o.ShowConfig, "show-profile", false, "print the default simulation profile and exit")
	return cmd
}

// Run initializes the state.
func (o *ClusterInitOptions) Run(ctx context.Context) error {
	if o.ShowConfig {
		_, err := o.Out.Write(kubelet.DefaultProfileYAML())
		return err
	}
	mode, err := clock.ParseMode(o.Clock)
	if err != nil {
		return fmt.Errorf("--clock: %w", err)
	}
	start := clock.Epoch
	if o.StartTime != "" {
		if mode != clock.Manual {
			return fmt.Errorf("--start-time needs --clock=manual (a wall clock starts at the wall time)")
		}
		if start, err = time.Parse(time.RFC3339, o.StartTime); err != nil {
			return fmt.Errorf("--start-time: want RFC 3339 (2026-01-01T00:00:00Z): %w", err)
		}
		if err := clock.CheckRange(start); err != nil {
			return fmt.Errorf("--start-time %s: %w", o.StartTime, err)
		}
	}
	if mode == clock.Wall {
		start = clock.WallNow()
	}
	profile := kubelet.DefaultProfileYAML()
	if o.Profile != "" {
		if profile, err = os.ReadFile(o.Profile); err != nil {
			return fmt.Errorf("--sim-profile: %w", err)
		}
	}
	p, err := kubelet.ParseProfile(profile)
	if err != nil {
		return fmt.Errorf("--sim-profile %s: %w", o.Profile, err)
	}
	if o.Reset {
		if o.realCluster() {
			return fmt.Errorf("cluster reset works on the embedded cluster only")
		}
		stamp := clock.WallNow().Format("20060102T150405Z")
		backup, err := local.ResetState(o.StateDir(), stamp)
		if err != nil {
			return fmt.Errorf("cluster reset: %w", err)
		}
		if backup != "" {
			fmt.Fprintf(o.Out, "the old state file is kept as %s\n", backup)
		}
		o.Force = true
	}
	s, err := o.Open(withInitClock(ctx, mode, start))
	if err != nil {
		return err
	}
	defer s.Close(ctx)
	r := s.Sim()
	if r == nil {
		return fmt.Errorf("cluster init works on the embedded cluster only")
	}
	if v, _ := simSessions.Load(s); !v.(*simSession).fresh && !o.Force {
		return fmt.Errorf("the embedded cluster in %s is already initialized (clock %s at %s); use --force to reset its clock and simulation profile",
			s.Store.Dir(), s.Clock.Mode(), s.Clock.Now().Format(time.RFC3339))
	}
	if err := kubelet.SaveProfile(ctx, s.Store, profile); err != nil {
		return err
	}
	s.Clock.Reset(mode, start)
	r.Controllers = sim.Controllers(p)
	dir := s.Store.Dir()
	if err := s.Close(ctx); err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "embedded cluster initialized in %s: clock %s at %s\n", dir, mode, start.Format(time.RFC3339))
	return nil
}
