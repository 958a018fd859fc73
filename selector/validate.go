package selector

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// The validation of label keys and values below reproduces
// k8s.io/apimachinery/pkg/api/validate/content (IsLabelKey, IsLabelValue,
// IsDNS1123Subdomain) and the field.Error wording of
// k8s.io/apimachinery/pkg/util/validation/field, message for message.

const (
	labelKeyFmt      = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
	labelKeyErrMsg   = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
	labelKeyMaxLen   = 63
	labelValueFmt    = "(" + labelKeyFmt + ")?"
	labelValueErrMsg = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
	labelValueMaxLen = 63

	dns1123LabelFmt          = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
	dns1123SubdomainFmt      = dns1123LabelFmt + "(\\." + dns1123LabelFmt + ")*"
	dns1123SubdomainErrorMsg = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"
	dns1123SubdomainMaxLen   = 253
)

func maxLenError(n int) string { return fmt.Sprintf("must be no more than %d bytes", n) }

const emptyError = "must be non-empty"

// regexError is content.RegexError, double spaces included.
func regexError(msg, re string, examples ...string) string {
	if len(examples) == 0 {
		return msg + " (regex used for validation is '" + re + "')"
	}
	msg += " (e.g. "
	for i := range examples {
		if i > 0 {
			msg += " or "
		}
		msg += "'" + examples[i] + "', "
	}
	msg += "regex used for validation is '" + re + "')"
	return msg
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// matchesLabelKeyName reports whether s matches ^labelKeyFmt$.
func matchesLabelKeyName(s string) bool {
	if s == "" || !isAlnum(s[0]) || !isAlnum(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		c := s[i]
		if !isAlnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

// matchesDNS1123Subdomain reports whether s matches ^dns1123SubdomainFmt$.
func matchesDNS1123Subdomain(s string) bool {
	for label := range strings.SplitSeq(s, ".") {
		if label == "" {
			return false
		}
		lowerAlnum := func(c byte) bool { return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' }
		if !lowerAlnum(label[0]) || !lowerAlnum(label[len(label)-1]) {
			return false
		}
		for i := 1; i < len(label)-1; i++ {
			if c := label[i]; !lowerAlnum(c) && c != '-' {
				return false
			}
		}
	}
	return true
}

func isDNS1123Subdomain(value string) []string {
	var errs []string
	if len(value) > dns1123SubdomainMaxLen {
		errs = append(errs, maxLenError(dns1123SubdomainMaxLen))
	}
	if !matchesDNS1123Subdomain(value) {
		errs = append(errs, regexError(dns1123SubdomainErrorMsg, dns1123SubdomainFmt, "example.com"))
	}
	return errs
}

// labelKeyErrors is content.IsLabelKey.
func labelKeyErrors(value string) []string {
	var errs []string
	parts := strings.Split(value, "/")
	var name string
	switch len(parts) {
	case 1:
		name = parts[0]
	case 2:
		var prefix string
		prefix, name = parts[0], parts[1]
		if len(prefix) == 0 {
			errs = append(errs, "prefix part "+emptyError)
		} else if msgs := isDNS1123Subdomain(prefix); len(msgs) != 0 {
			for _, m := range msgs {
				errs = append(errs, "prefix part "+m)
			}
		}
	default:
		return append(errs, "a valid label key "+regexError(labelKeyErrMsg, labelKeyFmt, "MyName", "my.name", "123-abc")+
			" with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')")
	}
	if len(name) == 0 {
		errs = append(errs, "name part "+emptyError)
	} else if len(name) > labelKeyMaxLen {
		errs = append(errs, "name part "+maxLenError(labelKeyMaxLen))
	}
	if !matchesLabelKeyName(name) {
		errs = append(errs, "name part "+regexError(labelKeyErrMsg, labelKeyFmt, "MyName", "my.name", "123-abc"))
	}
	return errs
}

// labelValueErrors is content.IsLabelValue.
func labelValueErrors(value string) []string {
	var errs []string
	if len(value) > labelValueMaxLen {
		errs = append(errs, maxLenError(labelValueMaxLen))
	}
	if value != "" && !matchesLabelKeyName(value) {
		errs = append(errs, regexError(labelValueErrMsg, labelValueFmt, "MyValue", "my_value", "12345"))
	}
	return errs
}

// invalid formats a field.Invalid error: `path: Invalid value: "v": detail`.
// A nil path prints as "<nil>", as a nil *field.Path does.
func invalid(path string, value any, detail string) string {
	var v string
	switch x := value.(type) {
	case string:
		v = strconv.Quote(x)
	default:
		b, err := json.Marshal(x)
		if err != nil {
			v = fmt.Sprintf("%#v", x)
		} else {
			v = string(b)
		}
	}
	s := path + ": Invalid value: " + v
	if detail != "" {
		s += ": " + detail
	}
	return s
}

// aggregate joins messages as utilerrors.Aggregate prints them: one message
// alone, several in brackets, duplicates dropped.
func aggregate(msgs []string) string {
	seen := make(map[string]bool, len(msgs))
	var out []string
	for _, m := range msgs {
		if !seen[m] {
			seen[m] = true
			out = append(out, m)
		}
	}
	if len(out) == 1 {
		return out[0]
	}
	return "[" + strings.Join(out, ", ") + "]"
}

// validateKey is labels.validateLabelKey: "" when the key is valid.
func validateKey(key, path string) string {
	if errs := labelKeyErrors(key); len(errs) != 0 {
		return invalid(path, key, strings.Join(errs, "; "))
	}
	return ""
}

// validateValue is labels.validateLabelValue.
func validateValue(key, value, path string) string {
	if errs := labelValueErrors(value); len(errs) != 0 {
		return invalid(path+"["+key+"]", value, strings.Join(errs, "; "))
	}
	return ""
}
