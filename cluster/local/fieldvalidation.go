package local

import (
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/value"
)

// withValidation sets the field validation of a call and returns what
// restores the caller's (calls nest: a namespace's create creates its
// ServiceAccount).
func (t *txn) withValidation(v string) func() {
	prev := t.validation
	t.validation = v
	return func() { t.validation = prev }
}

// checkUnknown applies the call's field validation to the unknown fields
// the decode of an object dropped: Strict refuses the request as
// kube-apiserver does (400 for a body, 422 naming the patch for a patch),
// Warn (the default) warns once per field, Ignore says nothing.
func (t *txn) checkUnknown(res cluster.Resource, name string, unknown []string) error {
	if len(unknown) == 0 {
		return nil
	}
	switch cluster.FieldValidation(t.validation) {
	case cluster.FieldValidationIgnore:
		return nil
	case cluster.FieldValidationStrict:
	default:
		for _, f := range unknown {
			t.warnings = append(t.warnings, fmt.Sprintf("unknown field %q", f))
		}
		return nil
	}
	parts := make([]string, len(unknown))
	for i, f := range unknown {
		parts[i] = fmt.Sprintf("unknown field %q", f)
	}
	strict := "strict decoding error: " + strings.Join(parts, ", ")
	if t.patchBody != nil {
		p, err := value.Decode(t.patchBody)
		if err != nil {
			p = string(t.patchBody)
		}
		msg := fmt.Sprintf("Invalid value: %q: %s", goFormat(p), strict)
		return &cluster.StatusError{Code: 422, Reason: cluster.ReasonInvalid,
			Message: ` "" is invalid: patch: ` + msg,
			Causes:  []cluster.Cause{{Type: "FieldValueInvalid", Field: "patch", Message: msg}}}
	}
	kind, version := res.GVK.Kind, res.GVK.Version
	return cluster.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %s", kind, version, kind, strict))
}

// goFormat prints a JSON value as Go's %v prints it decoded
// (map[a:1 b:[x y]]), as kube-apiserver quotes a patch in its errors.
func goFormat(v any) string {
	var b strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			b.WriteString("map[")
			for i, k := range keys {
				if i > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(k)
				b.WriteByte(':')
				walk(x[k])
			}
			b.WriteByte(']')
		case []any:
			b.WriteByte('[')
			for i, e := range x {
				if i > 0 {
					b.WriteByte(' ')
				}
				walk(e)
			}
			b.WriteByte(']')
		case string:
			b.WriteString(x)
		case bool:
			b.WriteString(strconv.FormatBool(x))
		case int64:
			b.WriteString(strconv.FormatInt(x, 10))
		case float64:
			b.WriteString(strconv.FormatFloat(x, 'g', -1, 64))
		case nil:
			b.WriteString("<nil>")
		default:
			fmt.Fprint(&b, x)
		}
	}
	walk(v)
	return b.String()
}

// endpointsDeprecated is kube-apiserver's warning on every request for
// v1 Endpoints.
const endpointsDeprecated = "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"

var endpointsGK = groupKind{"", "Endpoints"}

// warnRequest adds the warnings a request for a kind gets whatever it
// does (deprecated APIs).
func (t *txn) warnRequest(gk groupKind) {
	if gk == endpointsGK {
		t.warnings = append(t.warnings, endpointsDeprecated)
	}
}

// warnObject adds the warnings of the registry strategies on a create or
// update: a kubernetes.io/tls Secret whose certificate and key do not make
// a key pair.
func (t *txn) warnObject(gk groupKind, obj map[string]any) {
	if gk != (groupKind{"", "Secret"}) || str(obj, "type") != "kubernetes.io/tls" {
		return
	}
	data, _ := obj["data"].(map[string]any)
	decode := func(k string) []byte {
		s, _ := data[k].(string)
		b, _ := base64.StdEncoding.DecodeString(s)
		return b
	}
	if _, err := tls.X509KeyPair(decode("tls.crt"), decode("tls.key")); err != nil {
		t.warnings = append(t.warnings, err.Error())
	}
}
