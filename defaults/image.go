package defaults

import (
	"regexp"
	"strings"
)

// The grammar of container image references (github.com/distribution/reference),
// which kube-apiserver parses to default imagePullPolicy.
const (
	refAlnum     = `[a-z0-9]+`
	refSep       = `(?:[._]|__|[-]+)`
	refDomainCmp = `(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])`
	refDomain    = `(?:` + refDomainCmp + `(?:\.` + refDomainCmp + `)*|\[(?:[a-fA-F0-9:]+)\])(?::[0-9]+)?`
	refTag       = `[\w][\w.-]{0,127}`
	refDigest    = `[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*[:][[:xdigit:]]{32,}`
	refPathCmp   = refAlnum + `(?:` + refSep + refAlnum + `)*`
	refRemote    = refPathCmp + `(?:/` + refPathCmp + `)*`
	refName      = `(?:` + refDomain + `/)?` + refRemote
)

var (
	referenceRegexp  = regexp.MustCompile(`^(` + refName + `)(?::(` + refTag + `))?(?:@(` + refDigest + `))?$`)
	identifierRegexp = regexp.MustCompile(`^[a-f0-9]{64}$`)
	nameRegexp       = regexp.MustCompile(`^(?:(` + refDomain + `)/)?(` + refRemote + `)$`)
	digestEncodings  = map[string]*regexp.Regexp{
		"sha256": regexp.MustCompile(`^[a-f0-9]{64}$`),
		"sha384": regexp.MustCompile(`^[a-f0-9]{96}$`),
		"sha512": regexp.MustCompile(`^[a-f0-9]{128}$`),
	}
)

// imageTag returns the tag kube-apiserver sees in an image reference:
// the tag written, "latest" when there is neither tag nor digest, and ""
// when there is only a digest or the reference does not parse (which the
// API server then treats as "not latest").
func imageTag(image string) string {
	if identifierRegexp.MatchString(image) {
		return ""
	}
	domain, remainder := splitDockerDomain(image)
	remote := remainder
	if i := strings.IndexByte(remainder, ':'); i >= 0 {
		remote = remainder[:i]
	}
	if strings.ToLower(remote) != remote {
		return ""
	}
	m := referenceRegexp.FindStringSubmatch(domain + "/" + remainder)
	if m == nil {
		return ""
	}
	if nm := nameRegexp.FindStringSubmatch(m[1]); nm != nil && len(nm[2]) > 255 {
		return ""
	}
	tag, digest := m[2], m[3]
	if digest != "" {
		alg, enc, _ := strings.Cut(digest, ":")
		re, ok := digestEncodings[alg]
		if !ok || !re.MatchString(enc) {
			return ""
		}
	}
	if tag == "" && digest == "" {
		return "latest"
	}
	return tag
}

func splitDockerDomain(name string) (domain, remote string) {
	maybeDomain, maybeRemote, ok := strings.Cut(name, "/")
	if !ok {
		return "docker.io", "library/" + name
	}
	switch {
	case maybeDomain == "localhost":
		domain, remote = maybeDomain, maybeRemote
	case maybeDomain == "index.docker.io":
		domain, remote = "docker.io", maybeRemote
	case strings.ContainsAny(maybeDomain, ".:"):
		domain, remote = maybeDomain, maybeRemote
	case strings.ToLower(maybeDomain) != maybeDomain:
		domain, remote = maybeDomain, maybeRemote
	default:
		domain, remote = "docker.io", name
	}
	if domain == "docker.io" && !strings.ContainsRune(remote, '/') {
		remote = "library/" + remote
	}
	return domain, remote
}

// pullPolicyFor is the imagePullPolicy kube-apiserver defaults for image.
func pullPolicyFor(image string) string {
	if imageTag(image) == "latest" {
		return "Always"
	}
	return "IfNotPresent"
}
