package apply

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/konverge/konverge/objref"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

// IgnoreRule makes plan, diff and apply leave some fields of some objects
// to others: a field it names is neither reported as a change, nor
// overwritten, nor deleted, whatever the configuration and the
// last-applied annotation say about it. Typical fields are spec.replicas of
// a Deployment that a HorizontalPodAutoscaler scales, the caBundle of a
// webhook that a certificate controller injects, or every field another
// field manager owns.
//
// A rule selects objects by Kind (with Group), Namespace and Name; an empty
// selector field matches every object. Group is compared only when Kind is
// set ("" is then the core group).
//
// An ignored field of an object that exists keeps its live value (or stays
// absent); the last-applied annotation still records the configuration as
// written, so that the field is managed again once the rule goes. Objects
// that do not exist yet are created with the configuration as it is. With
// server-side apply, an ignored field is left out of the applied
// configuration.
type IgnoreRule struct {
	// Group and Kind select a kind ("apps", "Deployment"); Kind "" selects
	// every kind.
	Group, Kind string
	// Namespace and Name select objects; "" selects any.
	Namespace, Name string
	// Paths are the ignored fields, each as a field path or a JSON pointer:
	//
	//	spec.replicas
	//	spec.template.spec.containers[name="app"].image
	//	webhooks[*].clientConfig.caBundle
	//	spec.template.spec.containers[0].args
	//	metadata.finalizers[="example.com/cleanup"]
	//	/spec/replicas
	//	/metadata/annotations/example.com~1revision
	//	/webhooks/*/clientConfig/caBundle
	//
	// A field path is a dot-separated list of field names, each followed
	// by list selectors: [*] (every element), [N] (the N-th), [k="v"] or
	// [k1="v",k2=80] (the element with those key fields), [="v"] (the
	// element of a list of scalars), or [name] (a field whose name holds
	// dots: metadata.labels[app.kubernetes.io/name]). It is the spelling
	// of value.Path, so that the String of a Change's Paths, of an
	// ObjectError's Path or of a FieldConflict's Path is a rule's path as
	// it is. A JSON pointer (RFC 6901, "~1" for "/" and "~0" for "~"; a
	// value.Path's Pointer) names one field a segment, a number selects a
	// list element by index and "*" every element. A path that ends on a
	// list element ignores the element whole.
	Paths []string
	// Managers ignores every field that one of these field managers owns
	// in the live object's metadata.managedFields ("kube-controller-manager"
	// for the replicas an autoscaler sets through the scale subresource).
	// Only the fields themselves, not the list elements that hold them, are
	// ignored.
	Managers []string
}

// Matches reports whether the rule selects the object ref names.
func (r IgnoreRule) Matches(ref objref.Ref) bool {
	if r.Kind != "" && (r.Kind != ref.Kind || r.Group != ref.Group) {
		return false
	}
	return (r.Namespace == "" || r.Namespace == ref.Namespace) && (r.Name == "" || r.Name == ref.Name)
}

// segKind is what one step of an ignored path selects.
type segKind uint8

const (
	segField  segKind = iota // a field of an object
	segNumber                // from a JSON pointer: a list index, or a field of an object
	segIndex                 // the N-th element of a list
	segAny                   // every element of a list
	segKeys                  // the element of a list with these key fields
	segValue                 // the element of a list of scalars equal to val
)

// seg is one step of an ignored path.
type seg struct {
	kind  segKind
	name  string
	index int
	keys  []value.KeyField
	val   any
}

// fieldPath is a parsed ignored path.
type fieldPath []seg

// compiledRule is an IgnoreRule with its paths parsed.
type compiledRule struct {
	rule  IgnoreRule
	paths []fieldPath
}

// compileIgnore parses the paths of rules.
func compileIgnore(rules []IgnoreRule) ([]compiledRule, error) {
	out := make([]compiledRule, 0, len(rules))
	var errs []error
	for i, r := range rules {
		if r.Group != "" && r.Kind == "" {
			errs = append(errs, fmt.Errorf("ignore rule %d: group %q without a kind", i+1, r.Group))
		}
		c := compiledRule{rule: r}
		for _, p := range r.Paths {
			fp, err := ParseFieldPath(p)
			if err != nil {
				errs = append(errs, fmt.Errorf("ignore rule %d: %w", i+1, err))
				continue
			}
			c.paths = append(c.paths, fp.segs)
		}
		out = append(out, c)
	}
	return out, errors.Join(errs...)
}

// FieldPath is a parsed path of an IgnoreRule.
type FieldPath struct {
	segs fieldPath
	src  string
}

// String returns the path as it was written.
func (p FieldPath) String() string { return p.src }

