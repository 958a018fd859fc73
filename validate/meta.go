package validate

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/konverge/konverge/value"
)

const (
	fieldImmutable            = "field is immutable"
	isNegativeErrorMsg        = "must be greater than or equal to 0"
	totalAnnotationSizeLimitB = 256 * (1 << 10)
)

// objectMeta is apimachinery's ValidateObjectMeta plus core's check of
// legacy finalizer names.
func objectMeta(meta obj, namespaced bool, nameFn nameFunc, p *path) []Error {
	var errs []Error
	if gn := sget(meta, "generateName"); gn != "" {
		for _, msg := range nameFn(gn, true) {
			errs = append(errs, invalid(p.child("generateName"), gn, msg))
		}
	}
	if name := sget(meta, "name"); name == "" {
		errs = append(errs, required(p.child("name"), "name or generateName is required"))
	} else {
		for _, msg := range nameFn(name, false) {
			errs = append(errs, invalid(p.child("name"), name, msg))
		}
	}
	ns := sget(meta, "namespace")
	if namespaced {
		if ns == "" {
			errs = append(errs, required(p.child("namespace"), ""))
		} else {
			for _, msg := range nameIsDNSLabel(ns, false) {
				errs = append(errs, invalid(p.child("namespace"), ns, msg))
			}
		}
	} else if ns != "" {
		errs = append(errs, forbidden(p.child("namespace"), "not allowed on this type"))
	}
	errs = append(errs, nonNegative(meta, "generation", p)...)
	errs = append(errs, labels(mget(meta, "labels"), p.child("labels"))...)
	errs = append(errs, annotations(mget(meta, "annotations"), p.child("annotations"))...)
	errs = append(errs, ownerReferences(lget(meta, "ownerReferences"), p.child("ownerReferences"))...)
	errs = append(errs, finalizers(lget(meta, "finalizers"), p.child("finalizers"))...)
	errs = append(errs, kubeFinalizers(meta, p)...)
	return errs
}

// objectMetaUpdate is apimachinery's ValidateObjectMetaUpdate plus core's
// check of legacy finalizer names. The store is expected to have done what
// BeforeUpdate does first: copy generation, uid, creationTimestamp and the
// deletion fields from the old object when unset, and set resourceVersion.
func objectMetaUpdate(meta, old obj, p *path) []Error {
	var errs []Error
	if has(old, "deletionTimestamp") {
		oldF := map[string]bool{}
		for _, f := range lget(old, "finalizers") {
			s, _ := f.(string)
			oldF[s] = true
		}
		var extra []string
		for _, f := range lget(meta, "finalizers") {
			s, _ := f.(string)
			if !oldF[s] {
				extra = append(extra, s)
			}
		}
		if len(extra) > 0 {
			extra = sortedKeys(setOf(extra))
			q := make([]string, len(extra))
			for i, s := range extra {
				q[i] = strconv.Quote(s)
			}
			errs = append(errs, forbidden(p.child("finalizers"), fmt.Sprintf("no new finalizers can be added if the object is being deleted, found new finalizers []string{%s}", strings.Join(q, ", "))))
		}
	}
	if sget(meta, "resourceVersion") == "" {
		errs = append(errs, invalid(p.child("resourceVersion"), "", "must be specified for an update"))
	}
	errs = append(errs, nonNegative(meta, "generation", p)...)
	if ival(meta, "generation") < ival(old, "generation") {
		errs = append(errs, invalid(p.child("generation"), ival(meta, "generation"), "must not be decremented"))
	}
	for _, k := range []string{"name", "namespace", "uid", "creationTimestamp"} {
		if sget(meta, k) != sget(old, k) {
			errs = append(errs, invalid(p.child(k), sget(meta, k), fieldImmutable))
		}
	}
	for _, k := range []string{"deletionTimestamp", "deletionGracePeriodSeconds"} {
		if !equal(meta[k], old[k]) {
			var v any = meta[k]
			if v == nil {
				v = goValue("null")
			}
			errs = append(errs, invalid(p.child(k), v, fieldImmutable))
		}
	}
	errs = append(errs, labels(mget(meta, "labels"), p.child("labels"))...)
	errs = append(errs, annotations(mget(meta, "annotations"), p.child("annotations"))...)
	errs = append(errs, ownerReferences(lget(meta, "ownerReferences"), p.child("ownerReferences"))...)
	errs = append(errs, kubeFinalizers(meta, p)...)
	return errs
}

func setOf(l []string) map[string]bool {
	m := make(map[string]bool, len(l))
	for _, s := range l {
		m[s] = true
	}
	return m
}

func nonNegative(m obj, k string, p *path) []Error {
	if v, ok := iget(m, k); ok && v < 0 {
		return []Error{invalid(p.child(k), v, isNegativeErrorMsg)}
	}
	return nil
}

