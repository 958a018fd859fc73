package defaults

import (
	"github.com/konverge/konverge/quantity"
)

// normalizeQuantity gives a resource quantity (a JSON string or number)
// the canonical string form that kube-apiserver stores ("1000m" -> "1",
// "0.5" -> "500m", 1 -> "1", "1e3" -> "1e3").
func normalizeQuantity(v any) (any, error) {
	return quantity.Normalize(v)
}

// roundUpMilli rounds a canonical quantity up to milli-units, as
// SetDefaults_ResourceList does for requests, limits and the other
// resource lists ("100u" -> "1m", "1.0001m" -> "2m"), with
// Quantity.RoundUp's exact arithmetic, whatever the size of the value.
// Values that are not quantities are kept as they are.
func roundUpMilli(v any) any {
	s, ok := v.(string)
	if !ok {
		return v
	}
	q, err := quantity.Parse(s)
	if err != nil {
		return v
	}
	return q.RoundUp(-3).String()
}

// resourceList applies SetDefaults_ResourceList to the list m[key].
func resourceList(m map[string]any, key string) {
	rl, _ := m[key].(map[string]any)
	for k, v := range rl {
		rl[k] = roundUpMilli(v)
	}
}
