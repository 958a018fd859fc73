package describe

import (
	"strings"
	"text/tabwriter"
)

// PodTemplate returns kubectl's description of a pod template
// (DescribePodTemplate), as `kubectl rollout history --revision=N` prints
// it: "Pod Template:" then its labels, annotations, containers and volumes.
func PodTemplate(tmpl map[string]any) string {
	var buf strings.Builder
	tw := tabwriter.NewWriter(&buf, 0, 8, 2, ' ', 0)
	describePodTemplate(&prefixWriter{w: tw}, tmpl)
	_ = tw.Flush()
	return buf.String()
}
