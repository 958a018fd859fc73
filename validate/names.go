package validate

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
)

// The string formats of apimachinery's util/validation and
// api/validate/content, with their messages.

func maxLenChars(n int) string { return fmt.Sprintf("must be no more than %d characters", n) }
func maxLenBytes(n int) string { return fmt.Sprintf("must be no more than %d bytes", n) }

func regexError(msg, re string, examples ...string) string {
	if len(examples) == 0 {
		return msg + " (regex used for validation is '" + re + "')"
	}
	msg += " (e.g. "
	for i, e := range examples {
		if i > 0 {
			msg += " or "
		}
		msg += "'" + e + "', "
	}
	return msg + "regex used for validation is '" + re + "')"
}

func inclusiveRangeError(lo, hi int64) string {
	return fmt.Sprintf("must be between %d and %d, inclusive", lo, hi)
}

const (
	dns1123LabelFmt     = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
	dns1123LabelErrMsg  = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character"
	dns1123SubdomainFmt = dns1123LabelFmt + "(\\." + dns1123LabelFmt + ")*"
	dns1123SubdomainMsg = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"
	dns1035LabelFmt     = "[a-z]([-a-z0-9]*[a-z0-9])?"
	dns1035LabelErrMsg  = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character"
	wildcardFmt         = "\\*\\." + dns1123SubdomainFmt
	wildcardErrMsg      = "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character"
	labelKeyFmt         = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
	labelKeyErrMsg      = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
	labelValueFmt       = "(" + labelKeyFmt + ")?"
	labelValueErrMsg    = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
	envVarNameFmt       = "[-._a-zA-Z][-._a-zA-Z0-9]*"
	configMapKeyFmt     = `[-._a-zA-Z0-9]+`
	configMapKeyErrMsg  = "a valid config key must consist of alphanumeric characters, '-', '_' or '.'"
	percentFmt          = "[0-9]+%"
	percentErrMsg       = "a valid percent string must be a numeric string followed by an ending '%'"
	httpHeaderNameFmt   = "[-A-Za-z0-9]+"
	httpHeaderErrMsg    = "a valid HTTP header must consist of alphanumeric characters or '-'"
	cIdentifierFmt      = "[A-Za-z_][A-Za-z0-9_]*"
)

var (
	dns1123LabelRe     = regexp.MustCompile("^" + dns1123LabelFmt + "$")
	dns1123SubdomainRe = regexp.MustCompile("^" + dns1123SubdomainFmt + "$")
	dns1035LabelRe     = regexp.MustCompile("^" + dns1035LabelFmt + "$")
	wildcardRe         = regexp.MustCompile("^" + wildcardFmt + "$")
	labelKeyRe         = regexp.MustCompile("^" + labelKeyFmt + "$")
	labelValueRe       = regexp.MustCompile("^" + labelValueFmt + "$")
	envVarNameRe       = regexp.MustCompile("^" + envVarNameFmt + "$")
	configMapKeyRe     = regexp.MustCompile("^" + configMapKeyFmt + "$")
	percentRe          = regexp.MustCompile("^" + percentFmt + "$")
	httpHeaderNameRe   = regexp.MustCompile("^" + httpHeaderNameFmt + "$")
	portNameCharsetRe  = regexp.MustCompile("^[-a-z0-9]+$")
	portNameLetterRe   = regexp.MustCompile("[a-z]")
	cIdentifierRe      = regexp.MustCompile("^" + cIdentifierFmt + "$")
)

func isDNS1123Label(v string) []string {
	var errs []string
	if len(v) > 63 {
		errs = append(errs, maxLenChars(63))
	}
	if !dns1123LabelRe.MatchString(v) {
		if dns1123SubdomainRe.MatchString(v) {
			errs = append(errs, "must not contain dots")
		} else {
			errs = append(errs, regexError(dns1123LabelErrMsg, dns1123LabelFmt, "my-name", "123-abc"))
		}
	}
	return errs
}

func isDNS1123Subdomain(v string) []string {
	var errs []string
	if len(v) > 253 {
		errs = append(errs, maxLenChars(253))
	}
	if !dns1123SubdomainRe.MatchString(v) {
		errs = append(errs, regexError(dns1123SubdomainMsg, dns1123SubdomainFmt, "example.com"))
	}
	return errs
}

func isDNS1035Label(v string) []string {
	var errs []string
	if len(v) > 63 {
		errs = append(errs, maxLenChars(63))
	}
	if !dns1035LabelRe.MatchString(v) {
		errs = append(errs, regexError(dns1035LabelErrMsg, dns1035LabelFmt, "my-name", "abc-123"))
	}
	return errs
}

func isWildcardDNS1123Subdomain(v string) []string {
	var errs []string
	if len(v) > 253 {
		errs = append(errs, maxLenChars(253))
	}
	if !wildcardRe.MatchString(v) {
		errs = append(errs, regexError(wildcardErrMsg, wildcardFmt, "*.example.com"))
	}
	return errs
}