// nonNegativeValue is ValidateNonnegativeField.
func nonNegativeValue(v int64, p *path) []Error {
	if v < 0 {
		return []Error{invalid(p, v, isNegativeErrorMsg)}
	}
	return nil
}

// labels is ValidateLabels: keys are qualified names, values label values,
// all reported at the path of the map.
func labels(m obj, p *path) []Error {
	var errs []Error
	for _, k := range sortedKeys(m) {
		errs = append(errs, labelName(k, p)...)
		v, _ := m[k].(string)
		for _, msg := range isLabelValue(v) {
			errs = append(errs, invalid(p, v, msg))
		}
	}
	return errs
}

func labelName(k string, p *path) []Error {
	var errs []Error
	for _, msg := range isQualifiedName(k) {
		errs = append(errs, invalid(p, k, msg))
	}
	return errs
}

// annotations is ValidateAnnotations.
func annotations(m obj, p *path) []Error {
	var errs []Error
	size := 0
	for _, k := range sortedKeys(m) {
		for _, msg := range isQualifiedName(strings.ToLower(k)) {
			errs = append(errs, invalid(p, k, msg))
		}
		v, _ := m[k].(string)
		size += len(k) + len(v)
	}
	if size > totalAnnotationSizeLimitB {
		errs = append(errs, tooLong(p, totalAnnotationSizeLimitB))
	}
	return errs
}

func ownerReferences(refs []any, p *path) []Error {
	var errs []Error
	firstController := ""
	for i, r := range refs {
		ref := asObj(r)
		rp := p.at(i)
		apiVersion := sget(ref, "apiVersion")
		group, version, gvErr := parseGroupVersion(apiVersion)
		if apiVersion == "" {
			errs = append(errs, required(rp.child("apiVersion"), "must not be empty"))
		} else if gvErr || version == "" {
			errs = append(errs, invalid(rp.child("apiVersion"), apiVersion, "must be <group>/<version> or <version>"))
		}
		for _, k := range []string{"kind", "name", "uid"} {
			if sget(ref, k) == "" {
				errs = append(errs, required(rp.child(k), "must not be empty"))
			}
		}
		if group == "" && version == "v1" && sget(ref, "kind") == "Event" {
			errs = append(errs, invalid(rp, goValue(ownerRefJSON(ref)), "/v1, Kind=Event is disallowed from being an owner"))
		}
		if c, _ := ref["controller"].(bool); c {
			cur := sget(ref, "kind") + "/" + sget(ref, "name")
			if firstController != "" {
				parts := make([]string, len(refs))
				for j, o := range refs {
					parts[j] = ownerRefJSON(asObj(o))
				}
				errs = append(errs, invalid(p, goValue("["+strings.Join(parts, ",")+"]"),
					fmt.Sprintf("Only one reference can have Controller set to true. Found \"true\" in references for %v and %v", firstController, cur)))
			} else {
				firstController = cur
			}
		}
	}
	return errs
}

// ownerRefJSON encodes an owner reference as metav1.OwnerReference does
// (fields in declaration order).
func ownerRefJSON(ref obj) string {
	return orderedJSON(ref, []string{"apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion"}, []string{"controller", "blockOwnerDeletion"})
}

func parseGroupVersion(gv string) (group, version string, bad bool) {
	if gv == "" || gv == "/" {
		return "", "", false
	}
	switch strings.Count(gv, "/") {
	case 0:
		return "", gv, false
	case 1:
		g, v, _ := strings.Cut(gv, "/")
		return g, v, false
	}
	return "", "", true
}

// finalizers is ValidateFinalizers.
func finalizers(l []any, p *path) []Error {
	var errs []Error
	orphan, foreground := false, false
	for _, f := range l {
		s, _ := f.(string)
		for _, msg := range isQualifiedName(s) {
			errs = append(errs, invalid(p, s, msg))
		}
		orphan = orphan || s == "orphan"
		foreground = foreground || s == "foregroundDeletion"
	}
	if orphan && foreground {
		errs = append(errs, invalid(p, stringList(l), "finalizer orphan and foregroundDeletion cannot be both set"))
	}
	return errs
}

// kubeFinalizers checks that finalizers without a "/" are standard ones.
func kubeFinalizers(meta obj, p *path) []Error {
	var errs []Error
	for i, f := range lget(meta, "finalizers") {
		s, _ := f.(string)
		errs = append(errs, kubeFinalizerName(s, p.child("finalizers").at(i))...)
	}
	return errs
}

func kubeFinalizerName(s string, p *path) []Error {
	if !strings.Contains(s, "/") {
		switch s {
		case "kubernetes", "orphan", "foregroundDeletion":
		default:
			return []Error{invalid(p, s, "name is neither a standard finalizer name nor is it fully qualified")}
		}
	}
	return nil
}

func stringList(l []any) []any { return l }

// --- label selectors -------------------------------------------------------

