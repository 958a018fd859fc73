package describe

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/konverge/konverge/cluster"
	p "github.com/konverge/konverge/internal/printer"
	"github.com/konverge/konverge/schema"
)

func (d *describer) service() error {
	w, o := d.w, d.obj
	d.nameNamespace()
	d.labelsAnnotations()
	w.Write(0, "Selector:\t%s\n", p.FormatLabels(p.StringMap(o, "spec", "selector")))
	w.Write(0, "Type:\t%s\n", p.Str(o, "spec", "type"))
	if s := p.Str(o, "spec", "ipFamilyPolicy"); s != "" {
		w.Write(0, "IP Family Policy:\t%s\n", s)
	}
	if fams := stringList(o, "spec", "ipFamilies"); len(fams) > 0 {
		w.Write(0, "IP Families:\t%s\n", strings.Join(fams, ","))
	} else {
		w.Write(0, "IP Families:\t%s\n", "<none>")
	}
	w.Write(0, "IP:\t%s\n", p.Str(o, "spec", "clusterIP"))
	if ips := stringList(o, "spec", "clusterIPs"); len(ips) > 0 {
		w.Write(0, "IPs:\t%s\n", strings.Join(ips, ","))
	} else {
		w.Write(0, "IPs:\t%s\n", "<none>")
	}
	if ips := stringList(o, "spec", "externalIPs"); len(ips) > 0 {
		w.Write(0, "External IPs:\t%v\n", strings.Join(ips, ","))
	}
	if s := p.Str(o, "spec", "loadBalancerIP"); s != "" {
		w.Write(0, "Desired LoadBalancer IP:\t%s\n", s)
	}
	if s := p.Str(o, "spec", "externalName"); s != "" {
		w.Write(0, "External Name:\t%s\n", s)
	}
	if ing := p.List(o, "status", "loadBalancer", "ingress"); len(ing) > 0 {
		var l []string
		for _, i := range ing {
			if ip := p.Str(i, "ip"); ip != "" {
				l = append(l, ip)
			} else {
				l = append(l, p.Str(i, "hostname"))
			}
		}
		w.Write(0, "LoadBalancer Ingress:\t%s\n", strings.Join(l, ", "))
	}
	slices_, err := d.endpointSlices()
	if err != nil {
		return err
	}
	for _, sp := range p.List(o, "spec", "ports") {
		name := p.Str(sp, "name")
		shown := name
		if shown == "" {
			shown = "<unset>"
		}
		proto := p.Str(sp, "protocol")
		w.Write(0, "Port:\t%s\t%d/%s\n", shown, p.Int(sp, "port"), proto)
		w.Write(0, "TargetPort:\t%s/%s\n", p.Scalar(p.Map(sp)["targetPort"]), proto)
		if s := p.Str(sp, "appProtocol"); s != "" {
			w.Write(0, "AppProtocol:\t%s\n", s)
		}
		if np := p.Int(sp, "nodePort"); np != 0 {
			w.Write(0, "NodePort:\t%s\t%d/%s\n", shown, np, proto)
		}
		w.Write(0, "Endpoints:\t%s\n", formatEndpointSlices(slices_, name))
	}
	w.Write(0, "Session Affinity:\t%s\n", p.Str(o, "spec", "sessionAffinity"))
	if s := p.Str(o, "spec", "externalTrafficPolicy"); s != "" {
		w.Write(0, "External Traffic Policy:\t%s\n", s)
	}
	if s := p.Str(o, "spec", "internalTrafficPolicy"); s != "" {
		w.Write(0, "Internal Traffic Policy:\t%s\n", s)
	}
	if n := p.Int(o, "spec", "healthCheckNodePort"); n != 0 {
		w.Write(0, "HealthCheck NodePort:\t%d\n", n)
	}
	if r := stringList(o, "spec", "loadBalancerSourceRanges"); len(r) > 0 {
		w.Write(0, "LoadBalancer Source Ranges:\t%v\n", strings.Join(r, ","))
	}
	if s := p.Str(o, "spec", "trafficDistribution"); s != "" {
		w.Write(0, "Traffic Distribution:\t%s\n", s)
	}
	return d.describeEvents()
}

func stringList(o any, path ...string) []string {
	var out []string
	for _, v := range p.List(o, path...) {
		out = append(out, p.Scalar(v))
	}
	return out
}

