package selector

import (
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Labels is a label selector: requirements on the labels of an object, all
// of which must hold. The zero Labels has no requirement and matches
// everything; Nothing returns one that matches nothing.
//
// A Labels is immutable and safe for concurrent use.
type Labels struct {
	reqs    []requirement
	nothing bool
}

// Everything returns the selector that matches every set of labels, as
// labels.Everything does.
func Everything() Labels { return Labels{} }

// Nothing returns the selector that matches no set of labels, as
// labels.Nothing does (and FromLabelSelector(nil)).
func Nothing() Labels { return Labels{nothing: true} }

// operator is a selection.Operator.
type operator uint8

const (
	opIn operator = iota
	opNotIn
	opEquals
	opDoubleEquals
	opNotEquals
	opExists
	opDoesNotExist
	opGreaterThan
	opLessThan
)

// requirement is one condition on one label, a labels.Requirement.
type requirement struct {
	key    string
	op     operator
	values []string
	// number is the value of a Gt or Lt requirement.
	number int64
}

// newRequirement is labels.NewRequirement for the operators a parser or a
// LabelSelector can produce. It returns apimachinery's aggregated message
// when the requirement is invalid.
func newRequirement(key string, op operator, values []string) (requirement, string) {
	var errs []string
	if msg := validateKey(key, "key"); msg != "" {
		errs = append(errs, msg)
	}
	r := requirement{key: key, op: op, values: values}
	switch op {
	case opIn, opNotIn:
		if len(values) == 0 {
			errs = append(errs, invalid("values", values, "for 'in', 'notin' operators, values set can't be empty"))
		}
	case opEquals, opDoubleEquals, opNotEquals:
		if len(values) != 1 {
			errs = append(errs, invalid("values", values, "exact-match compatibility requires one single value"))
		}
	case opExists, opDoesNotExist:
		if len(values) != 0 {
			errs = append(errs, invalid("values", values, "values set must be empty for exists and does not exist"))
		}
	case opGreaterThan, opLessThan:
		if len(values) != 1 {
			errs = append(errs, invalid("values", values, "for 'Gt', 'Lt' operators, exactly one value is required"))
		}
		for i, v := range values {
			n, ok := parseInt64(v)
			if !ok {
				errs = append(errs, invalid("values["+strconv.Itoa(i)+"]", v, "for 'Gt', 'Lt' operators, the value must be an integer"))
			}
			r.number = n
		}
	}
	for i, v := range values {
		if msg := validateValue(key, v, "values["+strconv.Itoa(i)+"]"); msg != "" {
			errs = append(errs, msg)
		}
	}
	if len(errs) > 0 {
		return requirement{}, aggregate(errs)
	}
	return r, ""
}

// parseInt64 is strconv.ParseInt(s, 10, 64) without the allocation of its
// error.
func parseInt64(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	neg := false
	switch s[0] {
	case '+':
		s = s[1:]
	case '-':
		neg = true
		s = s[1:]
	}
	if s == "" {
		return 0, false
	}
	var u uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if u > (1<<63)/10 {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
		if u > 1<<63 {
			return 0, false
		}
	}
	if neg {
		return -int64(u), true // -(1<<63) wraps to itself, as intended
	}
	if u > 1<<63-1 {
		return 0, false
	}
	return int64(u), true
}

func (r *requirement) hasValue(v string) bool {
	return slices.Contains(r.values, v)
}

// matches is labels.Requirement.Matches.
func (r *requirement) matches(labels map[string]string) bool {
	switch r.op {
	case opIn, opEquals, opDoubleEquals:
		v, ok := labels[r.key]
		return ok && r.hasValue(v)
	case opNotIn, opNotEquals:
		v, ok := labels[r.key]
		return !ok || !r.hasValue(v)
	case opExists:
		_, ok := labels[r.key]
		return ok
	case opDoesNotExist:
		_, ok := labels[r.key]
		return !ok
	case opGreaterThan, opLessThan:
		v, ok := labels[r.key]
		if !ok {
			return false
		}
		n, ok := parseInt64(v)
		if !ok {
			return false
		}
		if r.op == opGreaterThan {
			return n > r.number
		}
		return n < r.number
	}
	return false
}

// appendString appends the requirement as labels.Requirement.String prints
// it.
func (r *requirement) appendString(b []byte) []byte {
	if r.op == opDoesNotExist {
		b = append(b, '!')
	}
	b = append(b, r.key...)
	switch r.op {
	case opEquals:
		b = append(b, '=')
	case opDoubleEquals:
		b = append(b, "=="...)
	case opNotEquals:
		b = append(b, "!="...)
	case opIn:
		b = append(b, " in "...)
	case opNotIn:
		b = append(b, " notin "...)
	case opGreaterThan:
		b = append(b, '>')
	case opLessThan:
		b = append(b, '<')
	case opExists, opDoesNotExist:
		return b
	}
	if r.op == opIn || r.op == opNotIn {
		b = append(b, '(')
	}
	if len(r.values) == 1 {
		b = append(b, r.values[0]...)
	} else {
		values := r.values
		if !sort.StringsAreSorted(values) {
			values = slices.Clone(values)
			sort.Strings(values)
		}
		b = append(b, strings.Join(values, ",")...)
	}
	if r.op == opIn || r.op == opNotIn {
		b = append(b, ')')
	}
	return b
}

// byKey orders requirements as labels.ByKey does. Sorting it with sort.Sort,
// as apimachinery does, keeps the order of requirements on the same key
// identical to apimachinery's.
type byKey []requirement

func (a byKey) Len() int           { return len(a) }
func (a byKey) Swap(i, j int)      { a[i], a[j] = a[j], a[i] }
func (a byKey) Less(i, j int) bool { return a[i].key < a[j].key }

// Matches reports whether a set of labels satisfies every requirement. It
// does not allocate.
func (s Labels) Matches(labels map[string]string) bool {
	if s.nothing {
		return false
	}
	for i := range s.reqs {
		if !s.reqs[i].matches(labels) {
			return false
		}
	}
	return true
}

// Empty reports whether the selector restricts nothing (and so matches
// everything). Nothing is not empty.
func (s Labels) Empty() bool { return !s.nothing && len(s.reqs) == 0 }

// String returns the selector in apimachinery's canonical form: requirements
// sorted by key, values of a set sorted, "" for Everything and Nothing, so
// "x in (b, a),app = web" prints "app=web,x in (a,b)".
func (s Labels) String() string {
	if s.nothing {
		return ""
	}
	var b []byte
	for i := range s.reqs {
		if i > 0 {
			b = append(b, ',')
		}
		b = s.reqs[i].appendString(b)
	}
	return string(b)
}

// ParseLabels parses a label selector in the syntax of `kubectl -l` and
// labels.Parse:
//
//	<selector>    ::= <requirement> | <requirement> "," <selector>
//	<requirement> ::= [!] KEY [ <set-based-restriction> | <exact-match-restriction> ]
//	<set-based-restriction>   ::= "" | ("in" | "notin") "(" VALUE { "," VALUE } ")"
//	<exact-match-restriction> ::= ("=" | "==" | "!=" | ">" | "<") VALUE
//
// KEY is a label key ([prefix/]name) and VALUE a label value, both
// validated as apimachinery validates them. The empty string selects
// everything. Errors are *Error with apimachinery's message.
func ParseLabels(s string) (Labels, error) {
	p := parser{l: lexer{s: s}}
	reqs, msg := p.parse()
	if msg != "" {
		return Labels{}, &Error{Syntax: syntaxLabels, Input: s, Reason: msg}
	}
	sort.Sort(byKey(reqs))
	return Labels{reqs: reqs}, nil
}
