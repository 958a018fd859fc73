package printer

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The tables of cluster and storage kinds, as kube-apiserver 1.37 prints
// them (pkg/printers/internalversion of k8s.io/kubernetes, and the CRD
// table of apiextensions-apiserver).

func init() {
	for k, t := range map[string]kindTable{
		"/PersistentVolume": {cols(colName, "Capacity", "Access Modes", "Reclaim Policy", "Status", "Claim", "StorageClass",
			"VolumeAttributesClass", "Reason", colAge, Column{Name: "VolumeMode", Wide: true}), pvRow},
		"storage.k8s.io/StorageClass": {cols(colName, "Provisioner", "ReclaimPolicy", "VolumeBindingMode", "AllowVolumeExpansion", colAge),
			storageClassRow("")},
		"scheduling.k8s.io/PriorityClass": {cols(colName, "Value", "Global-Default", colAge, "PreemptionPolicy"), func(o map[string]any, now time.Time, wide bool) []string {
			return []string{name(o), itoa(Int(o, "value")), strconv.FormatBool(Bool(o, "globalDefault")), age(o, now), Str(o, "preemptionPolicy")}
		}},
		"autoscaling/HorizontalPodAutoscaler": {cols(colName, "Reference", "Targets", "MinPods", "MaxPods", "Replicas", colAge), hpaRow},
		"/Node": {cols(colName, "Status", "Roles", colAge, "Version", Column{Name: "Internal-IP", Wide: true}, Column{Name: "External-IP", Wide: true},
			Column{Name: "OS-Image", Wide: true}, Column{Name: "Kernel-Version", Wide: true}, Column{Name: "Container-Runtime", Wide: true}), nodeRow},
		"/ResourceQuota": {cols(colName, "Request", "Limit", colAge), quotaRow},
		"coordination.k8s.io/Lease": {cols(colName, "Holder", colAge), func(o map[string]any, now time.Time, wide bool) []string {
			return []string{name(o), Str(o, "spec", "holderIdentity"), age(o, now)}
		}},
		"node.k8s.io/RuntimeClass": {cols(colName, "Handler", colAge), func(o map[string]any, now time.Time, wide bool) []string {
			return []string{name(o), Str(o, "handler"), age(o, now)}
		}},
		"admissionregistration.k8s.io/ValidatingWebhookConfiguration": {cols(colName, "Webhooks", colAge), webhooksRow},
		"admissionregistration.k8s.io/MutatingWebhookConfiguration":   {cols(colName, "Webhooks", colAge), webhooksRow},
		"admissionregistration.k8s.io/ValidatingAdmissionPolicy": {cols(colName, "Validations", "ParamKind", colAge), func(o map[string]any, now time.Time, wide bool) []string {
			return []string{name(o), itoa(int64(len(List(o, "spec", "validations")))), paramKind(o), age(o, now)}
		}},
		"admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding": {cols(colName, "PolicyName", "ParamRef", colAge), policyBindingRow},
		"admissionregistration.k8s.io/MutatingAdmissionPolicy": {cols(colName, "Mutations", "ParamKind", colAge), func(o map[string]any, now time.Time, wide bool) []string {
			return []string{name(o), itoa(int64(len(List(o, "spec", "mutations")))), paramKind(o), age(o, now)}
		}},
		"admissionregistration.k8s.io/MutatingAdmissionPolicyBinding": {cols(colName, "PolicyName", "ParamRef", colAge), policyBindingRow},
		"apiextensions.k8s.io/CustomResourceDefinition": {cols(colName, "Scope", "Versions", "Created At", Column{Name: "Group", Wide: true},
			Column{Name: "Kind", Wide: true}, Column{Name: "ShortNames", Wide: true}, Column{Name: "Established", Wide: true}), crdRow},
		"storage.k8s.io/VolumeAttachment": {cols(colName, "Attacher", "PV", "Node", "Attached", colAge), func(o map[string]any, now time.Time, wide bool) []string {
			return []string{name(o), Str(o, "spec", "attacher"), Str(o, "spec", "source", "persistentVolumeName"), Str(o, "spec", "nodeName"),
				strconv.FormatBool(Bool(o, "status", "attached")), age(o, now)}
		}},
		"storage.k8s.io/CSINode": {cols(colName, "Drivers", colAge), func(o map[string]any, now time.Time, wide bool) []string {
			return []string{name(o), itoa(int64(len(List(o, "spec", "drivers")))), age(o, now)}
		}},
		"storage.k8s.io/CSIDriver": {cols(colName, "AttachRequired", "PodInfoOnMount", "StorageCapacity", "TokenRequests", "RequiresRepublish", "Modes", colAge), csiDriverRow},
		"storage.k8s.io/CSIStorageCapacity": {cols(colName, "StorageClassName", "Capacity"), func(o map[string]any, now time.Time, wide bool) []string {
			return []string{name(o), Str(o, "storageClassName"), Scalar(field(o, "capacity"))}
		}},
		"storage.k8s.io/VolumeAttributesClass": {cols(colName, "DriverName", colAge), func(o map[string]any, now time.Time, wide bool) []string {
			return []string{name(o), Str(o, "driverName"), age(o, now)}
		}},
		"discovery.k8s.io/EndpointSlice": {cols(colName, "AddressType", "Ports", "Endpoints", colAge), endpointSliceRow},
		"apps/ControllerRevision":        {cols(colName, "Controller", "Revision", colAge), controllerRevisionRow},
		"/PodTemplate": {cols(colName, "Containers", "Images", "Pod Labels"), func(o map[string]any, now time.Time, wide bool) []string {
			n, i := containerCells(Map(o, "template", "spec"))
			return []string{name(o), n, i, FormatLabels(StringMap(o, "template", "metadata", "labels"))}
		}},
		"certificates.k8s.io/CertificateSigningRequest": {cols(colName, colAge, "SignerName", "Requestor", "RequestedDuration", "Condition"), csrRow},
		"certificates.k8s.io/ClusterTrustBundle": {cols(colName, "SignerName"), func(o map[string]any, now time.Time, wide bool) []string {
			return []string{name(o), orNone(Str(o, "spec", "signerName"))}
		}},
		"flowcontrol.apiserver.k8s.io/FlowSchema": {cols(colName, "PriorityLevel", "MatchingPrecedence", "DistinguisherMethod", colAge, "MissingPL"), flowSchemaRow},
		"flowcontrol.apiserver.k8s.io/PriorityLevelConfiguration": {cols(colName, "Type", "NominalConcurrencyShares", "Queues", "HandSize", "QueueLengthLimit", colAge),
			priorityLevelRow},
		"networking.k8s.io/ServiceCIDR": {cols(colName, "CIDRs", colAge), func(o map[string]any, now time.Time, wide bool) []string {
			return []string{name(o), strings.Join(stringList(o, "spec", "cidrs"), ","), age(o, now)}
		}},
		"networking.k8s.io/IPAddress":           {cols(colName, "ParentRef"), ipAddressRow},
		"resource.k8s.io/DeviceClass":           {cols(colName, colAge), nameAge},
		"resource.k8s.io/ResourceClaimTemplate": {cols(colName, colAge), nameAge},
		"resource.k8s.io/ResourceSlice": {cols(colName, "Node", "Driver", "Pool", colAge), func(o map[string]any, now time.Time, wide bool) []string {
			return []string{name(o), Str(o, "spec", "nodeName"), Str(o, "spec", "driver"), Str(o, "spec", "pool", "name"), age(o, now)}
		}},
		"storagemigration.k8s.io/StorageVersionMigration": {cols(Column{Name: "Name"}, "Resource", "Status"), svmRow},
	} {
		tables[k] = t
	}
	listTables["storage.k8s.io/StorageClass"] = func(objs []map[string]any) rowFunc {
		return storageClassRow(defaultStorageClass(objs))
	}
}