// Path returns the path as a value.Path; ok is false when it has a
// wildcard ([*], "*") or, from a JSON pointer, a number (an index or a
// field named by digits, which only the object tells apart).
func (p FieldPath) Path() (path value.Path, ok bool) {
	for _, sg := range p.segs {
		switch sg.kind {
		case segField:
			path = append(path, value.FieldElement(sg.name))
		case segIndex:
			path = append(path, value.IndexElement(sg.index))
		case segKeys:
			path = append(path, value.KeyElement(sg.keys...))
		case segValue:
			path = append(path, value.ValueElement(sg.val))
		default:
			return nil, false
		}
	}
	return path, true
}

// ParseFieldPath parses a path as IgnoreRule.Paths takes them, reporting
// what is wrong with it.
func ParseFieldPath(s string) (FieldPath, error) {
	var segs fieldPath
	var err error
	if strings.HasPrefix(s, "/") {
		segs, err = parsePointer(s)
	} else {
		segs, err = parseDotted(s)
	}
	if err == nil && len(segs) == 0 {
		err = errors.New("empty path")
	}
	if err != nil {
		return FieldPath{}, fmt.Errorf("path %q: %w", s, err)
	}
	return FieldPath{segs: segs, src: s}, nil
}

func parsePointer(s string) (fieldPath, error) {
	var out fieldPath
	for _, part := range strings.Split(s[1:], "/") {
		if part == "" {
			return nil, errors.New("empty segment")
		}
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		switch n, err := strconv.Atoi(part); {
		case part == "*":
			out = append(out, seg{kind: segAny})
		case err == nil && n >= 0 && part == strconv.Itoa(n):
			out = append(out, seg{kind: segNumber, name: part, index: n})
		default:
			out = append(out, seg{kind: segField, name: part})
		}
	}
	return out, nil
}

func parseDotted(s string) (fieldPath, error) {
	s = strings.TrimPrefix(s, ".")
	var out fieldPath
	for i := 0; i < len(s); {
		switch s[i] {
		case '.':
			if i == 0 || i == len(s)-1 || s[i+1] == '.' || s[i+1] == '[' {
				return nil, fmt.Errorf("empty field name at offset %d", i)
			}
			i++
		case '[':
			end, sg, err := parseSelector(s, i)
			if err != nil {
				return nil, err
			}
			if len(out) == 0 {
				return nil, errors.New("a list selector must follow a field name")
			}
			out = append(out, sg)
			i = end
		default:
			j := i
			for j < len(s) && s[j] != '.' && s[j] != '[' {
				if s[j] == ']' || s[j] == '"' {
					return nil, fmt.Errorf("unexpected %q at offset %d", s[j], j)
				}
				j++
			}
			out = append(out, seg{kind: segField, name: s[i:j]})
			i = j
		}
	}
	return out, nil
}

// parseSelector reads the list selector that starts at s[i] == '['.
func parseSelector(s string, i int) (int, seg, error) {
	end := -1
	inQuote := false
	for j := i + 1; j < len(s); j++ {
		switch {
		case inQuote && s[j] == '\\':
			j++
		case s[j] == '"':
			inQuote = !inQuote
		case !inQuote && s[j] == ']':
			end = j
		}
		if end >= 0 {
			break
		}
	}
	if end < 0 {
		return 0, seg{}, fmt.Errorf("unclosed [ at offset %d", i)
	}
	body := s[i+1 : end]
	switch {
	case body == "*":
		return end + 1, seg{kind: segAny}, nil
	case body == "":
		return 0, seg{}, fmt.Errorf("empty [] at offset %d", i)
	case body[0] == '=':
		v, err := parseKeyValue(body[1:])
		if err != nil {
			return 0, seg{}, fmt.Errorf("[%s]: %w", body, err)
		}
		return end + 1, seg{kind: segValue, val: v}, nil
	}
	if n, err := strconv.Atoi(body); err == nil {
		if n < 0 {
			return 0, seg{}, fmt.Errorf("[%s]: negative index", body)
		}
		return end + 1, seg{kind: segIndex, index: n}, nil
	}
	if !strings.Contains(body, "=") {
		// A map key as kube-apiserver and value.Path write one that
		// holds a dot: metadata.labels[app.kubernetes.io/name].
		return end + 1, seg{kind: segField, name: body}, nil
	}
	var keys []value.KeyField
	for _, kv := range splitUnquoted(body, ',') {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return 0, seg{}, fmt.Errorf("[%s]: want key=value", body)
		}
		val, err := parseKeyValue(v)
		if err != nil {
			return 0, seg{}, fmt.Errorf("[%s]: %w", body, err)
		}
		keys = append(keys, value.KeyField{Name: k, Value: val})
	}
	return end + 1, seg{kind: segKeys, keys: keys}, nil
}

