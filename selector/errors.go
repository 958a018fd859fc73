package selector

import "strconv"

// Error is a selector that does not parse or does not validate.
type Error struct {
	// Syntax is what failed: "label selector", "field selector" or
	// "LabelSelector" (a metav1.LabelSelector given as JSON values).
	Syntax string
	// Input is the selector string as given. For a LabelSelector it is the
	// path of the offending part: `matchLabels["app"]`, `matchExpressions[1]`.
	Input string
	// Reason is apimachinery's message for the problem, as kubectl prints
	// it: `unable to parse requirement: found '', expected: ',' or ')'`.
	Reason string
}

func (e *Error) Error() string {
	if e.Syntax == syntaxLabelSelector {
		if e.Input == "" {
			return "selector: " + e.Syntax + ": " + e.Reason
		}
		return "selector: " + e.Syntax + " " + e.Input + ": " + e.Reason
	}
	return "selector: " + e.Syntax + " " + strconv.Quote(e.Input) + ": " + e.Reason
}

const (
	syntaxLabels        = "label selector"
	syntaxFields        = "field selector"
	syntaxLabelSelector = "LabelSelector"
)
