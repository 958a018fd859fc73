package diff

import (
	"maps"
	"strings"

	"github.com/konverge/konverge/lastapplied"
	"github.com/konverge/konverge/objref"
	"github.com/konverge/konverge/value"
)

// The masks of Secret values, kubectl diff's.
const (
	maskDefault = "***"
	maskBefore  = "*** (before)"
	maskAfter   = "*** (after)"
)

// maskedFields are the fields of a Secret whose values are masked.
var maskedFields = []string{"data", "stringData"}

// maskPair masks the Secret values of from and to as kubectl diff's Masker
// does: every value becomes "***", except that a key on both sides with
// different values becomes "*** (before)" and "*** (after)", so that the
// change shows. kubectl masks data only; konverge masks stringData too, and
// the copies of both inside the last-applied annotation, with the same
// rule between the two annotations. Neither object is modified.
func maskPair(from, to map[string]any) (map[string]any, map[string]any) {
	for _, f := range maskedFields {
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
				f[k], t[k] = maskBefore, maskAfter
				continue
			}
			t[k] = maskDefault
		}
		f[k] = maskDefault
	}
	for k := range to {
		if _, ok := from[k]; !ok {
			t[k] = maskDefault
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
			return maskDefault, maskDefault
		}
		return maskBefore, maskAfter
	}
	fm, tm = maskPair(fm, tm)
	encode := func(m map[string]any, orig string) string {
		if m == nil {
			return ""
		}
		b, err := value.Encode(m)
		if err != nil {
			return maskDefault
		}
		if strings.HasSuffix(orig, "\n") {
			b = append(b, '\n')
		}
		return string(b)
	}
	return encode(fm, from), encode(tm, to)
}

// maskPatch masks the Secret values of a patch: every value of data and
// stringData (nulls, which delete, stay) and those in the annotation it
// sets.
func maskPatch(patch map[string]any) map[string]any {
	if patch == nil {
		return nil
	}
	out := patch
	for _, f := range maskedFields {
		m, ok := patch[f].(map[string]any)
		if !ok {
			continue
		}
		masked := make(map[string]any, len(m))
		for k, v := range m {
			if v == nil || strings.HasPrefix(k, "$") {
				masked[k] = v
			} else {
				masked[k] = maskDefault
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
