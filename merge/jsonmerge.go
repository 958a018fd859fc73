package merge

import (
	"fmt"

	jsonpatch "github.com/evanphx/json-patch/v5"

	"github.com/konverge/konverge/value"
)

// ThreeWayJSONMerge returns the JSON merge patch (RFC 7386) that client-side
// kubectl apply sends for kinds without a strategic merge schema (custom
// resources, unknown kinds): the changes from live to config without
// deletions, plus the deletions from lastApplied to config. Lists are
// atomic: a list the config changes is replaced whole.
//
// It does not modify its arguments; the patch may share values with config.
func ThreeWayJSONMerge(lastApplied, config, live map[string]any) (map[string]any, error) {
	changes := keepNulls(mergeDiff(live, config), false)
	deletions := keepNulls(mergeDiff(lastApplied, config), true)
	return mergePatches(deletions, changes), nil
}

// mergeDiff is the JSON merge patch from a to b (evanphx/json-patch's
// CreateMergePatch on values).
func mergeDiff(a, b map[string]any) map[string]any {
	out := map[string]any{}
	for k, bv := range b {
		av, ok := a[k]
		if !ok {
			out[k] = bv
			continue
		}
		am, aok := av.(map[string]any)
		bm, bok := bv.(map[string]any)
		switch {
		case aok && bok:
			if d := mergeDiff(am, bm); len(d) > 0 {
				out[k] = d
			}
		case !value.Equal(av, bv) || value.TypeName(av) != value.TypeName(bv):
			out[k] = bv
		}
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			out[k] = nil
		}
	}
	return out
}

// keepNulls keeps only the nulls of a merge patch (the deletions), or only
// the rest (changes and additions), as kubectl's three-way JSON merge does.
// An explicitly empty object is a value, not an empty patch.
func keepNulls(m map[string]any, nulls bool) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		switch x := v.(type) {
		case nil:
			if nulls {
				out[k] = nil
			}
		case map[string]any:
			if len(x) == 0 {
				if !nulls {
					out[k] = x
				}
				continue
			}
			if sub := keepNulls(x, nulls); len(sub) > 0 {
				out[k] = sub
			}
		default:
			if !nulls {
				out[k] = v
			}
		}
	}
	return out
}

// mergePatches merges the changes patch into the deletions patch as
// evanphx/json-patch's MergePatch does: a change that does not merge into
// an object of the deletions loses its null fields, also those of objects
// in lists (args: [{"a": null}] becomes [{}]).
func mergePatches(deletions, changes map[string]any) map[string]any {
	out := make(map[string]any, len(deletions)+len(changes))
	for k, v := range deletions {
		out[k] = v
	}
	for k, cv := range changes {
		dm, dok := out[k].(map[string]any)
		cm, cok := cv.(map[string]any)
		switch {
		case dok && cok:
			out[k] = mergePatches(dm, cm)
		case dok:
			out[k] = cv
		default:
			out[k] = pruneNulls(cv)
		}
	}
	return out
}

// MergePatch applies a JSON merge patch (RFC 7386) to live and returns the
// new object: objects merge key by key, null deletes, anything else
// (lists included) replaces. It does not modify its arguments; the result
// shares unchanged values with them.
func MergePatch(live, patch map[string]any) map[string]any {
	out := make(map[string]any, len(live)+len(patch))
	for k, v := range live {
		out[k] = v
	}
	for k, pv := range patch {
		if pv == nil {
			delete(out, k)
			continue
		}
		pm, pok := pv.(map[string]any)
		lm, lok := out[k].(map[string]any)
		if pok && lok {
			out[k] = MergePatch(lm, pm)
			continue
		}
		out[k] = pruneNulls(pv)
	}
	return out
}

// pruneNulls drops the null fields of objects inside v, as RFC 7386 does
// with a value that has nothing to merge into.
func pruneNulls(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if !hasNulls(x) {
			return x
		}
		out := make(map[string]any, len(x))
		for k, el := range x {
			if el != nil {
				out[k] = pruneNulls(el)
			}
		}
		return out
	case []any:
		if !hasNulls(x) {
			return x
		}
		out := make([]any, len(x))
		for i, el := range x {
			out[i] = pruneNulls(el)
		}
		return out
	}
	return v
}

func hasNulls(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		for _, el := range x {
			if el == nil || hasNulls(el) {
				return true
			}
		}
	case []any:
		for _, el := range x {
			if hasNulls(el) {
				return true
			}
		}
	}
	return false
}

// JSONPatch applies a JSON patch (RFC 6902: add, remove, replace, move,
// copy, test) to live and returns the new object.
func JSONPatch(live map[string]any, patch []byte) (map[string]any, error) {
	p, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		return nil, fmt.Errorf("merge: invalid JSON patch: %w", err)
	}
	doc, err := value.Encode(live)
	if err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	out, err := p.Apply(doc)
	if err != nil {
		return nil, fmt.Errorf("merge: applying JSON patch: %w", err)
	}
	m, err := value.DecodeObject(out)
	if err != nil {
		return nil, fmt.Errorf("merge: JSON patch result: %w", err)
	}
	return m, nil
}