// labelSelector is ValidateLabelSelector (invalid label values not
// allowed).
func labelSelector(sel obj, p *path) []Error {
	if sel == nil {
		return nil
	}
	errs := labels(mget(sel, "matchLabels"), p.child("matchLabels"))
	for i, e := range lget(sel, "matchExpressions") {
		req := asObj(e)
		rp := p.child("matchExpressions").at(i)
		values := lget(req, "values")
		switch op := sget(req, "operator"); op {
		case "In", "NotIn":
			if len(values) == 0 {
				errs = append(errs, required(rp.child("values"), "must be specified when `operator` is 'In' or 'NotIn'"))
			}
		case "Exists", "DoesNotExist":
			if len(values) > 0 {
				errs = append(errs, forbidden(rp.child("values"), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
			}
		default:
			errs = append(errs, invalid(rp.child("operator"), op, "not a valid selector operator"))
		}
		errs = append(errs, labelName(sget(req, "key"), rp.child("key"))...)
		for j, v := range values {
			s, _ := v.(string)
			for _, msg := range isLabelValue(s) {
				errs = append(errs, invalid(rp.child("values").at(j), s, msg))
			}
		}
	}
	return errs
}

// selector is a label selector converted as LabelSelectorAsSelector does:
// a nil selector selects nothing, an empty one everything.
type selector struct {
	nothing bool
	reqs    []requirement
}

type requirement struct {
	key, op string
	values  []string
}

// asSelector converts a LabelSelector; ok is false where apimachinery
// returns an error (a bad operator, key or value).
func asSelector(sel obj, present bool) (selector, bool) {
	if !present {
		return selector{nothing: true}, true
	}
	var s selector
	for _, k := range sortedKeys(mget(sel, "matchLabels")) {
		v, _ := mget(sel, "matchLabels")[k].(string)
		if len(isQualifiedName(k)) > 0 || len(isLabelValue(v)) > 0 {
			return s, false
		}
		s.reqs = append(s.reqs, requirement{key: k, op: "=", values: []string{v}})
	}
	for _, e := range lget(sel, "matchExpressions") {
		req := asObj(e)
		r := requirement{key: sget(req, "key"), op: sget(req, "operator")}
		for _, v := range lget(req, "values") {
			sv, _ := v.(string)
			r.values = append(r.values, sv)
		}
		if len(isQualifiedName(r.key)) > 0 {
			return s, false
		}
		switch r.op {
		case "In", "NotIn":
			if len(r.values) == 0 {
				return s, false
			}
		case "Exists", "DoesNotExist":
			if len(r.values) != 0 {
				return s, false
			}
		default:
			return s, false
		}
		for _, v := range r.values {
			if len(isLabelValue(v)) > 0 {
				return s, false
			}
		}
		s.reqs = append(s.reqs, r)
	}
	return s, true
}

func (s selector) empty() bool { return !s.nothing && len(s.reqs) == 0 }

func (s selector) matches(labels map[string]string) bool {
	if s.nothing {
		return false
	}
	for _, r := range s.reqs {
		v, ok := labels[r.key]
		switch r.op {
		case "=":
			if !ok || v != r.values[0] {
				return false
			}
		case "In":
			if !ok || !contains(r.values, v) {
				return false
			}
		case "NotIn":
			if ok && contains(r.values, v) {
				return false
			}
		case "Exists":
			if !ok {
				return false
			}
		case "DoesNotExist":
			if ok {
				return false
			}
		}
	}
	return true
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// selectorJSON encodes a *metav1.LabelSelector as encoding/json does
// (matchLabels before matchExpressions; null for nil).
func selectorJSON(sel obj, present bool) goValue {
	if !present {
		return "null"
	}
	var parts []string
	if ml := mget(sel, "matchLabels"); len(ml) > 0 {
		parts = append(parts, `"matchLabels":`+formatValue(ml))
	}
	if exprs := lget(sel, "matchExpressions"); len(exprs) > 0 {
		var es []string
		for _, e := range exprs {
			es = append(es, orderedJSON(asObj(e), []string{"key", "operator", "values"}, []string{"values"}))
		}
		parts = append(parts, `"matchExpressions":[`+strings.Join(es, ",")+`]`)
	}
	return goValue("{" + strings.Join(parts, ",") + "}")
}

// orderedJSON encodes an object with the given key order; keys in
// omitEmpty are left out when absent or empty, others print null.
func orderedJSON(m obj, keys []string, omitEmpty []string) string {
	var parts []string
	for _, k := range keys {
		v, ok := m[k]
		if !ok || v == nil || v == "" {
			if contains(omitEmpty, k) {
				continue
			}
		}
		if l, isList := v.([]any); isList && len(l) == 0 && contains(omitEmpty, k) {
			continue
		}
		if !ok {
			v = ""
		}
		parts = append(parts, strconv.Quote(k)+":"+formatJSON(v))
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// formatJSON is the JSON of a value (strings too).
func formatJSON(v any) string {
	b, err := value.Encode(v)
	if err != nil {
		return "null"
	}
	return string(b)
}
