package kinds

import (
	"strconv"
	"strings"
)

// compareKubeAwareVersions is version.CompareKubeAwareVersionStrings of
// apimachinery: GA versions before beta before alpha, higher numbers first
// within each (positive when a ranks before b), and versions that are not
// of the form v<N>[alpha|beta<M>] after them, in alphabetical order.
func compareKubeAwareVersions(a, b string) int {
	if a == b {
		return 0
	}
	amaj, atype, amin, aok := parseKubeVersion(a)
	bmaj, btype, bmin, bok := parseKubeVersion(b)
	switch {
	case !aok && !bok:
		return strings.Compare(b, a)
	case !aok:
		return -1
	case !bok:
		return 1
	}
	if atype != btype {
		return atype - btype
	}
	if amaj != bmaj {
		return amaj - bmaj
	}
	return amin - bmin
}

const (
	alpha = iota
	beta
	ga
)

// parseKubeVersion matches ^v(\d+)(?:(alpha|beta)(\d+))?$.
func parseKubeVersion(v string) (major, kind, minor int, ok bool) {
	rest, found := strings.CutPrefix(v, "v")
	if !found {
		return 0, 0, 0, false
	}
	n := 0
	for n < len(rest) && '0' <= rest[n] && rest[n] <= '9' {
		n++
	}
	if n == 0 {
		return 0, 0, 0, false
	}
	major, err := strconv.Atoi(rest[:n])
	if err != nil {
		return 0, 0, 0, false
	}
	rest = rest[n:]
	if rest == "" {
		return major, ga, 0, true
	}
	switch {
	case strings.HasPrefix(rest, "alpha"):
		kind, rest = alpha, rest[len("alpha"):]
	case strings.HasPrefix(rest, "beta"):
		kind, rest = beta, rest[len("beta"):]
	default:
		return 0, 0, 0, false
	}
	if rest == "" || strings.Trim(rest, "0123456789") != "" {
		return 0, 0, 0, false
	}
	minor, err = strconv.Atoi(rest)
	if err != nil {
		return 0, 0, 0, false
	}
	return major, kind, minor, true
}
