// Package svcpods holds what the endpoints and EndpointSlice controllers
// share, after k8s.io/endpointslice v0.37.1's utilities: which Services
// they serve, which pods back a Service, the pod's address and ports for
// it, and the endpoints.kubernetes.io/last-change-trigger-time annotation.
package svcpods

import (
	"context"
	"fmt"
	"net"
	"sort"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/controller/internal/kobj"
	"github.com/konverge/konverge/schema"
)

// The kinds the endpoint controllers read and write.
var (
	ServiceGVK       = schema.GVK{Version: "v1", Kind: "Service"}
	EndpointsGVK     = schema.GVK{Version: "v1", Kind: "Endpoints"}
	EndpointSliceGVK = schema.GVK{Group: "discovery.k8s.io", Version: "v1", Kind: "EndpointSlice"}
)

// TriggerTimeAnnotation is the annotation with the time of the change
// that the last write of an Endpoints object or EndpointSlice reflects.
const TriggerTimeAnnotation = "endpoints.kubernetes.io/last-change-trigger-time"

// HeadlessLabel marks the endpoints of a Service without a cluster IP.
const HeadlessLabel = "service.kubernetes.io/headless"

// Served reports whether the endpoint controllers give svc endpoints: a
// selector, and not of type ExternalName.
func Served(svc map[string]any) bool {
	if kobj.Str(svc, "spec", "type") == "ExternalName" {
		return false
	}
	_, ok := kobj.Map(svc, "spec")["selector"].(map[string]any)
	return ok
}

// ServiceIPSet reports a cluster IP other than None.
func ServiceIPSet(svc map[string]any) bool {
	ip := kobj.Str(svc, "spec", "clusterIP")
	return ip != "" && ip != "None"
}

// Pods are the pods of every namespace, indexed by label.
type Pods struct {
	byNS map[string]*nsPods
}

type nsPods struct {
	byName  map[string]map[string]any
	byLabel map[string]map[string]bool // "key=value" -> pod names
}

// ListPods lists the pods of every namespace once.
func ListPods(ctx context.Context, c cluster.Interface) (*Pods, error) {
	l, err := c.List(ctx, kobj.PodGVK)
	if err != nil {
		return nil, fmt.Errorf("list pods: %w", err)
	}
	out := &Pods{byNS: map[string]*nsPods{}}
	for _, p := range l.Items {
		out.set(kobj.Namespace(p), kobj.Name(p), p)
	}
	return out, nil
}

// set puts pod (nil: none) as ns/name and returns the pod it replaces.
func (ps *Pods) set(namespace, name string, pod map[string]any) map[string]any {
	ns := ps.byNS[namespace]
	if ns == nil {
		if pod == nil {
			return nil
		}
		ns = &nsPods{byName: map[string]map[string]any{}, byLabel: map[string]map[string]bool{}}
		ps.byNS[namespace] = ns
	}
	old := ns.byName[name]
	oldLabels, newLabels := kobj.Map(old, "metadata", "labels"), kobj.Map(pod, "metadata", "labels")
	for k, v := range oldLabels {
		if nv, ok := newLabels[k]; ok && nv == v && pod != nil {
			continue
		}
		lv := labelKey(k, v)
		delete(ns.byLabel[lv], name)
		if len(ns.byLabel[lv]) == 0 {
			delete(ns.byLabel, lv)
		}
	}
	if pod == nil {
		delete(ns.byName, name)
		if len(ns.byName) == 0 {
			delete(ps.byNS, namespace)
		}
		return old
	}
	ns.byName[name] = pod
	for k, v := range newLabels {
		if ov, ok := oldLabels[k]; ok && ov == v && old != nil {
			continue
		}
		lv := labelKey(k, v)
		set := ns.byLabel[lv]
		if set == nil {
			set = map[string]bool{}
			ns.byLabel[lv] = set
		}
		set[name] = true
	}
	return old
}

func labelKey(k string, v any) string {
	s, _ := v.(string)
	return k + "=" + s
}

