package cli

import (
	"io"
)

// warningPrinter prints the server's warnings on w as kubectl does,
// "Warning: ...", once each.
func warningPrinter(w io.Writer) func(string) {
	seen := map[string]bool{}
	return func(msg string) {
		if seen[msg] {
			return
		}
		seen[msg] = true
		printWarning(w, msg)
	}
}