func pvRow(o map[string]any, now time.Time, wide bool) []string {
	claim := ""
	if ref := Map(o, "spec", "claimRef"); ref != nil {
		claim = Str(ref, "namespace") + "/" + Str(ref, "name")
	}
	phase := Str(o, "status", "phase")
	if Has(o, "metadata", "deletionTimestamp") {
		phase = "Terminating"
	}
	mode := "<unset>"
	if m, ok := field(o, "spec", "volumeMode").(string); ok {
		mode = m
	}
	vac := "<unset>"
	if v, ok := field(o, "spec", "volumeAttributesClassName").(string); ok {
		vac = v
	}
	class := Str(o, "spec", "storageClassName")
	if class == "" {
		class = Str(o, "metadata", "annotations", "volume.beta.kubernetes.io/storage-class")
	}
	return []string{name(o), Scalar(field(o, "spec", "capacity", "storage")), accessModes(stringList(o, "spec", "accessModes")),
		Str(o, "spec", "persistentVolumeReclaimPolicy"), phase, claim, class, vac, Str(o, "status", "reason"), age(o, now), mode}
}

// accessModes abbreviates access modes as kubectl does, in its order.
func accessModes(modes []string) string {
	has := map[string]bool{}
	for _, m := range modes {
		has[m] = true
	}
	var out []string
	for _, m := range [][2]string{{"ReadWriteOnce", "RWO"}, {"ReadOnlyMany", "ROX"}, {"ReadWriteMany", "RWX"}, {"ReadWriteOncePod", "RWOP"}} {
		if has[m[0]] {
			out = append(out, m[1])
		}
	}
	return strings.Join(out, ",")
}

