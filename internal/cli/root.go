// Package cli holds konverge's commands: flags, reading files and printing.
// The work itself is done by the library packages (merge, schema, ...).
package cli

import (
	"errors"
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

// closeAtEnd makes every command close the sessions it opened when it
// ends, and report a failure to do so: a command exits 0 only when what
// it did is saved. A command that failed keeps its exit code (at least 1;
// diff's 1 means differences, so a failure to save is 2).
func closeAtEnd(g *Globals, cmd *cobra.Command) {
	if run := cmd.RunE; run != nil {
		cmd.RunE = func(c *cobra.Command, args []string) error {
			err := run(c, args)
			cerr := g.closeSessions(c.Context())
			if cerr == nil {
				return err
			}
			var exit *ExitError
			switch {
			case err == nil:
				return cerr
			case errors.As(err, &exit):
				code := max(exit.Code, 1)
				if c.Name() == "diff" && code == 1 {
					code = 2
				}
				if exit.Err == nil || errors.Is(err, cerr) {
					return &ExitError{Code: code, Err: cerr}
				}
				return &ExitError{Code: code, Err: errors.Join(exit.Err, cerr)}
			case errors.Is(err, cerr):
				return err
			}
			return errors.Join(err, cerr)
		}
	}
	for _, sub := range cmd.Commands() {
		closeAtEnd(g, sub)
	}
}
