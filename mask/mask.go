package mask

import (
	"cmp"
	"encoding/base64"
	"maps"
	"slices"
	"strings"

	"github.com/konverge/konverge/lastapplied"
	"github.com/konverge/konverge/objref"
	"github.com/konverge/konverge/value"
)

// The masks of Secret values, kubectl diff's.
const (
	// Masked replaces a value.
	Masked = "***"
	// Before and After replace the two values of a key that changes.
	Before = "*** (before)"
	After  = "*** (after)"
)

// fields are the fields of a Secret whose values are masked.
var fields = []string{"data", "stringData"}

// IsSecret reports whether obj is a v1 Secret, the only kind whose values
// are masked (kubectl checks the version and kind only).
func IsSecret(obj map[string]any) bool {
	api, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	return api == "v1" && kind == "Secret"
}

// Object returns obj with its Secret values masked: every value of data
// and stringData, in the object and in its last-applied annotation, is
// Masked. Objects that are not Secrets are returned as they are.
func Object(obj map[string]any) map[string]any {
	if !IsSecret(obj) {
		return obj
	}
	out, _ := pair(obj, nil)
	return out
}

// Pair masks two versions of one object, before and after a change (either
// may be nil), as kubectl diff's Masker does: every value becomes Masked,
// except that a key present on both sides with different values becomes
// Before and After. If neither is a Secret, both are returned as they are.
func Pair(before, after map[string]any) (map[string]any, map[string]any) {
	if !IsSecret(before) && !IsSecret(after) {
		return before, after
	}
	return pair(before, after)
}

func pair(from, to map[string]any) (map[string]any, map[string]any) {
	for _, f := range fields {
		fm, _ := from[f].(map[string]any)
		tm, _ := to[f].(map[string]any)
		if fm == nil && tm == nil {
			continue
		}
		fm, tm = maskMaps(fm, tm)
		if from != nil && fm != nil {
			from = with(from, f, fm)
		}
		if to != nil && tm != nil {
			to = with(to, f, tm)
		}
	}
	fa, fok := annotation(from)
	ta, tok := annotation(to)
	if fok || tok {
		fa, ta = maskAnnotations(fa, ta, fok, tok)
		if fok {
			from = withAnnotation(from, fa)
		}
		if tok {
			to = withAnnotation(to, ta)
		}
	}
	return from, to
}

// maskMaps masks two maps of values, returning copies (nil stays nil).
func maskMaps(from, to map[string]any) (map[string]any, map[string]any) {
	var f, t map[string]any
	if from != nil {
		f = make(map[string]any, len(from))
	}
	if to != nil {
		t = make(map[string]any, len(to))
	}
	for k, fv := range from {
		if tv, ok := to[k]; ok {
			if !value.Equal(fv, tv) {
				f[k], t[k] = Before, After
				continue
			}
			t[k] = Masked
		}
		f[k] = Masked
	}
	for k := range to {
		if _, ok := from[k]; !ok {
			t[k] = Masked
		}
	}
	return f, t
}

func with(obj map[string]any, field string, v any) map[string]any {
	out := maps.Clone(obj)
	out[field] = v
	return out
}

// annotation returns the last-applied annotation of obj.
func annotation(obj map[string]any) (string, bool) {
	s, ok := objref.Annotations(obj)[lastapplied.Annotation]
	return s, ok
}

func withAnnotation(obj map[string]any, s string) map[string]any {
	ann := maps.Clone(objref.Metadata(obj)["annotations"].(map[string]any))
	ann[lastapplied.Annotation] = s
	return objref.WithMetadata(obj, "annotations", ann)
}

// maskAnnotations masks the Secret values inside two last-applied
// annotations, keeping them byte for byte as kubectl writes them otherwise.
// An annotation that does not decode is masked whole.
func maskAnnotations(from, to string, fromOK, toOK bool) (string, string) {
	decode := func(s string, ok bool) (map[string]any, bool) {
		if !ok {
			return nil, true
		}
		m, err := value.DecodeObject([]byte(s))
		return m, err == nil
	}
	fm, fgood := decode(from, fromOK)
	tm, tgood := decode(to, toOK)
	if !fgood || !tgood {
		// Masked whole, still showing whether they differ.
		if from == to {
			return Masked, Masked
		}
		return Before, After
	}
	fm, tm = pair(fm, tm)
	encode := func(m map[string]any, orig string) string {
		if m == nil {
			return ""
		}
		b, err := value.Encode(m)
		if err != nil {
			return Masked
		}
		if strings.HasSuffix(orig, "\n") {
			b = append(b, '\n')
		}
		return string(b)
	}
	return encode(fm, from), encode(tm, to)
}

// Patch masks the Secret values of a patch of a Secret: every value of
// data and stringData (nulls, which delete, and directives stay) and
// those in the last-applied annotation it sets. A nil patch stays nil.
// The patch is assumed to be a Secret's: the caller knows what it patches.
func Patch(patch map[string]any) map[string]any {
	if patch == nil {
		return nil
	}
	out := patch
	for _, f := range fields {
		m, ok := patch[f].(map[string]any)
		if !ok {
			continue
		}
		masked := make(map[string]any, len(m))
		for k, v := range m {
			if v == nil || strings.HasPrefix(k, "$") {
				masked[k] = v
			} else {
				masked[k] = Masked
			}
		}
		out = with(out, f, masked)
	}
	if s, ok := annotation(out); ok {
		masked, _ := maskAnnotations(s, "", true, false)
		out = withAnnotation(out, masked)
	}
	return out
}

// Text replaces, in msg, every value of the Secret's data and stringData
// (as written and, for data, base64-decoded) that is at least four bytes
// long by Masked: a safety net for messages that come from elsewhere (an
// API server's error) and may quote the object. Shorter values are left,
// since they would mask unrelated text.
func Text(msg string, secret map[string]any) string {
	if secret == nil {
		return msg
	}
	var values []string
	for _, field := range fields {
		m, _ := secret[field].(map[string]any)
		for _, v := range m {
			s, ok := v.(string)
			if !ok {
				continue
			}
			values = append(values, s)
			if field == "data" {
				if d, err := base64.StdEncoding.DecodeString(s); err == nil {
					values = append(values, string(d))
				}
			}
		}
	}
	// Longest first, so that a value containing another goes whole.
	slices.SortFunc(values, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	for _, v := range values {
		if len(v) >= 4 {
			msg = strings.ReplaceAll(msg, v, Masked)
		}
	}
	return msg
}
