package validate

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
)

// TestPlainFormatsAsApimachinery: the checks that answer for plain
// strings first give apimachinery's answer, messages included, on random
// strings of the bytes that matter (and lengths about the limits).
func TestPlainFormatsAsApimachinery(t *testing.T) {
	pairs := []struct {
		name       string
		ours, want func(string) []string
	}{
		{"IsDNS1123Label", isDNS1123Label, validation.IsDNS1123Label},
		{"IsDNS1123Subdomain", isDNS1123Subdomain, validation.IsDNS1123Subdomain},
		{"IsQualifiedName", isQualifiedName, validation.IsQualifiedName},
		{"IsValidLabelValue", isLabelValue, validation.IsValidLabelValue},
		{"IsConfigMapKey", isConfigMapKey, validation.IsConfigMapKey},
		{"NameIsDNSSubdomain", func(s string) []string { return nameIsDNSSubdomain(s, false) }, func(s string) []string { return apivalidation.NameIsDNSSubdomain(s, false) }},
		{"NameIsDNSSubdomain prefix", func(s string) []string { return nameIsDNSSubdomain(s, true) }, func(s string) []string { return apivalidation.NameIsDNSSubdomain(s, true) }},
	}
	const alphabet = "ab09zAZ-._/ é\x00"
	r := rand.New(rand.NewPCG(5, 6))
	gen := func() string {
		var b strings.Builder
		n := r.IntN(12)
		switch r.IntN(8) {
		case 0:
			n = 60 + r.IntN(8)
		case 1:
			n = 250 + r.IntN(8)
		}
		for range n {
			if r.IntN(3) == 0 {
				b.WriteByte(alphabet[r.IntN(len(alphabet))])
			} else {
				b.WriteByte("abc019"[r.IntN(6)])
			}
		}
		return b.String()
	}
	fixed := []string{"", ".", "..", "..a", "a..b", "a.-b", "a-.b", "-a", "a-", "a/b", "/b", "a/", "a//b", "example.com/app", "app.kubernetes.io/name", strings.Repeat("a", 63), strings.Repeat("a", 64), strings.Repeat("a", 253), strings.Repeat("a", 254)}
	accepted := 0
	for i := range 40_000 {
		s := gen()
		if i < len(fixed) {
			s = fixed[i]
		}
		for _, p := range pairs {
			got, want := p.ours(s), p.want(s)
			if !slices.Equal(got, want) {
				t.Fatalf("%s(%q) = %q, apimachinery %q", p.name, s, got, want)
			}
			if len(want) == 0 {
				accepted++
			}
		}
	}
	if accepted < 2_000 {
		t.Fatalf("only %d strings accepted: the test does not reach the plain path", accepted)
	}
}
