package printer

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/konverge/konverge/cluster"
)

func name(o map[string]any) string { return Str(o, "metadata", "name") }

func age(o map[string]any, now time.Time) string {
	return Since(Time(o, "metadata", "creationTimestamp"), now)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// containerCells joins a pod spec's container names and images.
func containerCells(podSpec map[string]any) (names, images string) {
	var n, i []string
	for _, c := range List(podSpec, "containers") {
		n = append(n, Str(c, "name"))
		i = append(i, Str(c, "image"))
	}
	return strings.Join(n, ","), strings.Join(i, ",")
}

var (
	colName = Column{Name: "Name", IsName: true}
	colAge  = Column{Name: "Age"}
	wideCIS = []Column{{Name: "Containers", Wide: true}, {Name: "Images", Wide: true}, {Name: "Selector", Wide: true}}
)

func cols(cs ...any) []Column {
	var out []Column
	for _, c := range cs {
		switch x := c.(type) {
		case Column:
			out = append(out, x)
		case []Column:
			out = append(out, x...)
		case string:
			out = append(out, Column{Name: x})
		}
	}
	return out
}

// tables are kubectl's columns per group and kind.
var tables = map[string]kindTable{
	"/Pod": {cols(colName, "Ready", "Status", "Restarts", colAge,
		Column{Name: "IP", Wide: true}, Column{Name: "Node", Wide: true},
		Column{Name: "Nominated Node", Wide: true}, Column{Name: "Readiness Gates", Wide: true}), podRow},
	"apps/Deployment": {cols(colName, "Ready", "Up-to-date", "Available", colAge, wideCIS), func(o map[string]any, now time.Time, wide bool) []string {
		c := []string{name(o), fmt.Sprintf("%d/%d", Int(o, "status", "readyReplicas"), IntOr(o, 1, "spec", "replicas")),
			itoa(Int(o, "status", "updatedReplicas")), itoa(Int(o, "status", "availableReplicas")), age(o, now)}
		if wide {
			n, i := containerCells(Map(o, "spec", "template", "spec"))
			c = append(c, n, i, SelectorString(Map(o, "spec", "selector")))
		}
		return c
	}},
	"apps/ReplicaSet": {cols(colName, "Desired", "Current", "Ready", colAge, wideCIS), replicaSetRow},
	"/ReplicationController": {cols(colName, "Desired", "Current", "Ready", colAge, wideCIS), func(o map[string]any, now time.Time, wide bool) []string {
		c := []string{name(o), itoa(IntOr(o, 0, "spec", "replicas")), itoa(Int(o, "status", "replicas")), itoa(Int(o, "status", "readyReplicas")), age(o, now)}
		if wide {
			n, i := containerCells(Map(o, "spec", "template", "spec"))
			c = append(c, n, i, FormatLabels(StringMap(o, "spec", "selector")))
		}
		return c
	}},
	"apps/StatefulSet": {cols(colName, "Ready", colAge, Column{Name: "Containers", Wide: true}, Column{Name: "Images", Wide: true}), func(o map[string]any, now time.Time, wide bool) []string {
		c := []string{name(o), fmt.Sprintf("%d/%d", Int(o, "status", "readyReplicas"), IntOr(o, 1, "spec", "replicas")), age(o, now)}
		if wide {
			n, i := containerCells(Map(o, "spec", "template", "spec"))
			c = append(c, n, i)
		}
		return c
	}},
	"apps/DaemonSet": {cols(colName, "Desired", "Current", "Ready", "Up-to-date", "Available", "Node Selector", colAge, wideCIS), func(o map[string]any, now time.Time, wide bool) []string {
		c := []string{name(o), itoa(Int(o, "status", "desiredNumberScheduled")), itoa(Int(o, "status", "currentNumberScheduled")),
			itoa(Int(o, "status", "numberReady")), itoa(Int(o, "status", "updatedNumberScheduled")), itoa(Int(o, "status", "numberAvailable")),
			FormatLabels(StringMap(o, "spec", "template", "spec", "nodeSelector")), age(o, now)}
		if wide {
			n, i := containerCells(Map(o, "spec", "template", "spec"))
			c = append(c, n, i, FormatLabelSelector(Map(o, "spec", "selector")))
		}
		return c
	}},
	"batch/Job":                 {cols(colName, "Status", "Completions", "Duration", colAge, wideCIS), jobRow},
	"batch/CronJob":             {cols(colName, "Schedule", "Timezone", "Suspend", "Active", "Last Schedule", colAge, wideCIS), cronJobRow},
	"/Service":                  {cols(colName, "Type", "Cluster-IP", "External-IP", "Port(s)", colAge, Column{Name: "Selector", Wide: true}), serviceRow},
	"networking.k8s.io/Ingress": {cols(colName, "Class", "Hosts", "Address", "Ports", colAge), ingressRow},
	"networking.k8s.io/IngressClass": {cols(colName, "Controller", "Parameters", colAge), func(o map[string]any, now time.Time, wide bool) []string {
		params := "<none>"
		if p := Map(o, "spec", "parameters"); p != nil {
			params = Str(p, "kind") + "/" + Str(p, "name")
			if g := Str(p, "apiGroup"); g != "" {
				params = Str(p, "kind") + "." + g + "/" + Str(p, "name")
			}
		}
		return []string{name(o), Str(o, "spec", "controller"), params, age(o, now)}
	}},
	"networking.k8s.io/NetworkPolicy": {cols(colName, "Pod-Selector", colAge), func(o map[string]any, now time.Time, wide bool) []string {
		return []string{name(o), FormatLabelSelector(Map(o, "spec", "podSelector")), age(o, now)}
	}},
	"/Event": {[]Column{{Name: "Last Seen"}, {Name: "Type"}, {Name: "Reason"}, {Name: "Object"},
		{Name: "Subobject", Wide: true}, {Name: "Source", Wide: true}, {Name: "Message"},
		{Name: "First Seen", Wide: true}, {Name: "Count", Wide: true}, {Name: "Name", Wide: true, IsName: true}}, eventRow},
	"/Namespace": {cols(colName, "Status", colAge), func(o map[string]any, now time.Time, wide bool) []string {
		return []string{name(o), Str(o, "status", "phase"), age(o, now)}
	}},
	"/Secret": {cols(colName, "Type", "Data", colAge), func(o map[string]any, now time.Time, wide bool) []string {
		return []string{name(o), Str(o, "type"), itoa(int64(len(Map(o, "data")))), age(o, now)}
	}},
	"/ConfigMap": {cols(colName, "Data", colAge), func(o map[string]any, now time.Time, wide bool) []string {
		return []string{name(o), itoa(int64(len(Map(o, "data")) + len(Map(o, "binaryData")))), age(o, now)}
	}},
	"/ServiceAccount":                              {cols(colName, colAge), nameAge},
	"/Endpoints":                                   {cols(colName, "Endpoints", colAge), endpointsRow},
	"/PersistentVolumeClaim":                       {cols(colName, "Status", "Volume", "Capacity", "Access Modes", "StorageClass", "VolumeAttributesClass", colAge, Column{Name: "VolumeMode", Wide: true}), pvcRow},
	"rbac.authorization.k8s.io/ClusterRole":        {cols(colName, "Created At"), createdAt},
	"rbac.authorization.k8s.io/Role":               {cols(colName, "Created At"), createdAt},
	"rbac.authorization.k8s.io/RoleBinding":        {cols(colName, "Role", colAge, Column{Name: "Users", Wide: true}, Column{Name: "Groups", Wide: true}, Column{Name: "ServiceAccounts", Wide: true}), bindingRow},
	"rbac.authorization.k8s.io/ClusterRoleBinding": {cols(colName, "Role", colAge, Column{Name: "Users", Wide: true}, Column{Name: "Groups", Wide: true}, Column{Name: "ServiceAccounts", Wide: true}), bindingRow},
	"policy/PodDisruptionBudget": {cols(colName, "Min Available", "Max Unavailable", "Allowed Disruptions", colAge), func(o map[string]any, now time.Time, wide bool) []string {
		minA, maxU := "N/A", "N/A"
		if v := field(o, "spec", "minAvailable"); v != nil {
			minA = Scalar(v)
		}
		if v := field(o, "spec", "maxUnavailable"); v != nil {
			maxU = Scalar(v)
		}
		return []string{name(o), minA, maxU, itoa(Int(o, "status", "disruptionsAllowed")), age(o, now)}
	}},
}

// listTables are the kinds whose rows depend on the whole list (the
// default storage class).
var listTables = map[string]func(objs []map[string]any) rowFunc{}

// tableFor returns the table of a kind: kubectl's own; NAME and CREATED AT
// for the built-in kinds the API server prints with its default table;
// NAME and AGE otherwise (custom resources without printer columns).
func tableFor(res cluster.Resource) kindTable {
	if t, ok := tables[res.GVK.Group+"/"+res.GVK.Kind]; ok {
		return t
	}
	if res.Strategic {
		return kindTable{cols(colName, "Created At"), createdAt}
	}
	return kindTable{cols(colName, colAge), nameAge}
}

func nameAge(o map[string]any, now time.Time, wide bool) []string {
	return []string{name(o), age(o, now)}
}

func createdAt(o map[string]any, now time.Time, wide bool) []string {
	return []string{name(o), Str(o, "metadata", "creationTimestamp")}
}

func replicaSetRow(o map[string]any, now time.Time, wide bool) []string {
	c := []string{name(o), itoa(IntOr(o, 1, "spec", "replicas")), itoa(Int(o, "status", "replicas")), itoa(Int(o, "status", "readyReplicas")), age(o, now)}
	if wide {
		n, i := containerCells(Map(o, "spec", "template", "spec"))
		c = append(c, n, i, FormatLabelSelector(Map(o, "spec", "selector")))
	}
	return c
}

func hasCondition(o map[string]any, t string) bool {
	for _, c := range List(o, "status", "conditions") {
		if Str(c, "type") == t {
			return Str(c, "status") == "True"
		}
	}
	return false
}

func jobRow(o map[string]any, now time.Time, wide bool) []string {
	var completions string
	if Has(o, "spec", "completions") {
		completions = fmt.Sprintf("%d/%d", Int(o, "status", "succeeded"), Int(o, "spec", "completions"))
	} else if p := Int(o, "spec", "parallelism"); p > 1 {
		completions = fmt.Sprintf("%d/1 of %d", Int(o, "status", "succeeded"), p)
	} else {
		completions = fmt.Sprintf("%d/1", Int(o, "status", "succeeded"))
	}
	var dur string
	start, done := Time(o, "status", "startTime"), Time(o, "status", "completionTime")
	switch {
	case start.IsZero():
	case done.IsZero():
		dur = HumanDuration(now.Sub(start))
	default:
		dur = HumanDuration(done.Sub(start))
	}
	status := "Running"
	switch {
	case hasCondition(o, "Complete"):
		status = "Complete"
	case hasCondition(o, "Failed"):
		status = "Failed"
	case Has(o, "metadata", "deletionTimestamp"):
		status = "Terminating"
	case hasCondition(o, "Suspended"):
		status = "Suspended"
	case hasCondition(o, "FailureTarget"):
		status = "FailureTarget"
	case hasCondition(o, "SuccessCriteriaMet"):
		status = "SuccessCriteriaMet"
	}
	c := []string{name(o), status, completions, dur, age(o, now)}
	if wide {
		n, i := containerCells(Map(o, "spec", "template", "spec"))
		c = append(c, n, i, FormatLabelSelector(Map(o, "spec", "selector")))
	}
	return c
}

func cronJobRow(o map[string]any, now time.Time, wide bool) []string {
	last := "<none>"
	if Has(o, "status", "lastScheduleTime") {
		last = Since(Time(o, "status", "lastScheduleTime"), now)
	}
	tz := "<none>"
	if Has(o, "spec", "timeZone") {
		tz = Str(o, "spec", "timeZone")
	}
	suspend := "<unset>"
	if Has(o, "spec", "suspend") {
		suspend = "False"
		if Bool(o, "spec", "suspend") {
			suspend = "True"
		}
	}
	c := []string{name(o), Str(o, "spec", "schedule"), tz, suspend, itoa(int64(len(List(o, "status", "active")))), last, age(o, now)}
	if wide {
		n, i := containerCells(Map(o, "spec", "jobTemplate", "spec", "template", "spec"))
		c = append(c, n, i, FormatLabelSelector(Map(o, "spec", "jobTemplate", "spec", "selector")))
	}
	return c
}

// lbStatus joins load-balancer ingress IPs or hostnames, sorted and
// unique, clipped to 16 bytes unless wide.
func lbStatus(ingress []any, wide bool) string {
	set := map[string]bool{}
	for _, i := range ingress {
		if ip := Str(i, "ip"); ip != "" {
			set[ip] = true
		} else if h := Str(i, "hostname"); h != "" {
			set[h] = true
		}
	}
	var l []string
	for k := range set {
		l = append(l, k)
	}
	sort.Strings(l)
	r := strings.Join(l, ",")
	if !wide && len(r) > 16 {
		r = r[:13] + "..."
	}
	return r
}

func stringList(o any, path ...string) []string {
	var out []string
	for _, v := range List(o, path...) {
		out = append(out, Scalar(v))
	}
	return out
}

func serviceRow(o map[string]any, now time.Time, wide bool) []string {
	typ := Str(o, "spec", "type")
	internal := "<none>"
	if ips := stringList(o, "spec", "clusterIPs"); len(ips) > 0 {
		internal = ips[0]
	}
	ext := "<unknown>"
	extIPs := stringList(o, "spec", "externalIPs")
	switch typ {
	case "ClusterIP", "NodePort":
		ext = "<none>"
		if len(extIPs) > 0 {
			ext = strings.Join(extIPs, ",")
		}
	case "LoadBalancer":
		lb := lbStatus(List(o, "status", "loadBalancer", "ingress"), wide)
		switch {
		case len(extIPs) > 0:
			var r []string
			if lb != "" {
				r = append(r, strings.Split(lb, ",")...)
			}
			ext = strings.Join(append(r, extIPs...), ",")
		case lb != "":
			ext = lb
		default:
			ext = "<pending>"
		}
	case "ExternalName":
		ext = Str(o, "spec", "externalName")
	}
	var ports []string
	for _, p := range List(o, "spec", "ports") {
		s := fmt.Sprintf("%d/%s", Int(p, "port"), Str(p, "protocol"))
		if np := Int(p, "nodePort"); np > 0 {
			s = fmt.Sprintf("%d:%d/%s", Int(p, "port"), np, Str(p, "protocol"))
		}
		ports = append(ports, s)
	}
	ps := strings.Join(ports, ",")
	if ps == "" {
		ps = "<none>"
	}
	c := []string{name(o), typ, internal, ext, ps, age(o, now)}
	if wide {
		c = append(c, FormatLabels(StringMap(o, "spec", "selector")))
	}
	return c
}

func ingressRow(o map[string]any, now time.Time, wide bool) []string {
	class := "<none>"
	if Has(o, "spec", "ingressClassName") {
		class = Str(o, "spec", "ingressClassName")
	}
	rules := List(o, "spec", "rules")
	var hosts []string
	more := false
	for _, r := range rules {
		if len(hosts) == 3 {
			more = true
		}
		if h := Str(r, "host"); !more && h != "" {
			hosts = append(hosts, h)
		}
	}
	hs := "*"
	if len(hosts) > 0 {
		hs = strings.Join(hosts, ",")
		if more {
			hs = fmt.Sprintf("%s + %d more...", hs, len(rules)-3)
		}
	}
	ports := "80"
	if len(List(o, "spec", "tls")) > 0 {
		ports = "80, 443"
	}
	return []string{name(o), class, hs, lbStatus(List(o, "status", "loadBalancer", "ingress"), wide), ports, age(o, now)}
}

func eventRow(o map[string]any, now time.Time, wide bool) []string {
	first := Since(Time(o, "firstTimestamp"), now)
	if Time(o, "firstTimestamp").IsZero() {
		first = Since(Time(o, "eventTime"), now)
	}
	last := Since(Time(o, "lastTimestamp"), now)
	if Time(o, "lastTimestamp").IsZero() {
		last = first
	}
	count := Int(o, "count")
	if Has(o, "series") {
		last = Since(Time(o, "series", "lastObservedTime"), now)
		count = Int(o, "series", "count")
	} else if count == 0 {
		count = 1
	}
	target := strings.ToLower(Str(o, "involvedObject", "kind"))
	if n := Str(o, "involvedObject", "name"); n != "" {
		target += "/" + n
	}
	msg := strings.TrimSpace(Str(o, "message"))
	if !wide {
		return []string{last, Str(o, "type"), Str(o, "reason"), target, "", "", msg, "", "", ""}
	}
	comp := firstNonEmpty(Str(o, "source", "component"), Str(o, "reportingComponent"))
	inst := firstNonEmpty(Str(o, "source", "host"), Str(o, "reportingInstance"))
	src := comp
	if inst != "" {
		src = comp + ", " + inst
	}
	return []string{last, Str(o, "type"), Str(o, "reason"), target, Str(o, "involvedObject", "fieldPath"), src, msg, first, itoa(count), name(o)}
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

func endpointsRow(o map[string]any, now time.Time, wide bool) []string {
	var list []string
	count := 0
	for _, ss := range List(o, "subsets") {
		ports := List(ss, "ports")
		for _, a := range List(ss, "addresses") {
			ip := Str(a, "ip")
			if len(ports) == 0 {
				count++
				if len(list) < 3 {
					list = append(list, ip)
				}
				continue
			}
			for _, p := range ports {
				count++
				if len(list) < 3 {
					list = append(list, fmt.Sprintf("%s:%d", ip, Int(p, "port")))
				}
			}
		}
	}
	s := strings.Join(list, ",")
	if count > 3 {
		s = fmt.Sprintf("%s + %d more...", s, count-3)
	} else if s == "" {
		s = "<none>"
	}
	return []string{name(o), s, age(o, now)}
}

func pvcRow(o map[string]any, now time.Time, wide bool) []string {
	phase := Str(o, "status", "phase")
	if Has(o, "metadata", "deletionTimestamp") {
		phase = "Terminating"
	}
	capacity, modes := "", ""
	if Str(o, "spec", "volumeName") != "" {
		capacity = Scalar(field(o, "status", "capacity", "storage"))
		var m []string
		for _, a := range stringList(o, "status", "accessModes") {
			m = append(m, map[string]string{"ReadWriteOnce": "RWO", "ReadOnlyMany": "ROX", "ReadWriteMany": "RWX", "ReadWriteOncePod": "RWOP"}[a])
		}
		modes = strings.Join(m, ",")
	}
	vac := Str(o, "status", "currentVolumeAttributesClassName")
	c := []string{name(o), phase, Str(o, "spec", "volumeName"), capacity, modes, Str(o, "spec", "storageClassName"), orUnset(vac), age(o, now)}
	if wide {
		mode := "<unset>"
		if m := Str(o, "spec", "volumeMode"); m != "" {
			mode = m
		}
		c = append(c, mode)
	}
	return c
}

func orUnset(s string) string {
	if s == "" {
		return "<unset>"
	}
	return s
}

func bindingRow(o map[string]any, now time.Time, wide bool) []string {
	c := []string{name(o), Str(o, "roleRef", "kind") + "/" + Str(o, "roleRef", "name"), age(o, now)}
	if wide {
		var users, groups, sas []string
		for _, s := range List(o, "subjects") {
			switch Str(s, "kind") {
			case "User":
				users = append(users, Str(s, "name"))
			case "Group":
				groups = append(groups, Str(s, "name"))
			case "ServiceAccount":
				sas = append(sas, Str(s, "namespace")+"/"+Str(s, "name"))
			}
		}
		c = append(c, strings.Join(users, ", "), strings.Join(groups, ", "), strings.Join(sas, ", "))
	}
	return c
}
