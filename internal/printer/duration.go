package printer

import (
	"time"

	"k8s.io/apimachinery/pkg/util/duration"
)

// HumanDuration prints d as kubectl prints ages: apimachinery's
// duration.HumanDuration, which kubectl itself calls.
func HumanDuration(d time.Duration) string { return duration.HumanDuration(d) }

// Since prints the age of t at now as kubectl's translateTimestampSince:
// "<unknown>" for the zero time.
func Since(t, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return HumanDuration(now.Sub(t))
}
