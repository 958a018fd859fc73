package replicaset

import (
	"errors"

	"github.com/konverge/konverge/value"
)

func valueEqual(a, b map[string]any) bool { return value.Equal(a, b) }

func joinErrs(errs []error) error { return errors.Join(errs...) }

// hasAll reports whether labels holds every key and value of want.
func hasAll(labels, want map[string]string) bool {
	for k, v := range want {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}