// parseKeyValue reads a key value: a JSON string, number, boolean or null.
func parseKeyValue(s string) (any, error) {
	v, err := value.Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("value %s: want a quoted string, a number or a boolean", s)
	}
	switch v.(type) {
	case map[string]any, []any:
		return nil, fmt.Errorf("value %s: want a quoted string, a number or a boolean", s)
	}
	return v, nil
}

// splitUnquoted splits s at sep outside double quotes.
func splitUnquoted(s string, sep byte) []string {
	var out []string
	start, inQuote := 0, false
	for j := 0; j < len(s); j++ {
		switch {
		case inQuote && s[j] == '\\':
			j++
		case s[j] == '"':
			inQuote = !inQuote
		case !inQuote && s[j] == sep:
			out = append(out, s[start:j])
			start = j + 1
		}
	}
	return append(out, s[start:])
}

// ignoredPaths returns the paths the rules ignore on the object ref
// names, whose live version is live.
func ignoredPaths(rules []compiledRule, ref objref.Ref, live map[string]any) []fieldPath {
	var out []fieldPath
	for _, r := range rules {
		if !r.rule.Matches(ref) {
			continue
		}
		out = append(out, r.paths...)
		if len(r.rule.Managers) > 0 && live != nil {
			out = append(out, managedPaths(live, r.rule.Managers)...)
		}
	}
	return out
}

// managedPaths returns the fields managers own in obj's managedFields:
// the leaves of their fieldsV1 sets.
func managedPaths(obj map[string]any, managers []string) []fieldPath {
	entries, _ := objref.Metadata(obj)["managedFields"].([]any)
	var out []fieldPath
	for _, e := range entries {
		m, _ := e.(map[string]any)
		manager, _ := m["manager"].(string)
		if !slices.Contains(managers, manager) {
			continue
		}
		fields, _ := m["fieldsV1"].(map[string]any)
		collectFields(fields, nil, &out)
	}
	return out
}

// collectFields walks a fieldsV1 set ({"f:spec":{"f:replicas":{}}}),
// adding the path of every leaf.
func collectFields(set map[string]any, prefix fieldPath, out *[]fieldPath) {
	for k, v := range set {
		if k == "." {
			continue
		}
		sg, ok := fieldsV1Seg(k)
		if !ok {
			continue
		}
		p := append(slices.Clip(prefix), sg)
		child, _ := v.(map[string]any)
		leaf := true
		for ck := range child {
			if ck != "." {
				leaf = false
				break
			}
		}
		if leaf {
			if sg.kind == segField {
				*out = append(*out, p)
			}
			continue
		}
		collectFields(child, p, out)
	}
}

// fieldsV1Seg reads one key of a fieldsV1 set: f:<name>, k:<json keys>,
// v:<json value>, i:<index>.
func fieldsV1Seg(k string) (seg, bool) {
	if len(k) < 2 || k[1] != ':' {
		return seg{}, false
	}
	body := k[2:]
	switch k[0] {
	case 'f':
		return seg{kind: segField, name: body}, true
	case 'k':
		m, err := value.DecodeObject([]byte(body))
		if err != nil {
			return seg{}, false
		}
		keys := make([]value.KeyField, 0, len(m))
		for name, v := range m {
			keys = append(keys, value.KeyField{Name: name, Value: v})
		}
		slices.SortFunc(keys, func(a, b value.KeyField) int { return strings.Compare(a.Name, b.Name) })
		return seg{kind: segKeys, keys: keys}, true
	case 'v':
		v, err := value.Decode([]byte(body))
		if err != nil {
			return seg{}, false
		}
		return seg{kind: segValue, val: v}, true
	case 'i':
		n, err := strconv.Atoi(body)
		if err != nil || n < 0 {
			return seg{}, false
		}
		return seg{kind: segIndex, index: n}, true
	}
	return seg{}, false
}

// settleIgnored returns obj with the value at every path made live's:
// set where live has one, removed where live has none. obj is not
// modified; maps and lists on the way to a change are copied.
func settleIgnored(obj, live map[string]any, t *schema.Type, paths []fieldPath) map[string]any {
	var cur any = obj
	for _, p := range paths {
		if out, ok, changed := settle(cur, cur != nil, live, live != nil, t, p); changed {
			if !ok {
				return nil
			}
			cur = out
		}
	}
	m, _ := cur.(map[string]any)
	return m
}

