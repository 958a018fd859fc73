package replicaset

import (
	"github.com/konverge/konverge/value"
)

func valueEqual(a, b map[string]any) bool { return value.Equal(a, b) }

// hasAllLabels reports whether labels (as an object holds them) has
// every key and value of want.
func hasAllLabels(labels map[string]any, want map[string]string) bool {
	for k, v := range want {
		if got, ok := labels[k].(string); !ok || got != v {
			return false
		}
	}
	return true
}
