package describe

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	p "github.com/konverge/konverge/internal/printer"
	"github.com/konverge/konverge/schema"
)

// node is kubectl's description of a Node: its identity, taints and
// lease, conditions, addresses, capacity, system info, the pods it runs
// (those not finished) with what they ask of it, the totals, and its
// events.
func (d *describer) node() error {
	w, o := d.w, d.obj
	name := d.meta("name")
	w.Write(0, "Name:\t%s\n", name)
	if roles := nodeRoles(p.StringMap(o, "metadata", "labels")); len(roles) > 0 {
		w.Write(0, "Roles:\t%s\n", strings.Join(roles, ","))
	} else {
		w.Write(0, "Roles:\t<none>\n")
	}
	d.labelsAnnotations()
	w.Write(0, "CreationTimestamp:\t%s\n", d.rfc1123(p.Time(o, "metadata", "creationTimestamp")))
	d.nodeTaints()
	w.Write(0, "Unschedulable:\t%v\n", p.Bool(o, "spec", "unschedulable"))
	d.nodeLease(name)
	if conds := p.List(o, "status", "conditions"); len(conds) > 0 {
		w.Write(0, "Conditions:\n  Type\tStatus\tLastHeartbeatTime\tLastTransitionTime\tReason\tMessage\n")
		w.Write(1, "----\t------\t-----------------\t------------------\t------\t-------\n")
		for _, c := range conds {
			w.Write(1, "%v \t%v \t%s \t%s \t%v \t%v\n", p.Str(c, "type"), p.Str(c, "status"),
				d.rfc1123(p.Time(c, "lastHeartbeatTime")), d.rfc1123(p.Time(c, "lastTransitionTime")),
				p.Str(c, "reason"), p.Str(c, "message"))
		}
	}
	w.Write(0, "Addresses:\n")
	for _, a := range p.List(o, "status", "addresses") {
		w.Write(1, "%s:\t%s\n", p.Str(a, "type"), p.Str(a, "address"))
	}
	for _, section := range []struct{ title, field string }{{"Capacity", "capacity"}, {"Allocatable", "allocatable"}} {
		list := p.Map(o, "status", section.field)
		if len(list) == 0 {
			continue
		}
		w.Write(0, "%s:\n", section.title)
		for _, k := range sortedKeys(list) {
			w.Write(0, "  %s:\t%s\n", k, quantityString(list[k]))
		}
	}
	info := p.Map(o, "status", "nodeInfo")
	w.Write(0, "System Info:\n")
	for _, f := range []struct{ label, field string }{
		{"Machine ID", "machineID"}, {"System UUID", "systemUUID"}, {"Boot ID", "bootID"},
		{"Kernel Version", "kernelVersion"}, {"OS Image", "osImage"}, {"Operating System", "operatingSystem"},
		{"Architecture", "architecture"}, {"Container Runtime Version", "containerRuntimeVersion"},
		{"Kubelet Version", "kubeletVersion"},
	} {
		w.Write(0, "  %s:\t%s\n", f.label, p.Str(info, f.field))
	}
	if s := p.Str(o, "spec", "podCIDR"); s != "" {
		w.Write(0, "PodCIDR:\t%s\n", s)
	}
	var cidrs []string
	for _, c := range p.List(o, "spec", "podCIDRs") {
		if s, ok := c.(string); ok {
			cidrs = append(cidrs, s)
		}
	}
	if len(cidrs) > 0 {
		w.Write(0, "PodCIDRs:\t%s\n", strings.Join(cidrs, ","))
	}
	if s := p.Str(o, "spec", "providerID"); s != "" {
		w.Write(0, "ProviderID:\t%s\n", s)
	}
	if err := d.nodePods(name); err != nil {
		return err
	}
	return d.describeEvents()
}

// nodeRoles are the roles the node's labels give:
// node-role.kubernetes.io/ROLE keys and the kubernetes.io/role value,
// sorted, without repeats.
func nodeRoles(labels map[string]string) []string {
	set := map[string]bool{}
	for k, v := range labels {
		switch {
		case strings.HasPrefix(k, "node-role.kubernetes.io/"):
			if r := strings.TrimPrefix(k, "node-role.kubernetes.io/"); r != "" {
				set[r] = true
			}
		case k == "kubernetes.io/role" && v != "":
			set[v] = true
		}
	}
	return sortedKeys(set)
}