// Selected returns the pods of svc's namespace that its selector (a map:
// every label equal) selects, by name. The pods of the selector's
// rarest label are the only ones looked at.
func (ps *Pods) Selected(svc map[string]any) []map[string]any {
	ns := ps.byNS[kobj.Namespace(svc)]
	if ns == nil {
		return nil
	}
	sel := kobj.Map(svc, "spec", "selector")
	var out []map[string]any
	if len(sel) == 0 {
		out = make([]map[string]any, 0, len(ns.byName))
		for _, p := range ns.byName {
			out = append(out, p)
		}
	} else {
		var candidates map[string]bool
		first := true
		for k, v := range sel {
			if l := ns.byLabel[labelKey(k, v)]; first || len(l) < len(candidates) {
				candidates, first = l, false
			}
		}
		for name := range candidates {
			if p := ns.byName[name]; selects(svc, p) {
				out = append(out, p)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return kobj.Name(out[i]) < kobj.Name(out[j]) })
	return out
}

// ShouldPodBeInEndpoints is upstream's: not terminal, with an IP, and not
// terminating unless includeTerminating.
func ShouldPodBeInEndpoints(pod map[string]any, includeTerminating bool) bool {
	switch kobj.Str(pod, "status", "phase") {
	case "Succeeded", "Failed":
		return false
	}
	if kobj.Str(pod, "status", "podIP") == "" && len(kobj.Slice(pod, "status", "podIPs")) == 0 {
		return false
	}
	return includeTerminating || !kobj.Deleting(pod)
}

// Ready reports the pod's Ready condition True.
func Ready(pod map[string]any) bool {
	ok, _ := kobj.PodReady(pod)
	return ok
}

// IPv6 reports whether svc's endpoints are of the IPv6 family.
func IPv6(svc, pod map[string]any) bool {
	if fams := kobj.Slice(svc, "spec", "ipFamilies"); len(fams) > 0 {
		return fams[0] == "IPv6"
	}
	if ServiceIPSet(svc) {
		return isIPv6(kobj.Str(svc, "spec", "clusterIP"))
	}
	return isIPv6(kobj.Str(pod, "status", "podIP"))
}

func isIPv6(s string) bool {
	ip := net.ParseIP(s)
	return ip != nil && ip.To4() == nil
}

// PodIPs returns the pod's addresses of one family, as printed by Go's
// net package.
func PodIPs(pod map[string]any, v6 bool) []string {
	var out []string
	ips := kobj.Slice(pod, "status", "podIPs")
	if len(ips) == 0 && kobj.Str(pod, "status", "podIP") != "" {
		ips = []any{map[string]any{"ip": kobj.Str(pod, "status", "podIP")}}
	}
	for _, x := range ips {
		m, _ := x.(map[string]any)
		ip := net.ParseIP(kobj.Str(m, "ip"))
		if ip == nil || (ip.To4() == nil) != v6 {
			continue
		}
		out = append(out, ip.String())
	}
	return out
}

// ShouldSetHostname is upstream's: the pod names a hostname and the
// Service as its subdomain.
func ShouldSetHostname(pod, svc map[string]any) bool {
	return kobj.Str(pod, "spec", "hostname") != "" && kobj.Str(pod, "spec", "subdomain") == kobj.Name(svc) && kobj.Namespace(pod) == kobj.Namespace(svc)
}

// FindPort resolves a Service port's targetPort on a pod: a number as
// is, a name by the containers' (and sidecars') ports of the same
// protocol.
func FindPort(pod, svcPort map[string]any) (int64, bool) {
	tp := svcPort["targetPort"]
	switch v := tp.(type) {
	case int64:
		return v, true
	case float64:
		return int64(v), true
	case string:
		proto := kobj.Str(svcPort, "protocol")
		if proto == "" {
			proto = "TCP"
		}
		match := func(ctr map[string]any) (int64, bool) {
			for _, p := range kobj.Slice(ctr, "ports") {
				pm, _ := p.(map[string]any)
				pp := kobj.Str(pm, "protocol")
				if pp == "" {
					pp = "TCP"
				}
				if kobj.Str(pm, "name") == v && pp == proto {
					n, _ := kobj.Int(pm, "containerPort")
					return n, true
				}
			}
			return 0, false
		}
		for _, ctr := range kobj.Slice(pod, "spec", "containers") {
			if n, ok := match(asMap(ctr)); ok {
				return n, true
			}
		}
		for _, ctr := range kobj.Slice(pod, "spec", "initContainers") {
			if kobj.Str(asMap(ctr), "restartPolicy") != "Always" {
				continue
			}
			if n, ok := match(asMap(ctr)); ok {
				return n, true
			}
		}
	case nil:
		if n, ok := kobj.Int(svcPort, "port"); ok {
			return n, true
		}
	}
	return 0, false
}

// TriggerTime is the endpoints.kubernetes.io/last-change-trigger-time of
// a write: the Service's creation for its first endpoints, then the
// earliest of the changes since the last write (a pod turning ready or
// unready); zero (the annotation goes) when the write reflects no such
// change. Upstream remembers what it saw of each pod; a controller
// without memory counts as changes those after the time the last write
// recorded.
func TriggerTime(svc map[string]any, pods []map[string]any, existing map[string]any) time.Time {
	created := kobj.ParseTime(kobj.Str(svc, "metadata", "creationTimestamp"))
	if existing == nil {
		return created
	}
	last := parseNano(kobj.Annotation(existing, TriggerTimeAnnotation))
	var min time.Time
	consider := func(t time.Time) {
		if t.IsZero() || !t.After(last) {
			return
		}
		if min.IsZero() || t.Before(min) {
			min = t
		}
	}
	for _, p := range pods {
		if c := kobj.Condition(p, "Ready"); c != nil {
			consider(kobj.ParseTime(kobj.Str(c, "lastTransitionTime")))
		}
	}
	consider(created)
	return min
}

func parseNano(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

// FormatTriggerTime is how the annotation prints a time.
func FormatTriggerTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func asMap(v any) map[string]any { m, _ := v.(map[string]any); return m }