// settle makes the value at path in dst (present if dstOK) live's (present
// if liveOK): it returns the new value, whether it is present, and whether
// anything changed.
func settle(dst any, dstOK bool, live any, liveOK bool, t *schema.Type, path fieldPath) (any, bool, bool) {
	if len(path) == 0 {
		switch {
		case !liveOK && !dstOK:
			return nil, false, false
		case !liveOK:
			return nil, false, true
		case dstOK && value.Equal(dst, live):
			return dst, true, false
		}
		return live, true, true
	}
	sg, rest := path[0], path[1:]
	if sg.kind == segNumber {
		if _, isList := dst.([]any); isList {
			sg = seg{kind: segIndex, index: sg.index}
		} else if _, isList := live.([]any); isList && !dstOK {
			return dst, dstOK, false
		} else {
			sg = seg{kind: segField, name: sg.name}
		}
	}
	if sg.kind == segField {
		dm, isMap := dst.(map[string]any)
		if dstOK && !isMap {
			return dst, dstOK, false // not an object: nothing to settle
		}
		lm, _ := live.(map[string]any)
		child, childOK := dm[sg.name]
		lchild, lchildOK := lm[sg.name]
		nc, ncOK, changed := settle(child, childOK, lchild, lchildOK, t.Field(sg.name), rest)
		if !changed {
			return dst, dstOK, false
		}
		out := make(map[string]any, len(dm)+1)
		for k, v := range dm {
			out[k] = v
		}
		if ncOK {
			out[sg.name] = nc
		} else {
			delete(out, sg.name)
		}
		return out, true, true
	}

	// A list selector.
	dl, isList := dst.([]any)
	if !isList {
		return dst, dstOK, false
	}
	ll, _ := live.([]any)
	et := t.Element()
	var out []any
	changed := false
	for i, e := range dl {
		if !selects(sg, i, e) {
			if out != nil {
				out = append(out, e)
			}
			continue
		}
		le, leOK := counterpart(sg, i, e, ll, t)
		ne, neOK, ch := settle(e, true, le, leOK, et, rest)
		if ch && out == nil {
			out = append(make([]any, 0, len(dl)), dl[:i]...)
		}
		changed = changed || ch
		if out != nil && neOK {
			out = append(out, ne)
		}
	}
	// An element the path names that live has and dst lacks is added where
	// live has it, when the path ends on it.
	if len(rest) == 0 && (sg.kind == segKeys || sg.kind == segValue) {
		if li := findElement(sg, ll); li >= 0 && findElement(sg, dl) < 0 {
			if out == nil {
				out = slices.Clone(dl)
			}
			out = slices.Insert(out, min(li, len(out)), ll[li])
			changed = true
		}
	}
	if !changed {
		return dst, dstOK, false
	}
	return out, true, true
}

// selects reports whether a list selector selects element e at index i.
func selects(sg seg, i int, e any) bool {
	switch sg.kind {
	case segAny:
		return true
	case segIndex:
		return i == sg.index
	case segKeys:
		m, ok := e.(map[string]any)
		if !ok {
			return false
		}
		for _, k := range sg.keys {
			if v, ok := m[k.Name]; !ok || !value.Equal(v, k.Value) {
				return false
			}
		}
		return true
	case segValue:
		return value.Equal(e, sg.val)
	}
	return false
}

// findElement returns the index of the first element of l that sg
// selects, or -1.
func findElement(sg seg, l []any) int {
	for i, e := range l {
		if selects(sg, i, e) {
			return i
		}
	}
	return -1
}

// counterpart finds the live element that corresponds to element e (at
// index i) of a list of type t: the one with the same key fields (the
// selector's, or the list's merge keys), or else the one at the same index.
func counterpart(sg seg, i int, e any, live []any, t *schema.Type) (any, bool) {
	switch sg.kind {
	case segKeys, segValue:
		if j := findElement(sg, live); j >= 0 {
			return live[j], true
		}
		return nil, false
	}
	if t.KindOf() == schema.List && t.ListType != schema.Atomic {
		keys := t.Keys
		if len(keys) == 0 && t.MergeKey != "" {
			keys = []string{t.MergeKey}
		}
		if t.ListType == schema.Set {
			j := findElement(seg{kind: segValue, val: e}, live)
			if j >= 0 {
				return live[j], true
			}
			return nil, false
		}
		if m, ok := e.(map[string]any); ok && len(keys) > 0 {
			var kf []value.KeyField
			for _, k := range keys {
				v, ok := m[k]
				if !ok {
					if d := t.Element().Field(k).Default; d != nil {
						v = d
					} else {
						continue
					}
				}
				kf = append(kf, value.KeyField{Name: k, Value: v})
			}
			if j := findElement(seg{kind: segKeys, keys: kf}, live); j >= 0 {
				return live[j], true
			}
			return nil, false
		}
	}
	if i < len(live) {
		return live[i], true
	}
	return nil, false
}
