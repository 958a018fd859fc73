// Package cli holds konverge's commands: flags, reading files and printing.
// The work itself is done by the library packages (merge, schema, ...).
package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// Streams are where a command reads and writes.
type Streams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// ExitError ends the program with Code, printing Err if it is not nil.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// commands are the cluster commands, each registered by its own file's
// init function so that files stay independent.
var commands []func(g *Globals) *cobra.Command

// NewRootCmd returns the konverge command with all its subcommands.
func NewRootCmd(s Streams) *cobra.Command {
	root := &cobra.Command{
		Use:           "konverge",
		Short:         "Declarative apply engine for Kubernetes manifests",
		Long:          "konverge computes and applies what kubectl apply does: the three-way strategic merge between the last-applied configuration, your manifests and the live objects.",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(s.In)
	root.SetOut(s.Out)
	root.SetErr(s.ErrOut)
	g := &Globals{Streams: s}
	g.AddFlags(root)
	root.AddCommand(NewMergeCmd(&MergeOptions{Streams: s}))
	for _, add := range commands {
		root.AddCommand(add(g))
	}
	return root
}