// nodeTaints writes the taints, sorted by effect then key, as key=value:effect.
func (d *describer) nodeTaints() {
	w := d.w
	w.Write(0, "Taints:\t")
	taints := p.List(d.obj, "spec", "taints")
	if len(taints) == 0 {
		w.WriteLine("<none>")
		return
	}
	shown := make([]map[string]any, 0, len(taints))
	for _, t := range taints {
		if m, ok := t.(map[string]any); ok {
			shown = append(shown, m)
		}
	}
	sort.SliceStable(shown, func(i, j int) bool {
		ki := p.Str(shown[i], "effect") + "," + p.Str(shown[i], "key")
		kj := p.Str(shown[j], "effect") + "," + p.Str(shown[j], "key")
		return ki < kj
	})
	for i, t := range shown {
		if i != 0 {
			w.Write(0, "\t")
		}
		s := p.Str(t, "key")
		if v := p.Str(t, "value"); v != "" {
			s += "=" + v
		}
		w.Write(0, "%s:%s\n", s, p.Str(t, "effect"))
	}
}

var leaseGVK = schema.GVK{Group: "coordination.k8s.io", Version: "v1", Kind: "Lease"}

// nodeLease writes the node's Lease in kube-node-lease.
func (d *describer) nodeLease(name string) {
	w := d.w
	lease, err := d.c.Get(d.ctx, leaseGVK, "kube-node-lease", name)
	if err != nil {
		w.Write(0, "Lease:\tFailed to get lease: %s\n", err)
		return
	}
	w.Write(0, "Lease:\n")
	holder := p.Str(lease, "spec", "holderIdentity")
	if !p.Has(lease, "spec", "holderIdentity") {
		holder = "<unset>"
	}
	w.Write(1, "HolderIdentity:\t%s\n", holder)
	for _, f := range []struct{ label, field string }{{"AcquireTime", "acquireTime"}, {"RenewTime", "renewTime"}} {
		v := "<unset>"
		if t := p.Time(lease, "spec", f.field); !t.IsZero() {
			v = d.rfc1123(t)
		}
		w.Write(1, "%s:\t%s\n", f.label, v)
	}
}

// nodePods writes the table of the pods on the node that have not
// finished, and the totals of their requests and limits against what
// the node can allocate.
func (d *describer) nodePods(name string) error {
	w := d.w
	l, err := d.c.List(d.ctx, schema.GVK{Version: "v1", Kind: "Pod"})
	if err != nil {
		return fmt.Errorf("list the pods of node %s: %w", name, err)
	}
	var pods []map[string]any
	for _, pod := range l.Items {
		if p.Str(pod, "spec", "nodeName") != name {
			continue
		}
		if ph := p.Str(pod, "status", "phase"); ph == "Succeeded" || ph == "Failed" {
			continue
		}
		pods = append(pods, pod)
	}
	alloc := p.Map(d.obj, "status", "allocatable")
	if len(alloc) == 0 {
		alloc = p.Map(d.obj, "status", "capacity")
	}
	allocOf := func(name string) resource.Quantity { return parseQuantity(alloc[name]) }
	allocCPU, allocMem, allocStorage := allocOf("cpu"), allocOf("memory"), allocOf("ephemeral-storage")
	percent := func(q, of resource.Quantity, milli bool) int64 {
		a, b := q.Value(), of.Value()
		if milli {
			a, b = q.MilliValue(), of.MilliValue()
		}
		if b == 0 {
			return 0
		}
		return int64(float64(a) / float64(b) * 100)
	}

	w.Write(0, "Non-terminated Pods:\t(%d in total)\n", len(pods))
	w.Write(1, "Namespace\tName\t\tCPU Requests\tCPU Limits\tMemory Requests\tMemory Limits\tAge\n")
	w.Write(1, "---------\t----\t\t------------\t----------\t---------------\t-------------\t---\n")
	totalReq, totalLim := resourceTotals{}, resourceTotals{}
	for _, pod := range pods {
		req, lim := podResources(pod, "requests"), podResources(pod, "limits")
		totalReq.add(req)
		totalLim.add(lim)
		cr, cl, mr, ml := req.get("cpu"), lim.get("cpu"), req.get("memory"), lim.get("memory")
		w.Write(1, "%s\t%s\t\t%s (%d%%)\t%s (%d%%)\t%s (%d%%)\t%s (%d%%)\t%s\n",
			p.Str(pod, "metadata", "namespace"), p.Str(pod, "metadata", "name"),
			cr.String(), percent(cr, allocCPU, true), cl.String(), percent(cl, allocCPU, true),
			mr.String(), percent(mr, allocMem, false), ml.String(), percent(ml, allocMem, false),
			p.Since(p.Time(pod, "metadata", "creationTimestamp"), d.opts.Now))
	}
	w.Write(0, "Allocated resources:\n  (Total limits may be over 100 percent, i.e., overcommitted.)\n")
	w.Write(1, "Resource\tRequests\tLimits\n")
	w.Write(1, "--------\t--------\t------\n")
	for _, r := range []struct {
		name  string
		of    resource.Quantity
		milli bool
	}{{"cpu", allocCPU, true}, {"memory", allocMem, false}, {"ephemeral-storage", allocStorage, false}} {
		rq, lm := totalReq.get(r.name), totalLim.get(r.name)
		w.Write(1, "%s\t%s (%d%%)\t%s (%d%%)\n", r.name, rq.String(), percent(rq, r.of, r.milli), lm.String(), percent(lm, r.of, r.milli))
	}
	var huge, ext []string
	for k := range alloc {
		switch {
		case strings.HasPrefix(k, "hugepages-"):
			huge = append(huge, k)
		case k == "cpu" || k == "memory" || k == "ephemeral-storage" || k == "pods":
		default:
			ext = append(ext, k)
		}
	}
	sort.Strings(huge)
	sort.Strings(ext)
	for _, k := range huge {
		rq, lm := totalReq.get(k), totalLim.get(k)
		of := allocOf(k)
		w.Write(1, "%s\t%s (%d%%)\t%s (%d%%)\n", k, rq.String(), percent(rq, of, false), lm.String(), percent(lm, of, false))
	}
	for _, k := range ext {
		rq, lm := totalReq.get(k), totalLim.get(k)
		w.Write(1, "%s\t%s\t%s\n", k, rq.String(), lm.String())
	}
	return nil
}