// storageClassRow prints a storage class; the effective default of a
// list gets " (default)".
func storageClassRow(effectiveDefault string) rowFunc {
	return func(o map[string]any, now time.Time, wide bool) []string {
		n := name(o)
		if effectiveDefault != "" && n == effectiveDefault {
			n += " (default)"
		}
		reclaim := "Delete"
		if r := Str(o, "reclaimPolicy"); r != "" {
			reclaim = r
		}
		binding := "Immediate"
		if b := Str(o, "volumeBindingMode"); b != "" {
			binding = b
		}
		return []string{n, Str(o, "provisioner"), reclaim, binding, strconv.FormatBool(Bool(o, "allowVolumeExpansion")), age(o, now)}
	}
}

// defaultStorageClass is the effective default of a list of storage
// classes: the newest marked default, the first by name among equals.
func defaultStorageClass(objs []map[string]any) string {
	var best map[string]any
	for _, o := range objs {
		a := StringMap(o, "metadata", "annotations")
		if a["storageclass.kubernetes.io/is-default-class"] != "true" && a["storageclass.beta.kubernetes.io/is-default-class"] != "true" {
			continue
		}
		switch {
		case best == nil:
			best = o
		case Time(o, "metadata", "creationTimestamp").After(Time(best, "metadata", "creationTimestamp")):
			best = o
		case Time(o, "metadata", "creationTimestamp").Equal(Time(best, "metadata", "creationTimestamp")) && name(o) < name(best):
			best = o
		}
	}
	if best == nil {
		return ""
	}
	return name(best)
}

func hpaRow(o map[string]any, now time.Time, wide bool) []string {
	ref := Str(o, "spec", "scaleTargetRef", "kind") + "/" + Str(o, "spec", "scaleTargetRef", "name")
	minPods := "<unset>"
	if Has(o, "spec", "minReplicas") {
		minPods = itoa(Int(o, "spec", "minReplicas"))
	}
	return []string{name(o), ref, hpaMetrics(List(o, "spec", "metrics"), List(o, "status", "currentMetrics")),
		minPods, itoa(Int(o, "spec", "maxReplicas")), itoa(Int(o, "status", "currentReplicas")), age(o, now)}
}

