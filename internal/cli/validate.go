package cli

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/konverge/konverge/cluster"
)

// validateUsage is kubectl's help for --validate.
const validateUsage = `Must be one of: strict (or true), warn, ignore (or false). "true" or "strict" will use a schema to validate the input and fail the request if invalid. It will perform server side validation if ServerSideFieldValidation is enabled on the api-server, but will fall back to less reliable client-side validation if not. "warn" will warn about unknown or duplicate fields without blocking the request if server-side field validation is enabled on the API server, and behave as "ignore" otherwise. "false" or "ignore" will not perform any schema validation, silently dropping any unknown or duplicate fields.`

// validateFlag registers kubectl's --validate (default strict; alone,
// strict).
func validateFlag(fs *pflag.FlagSet, p *string) {
	fs.StringVar(p, "validate", "strict", validateUsage)
	fs.Lookup("validate").NoOptDefVal = "strict"
}

// fieldValidation is the fieldValidation a --validate value sends to the
// server: strict or true refuse unknown fields, warn reports them, ignore
// or false drops them silently.
func fieldValidation(v string) (cluster.FieldValidation, error) {
	switch v {
	case "strict", "true":
		return cluster.FieldValidationStrict, nil
	case "warn":
		return cluster.FieldValidationWarn, nil
	case "ignore", "false":
		return cluster.FieldValidationIgnore, nil
	}
	return "", fmt.Errorf(`invalid - validate option %q; must be one of: strict (or true), warn, ignore (or false)`, v)
}

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
