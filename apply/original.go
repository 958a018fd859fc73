package apply

import (
	"math"
	"unicode/utf8"

	"github.com/konverge/konverge/lastapplied"
	"github.com/konverge/konverge/objref"
)

// originalOf returns the configuration live's last-applied annotation
// records, as lastapplied.Get does. When the annotation is the one modified
// carries (the config was applied as it is now: most objects of a re-plan),
// it does not decode it: the annotation is the encoding of modified without
// it, which is that value again when config holds only values that decode
// as themselves (decoding the text would give the same maps).
func originalOf(live, modified, config map[string]any) (map[string]any, error) {
	la, _ := liveAnnotations(live)[lastapplied.Annotation].(string)
	if la != "" {
		if ma, _ := liveAnnotations(modified)[lastapplied.Annotation].(string); la == ma && decodesAsItself(config) {
			return lastapplied.Strip(modified), nil
		}
	}
	return lastapplied.Get(live)
}

func liveAnnotations(obj map[string]any) map[string]any {
	a, _ := objref.Metadata(obj)["annotations"].(map[string]any)
	return a
}

// decodesAsItself reports whether v holds only the values value.Decode
// makes (maps, lists, valid UTF-8 strings, int64, float64 that are not
// integral, booleans, null), so that decoding its encoding gives v again.
func decodesAsItself(v any) bool {
	switch x := v.(type) {
	case nil, bool, int64:
		return true
	case string:
		return utf8.ValidString(x)
	case float64:
		return x != math.Trunc(x) && !math.IsInf(x, 0) && !math.IsNaN(x)
	case map[string]any:
		for k, e := range x {
			if !utf8.ValidString(k) || !decodesAsItself(e) {
				return false
			}
		}
		return true
	case []any:
		for _, e := range x {
			if !decodesAsItself(e) {
				return false
			}
		}
		return true
	}
	return false
}
