package validate

import (
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
)

// The string formats of object names, label keys and values, ports and the
// rest are apimachinery's util/validation (and api/validation for object
// names): kube-apiserver validates with them, so their messages are the
// ones it returns. This file gives them the names the validators here use.
//
// The common formats answer first from a check of their bytes that
// accepts exactly the plain strings their patterns accept (most names,
// keys and values are), without running the pattern; anything else goes
// to apimachinery, whose messages are returned.
var (
	isWildcardDNS1123Subdomain = validation.IsWildcardDNS1123Subdomain
	isValidPortName            = validation.IsValidPortName
	isRelaxedEnvVarName        = validation.IsRelaxedEnvVarName
	isValidPercent             = validation.IsValidPercent
	isHTTPHeaderName           = validation.IsHTTPHeaderName
	regexError                 = validation.RegexError

	nameIsDNSLabel nameFunc = apivalidation.NameIsDNSLabel
)

func isDNS1123Label(v string) []string {
	if plainLabel(v) {
		return nil
	}
	return validation.IsDNS1123Label(v)
}

func isDNS1123Subdomain(v string) []string {
	if plainSubdomain(v) {
		return nil
	}
	return validation.IsDNS1123Subdomain(v)
}

func isQualifiedName(v string) []string {
	if plainQualifiedName(v) {
		return nil
	}
	return validation.IsQualifiedName(v)
}

func isLabelValue(v string) []string {
	if v == "" || len(v) <= 63 && plainName(v) {
		return nil
	}
	return validation.IsValidLabelValue(v)
}

func isConfigMapKey(v string) []string {
	if plainConfigMapKey(v) {
		return nil
	}
	return validation.IsConfigMapKey(v)
}

func nameIsDNSSubdomain(name string, prefix bool) []string {
	if !prefix && plainSubdomain(name) {
		return nil
	}
	return apivalidation.NameIsDNSSubdomain(name, prefix)
}

func isLowerAlnum(c byte) bool { return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' }

func isAlnum(c byte) bool { return isLowerAlnum(c) || 'A' <= c && c <= 'Z' }

// plainLabel: a DNS-1123 label, [a-z0-9]([-a-z0-9]*[a-z0-9])? of at most
// 63 bytes.
func plainLabel(v string) bool {
	if len(v) == 0 || len(v) > 63 || !isLowerAlnum(v[0]) || !isLowerAlnum(v[len(v)-1]) {
		return false
	}
	for i := 1; i < len(v)-1; i++ {
		if c := v[i]; !isLowerAlnum(c) && c != '-' {
			return false
		}
	}
	return true
}

// plainSubdomain: a DNS-1123 subdomain, labels of [a-z0-9] and '-' that
// start and end with [a-z0-9], joined by dots, of at most 253 bytes.
func plainSubdomain(v string) bool {
	if len(v) == 0 || len(v) > 253 || !isLowerAlnum(v[0]) || !isLowerAlnum(v[len(v)-1]) {
		return false
	}
	for i := 1; i < len(v)-1; i++ {
		switch c := v[i]; {
		case isLowerAlnum(c):
		case c == '-':
			if v[i+1] == '.' {
				return false
			}
		case c == '.':
			if !isLowerAlnum(v[i+1]) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// plainName: ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9], of any length.
func plainName(v string) bool {
	if len(v) == 0 || !isAlnum(v[0]) || !isAlnum(v[len(v)-1]) {
		return false
	}
	for i := 1; i < len(v)-1; i++ {
		if c := v[i]; !isAlnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

// plainQualifiedName: a name of at most 63 bytes (plainName), behind a
// DNS-1123 subdomain and a slash or not.
func plainQualifiedName(v string) bool {
	name := v
	for i := 0; i < len(v); i++ {
		if v[i] == '/' {
			if !plainSubdomain(v[:i]) {
				return false
			}
			name = v[i+1:]
			break
		}
	}
	return len(name) <= 63 && plainName(name)
}

// plainConfigMapKey: [-._a-zA-Z0-9]+ of at most 253 bytes, neither "."
// nor starting with "..".
func plainConfigMapKey(v string) bool {
	if len(v) == 0 || len(v) > 253 || v == "." || len(v) >= 2 && v[0] == '.' && v[1] == '.' {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; !isAlnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

// nameFunc validates an object name; prefix is true for generateName.
type nameFunc func(name string, prefix bool) []string

// isValidPortNum checks a port number (1 to 65535); int is 64 bits
// wide where konverge builds.
func isValidPortNum(port int64) []string { return validation.IsValidPortNum(int(port)) }

// inclusiveRangeError is the message of a number outside [lo, hi].
func inclusiveRangeError(lo, hi int64) string {
	return validation.InclusiveRangeError(int(lo), int(hi))
}
