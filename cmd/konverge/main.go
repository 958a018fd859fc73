// Command konverge applies, diffs and merges Kubernetes manifests the way
// kubectl does. See the README for the commands.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"

	"github.com/konverge/konverge/internal/cli"
)

// envCPUProfile names the environment variable that, when it names a
// file, makes the command write a CPU profile of itself there (go tool
// pprof reads it).
const envCPUProfile = "KONVERGE_CPUPROFILE"

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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	cmd := cli.NewRootCmd(cli.Streams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr})
	return cmd.ExecuteContext(ctx)
}
