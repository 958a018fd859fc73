// Command konverge applies, diffs and merges Kubernetes manifests the way
// kubectl does. See docs/usage.md for the commands.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"

	"github.com/konverge/konverge/internal/cli"
)

// envCPUProfile names the environment variable that, when it names a
// file, makes the command write a CPU profile of itself there (go tool
// pprof reads it).
const envCPUProfile = "KONVERGE_CPUPROFILE"

// envMemProfile names the environment variable that, when it names a
// file, makes the command write a heap profile there as it ends: every
// allocation of the command (go tool pprof -sample_index=alloc_space).
const envMemProfile = "KONVERGE_MEMPROFILE"

func main() {
	err := run()
	if err == nil {
		return
	}
	var exit *cli.ExitError
	if errors.As(err, &exit) {
		if exit.Err != nil {
			fmt.Fprintln(os.Stderr, "error:", exit.Err)
		}
		os.Exit(exit.Code)
	}
	fmt.Fprintln(os.Stderr, "error:", err)
	os.Exit(1)
}

func run() error {
	if path := os.Getenv(envCPUProfile); path != "" {
		f, err := os.Create(path)
		if err != nil {
			return fmt.Errorf("%s: %w", envCPUProfile, err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return fmt.Errorf("%s: %w", envCPUProfile, err)
		}
		defer f.Close()
		defer pprof.StopCPUProfile()
	}
	if path := os.Getenv(envMemProfile); path != "" {
		f, err := os.Create(path)
		if err != nil {
			return fmt.Errorf("%s: %w", envMemProfile, err)
		}
		defer func() {
			runtime.GC() // the profile counts what was allocated up to here
			if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
				fmt.Fprintf(os.Stderr, "warning: %s: %v\n", envMemProfile, err)
			}
			f.Close()
		}()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	cmd := cli.NewRootCmd(cli.Streams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr})
	return cmd.ExecuteContext(ctx)
}