// hpaMetrics is kubectl's TARGETS of an autoscaling/v2 HPA: up to two
// metrics, "current/target" each.
func hpaMetrics(specs, statuses []any) string {
	if len(specs) == 0 {
		return "<none>"
	}
	status := func(i int, path ...string) any {
		if i >= len(statuses) {
			return nil
		}
		return field(statuses[i], path...)
	}
	cur := func(v any) string {
		if v == nil {
			return "<unknown>"
		}
		return Scalar(v)
	}
	var list []string
	for i, s := range specs {
		switch Str(s, "type") {
		case "External", "Object":
			key := strings.ToLower(Str(s, "type")[:1]) + Str(s, "type")[1:]
			if av := field(s, key, "target", "averageValue"); av != nil {
				c := "<unknown>"
				if st := status(i, key); st != nil {
					if v := field(st, "current", "averageValue"); v != nil {
						c = Scalar(v)
					}
				}
				list = append(list, fmt.Sprintf("%s/%s (avg)", c, Scalar(av)))
			} else {
				c := "<unknown>"
				if st := status(i, key); st != nil {
					c = cur(field(st, "current", "value"))
				}
				list = append(list, fmt.Sprintf("%s/%s", c, Scalar(field(s, key, "target", "value"))))
			}
		case "Pods":
			c := "<unknown>"
			if st := status(i, "pods"); st != nil {
				c = cur(field(st, "current", "averageValue"))
			}
			list = append(list, fmt.Sprintf("%s/%s", c, Scalar(field(s, "pods", "target", "averageValue"))))
		case "Resource", "ContainerResource":
			key := "resource"
			if Str(s, "type") == "ContainerResource" {
				key = "containerResource"
			}
			rname := Str(s, key, "name")
			if av := field(s, key, "target", "averageValue"); av != nil {
				c := "<unknown>"
				if st := status(i, key); st != nil {
					c = cur(field(st, "current", "averageValue"))
				}
				list = append(list, fmt.Sprintf("%s: %s/%s", rname, c, Scalar(av)))
			} else {
				c := "<unknown>"
				if u := status(i, key, "current", "averageUtilization"); u != nil {
					c = Scalar(u) + "%"
				}
				t := "<auto>"
				if u := field(s, key, "target", "averageUtilization"); u != nil {
					t = Scalar(u) + "%"
				}
				list = append(list, fmt.Sprintf("%s: %s/%s", rname, c, t))
			}
		default:
			list = append(list, "<unknown type>")
		}
	}
	if len(list) > 2 {
		return fmt.Sprintf("%s + %d more...", strings.Join(list[:2], ", "), len(list)-2)
	}
	return strings.Join(list, ", ")
}

func nodeRow(o map[string]any, now time.Time, wide bool) []string {
	var status []string
	for _, c := range List(o, "status", "conditions") {
		if Str(c, "type") == "Ready" {
			if Str(c, "status") == "True" {
				status = append(status, "Ready")
			} else {
				status = append(status, "NotReady")
			}
		}
	}
	if len(status) == 0 {
		status = append(status, "Unknown")
	}
	if Bool(o, "spec", "unschedulable") {
		status = append(status, "SchedulingDisabled")
	}
	roleSet := map[string]bool{}
	for k, v := range StringMap(o, "metadata", "labels") {
		switch {
		case strings.HasPrefix(k, "node-role.kubernetes.io/"):
			if r := strings.TrimPrefix(k, "node-role.kubernetes.io/"); r != "" {
				roleSet[r] = true
			}
		case k == "kubernetes.io/role" && v != "":
			roleSet[v] = true
		}
	}
	roles := sortedKeys(roleSet)
	rolesCell := strings.Join(roles, ",")
	if rolesCell == "" {
		rolesCell = "<none>"
	}
	c := []string{name(o), strings.Join(status, ","), rolesCell, age(o, now), Str(o, "status", "nodeInfo", "kubeletVersion")}
	addr := func(t string) string {
		for _, a := range List(o, "status", "addresses") {
			if Str(a, "type") == t {
				return Str(a, "address")
			}
		}
		return "<none>"
	}
	unknown := func(s string) string {
		if s == "" {
			return "<unknown>"
		}
		return s
	}
	kernel := unknown(Str(o, "status", "nodeInfo", "kernelVersion"))
	if arch := Str(o, "status", "nodeInfo", "architecture"); arch != "" {
		kernel += " (" + arch + ")"
	}
	return append(c, addr("InternalIP"), addr("ExternalIP"), unknown(Str(o, "status", "nodeInfo", "osImage")), kernel,
		unknown(Str(o, "status", "nodeInfo", "containerRuntimeVersion")))
}

