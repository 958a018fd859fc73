package provenance

import "strings"

// allowList names the runs that may stand: only output that golden tests
// assert (a fact of behaviour, not code or prose), each with its reason. A
// run is allowed when it lies in Path and one of its lines contains Line.
var allowList = []struct {
	Path, Line, Reason string
}{
	{
		Path: "apply/apply.go", Line: "You may co-own fields by updating your manifest to match the existing",
		Reason: "the help kubectl prints with a server-side apply conflict; the recorded goldens testdata/fidelity/golden/ssa/ssa-*conflict*.json assert it",
	},
}

// allowed returns why a run may stand, or "" when it may not.
func allowed(r Run) string {
	for _, a := range allowList {
		if a.Path != r.Path {
			continue
		}
		for _, l := range r.Text {
			if strings.Contains(l, a.Line) {
				return a.Reason
			}
		}
	}
	return ""
}
