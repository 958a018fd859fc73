package defaults

import (
	"strconv"
	"strings"

	"github.com/konverge/konverge/quantity"
)

// normalizeQuantity gives a resource quantity (a JSON string or number)
// the canonical string form that kube-apiserver stores ("1000m" -> "1",
// "0.5" -> "500m", 1 -> "1", "1e3" -> "1k").
//
// The API server parses a JSON number from its text ("1e3" stays "1e3");
// decoded numbers have lost that text, so they are printed back in Go's
// shortest form first.
//
// TODO(quantity): switch to quantity.Normalize (values as decoded JSON)
// when it lands, so that the number rules live in one place.
func normalizeQuantity(v any) (any, error) {
	var s string
	switch x := v.(type) {
	case string:
		s = strings.TrimSpace(x)
	case int64:
		s = strconv.FormatInt(x, 10)
	case float64:
		s = strconv.FormatFloat(x, 'g', -1, 64)
	default:
		_, err := quantity.Canonical("")
		return nil, err
	}
	return quantity.Canonical(s)
}

// roundUpMilli rounds a canonical quantity up to milli-units, as
// SetDefaults_ResourceList does for requests, limits and the other
// resource lists ("100u" -> "1m").
//
// TODO(quantity): implement with package quantity (quantity.RoundUp(v, -3)
// or an equivalent); until then quantities finer than 1m are kept.
var roundUpMilli = func(v any) any { return v }

// resourceList applies SetDefaults_ResourceList to the list m[key].
func resourceList(m map[string]any, key string) {
	rl, _ := m[key].(map[string]any)
	for k, v := range rl {
		rl[k] = roundUpMilli(v)
	}
}
