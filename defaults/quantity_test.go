package defaults

import "testing"

func TestRoundUpMilli(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"100u", "1m"},
		{"1500u", "2m"},
		{"1m", "1m"},
		{"500m", "500m"},
		{"1", "1"},
		{"1Gi", "1Gi"},
		{"1n", "1m"},
		{"2e-6", "1e-3"},
		{"1001u", "2m"},
	} {
		if got := roundUpMilli(c.in); got != c.want {
			t.Errorf("roundUpMilli(%q) = %v, want %q", c.in, got, c.want)
		}
	}
}
