package kubelet

import (
	"fmt"
	"regexp"
	"strings"
)

// The grammar of an image reference (the distribution project's, which
// the kubelet parses with): a container whose image does not follow it
// waits with InvalidImageName, never pulled.
var (
	domainComponent = `(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])`
	domain          = `(?:` + domainComponent + `(?:\.` + domainComponent + `)*|\[(?:[a-fA-F0-9:]+)\])(?::[0-9]+)?`
	pathComponent   = `[a-z0-9]+(?:(?:[_.]|__|[-]+)[a-z0-9]+)*`
	tagPattern      = `[\w][\w.-]{0,127}`
	digestPattern   = `[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}`
	referenceRe     = regexp.MustCompile(`^((?:` + domain + `/)?` + pathComponent + `(?:/` + pathComponent + `)*)(?::(` + tagPattern + `))?(?:@(` + digestPattern + `))?$`)
	anchoredHex64   = regexp.MustCompile(`^[a-f0-9]{64}$`)
)

// invalidImage returns the kubelet's message for an image it cannot
// parse, "" for a valid one.
func invalidImage(image string) string {
	why := ""
	m := referenceRe.FindStringSubmatch(image)
	switch {
	case image == "":
		why = "repository name must have at least one component"
	case m == nil:
		why = "invalid reference format"
		if l := strings.ToLower(image); l != image && referenceRe.MatchString(lowerName(image)) {
			why = fmt.Sprintf("invalid reference format: repository name (%s) must be lowercase", repoName(image))
		}
	case len(m[1]) > 255:
		why = "repository name must not be more than 255 characters"
	case anchoredHex64.MatchString(m[1]):
		why = fmt.Sprintf("invalid repository name (%s), cannot specify 64-byte hexadecimal strings", m[1])
	}
	if why == "" {
		return ""
	}
	return fmt.Sprintf("Failed to apply default image tag %q: couldn't parse image name %q: %s", image, image, why)
}

// lowerName lowers the name part of a reference (not its tag or digest).
func lowerName(image string) string {
	name, rest := splitName(image)
	return strings.ToLower(name) + rest
}

func splitName(image string) (name, rest string) {
	name = image
	if i := strings.Index(name, "@"); i >= 0 {
		name, rest = name[:i], name[i:]
	}
	if i := strings.LastIndex(name, ":"); i >= 0 && !strings.Contains(name[i:], "/") {
		name, rest = name[:i], name[i:]+rest
	}
	return name, rest
}

// repoName is the repository as the error names it: the name without the
// domain of a registry, and "library/" for the default one.
func repoName(image string) string {
	name, _ := splitName(image)
	first, remainder, ok := strings.Cut(name, "/")
	switch {
	case !ok:
		return "library/" + name
	case strings.ContainsAny(first, ".:") || first == "localhost" || strings.ToLower(first) != first:
		return remainder
	}
	return name
}
