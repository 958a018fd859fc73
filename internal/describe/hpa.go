package describe

import (
	"fmt"

	p "github.com/konverge/konverge/internal/printer"
)

// horizontalPodAutoscaler describes an autoscaling/v2 HorizontalPodAutoscaler
// as kubectl does: its target, each metric as "current / target" (current
// from status.currentMetrics at the same index, <unknown> until the
// controller has measured it), the replica bounds, the scaling behavior
// when set, the target's pods, the conditions with their messages, and
// the Events.
func (d *describer) horizontalPodAutoscaler() error {
	w, o := d.w, d.obj
	d.nameNamespace()
	d.labelsAnnotations()
	w.Write(0, "CreationTimestamp:\t%s\n", d.rfc1123(p.Time(o, "metadata", "creationTimestamp")))
	ref := p.Map(o, "spec", "scaleTargetRef")
	w.Write(0, "Reference:\t%s/%s\n", p.Str(ref, "kind"), p.Str(ref, "name"))
	w.Write(0, "Metrics:\t( current / target )\n")
	current := p.List(o, "status", "currentMetrics")
	for i, m := range p.List(o, "spec", "metrics") {
		// cur is the measured value of metric i under the source's key
		// (nil when not measured).
		cur := func(source string) map[string]any {
			if i >= len(current) {
				return nil
			}
			return p.Map(current[i], source, "current")
		}
		measured := func(source, field string) string {
			c := cur(source)
			if c == nil || !p.Has(c, field) {
				return "<unknown>"
			}
			return p.Scalar(c[field])
		}
		switch typ := p.Str(m, "type"); typ {
		case "External":
			name := p.Str(m, "external", "metric", "name")
			t := p.Map(m, "external", "target")
			if p.Has(t, "averageValue") {
				w.Write(1, "%q (target average value):\t%s / %s\n", name, measured("external", "averageValue"), p.Scalar(t["averageValue"]))
			} else {
				w.Write(1, "%q (target value):\t%s / %s\n", name, measured("external", "value"), p.Scalar(t["value"]))
			}
		case "Pods":
			w.Write(1, "%q on pods:\t%s / %s\n", p.Str(m, "pods", "metric", "name"), measured("pods", "averageValue"), p.Scalar(p.Map(m, "pods", "target")["averageValue"]))
		case "Object":
			obj := p.Map(m, "object")
			w.Write(1, "%q on %s/%s ", p.Str(obj, "metric", "name"), p.Str(obj, "describedObject", "kind"), p.Str(obj, "describedObject", "name"))
			t := p.Map(obj, "target")
			if p.Str(t, "type") == "AverageValue" {
				w.Write(0, "(target average value):\t%s / %s\n", measured("object", "averageValue"), p.Scalar(t["averageValue"]))
			} else {
				w.Write(0, "(target value):\t%s / %s\n", measured("object", "value"), p.Scalar(t["value"]))
			}
		case "Resource", "ContainerResource":
			key := "resource"
			if typ == "ContainerResource" {
				key = "containerResource"
			}
			src := p.Map(m, key)
			if typ == "Resource" {
				w.Write(1, "resource %s on pods", p.Str(src, "name"))
			} else {
				w.Write(1, "resource %s of container \"%s\" on pods", p.Str(src, "name"), p.Str(src, "container"))
			}
			t := p.Map(src, "target")
			if p.Has(t, "averageValue") {
				w.Write(0, ":\t%s / %s\n", measured(key, "averageValue"), p.Scalar(t["averageValue"]))
				continue
			}
			now := "<unknown>"
			if c := cur(key); c != nil && p.Has(c, "averageUtilization") {
				now = fmt.Sprintf("%d%% (%s)", p.Int(c, "averageUtilization"), p.Scalar(c["averageValue"]))
			}
			target := "<auto>"
			if p.Has(t, "averageUtilization") {
				target = fmt.Sprintf("%d%%", p.Int(t, "averageUtilization"))
			}
			w.Write(1, "(as a percentage of request):\t%s / %s\n", now, target)
		default:
			w.Write(1, "<unknown metric type %q>\n", typ)
		}
	}
	minReplicas := "<unset>"
	if p.Has(o, "spec", "minReplicas") {
		minReplicas = fmt.Sprint(p.Int(o, "spec", "minReplicas"))
	}
	w.Write(0, "Min replicas:\t%s\n", minReplicas)
	w.Write(0, "Max replicas:\t%d\n", p.Int(o, "spec", "maxReplicas"))
	if b := p.Map(o, "spec", "behavior"); b != nil {
		w.Write(0, "Behavior:\n")
		d.scalingRules("Scale Up", p.Map(b, "scaleUp"))
		d.scalingRules("Scale Down", p.Map(b, "scaleDown"))
	}
	w.Write(0, "%s pods:\t", p.Str(ref, "kind"))
	w.Write(0, "%d current / %d desired\n", p.Int(o, "status", "currentReplicas"), p.Int(o, "status", "desiredReplicas"))
	if conds := p.List(o, "status", "conditions"); len(conds) > 0 {
		w.Write(0, "Conditions:\n")
		w.Write(1, "Type\tStatus\tReason\tMessage\n")
		w.Write(1, "----\t------\t------\t-------\n")
		for _, c := range conds {
			w.Write(1, "%v\t%v\t%v\t%v\n", p.Str(c, "type"), p.Str(c, "status"), p.Str(c, "reason"), p.Str(c, "message"))
		}
	}
	return d.describeEvents()
}

// scalingRules writes one direction of an autoscaler's behavior.
func (d *describer) scalingRules(direction string, rules map[string]any) {
	if rules == nil {
		return
	}
	w := d.w
	w.Write(1, "%s:\n", direction)
	if p.Has(rules, "stabilizationWindowSeconds") {
		w.Write(2, "Stabilization Window: %d seconds\n", p.Int(rules, "stabilizationWindowSeconds"))
	}
	policies := p.List(rules, "policies")
	if len(policies) == 0 {
		return
	}
	sel := p.Str(rules, "selectPolicy")
	if sel == "" {
		sel = "Max"
	}
	w.Write(2, "Select Policy: %s\n", sel)
	w.Write(2, "Policies:\n")
	for _, pol := range policies {
		w.Write(3, "- Type: %s\tValue: %d\tPeriod: %d seconds\n", p.Str(pol, "type"), p.Int(pol, "value"), p.Int(pol, "periodSeconds"))
	}
}