// contentDNS1123Subdomain is api/validate/content's variant (its length
// message counts bytes), used for label key prefixes.
func contentDNS1123Subdomain(v string) []string {
	var errs []string
	if len(v) > 253 {
		errs = append(errs, maxLenBytes(253))
	}
	if !dns1123SubdomainRe.MatchString(v) {
		errs = append(errs, regexError(dns1123SubdomainMsg, dns1123SubdomainFmt, "example.com"))
	}
	return errs
}

// isQualifiedName is IsLabelKey (IsQualifiedName).
func isQualifiedName(v string) []string {
	var errs []string
	parts := strings.Split(v, "/")
	var name string
	switch len(parts) {
	case 1:
		name = parts[0]
	case 2:
		prefix := parts[0]
		name = parts[1]
		if prefix == "" {
			errs = append(errs, "prefix part must be non-empty")
		} else if msgs := contentDNS1123Subdomain(prefix); len(msgs) != 0 {
			for _, m := range msgs {
				errs = append(errs, "prefix part "+m)
			}
		}
	default:
		return append(errs, "a valid label key "+regexError(labelKeyErrMsg, labelKeyFmt, "MyName", "my.name", "123-abc")+
			" with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')")
	}
	if name == "" {
		errs = append(errs, "name part must be non-empty")
	} else if len(name) > 63 {
		errs = append(errs, "name part "+maxLenBytes(63))
	}
	if !labelKeyRe.MatchString(name) {
		errs = append(errs, "name part "+regexError(labelKeyErrMsg, labelKeyFmt, "MyName", "my.name", "123-abc"))
	}
	return errs
}

func isLabelValue(v string) []string {
	var errs []string
	if len(v) > 63 {
		errs = append(errs, maxLenBytes(63))
	}
	if !labelValueRe.MatchString(v) {
		errs = append(errs, regexError(labelValueErrMsg, labelValueFmt, "MyValue", "my_value", "12345"))
	}
	return errs
}

func isValidPortNum(port int64) []string {
	if port >= 1 && port <= 65535 {
		return nil
	}
	return []string{inclusiveRangeError(1, 65535)}
}

// isValidPortName is IANA_SVC_NAME.
func isValidPortName(port string) []string {
	var errs []string
	if len(port) > 15 {
		errs = append(errs, maxLenChars(15))
	}
	if !portNameCharsetRe.MatchString(port) {
		errs = append(errs, "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
	}
	if !portNameLetterRe.MatchString(port) {
		errs = append(errs, "must contain at least one letter (a-z)")
	}
	if strings.Contains(port, "--") {
		errs = append(errs, "must not contain consecutive hyphens")
	}
	if len(port) > 0 && (port[0] == '-' || port[len(port)-1] == '-') {
		errs = append(errs, "must not begin or end with a hyphen")
	}
	return errs
}

// isRelaxedEnvVarName is the env var name rule of 1.37
// (RelaxedEnvironmentVariableValidation is GA).
func isRelaxedEnvVarName(v string) []string {
	var errs []string
	if v == "" {
		errs = append(errs, "environment variable name must be non-empty")
	}
	for _, r := range v {
		if r > unicode.MaxASCII || !unicode.IsPrint(r) || r == '=' {
			errs = append(errs, "a valid environment variable name must consist only of printable ASCII characters other than '='")
			break
		}
	}
	return errs
}

func hasChDirPrefix(v string) []string {
	switch {
	case v == ".":
		return []string{`must not be '.'`}
	case v == "..":
		return []string{`must not be '..'`}
	case strings.HasPrefix(v, ".."):
		return []string{`must not start with '..'`}
	}
	return nil
}

func isConfigMapKey(v string) []string {
	var errs []string
	if len(v) > 253 {
		errs = append(errs, maxLenChars(253))
	}
	if !configMapKeyRe.MatchString(v) {
		errs = append(errs, regexError(configMapKeyErrMsg, configMapKeyFmt, "key.name", "KEY_NAME", "key-name"))
	}
	return append(errs, hasChDirPrefix(v)...)
}

func isValidPercent(v string) []string {
	if !percentRe.MatchString(v) {
		return []string{regexError(percentErrMsg, percentFmt, "1%", "93%")}
	}
	return nil
}

func isHTTPHeaderName(v string) []string {
	if !httpHeaderNameRe.MatchString(v) {
		return []string{regexError(httpHeaderErrMsg, httpHeaderNameFmt, "X-Header-Name")}
	}
	return nil
}

// nameFunc validates an object name; prefix is true for generateName.
type nameFunc func(name string, prefix bool) []string

func maskTrailingDash(name string) string {
	if len(name) > 1 && strings.HasSuffix(name, "-") {
		return name[:len(name)-2] + "a"
	}
	return name
}

func nameIsDNSSubdomain(name string, prefix bool) []string {
	if prefix {
		name = maskTrailingDash(name)
	}
	return isDNS1123Subdomain(name)
}

func nameIsDNSLabel(name string, prefix bool) []string {
	if prefix {
		name = maskTrailingDash(name)
	}
	return isDNS1123Label(name)
}

func nameIsDNS1035Label(name string, prefix bool) []string {
	if prefix {
		name = maskTrailingDash(name)
	}
	return isDNS1035Label(name)
}
