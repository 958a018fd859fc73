package merge

import (
	"github.com/konverge/konverge/schema"
)

// Options tune ThreeWay. The zero value computes what kubectl apply sends by
// default.
type Options struct {
	// DetectConflicts makes ThreeWay fail with a *ConflictError when live
	// changed, since the last apply, a field that the config changes too
	// (kubectl apply --overwrite=false). By default the config wins.
	DetectConflicts bool
	// Validated tells ThreeWay that config passed Validate against the
	// same schema (a caller that validates its input once, up front):
	// it is not validated again.
	Validated bool
}

// ThreeWay returns the strategic merge patch that client-side kubectl apply
// sends to turn live into the object the config asks for: fields of
// lastApplied that the config dropped are deleted, fields the config sets
// are set, and everything else live holds (fields that other writers set,
// such as replicas after a scale, and server defaults) is kept.
//
// lastApplied is the configuration of the previous apply (the
// kubectl.kubernetes.io/last-applied-configuration annotation; nil for
// none), config the one being applied, live the object as it is now; t is
// the schema of their kind (schema.Builtin().Lookup, or nil for JSON merge
// semantics with every list atomic). The patch is what a Kubernetes API
// server accepts as application/strategic-merge-patch+json; Apply applies it.
// It is empty when live needs no change.
//
// The config is validated against t first: a value of the wrong type, an
// element of a merged list without its key and two elements with the same
// key are *FieldErrors that name the field path.
//
// ThreeWay does not modify its arguments; the patch may share values with
// config.
func ThreeWay(lastApplied, config, live map[string]any, t *schema.Type, opts Options) (map[string]any, error) {
	if !opts.Validated {
		if err := Validate(config, t); err != nil {
			return nil, err
		}
	}
	return threeWayMaps(lastApplied, config, live, t, opts, false)
}

// ThreeWayReapplied is ThreeWay for a config applied again as it was:
// lastApplied is config without the last-applied annotation (which
// config carries, as kubectl sends it), or config itself. Nothing was
// dropped from the config, so nothing is deleted, and it computes only
// the changes from live to config, not the deletions from lastApplied.
// The patch is ThreeWay's, for any such lastApplied; unlike ThreeWay, it
// does not check config's $patch directives against lastApplied's (a
// value that is not a string is an error there).
func ThreeWayReapplied(lastApplied, config, live map[string]any, t *schema.Type, opts Options) (map[string]any, error) {
	if !opts.Validated {
		if err := Validate(config, t); err != nil {
			return nil, err
		}
	}
	return threeWayMaps(lastApplied, config, live, t, opts, true)
}

// threeWayMaps is ThreeWay without validation: the patch is the changes
// from live to config, without deletions, merged with the deletions from
// lastApplied to config (none when reapplied).
func threeWayMaps(lastApplied, config, live map[string]any, t *schema.Type, opts Options, reapplied bool) (map[string]any, error) {
	delta := &differ{fullKey: true}
	changes, err := delta.diffMaps(live, config, lastApplied, t, diffOptions{ignoreDeletions: true, setElementOrder: true})
	if err != nil {
		return nil, err
	}
	var deletions map[string]any
	if !reapplied {
		dels := &differ{}
		deletions, err = dels.diffMaps(lastApplied, config, live, t, diffOptions{ignoreChangesAndAdditions: true, setElementOrder: true})
		if err != nil {
			return nil, err
		}
	}
	var patch map[string]any
	switch {
	case len(deletions) == 0 && changes == nil:
		patch = map[string]any{}
	case len(deletions) == 0 && !hasDirectives(changes):
		patch = changes
	default:
		c := &patcher{}
		patch, err = c.mergeMap(deletions, changes, t)
		if err != nil {
			return nil, err
		}
	}
	if opts.DetectConflicts {
		if patch, err = detectConflicts(lastApplied, live, patch, t); err != nil {
			return nil, err
		}
	}
	return patch, nil
}

// hasDirectives reports whether a changes patch holds anything that merging
// it into an empty deletions patch would rewrite.
func hasDirectives(m map[string]any) bool {
	if _, ok := m[patchKey]; ok {
		return true
	}
	for k, v := range m {
		if v == nil {
			continue
		}
		if isDirectiveKey(k) {
			return true
		}
		switch x := v.(type) {
		case map[string]any:
			if hasDirectives(x) {
				return true
			}
		case []any:
			for _, el := range x {
				if em, ok := el.(map[string]any); ok && hasDirectives(em) {
					return true
				}
			}
		}
	}
	return false
}

// Apply applies a strategic merge patch to live as a Kubernetes API server
// does and returns the new object: maps merge key by key, null deletes,
// lists merge by their schema's strategy, and the directives $patch,
// $retainKeys, $setElementOrder and $deleteFromPrimitiveList are carried out.
// t is the schema of live's kind (nil for JSON merge semantics).
//
// Apply does not modify live or patch. The result shares the values that
// did not change with live, and values it took whole with patch: copy it
// (value.DeepCopy) before modifying it in place.
func Apply(live, patch map[string]any, t *schema.Type) (map[string]any, error) {
	p := &patcher{server: true}
	return p.mergeMap(live, patch, t)
}
