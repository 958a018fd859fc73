package validate

import (
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
)

// The string formats of object names, label keys and values, ports and the
// rest are apimachinery's util/validation (and api/validation for object
// names): kube-apiserver validates with them, so their messages are the
// ones it returns. This file gives them the names the validators here use.
var (
	isDNS1123Label             = validation.IsDNS1123Label
	isDNS1123Subdomain         = validation.IsDNS1123Subdomain
	isWildcardDNS1123Subdomain = validation.IsWildcardDNS1123Subdomain
	isQualifiedName            = validation.IsQualifiedName
	isLabelValue               = validation.IsValidLabelValue
	isValidPortName            = validation.IsValidPortName
	isRelaxedEnvVarName        = validation.IsRelaxedEnvVarName
	isConfigMapKey             = validation.IsConfigMapKey
	isValidPercent             = validation.IsValidPercent
	isHTTPHeaderName           = validation.IsHTTPHeaderName
	regexError                 = validation.RegexError

	nameIsDNSSubdomain nameFunc = apivalidation.NameIsDNSSubdomain
	nameIsDNSLabel     nameFunc = apivalidation.NameIsDNSLabel
)

// nameFunc validates an object name; prefix is true for generateName.
type nameFunc func(name string, prefix bool) []string

// isValidPortNum checks a port number (1 to 65535); int is 64 bits
// wide where konverge builds.
func isValidPortNum(port int64) []string { return validation.IsValidPortNum(int(port)) }

// inclusiveRangeError is the message of a number outside [lo, hi].
func inclusiveRangeError(lo, hi int64) string {
	return validation.InclusiveRangeError(int(lo), int(hi))
}
