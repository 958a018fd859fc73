package ctrltest

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/konverge/konverge/controller/internal/kobj"
	"github.com/konverge/konverge/schema"
)

// The kinds ServicesStep writes.
var (
	serviceGVK       = schema.GVK{Version: "v1", Kind: "Service"}
	endpointsGVK     = schema.GVK{Version: "v1", Kind: "Endpoints"}
	endpointSliceGVK = schema.GVK{Group: "discovery.k8s.io", Version: "v1", Kind: "EndpointSlice"}
	nodeGVK          = schema.GVK{Version: "v1", Kind: "Node"}
)

// ServicesStep is one random edit of what the endpoint controllers read,
// for SameWrites: Services of two namespaces (with a selector or
// without, headless or not, a named or numbered target port, labels;
// created, changed, deleted), pods (labels, ports, readiness, address;
// created, changed, deleted), Endpoints written by a user (for the
// mirroring controller; some labelled skip-mirror), the zone of the
// Node, and time passing.
func ServicesStep(e *Env, r *rand.Rand, i int) {
	e.TB.Helper()
	nss := []string{"default", "other"}
	ns := nss[r.IntN(2)]
	apps := []string{"a", "b"}
	if i == 0 {
		e.Create(map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "other"}})
		e.Create(Node("node-1", map[string]string{"topology.kubernetes.io/zone": "zone-a"}))
		return
	}
	switch op := r.IntN(10); op {
	case 0, 1: // a Service
		name := fmt.Sprintf("s%d", r.IntN(4))
		if e.Exists(serviceGVK, ns, name) && r.IntN(3) == 0 {
			e.Delete(serviceGVK, ns, name)
			return
		}
		spec := map[string]any{}
		if r.IntN(4) != 0 {
			spec["selector"] = map[string]any{"app": apps[r.IntN(2)]}
		}
		var target any = "http"
		if r.IntN(2) == 0 {
			target = int64(8080)
		}
		headless := r.IntN(4) == 0
		if headless {
			spec["clusterIP"] = "None"
		}
		if !headless || r.IntN(2) == 0 {
			spec["ports"] = []any{map[string]any{"name": "web", "port": int64(80), "targetPort": target}}
		}
		if r.IntN(3) == 0 {
			spec["publishNotReadyAddresses"] = true
		}
		labels := map[string]any{"tier": fmt.Sprint(r.IntN(2))}
		if e.Exists(serviceGVK, ns, name) {
			e.Modify(serviceGVK, ns, name, func(s map[string]any) {
				kobj.EnsureMap(s, "metadata")["labels"] = labels
				sp := kobj.EnsureMap(s, "spec")
				sp["selector"] = spec["selector"]
				if spec["selector"] == nil {
					delete(sp, "selector")
				}
				if spec["ports"] != nil || sp["clusterIP"] == "None" {
					sp["ports"] = spec["ports"]
				}
				if sp["ports"] == nil {
					delete(sp, "ports")
				}
				sp["publishNotReadyAddresses"] = spec["publishNotReadyAddresses"] == true
			})
			return
		}
		e.Create(map[string]any{"apiVersion": "v1", "kind": "Service",
			"metadata": map[string]any{"name": name, "namespace": ns, "labels": labels}, "spec": spec})
	case 2, 3, 4: // a pod
		name := fmt.Sprintf("p%d", r.IntN(6))
		if e.Exists(kobj.PodGVK, ns, name) {
			if r.IntN(3) == 0 {
				e.Delete(kobj.PodGVK, ns, name)
				return
			}
			p := e.Get(kobj.PodGVK, ns, name)
			setPodStatus(e, p, r)
			return
		}
		port := int64(8080 + r.IntN(2))
		p := e.Create(map[string]any{"apiVersion": "v1", "kind": "Pod",
			"metadata": map[string]any{"name": name, "namespace": ns, "labels": map[string]any{"app": apps[r.IntN(2)]}},
			"spec": map[string]any{"nodeName": "node-1", "containers": []any{map[string]any{"name": "c", "image": "nginx",
				"ports": []any{map[string]any{"name": "http", "containerPort": port}}}}}})
		setPodStatus(e, p, r)
	case 5: // Endpoints a user writes
		name := fmt.Sprintf("s%d", r.IntN(4))
		if e.Exists(endpointsGVK, ns, name) && r.IntN(3) == 0 {
			e.Delete(endpointsGVK, ns, name)
			return
		}
		var addrs []any
		for j := range r.IntN(3) {
			addrs = append(addrs, map[string]any{"ip": fmt.Sprintf("10.9.%d.%d", r.IntN(2), j+1)})
		}
		ep := map[string]any{"apiVersion": "v1", "kind": "Endpoints",
			"metadata": map[string]any{"name": name, "namespace": ns, "labels": map[string]any{"user": fmt.Sprint(r.IntN(2))}}}
		if r.IntN(5) == 0 {
			kobj.Map(ep, "metadata", "labels")["endpointslice.kubernetes.io/skip-mirror"] = "true"
		}
		if len(addrs) > 0 {
			ep["subsets"] = []any{map[string]any{"addresses": addrs,
				"ports": []any{map[string]any{"name": "web", "port": int64(80 + r.IntN(2)), "protocol": "TCP"}}}}
		}
		if e.Exists(endpointsGVK, ns, name) {
			cur := e.Get(endpointsGVK, ns, name)
			kobj.EnsureMap(ep, "metadata")["resourceVersion"] = kobj.Str(cur, "metadata", "resourceVersion")
			e.Update(ep)
			return
		}
		e.Create(ep)
	case 6: // the Node's zone
		e.Modify(nodeGVK, "", "node-1", func(n map[string]any) {
			kobj.EnsureMap(n, "metadata", "labels")["topology.kubernetes.io/zone"] = fmt.Sprintf("zone-%c", 'a'+r.IntN(3))
		})
	default:
		e.Advance(time.Duration(1+r.IntN(20)) * time.Second)
	}
}

