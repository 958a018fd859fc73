package validate

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/konverge/konverge/value"
)

// Custom resources: the checks of their version's structural schema, as
// kube-apiserver runs them through kube-openapi's validator and
// apiextensions' x-kubernetes-list-type check, with their messages
// ("spec.replicas in body should be less than or equal to 10").

// CustomResource validates obj against openAPIV3Schema: type (with
// nullable and x-kubernetes-int-or-string), required, enum, minimum and
// maximum (exclusive too), multipleOf, minLength, maxLength, pattern,
// minItems, maxItems, minProperties, maxProperties, and the uniqueness of
// x-kubernetes-list-type set and map lists. Errors within one object come
// in the order of its property names (kube-apiserver's order there is
// random).
//
// Not checked: metadata (use ObjectMeta with the CRD's scope), formats,
// allOf/anyOf/oneOf/not, x-kubernetes-validations (CEL) rules, embedded
// resources' metadata, and validation ratcheting on update. Call it on the
// pruned and defaulted object (defaults.PruneUnknown and
// defaults.ApplyCustomResource).
func CustomResource(obj, openAPIV3Schema map[string]any) []Error {
	if openAPIV3Schema == nil {
		return nil
	}
	s := schemaOf(openAPIV3Schema)
	v := &crValidator{}
	v.validate(obj, s, "")
	v.errs = append(v.errs, listTypes(obj, s, nil)...)
	return v.errs
}

// ObjectMeta validates the metadata of an object of a kind Object does
// not know (a custom resource): on create (old nil) the name and
// generateName as DNS subdomains, the namespace (required when namespaced,
// forbidden otherwise), labels, annotations, owner references and
// finalizers; on update the immutable fields as well.
func ObjectMeta(meta, old map[string]any, namespaced bool) []Error {
	if old != nil {
		return dedupe(objectMetaUpdate(meta, old, newPath("metadata")))
	}
	return dedupe(objectMeta(meta, namespaced, nameIsDNSSubdomain, newPath("metadata")))
}

// BuiltinObjectMeta is ObjectMeta for an object of a built-in kind that
// Object does not know, with the name rule of the kind's validation:
// RBAC roles and bindings take any name that is a path segment
// ("system:metrics-server"), CertificateSigningRequests any name, an
// APIService a path segment equal to spec.version + "." + spec.group, the
// rest DNS subdomains.
func BuiltinObjectMeta(obj, old map[string]any, namespaced bool) []Error {
	meta := mget(obj, "metadata")
	if old != nil {
		return dedupe(objectMetaUpdate(meta, mget(old, "metadata"), newPath("metadata")))
	}
	apiVersion, _ := obj["apiVersion"].(string)
	group, _, _ := strings.Cut(apiVersion, "/")
	if !strings.Contains(apiVersion, "/") {
		group = ""
	}
	kind, _ := obj["kind"].(string)
	nameFn := nameIsDNSSubdomain
	switch group + "/" + kind {
	case "rbac.authorization.k8s.io/Role", "rbac.authorization.k8s.io/ClusterRole",
		"rbac.authorization.k8s.io/RoleBinding", "rbac.authorization.k8s.io/ClusterRoleBinding":
		nameFn = func(name string, _ bool) []string { return pathSegmentName(name) }
	case "certificates.k8s.io/CertificateSigningRequest":
		nameFn = func(string, bool) []string { return nil }
	case "apiregistration.k8s.io/APIService":
		spec := mget(obj, "spec")
		required := sget(spec, "version") + "." + sget(spec, "group")
		nameFn = func(name string, _ bool) []string {
			if msgs := pathSegmentName(name); len(msgs) > 0 {
				return msgs
			}
			if name != required {
				return []string{fmt.Sprintf("must be `spec.version+\".\"+spec.group`: %q", required)}
			}
			return nil
		}
	}
	return dedupe(objectMeta(meta, namespaced, nameFn, newPath("metadata")))
}

type schema map[string]any

func schemaOf(v any) schema {
	m, _ := v.(map[string]any)
	return schema(m)
}

func (s schema) str(k string) string {
	v, _ := s[k].(string)
	return v
}

func (s schema) flag(k string) bool {
	b, _ := s[k].(bool)
	return b
}

