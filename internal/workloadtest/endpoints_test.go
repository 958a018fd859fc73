package workloadtest

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/konverge/konverge/value"
)

// reduceEndpoints keeps what the endpoints controller decides of an
// Endpoints object: its subsets with each address named by its pod (the
// addresses themselves are the kubelet's choice) in pod order. The
// subsets are compared in the order of their addresses; the
// last-change-trigger-time annotation is left out: whether the real
// controller writes it depends on how its watches interleave.
func reduceEndpoints(o, out map[string]any) {
	var subsets []any
	for _, s := range listAt(o, "subsets") {
		m, _ := s.(map[string]any)
		sub := map[string]any{}
		for _, k := range []string{"addresses", "notReadyAddresses"} {
			var addrs []string
			for _, a := range listAt(m, k) {
				am, _ := a.(map[string]any)
				addrs = append(addrs, fmt.Sprintf("%s node=%v hostname=%v", str(am, "targetRef", "name"), fieldOf(am, "nodeName"), fieldOf(am, "hostname")))
			}
			if addrs != nil {
				sort.Strings(addrs)
				sub[k] = addrs
			}
		}
		if p := fieldOf(m, "ports"); p != nil {
			sub["ports"] = value.DeepCopy(p)
		}
		subsets = append(subsets, sub)
	}
	// Subsets are in the order of the hash of their Go value, which
	// holds the pods' addresses and uids: in order of their pods here.
	sort.SliceStable(subsets, func(i, j int) bool { return fmt.Sprint(subsets[i]) < fmt.Sprint(subsets[j]) })
	if subsets != nil {
		out["subsets"] = subsets
	}
}

// reduceEndpointSlice keeps what the EndpointSlice controller decides of
// a slice: its generated name's prefix, address type, ports and
// endpoints named by their pods, in pod order (the real controller fills
// a slice in the order of a map). The generation (how many writes the
// slice took, which depends on how the watches interleave) and the
// trigger-time annotation are left out.
func reduceEndpointSlice(o, out map[string]any) {
	gen := str(o, "metadata", "generateName")
	if svc := str(o, "metadata", "labels", "kubernetes.io/service-name"); gen == "" && safeSuffix.MatchString(strings.TrimPrefix(name(o), svc+"-")) {
		// A slice written again without its generateName.
		gen = svc + "-"
	}
	if gen != "" {
		// The random suffix masked; the ports tell a Service's slices
		// apart.
		b, _ := json.Marshal(fieldOf(o, "ports"))
		out["name"] = gen + "* " + string(b)
	}
	out["addressType"] = fieldOf(o, "addressType")
	if ann, ok := fieldOf(o, "metadata.annotations").(map[string]any); ok {
		a := map[string]any{}
		for k, v := range ann {
			if k != "endpoints.kubernetes.io/last-change-trigger-time" {
				a[k] = v
			}
		}
		if len(a) > 0 {
			out["annotations"] = a
		}
	}
	out["ports"] = value.DeepCopy(fieldOf(o, "ports"))
	var eps []map[string]any
	for _, e := range listAt(o, "endpoints") {
		m, _ := e.(map[string]any)
		ep := map[string]any{"pod": str(m, "targetRef", "name"), "addresses": len(listAt(m, "addresses"))}
		if ep["pod"] == "" {
			// Mirrored from Endpoints a user wrote: their addresses.
			ep["pod"] = fmt.Sprint(listAt(m, "addresses"))
			ep["addresses"] = value.DeepCopy(fieldOf(m, "addresses"))
		}
		for _, k := range []string{"conditions", "nodeName", "hostname", "zone"} {
			if v := fieldOf(m, k); v != nil {
				ep[k] = value.DeepCopy(v)
			}
		}
		eps = append(eps, ep)
	}
	sort.Slice(eps, func(i, j int) bool { return eps[i]["pod"].(string) < eps[j]["pod"].(string) })
	if eps != nil {
		l := make([]any, len(eps))
		for i, e := range eps {
			l[i] = e
		}
		out["endpoints"] = l
	} else {
		out["endpoints"] = fieldOf(o, "endpoints")
	}
}