func quotaRow(o map[string]any, now time.Time, wide bool) []string {
	hard := Map(o, "status", "hard")
	used := Map(o, "status", "used")
	var req, lim []string
	for _, r := range sortedKeys(hard) {
		u := "0"
		if v, ok := used[r]; ok {
			u = Scalar(v)
		}
		cell := fmt.Sprintf("%s: %s/%s", r, u, Scalar(hard[r]))
		if parts := strings.Split(r, "."); len(parts) > 1 && parts[0] == "limits" {
			lim = append(lim, cell)
		} else {
			req = append(req, cell)
		}
	}
	return []string{name(o), strings.Join(req, ", "), strings.Join(lim, ", "), age(o, now)}
}

func webhooksRow(o map[string]any, now time.Time, wide bool) []string {
	return []string{name(o), itoa(int64(len(List(o, "webhooks")))), age(o, now)}
}

func paramKind(o map[string]any) string {
	if pk := Map(o, "spec", "paramKind"); pk != nil {
		return Str(pk, "apiVersion") + "/" + Str(pk, "kind")
	}
	return "<unset>"
}

func policyBindingRow(o map[string]any, now time.Time, wide bool) []string {
	param := "<unset>"
	if pr := Map(o, "spec", "paramRef"); pr != nil {
		switch {
		case Str(pr, "name") != "" && Str(pr, "namespace") != "":
			param = Str(pr, "namespace") + "/" + Str(pr, "name")
		case Str(pr, "name") != "":
			param = "*/" + Str(pr, "name")
		case Map(pr, "selector") != nil:
			param = FormatLabelSelector(Map(pr, "selector"))
		}
	}
	return []string{name(o), Str(o, "spec", "policyName"), param, age(o, now)}
}

func crdRow(o map[string]any, now time.Time, wide bool) []string {
	var versions []string
	for _, v := range List(o, "spec", "versions") {
		if !Bool(v, "served") {
			continue
		}
		l := Str(v, "name")
		if Bool(v, "storage") {
			l += "(storage)"
		}
		versions = append(versions, l)
	}
	sort.Strings(versions)
	established := false
	for _, c := range List(o, "status", "conditions") {
		if Str(c, "type") == "Established" && Str(c, "status") == "True" {
			established = true
		}
	}
	created := Time(o, "metadata", "creationTimestamp").UTC().Format(time.RFC3339)
	return []string{name(o), Str(o, "spec", "scope"), strings.Join(versions, ","), created, Str(o, "spec", "group"),
		Str(o, "spec", "names", "kind"), strings.Join(stringList(o, "spec", "names", "shortNames"), ","), strconv.FormatBool(established)}
}

func csiDriverRow(o map[string]any, now time.Time, wide bool) []string {
	boolOr := func(def bool, path ...string) string {
		if b, ok := field(o, path...).(bool); ok {
			return strconv.FormatBool(b)
		}
		return strconv.FormatBool(def)
	}
	tokens := "<unset>"
	if tr := field(o, "spec", "tokenRequests"); tr != nil {
		var a []string
		for _, t := range List(o, "spec", "tokenRequests") {
			a = append(a, Str(t, "audience"))
		}
		tokens = strings.Join(a, ",")
	}
	modes := strings.Join(stringList(o, "spec", "volumeLifecycleModes"), ",")
	if modes == "" {
		modes = "<none>"
	}
	return []string{name(o), boolOr(true, "spec", "attachRequired"), boolOr(false, "spec", "podInfoOnMount"), boolOr(false, "spec", "storageCapacity"),
		tokens, boolOr(false, "spec", "requiresRepublish"), modes, age(o, now)}
}

// listWithMore prints up to max items and "+ N more..." as kubectl does.
func listWithMore(list []string, count, max int) string {
	ret := strings.Join(list, ",")
	if count > max {
		return fmt.Sprintf("%s + %d more...", ret, count-max)
	}
	if len(list) == 0 {
		return "<unset>"
	}
	return ret
}

func endpointSliceRow(o map[string]any, now time.Time, wide bool) []string {
	var ports []string
	count := 0
	for _, p := range List(o, "ports") {
		if len(ports) < 3 {
			n := "*"
			if Has(p, "port") {
				n = itoa(Int(p, "port"))
			} else if s := Str(p, "name"); s != "" {
				n = s
			}
			ports = append(ports, n)
		}
		count++
	}
	pcell := listWithMore(ports, count, 3)
	var addrs []string
	count = 0
	for _, e := range List(o, "endpoints") {
		for _, a := range stringList(e, "addresses") {
			if len(addrs) < 3 {
				addrs = append(addrs, a)
			}
			count++
		}
	}
	return []string{name(o), Str(o, "addressType"), pcell, listWithMore(addrs, count, 3), age(o, now)}
}