func (s schema) num(k string) (float64, bool) {
	switch x := s[k].(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

func (s schema) int(k string) (int64, bool) {
	f, ok := s.num(k)
	return int64(f), ok
}

type crValidator struct {
	errs []Error
}

func (v *crValidator) add(e Error) { v.errs = append(v.errs, e) }

// jsonType is the schema type of a decoded value.
func jsonType(x any) string {
	switch x.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case int64:
		return "integer"
	case float64:
		return "number" // an integral one is accepted for integer (validate)
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", x)
}

func (v *crValidator) validate(x any, s schema, name string) {
	if s == nil {
		return
	}
	types := []string{}
	if t := s.str("type"); t != "" {
		types = append(types, t)
	}
	if s.flag("x-kubernetes-int-or-string") {
		types = []string{"integer", "string"}
	}
	if x == nil {
		if len(types) > 0 && !s.flag("nullable") {
			v.add(typeInvalid(pathOf(name), "null", fmt.Sprintf("%s in body must be of type %s: %q", name, strings.Join(types, ","), "null")))
		}
		v.enum(x, s, name)
		return
	}
	got := jsonType(x)
	if len(types) > 0 {
		ok := false
		for _, t := range types {
			if t == got || (t == "integer" && got == "number" && isIntegral(x)) || (t == "number" && got == "integer") {
				ok = true
			}
		}
		if !ok {
			v.add(typeInvalid(pathOf(name), got, fmt.Sprintf("%s in body must be of type %s: %q", name, strings.Join(types, ","), got)))
		}
	}
	switch t := x.(type) {
	case string:
		n := int64(utf8.RuneCountInString(t))
		if max, ok := s.int("maxLength"); ok && n > max {
			v.add(tooLong(pathOf(name), int(max)))
		} else if min, ok := s.int("minLength"); ok && n < min {
			v.add(invalid(pathOf(name), t, fmt.Sprintf("%s in body should be at least %d chars long", name, min)))
		} else if pat := s.str("pattern"); pat != "" {
			if re, err := regexp.Compile(pat); err == nil && !re.MatchString(t) {
				v.add(invalid(pathOf(name), t, fmt.Sprintf("%s in body should match '%s'", name, pat)))
			}
		}
	case int64, float64:
		v.number(x, s, name)
	case []any:
		items := schemaOf(s["items"])
		for i, e := range t {
			v.validate(e, items, fmt.Sprintf("%s[%d]", name, i))
		}
		if min, ok := s.int("minItems"); ok && int64(len(t)) < min {
			v.add(invalid(pathOf(name), int64(len(t)), fmt.Sprintf("%s in body should have at least %d items", name, min)))
		}
		if max, ok := s.int("maxItems"); ok && int64(len(t)) > max {
			v.add(tooMany(pathOf(name), len(t), int(max)))
		}
	}
	v.enum(x, s, name)
	if m, ok := x.(map[string]any); ok {
		v.object(m, s, name)
	}
}

func isIntegral(x any) bool {
	f, ok := x.(float64)
	return ok && f == math.Trunc(f) && !math.IsInf(f, 0)
}

func (v *crValidator) number(x any, s schema, name string) {
	f := 0.0
	switch t := x.(type) {
	case int64:
		f = float64(t)
	case float64:
		f = t
	}
	bound := func(b float64) string {
		if _, isInt := x.(int64); isInt && b == math.Trunc(b) {
			return fmt.Sprint(int64(b))
		}
		return fmt.Sprint(b)
	}
	if m, ok := s.num("multipleOf"); ok && m > 0 {
		if q := f / m; q != math.Trunc(q) {
			v.add(invalid(pathOf(name), x, fmt.Sprintf("%s in body should be a multiple of %v", name, bound(m))))
		}
	}
	if max, ok := s.num("maximum"); ok {
		if s.flag("exclusiveMaximum") && f >= max {
			v.add(invalid(pathOf(name), x, fmt.Sprintf("%s in body should be less than %s", name, bound(max))))
		} else if !s.flag("exclusiveMaximum") && f > max {
			v.add(invalid(pathOf(name), x, fmt.Sprintf("%s in body should be less than or equal to %s", name, bound(max))))
		}
	}
	if min, ok := s.num("minimum"); ok {
		if s.flag("exclusiveMinimum") && f <= min {
			v.add(invalid(pathOf(name), x, fmt.Sprintf("%s in body should be greater than %s", name, bound(min))))
		} else if !s.flag("exclusiveMinimum") && f < min {
			v.add(invalid(pathOf(name), x, fmt.Sprintf("%s in body should be greater than or equal to %s", name, bound(min))))
		}
	}
}

func (v *crValidator) enum(x any, s schema, name string) {
	values, _ := s["enum"].([]any)
	if len(values) == 0 {
		return
	}
	for _, e := range values {
		if value.Equal(e, x) {
			return
		}
	}
	valid := make([]string, len(values))
	for i, e := range values {
		if str, ok := e.(string); ok {
			valid[i] = str
		} else {
			valid[i] = formatJSON(e)
		}
	}
	bad := x
	if bad == nil {
		bad = goValue("null")
	}
	v.add(notSupported(pathOf(name), bad, valid...))
}

func (v *crValidator) object(m map[string]any, s schema, name string) {
	n := int64(len(m))
	if min, ok := s.int("minProperties"); ok && n < min {
		v.add(invalid(pathOf(name), n, fmt.Sprintf("%s in body should have at least %d properties", name, min)))
	}
	if max, ok := s.int("maxProperties"); ok && n > max {
		v.add(tooMany(pathOf(name), int(n), int(max)))
	}
	props, _ := s["properties"].(map[string]any)
	child := func(k string) string {
		if name == "" {
			return k
		}
		return name + "." + k
	}
	if ap, ok := s["additionalProperties"].(map[string]any); ok {
		for _, k := range sortedKeys(m) {
			if _, known := props[k]; !known {
				v.validate(m[k], schemaOf(ap), child(k))
			}
		}
	}
	for _, k := range sortedKeys(props) {
		if x, ok := m[k]; ok {
			v.validate(x, schemaOf(props[k]), child(k))
		}
	}
	req, _ := s["required"].([]any)
	for _, r := range req {
		k, _ := r.(string)
		if _, ok := m[k]; !ok {
			v.add(required(pathOf(strings.TrimPrefix(name+"."+k, ".")), ""))
		}
	}
}

// pathOf makes a path that prints as the kube-openapi name.
func pathOf(name string) *path {
	if name == "" {
		return nil
	}
	return newPath(name)
}

// listTypes is ValidateListSetsAndMaps: items of x-kubernetes-list-type
// set lists, and keys of map lists, are unique.
func listTypes(x map[string]any, s schema, p *path) []Error {
	var errs []Error
	if s == nil || x == nil {
		return nil
	}
	props, _ := s["properties"].(map[string]any)
	ap, hasAP := s["additionalProperties"].(map[string]any)
	for _, k := range sortedKeys(x) {
		if hasAP {
			errs = append(errs, listTypesOf(x[k], schemaOf(ap), p.key(k))...)
		}
		if sub, ok := props[k]; ok {
			errs = append(errs, listTypesOf(x[k], schemaOf(sub), childOrRoot(p, k))...)
		}
	}
	return errs
}

func childOrRoot(p *path, k string) *path {
	if p == nil {
		return newPath(k)
	}
	return p.child(k)
}

func listTypesOf(x any, s schema, p *path) []Error {
	switch t := x.(type) {
	case []any:
		var errs []Error
		switch s.str("x-kubernetes-list-type") {
		case "set":
			for _, i := range nonUnique(t) {
				errs = append(errs, duplicate(p.at(i), t[i]))
			}
		case "map":
			errs = append(errs, listMap(t, s, p)...)
		}
		if items := schemaOf(s["items"]); items != nil {
			for i, e := range t {
				errs = append(errs, listTypesOf(e, items, p.at(i))...)
			}
		}
		return errs
	case map[string]any:
		return listTypes(t, s, p)
	}
	return nil
}

// nonUnique returns the indexes of the second occurrence of each repeated
// value.
func nonUnique(l []any) []int {
	seen := map[string]int{}
	var out []int
	for i, x := range l {
		b, err := value.Encode(x)
		if err != nil {
			continue
		}
		key := string(b)
		seen[key]++
		if seen[key] == 2 {
			out = append(out, i)
		}
	}
	return out
}

func listMap(l []any, s schema, p *path) []Error {
	for i, x := range l {
		if _, ok := x.(map[string]any); x != nil && !ok {
			return []Error{invalid(p.at(i), x, "must be an object for an array of list-type map")}
		}
	}
	if len(l) <= 1 {
		return nil
	}
	keyFields, _ := s["x-kubernetes-list-map-keys"].([]any)
	keys := make([]any, len(l))
	for i, x := range l {
		m, _ := x.(map[string]any)
		key := map[string]any{}
		for _, kf := range keyFields {
			k, _ := kf.(string)
			if v, ok := m[k]; ok {
				key[k] = v
			}
		}
		keys[i] = key
	}
	var errs []Error
	for _, i := range nonUnique(keys) {
		errs = append(errs, duplicate(p.at(i), keys[i]))
	}
	return errs
}