func setPodStatus(e *Env, p map[string]any, r *rand.Rand) {
	e.TB.Helper()
	ready := "False"
	if r.IntN(3) != 0 {
		ready = "True"
	}
	st := map[string]any{"phase": "Running", "conditions": []any{map[string]any{"type": "Ready", "status": ready,
		"lastTransitionTime": kobj.FormatTime(e.Now())}}}
	if r.IntN(6) != 0 {
		ip := fmt.Sprintf("10.0.%d.%d", r.IntN(2), 1+r.IntN(9))
		st["podIP"] = ip
		st["podIPs"] = []any{map[string]any{"ip": ip}}
	}
	p["status"] = st
	e.UpdateStatus(p)
}

// ServicesDump is what the endpoint controllers wrote, for SameWrites:
// Endpoints, EndpointSlices (without their random names) and Events.
func ServicesDump(e *Env) string {
	var lines []string
	for _, ns := range []string{"default", "other"} {
		for _, ep := range e.List(endpointsGVK, ns) {
			lines = append(lines, fmt.Sprintf("endpoints %s/%s %v %v %s", ns, kobj.Name(ep),
				kobj.Map(ep, "metadata", "labels"), kobj.Map(ep, "metadata", "annotations"), subsets(ep)))
		}
		var slices []string
		perService := map[string]int{}
		for _, s := range e.List(endpointSliceGVK, ns) {
			perService[kobj.Labels(s)["kubernetes.io/service-name"]]++
		}
		for _, s := range e.List(endpointSliceGVK, ns) {
			ann := kobj.Map(s, "metadata", "annotations")
			if perService[kobj.Labels(s)["kubernetes.io/service-name"]] > 1 {
				// The EndpointSlice controller takes the trigger time of
				// a Service's first slice by name, which is random.
				ann = maps.Clone(ann)
				delete(ann, "endpoints.kubernetes.io/last-change-trigger-time")
			}
			var owners []string
			for _, o := range kobj.Slice(s, "metadata", "ownerReferences") {
				om, _ := o.(map[string]any)
				owners = append(owners, kobj.Str(om, "kind")+"/"+kobj.Str(om, "name"))
			}
			slices = append(slices, fmt.Sprintf("slice %s %v %v %v %v %v %v", ns, kobj.Map(s, "metadata", "labels"),
				ann, owners, s["addressType"], s["ports"], s["endpoints"]))
		}
		sort.Strings(slices)
		lines = append(lines, slices...)
		lines = append(lines, e.Events(ns)...)
	}
	// Uids are random: the two runs' differ.
	return uids.ReplaceAllString(strings.Join(lines, "\n"), "uid:-")
}

// subsets prints the subsets of an Endpoints object in an order of their
// own: the controller orders them (and addresses of the same IP) by the
// pods' uids, which are random.
func subsets(ep map[string]any) string {
	var out []string
	for _, x := range kobj.Slice(ep, "subsets") {
		ss, _ := x.(map[string]any)
		var parts []string
		for _, k := range []string{"addresses", "notReadyAddresses"} {
			var as []string
			for _, a := range kobj.Slice(ss, k) {
				as = append(as, uids.ReplaceAllString(fmt.Sprint(a), "uid:-"))
			}
			sort.Strings(as)
			parts = append(parts, fmt.Sprintf("%s%v", k, as))
		}
		out = append(out, fmt.Sprintf("{%s ports%v}", strings.Join(parts, " "), ss["ports"]))
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

var uids = regexp.MustCompile(`uid:[0-9a-f-]{36}`)
