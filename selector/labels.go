package selector

import (
	"k8s.io/apimachinery/pkg/labels"
)

// Labels is a label selector: requirements on the labels of an object, all
// of which must hold. The zero Labels has no requirement and matches
// everything; Nothing returns one that matches nothing. It holds an
// apimachinery labels.Selector, which does the matching.
//
// A Labels is immutable and safe for concurrent use.
type Labels struct {
	sel labels.Selector // nil: everything
}

// Everything returns the selector that matches every set of labels, as
// labels.Everything does.
func Everything() Labels { return Labels{} }

// Nothing returns the selector that matches no set of labels, as
// labels.Nothing does (and FromLabelSelector(nil)).
func Nothing() Labels { return Labels{sel: labels.Nothing()} }

// Matches reports whether a set of labels satisfies every requirement. It
// does not allocate for the requirements the parser produces on labels
// that satisfy them.
func (s Labels) Matches(set map[string]string) bool {
	if s.sel == nil {
		return true
	}
	return s.sel.Matches(labels.Set(set))
}

// MatchesObject is Matches on labels as a decoded object holds them
// (metadata.labels: values that are not strings count as ""), without
// copying them into a map of strings first.
func (s Labels) MatchesObject(set map[string]any) bool {
	if s.sel == nil {
		return true
	}
	return s.sel.Matches(objectLabels(set))
}

// objectLabels is labels.Labels over a decoded metadata.labels.
type objectLabels map[string]any

func (l objectLabels) Has(key string) bool {
	_, ok := l[key]
	return ok
}

func (l objectLabels) Get(key string) string {
	v, _ := l[key].(string)
	return v
}

func (l objectLabels) Lookup(key string) (string, bool) {
	v, ok := l[key]
	s, _ := v.(string)
	return s, ok
}

// Empty reports whether the selector restricts nothing (and so matches
// everything). Nothing is not empty.
func (s Labels) Empty() bool { return s.sel == nil || s.sel.Empty() }

// String returns the selector in apimachinery's canonical form: requirements
// sorted by key, values of a set sorted, "" for Everything and Nothing, so
// "x in (b, a),app = web" prints "app=web,x in (a,b)".
func (s Labels) String() string {
	if s.sel == nil {
		return ""
	}
	return s.sel.String()
}

// ParseLabels parses a label selector with apimachinery's labels.Parse,
// the parser of `kubectl -l`:
//
//	app=web,tier in (frontend, backend),!canary,release notin (beta),replicas>1
//
// Keys and values are validated as label keys and values. The empty string
// selects everything. Errors are *Error with apimachinery's message.
func ParseLabels(s string) (Labels, error) {
	sel, err := labels.Parse(s)
	if err != nil {
		return Labels{}, &Error{Syntax: syntaxLabels, Input: s, Reason: err.Error()}
	}
	return Labels{sel: sel}, nil
}