// endpointSlices lists the EndpointSlices of the Service.
func (d *describer) endpointSlices() ([]map[string]any, error) {
	l, err := d.c.List(d.ctx, schema.GVK{Group: "discovery.k8s.io", Version: "v1", Kind: "EndpointSlice"},
		cluster.InNamespace(d.meta("namespace")), cluster.MatchingLabels("kubernetes.io/service-name="+d.meta("name")))
	if err != nil {
		if cluster.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return l.Items, nil
}

// formatEndpointSlices lists the ready endpoints of a port as kubectl's
// formatEndpointSlices: at most three, then "+ N more...".
func formatEndpointSlices(eps []map[string]any, port string) string {
	if len(eps) == 0 {
		return "<none>"
	}
	var list []string
	count := 0
	add := func(s string) {
		if len(list) < 3 {
			list = append(list, s)
		}
		count++
	}
	ready := func(e any) bool {
		v, ok := p.Map(e, "conditions")["ready"].(bool)
		return !ok || v
	}
	for _, s := range eps {
		ports := p.List(s, "ports")
		for _, e := range p.List(s, "endpoints") {
			addrs := p.List(e, "addresses")
			if len(addrs) == 0 || !ready(e) {
				continue
			}
			if len(ports) == 0 {
				add(p.Scalar(addrs[0]))
				continue
			}
			for _, pt := range ports {
				if p.Str(pt, "name") == port {
					add(fmt.Sprintf("%s:%d", p.Scalar(addrs[0]), p.Int(pt, "port")))
				}
			}
		}
	}
	if len(list) == 0 {
		return "<none>"
	}
	s := strings.Join(list, ",")
	if count > 3 {
		s = fmt.Sprintf("%s + %d more...", s, count-3)
	}
	return s
}

// generic is kubectl's genericDescriber: every field of the object.
func (d *describer) generic() error {
	d.nameNamespace()
	d.labelsAnnotations()
	printContent(d.w, 0, d.obj, "", ".metadata.managedFields", ".metadata.name",
		".metadata.namespace", ".metadata.labels", ".metadata.annotations")
	return d.describeEvents()
}

func printContent(w *prefixWriter, level int, content map[string]any, skipPrefix string, skip ...string) {
	fields := make([]string, 0, len(content))
	for f := range content {
		fields = append(fields, f)
	}
	sort.Strings(fields)
	for _, f := range fields {
		expr := skipPrefix + "." + f
		if slices.Contains(skip, expr) {
			continue
		}
		switch v := content[f].(type) {
		case map[string]any:
			w.Write(level, "%s:\n", smartLabelFor(f))
			printContent(w, level+1, v, expr, skip...)
		case []any:
			w.Write(level, "%s:\n", smartLabelFor(f))
			for _, c := range v {
				if m, ok := c.(map[string]any); ok {
					printContent(w, level+1, m, expr, skip...)
				} else {
					w.Write(level+1, "%v\n", scalarV(c))
				}
			}
		default:
			w.Write(level, "%s:\t%v\n", smartLabelFor(f), scalarV(v))
		}
	}
}

// scalarV prints a scalar as %v prints the values of an unstructured
// object (null as <nil>).
func scalarV(v any) string {
	if v == nil {
		return "<nil>"
	}
	return p.Scalar(v)
}

// smartLabelFor turns a field name into kubectl's label:
// "creationTimestamp" → "Creation Timestamp", "uid" → "UID".
func smartLabelFor(field string) string {
	if strings.IndexFunc(field, func(r rune) bool { return !unicode.IsLetter(r) && r != '-' }) != -1 {
		return field
	}
	parts := camelSplit(field)
	var merged []string
	for i := 0; i < len(parts); i++ {
		part := parts[i]
		if i < len(parts)-1 {
			next := parts[i+1]
			lower := func(r rune) bool { return unicode.IsLetter(r) && !unicode.IsUpper(r) }
			allUpper := strings.IndexFunc(part, lower) < 0
			if len(part) >= 2 && allUpper && len(next) > 0 && unicode.IsUpper(rune(next[0])) {
				merged = append(merged, part+next)
				i++
				continue
			}
		}
		merged = append(merged, part)
	}
	var out []string
	for _, part := range merged {
		if part == "_" {
			continue
		}
		switch strings.ToUpper(part) {
		case "API", "URL", "UID", "GUID":
			part = strings.ToUpper(part)
		default:
			if strings.ToLower(part) == part {
				part = strings.ToUpper(part[:1]) + part[1:]
			}
		}
		out = append(out, part)
	}
	return strings.Join(out, " ")
}

// camelSplit splits a word as github.com/fatih/camelcase.Split: at changes
// between lower case, upper case, digits and other characters, an upper
// case run followed by lower case giving its last letter to the next word.
func camelSplit(s string) []string {
	class := func(r rune) int {
		switch {
		case unicode.IsLower(r):
			return 1
		case unicode.IsUpper(r):
			return 2
		case unicode.IsDigit(r):
			return 3
		}
		return 4
	}
	var runs [][]rune
	last := 0
	for _, r := range s {
		c := class(r)
		if c == last && len(runs) > 0 {
			runs[len(runs)-1] = append(runs[len(runs)-1], r)
		} else {
			runs = append(runs, []rune{r})
		}
		last = c
	}
	for i := 0; i < len(runs)-1; i++ {
		if unicode.IsUpper(runs[i][0]) && unicode.IsLower(runs[i+1][0]) {
			runs[i+1] = append([]rune{runs[i][len(runs[i])-1]}, runs[i+1]...)
			runs[i] = runs[i][:len(runs[i])-1]
		}
	}
	var out []string
	for _, r := range runs {
		if len(r) > 0 {
			out = append(out, string(r))
		}
	}
	return out
}