// resourceTotals are amounts by resource name.
type resourceTotals map[string]resource.Quantity

func (t resourceTotals) get(name string) resource.Quantity { return t[name] }

func (t resourceTotals) add(o resourceTotals) {
	for k, v := range o {
		cur, ok := t[k]
		if !ok {
			t[k] = v.DeepCopy()
			continue
		}
		cur.Add(v)
		t[k] = cur
	}
}

// raise lifts every amount of t to o's where o's is larger.
func (t resourceTotals) raise(o resourceTotals) {
	for k, v := range o {
		if cur, ok := t[k]; !ok || v.Cmp(cur) > 0 {
			t[k] = v.DeepCopy()
		}
	}
}

// podResources is what a pod asks for (field "requests") or may use at
// most ("limits"), as kubectl's resource helper counts it: the regular
// containers and the sidecars (restartable init containers) together,
// or an init container with the sidecars started before it when that is
// more; pod-level resources replace the containers' for the resources
// they name; the overhead is added (to limits only where a limit is
// set).
func podResources(pod map[string]any, field string) resourceTotals {
	listOf := func(c any) resourceTotals {
		out := resourceTotals{}
		for k, v := range p.Map(c, "resources", field) {
			out[k] = parseQuantity(v)
		}
		return out
	}
	sum := resourceTotals{}
	for _, c := range p.List(pod, "spec", "containers") {
		sum.add(listOf(c))
	}
	sidecars, initPeak := resourceTotals{}, resourceTotals{}
	for _, c := range p.List(pod, "spec", "initContainers") {
		own := listOf(c)
		if p.Str(c, "restartPolicy") == "Always" {
			sum.add(own)
			sidecars.add(own)
			initPeak.raise(sidecars)
			continue
		}
		running := resourceTotals{}
		running.add(own)
		running.add(sidecars)
		initPeak.raise(running)
	}
	sum.raise(initPeak)
	for k, v := range p.Map(pod, "spec", "resources", field) {
		sum[k] = parseQuantity(v)
	}
	for k, v := range p.Map(pod, "spec", "overhead") {
		q := parseQuantity(v)
		if field == "limits" {
			if cur, ok := sum[k]; ok {
				cur.Add(q)
				sum[k] = cur
			}
			continue
		}
		cur := sum[k]
		cur.Add(q)
		sum[k] = cur
	}
	return sum
}

// parseQuantity reads a quantity as stored (a string, or a number); zero
// when it does not parse.
func parseQuantity(v any) resource.Quantity {
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case int64:
		s = fmt.Sprint(x)
	case float64:
		s = fmt.Sprint(x)
	default:
		return resource.Quantity{}
	}
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return resource.Quantity{}
	}
	return q
}

// quantityString prints a stored quantity as kubectl does (canonical).
func quantityString(v any) string {
	q := parseQuantity(v)
	return q.String()
}
