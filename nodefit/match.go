package nodefit

import "strconv"

// Tolerates reports whether a toleration tolerates a taint, as
// v1.Toleration's ToleratesTaint does with the alpha comparison operators
// (Lt, Gt) off: the effect and key must match when the toleration names
// them; Exists takes any value, Equal (or no operator) the taint's.
func Tolerates(tol, taint map[string]any) bool {
	if e := str(tol, "effect"); e != "" && e != str(taint, "effect") {
		return false
	}
	if k := str(tol, "key"); k != "" && k != str(taint, "key") {
		return false
	}
	switch str(tol, "operator") {
	case "", "Equal":
		return str(tol, "value") == str(taint, "value")
	case "Exists":
		return true
	}
	return false
}

// Tolerated reports whether one of tolerations (JSON objects) tolerates
// taint.
func Tolerated(tolerations []any, taint map[string]any) bool {
	for _, t := range tolerations {
		if tol, ok := t.(map[string]any); ok && Tolerates(tol, taint) {
			return true
		}
	}
	return false
}

// TermMatches reports whether a node selector term (of node affinity)
// matches the node with these labels and name: every matchExpressions
// requirement on the labels and every matchFields requirement on
// metadata.name (In or NotIn, the only ones the API allows) hold. A term
// with no requirement matches nothing.
func TermMatches(term map[string]any, labels map[string]string, name string) bool {
	exprs, fields := maps(term["matchExpressions"]), maps(term["matchFields"])
	if len(exprs) == 0 && len(fields) == 0 {
		return false
	}
	for _, e := range exprs {
		v, has := labels[str(e, "key")]
		if !RequirementMatches(e, v, has) {
			return false
		}
	}
	for _, f := range fields {
		if str(f, "key") != "metadata.name" {
			return false
		}
		if op := str(f, "operator"); op != "In" && op != "NotIn" {
			return false
		}
		if !RequirementMatches(f, name, true) {
			return false
		}
	}
	return true
}

// RequirementMatches reports whether a node selector requirement ({key,
// operator, values}) holds for a label's value v (has: the node has the
// label): In, NotIn, Exists, DoesNotExist, and Gt/Lt comparing integers.
func RequirementMatches(req map[string]any, v string, has bool) bool {
	values, _ := req["values"].([]any)
	in := func() bool {
		for _, x := range values {
			if s, _ := x.(string); s == v {
				return true
			}
		}
		return false
	}
	switch op := str(req, "operator"); op {
	case "In":
		return has && in()
	case "NotIn":
		return !has || !in()
	case "Exists":
		return has
	case "DoesNotExist":
		return !has
	case "Gt", "Lt":
		if !has || len(values) != 1 {
			return false
		}
		s, _ := values[0].(string)
		got, err1 := strconv.ParseInt(v, 10, 64)
		want, err2 := strconv.ParseInt(s, 10, 64)
		if err1 != nil || err2 != nil {
			return false
		}
		if op == "Gt" {
			return got > want
		}
		return got < want
	}
	return false
}

func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}