func controllerRevisionRow(o map[string]any, now time.Time, wide bool) []string {
	ctrl := "<none>"
	for _, r := range List(o, "metadata", "ownerReferences") {
		if Bool(r, "controller") {
			g := ""
			if gr, _, ok := strings.Cut(Str(r, "apiVersion"), "/"); ok {
				g = gr
			}
			k := strings.ToLower(Str(r, "kind"))
			if g != "" {
				k += "." + g
			}
			ctrl = k + "/" + Str(r, "name")
			break
		}
	}
	return []string{name(o), ctrl, itoa(Int(o, "revision")), age(o, now)}
}

func csrRow(o map[string]any, now time.Time, wide bool) []string {
	var approved, denied, failed bool
	for _, c := range List(o, "status", "conditions") {
		switch Str(c, "type") {
		case "Approved":
			approved = true
		case "Denied":
			denied = true
		case "Failed":
			failed = true
		}
	}
	status := "Pending"
	if denied {
		status = "Denied"
	} else if approved {
		status = "Approved"
	}
	if failed {
		status += ",Failed"
	}
	if Str(o, "status", "certificate") != "" {
		status += ",Issued"
	}
	dur := "<none>"
	if Has(o, "spec", "expirationSeconds") {
		dur = HumanDuration(time.Duration(Int(o, "spec", "expirationSeconds")) * time.Second)
	}
	return []string{name(o), age(o, now), orNone(Str(o, "spec", "signerName")), Str(o, "spec", "username"), dur, status}
}

func flowSchemaRow(o map[string]any, now time.Time, wide bool) []string {
	dm := "<none>"
	if t := Str(o, "spec", "distinguisherMethod", "type"); t != "" {
		dm = t
	}
	missing := "?"
	for _, c := range List(o, "status", "conditions") {
		if Str(c, "type") == "Dangling" {
			missing = Str(c, "status")
			break
		}
	}
	return []string{name(o), Str(o, "spec", "priorityLevelConfiguration", "name"), itoa(Int(o, "spec", "matchingPrecedence")), dm, age(o, now), missing}
}

func priorityLevelRow(o map[string]any, now time.Time, wide bool) []string {
	ncs, queues, hand, qll := "<none>", "<none>", "<none>", "<none>"
	if l := Map(o, "spec", "limited"); l != nil {
		ncs = itoa(Int(l, "nominalConcurrencyShares"))
		if q := Map(l, "limitResponse", "queuing"); q != nil {
			queues, hand, qll = itoa(Int(q, "queues")), itoa(Int(q, "handSize")), itoa(Int(q, "queueLengthLimit"))
		}
	}
	return []string{name(o), Str(o, "spec", "type"), ncs, queues, hand, qll, age(o, now)}
}

func ipAddressRow(o map[string]any, now time.Time, wide bool) []string {
	parent := "<none>"
	if p := Map(o, "spec", "parentRef"); p != nil {
		gr := Str(p, "resource")
		if g := Str(p, "group"); g != "" {
			gr += "." + g
		}
		parent = strings.ToLower(gr)
		if ns := Str(p, "namespace"); ns != "" {
			parent += "/" + ns
		}
		parent += "/" + Str(p, "name")
	}
	return []string{name(o), parent, age(o, now)}
}

func svmRow(o map[string]any, now time.Time, wide bool) []string {
	gr := Str(o, "spec", "resource", "resource")
	if g := Str(o, "spec", "resource", "group"); g != "" {
		gr += "." + g
	}
	status := "Unknown"
	for _, c := range List(o, "status", "conditions") {
		if Str(c, "status") != "True" {
			continue
		}
		switch t := Str(c, "type"); t {
		case "Running", "Failed", "Succeeded":
			status = t
		}
	}
	return []string{name(o), gr, status}
}
