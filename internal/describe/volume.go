package describe

import (
	"fmt"
	"sort"
	"strings"
	"time"

	p "github.com/konverge/konverge/internal/printer"
	"github.com/konverge/konverge/schema"
)

// persistentVolume is kubectl's describePersistentVolume.
func (d *describer) persistentVolume() error {
	w, o := d.w, d.obj
	w.Write(0, "Name:\t%s\n", d.meta("name"))
	printLabels(w, "", "Labels", "\t", p.StringMap(o, "metadata", "labels"))
	printAnnotations(w, "Annotations", p.StringMap(o, "metadata", "annotations"))
	w.Write(0, "Finalizers:\t%s\n", goStrings(p.List(o, "metadata", "finalizers")))
	class := p.Str(o, "spec", "storageClassName")
	if a, ok := p.StringMap(o, "metadata", "annotations")["volume.beta.kubernetes.io/storage-class"]; ok {
		class = a
	}
	w.Write(0, "StorageClass:\t%s\n", class)
	d.status()
	claim := ""
	if ref := p.Map(o, "spec", "claimRef"); ref != nil {
		claim = p.Str(ref, "namespace") + "/" + p.Str(ref, "name")
	}
	w.Write(0, "Claim:\t%s\n", claim)
	w.Write(0, "Reclaim Policy:\t%s\n", p.Str(o, "spec", "persistentVolumeReclaimPolicy"))
	w.Write(0, "Access Modes:\t%s\n", accessModes(p.List(o, "spec", "accessModes")))
	if m := p.Str(o, "spec", "volumeMode"); m != "" {
		w.Write(0, "VolumeMode:\t%s\n", m)
	}
	w.Write(0, "Capacity:\t%s\n", p.Scalar(p.Map(o, "spec", "capacity")["storage"]))
	d.volumeNodeAffinity()
	w.Write(0, "Message:\t%s\n", p.Str(o, "status", "message"))
	w.Write(0, "Source:\n")
	spec := p.Map(o, "spec")
	switch {
	case spec["hostPath"] != nil:
		typ := "<none>"
		if t, ok := p.Map(spec, "hostPath")["type"].(string); ok {
			typ = t
		}
		w.Write(2, "Type:\tHostPath (bare host directory volume)\n    Path:\t%v\n    HostPathType:\t%v\n", p.Str(spec, "hostPath", "path"), typ)
	case spec["nfs"] != nil:
		w.Write(2, "Type:\tNFS (an NFS mount that lasts the lifetime of a pod)\n    Server:\t%v\n    Path:\t%v\n    ReadOnly:\t%v\n",
			p.Str(spec, "nfs", "server"), p.Str(spec, "nfs", "path"), p.Bool(spec, "nfs", "readOnly"))
	case spec["local"] != nil:
		w.Write(2, "Type:\tLocalVolume (a persistent volume backed by local storage on a node)\n    Path:\t%v\n", p.Str(spec, "local", "path"))
	case spec["csi"] != nil:
		w.Write(2, "Type:\tCSI (a Container Storage Interface (CSI) volume source)\n    Driver:\t%v\n    FSType:\t%v\n    VolumeHandle:\t%v\n    ReadOnly:\t%v\n",
			p.Str(spec, "csi", "driver"), p.Str(spec, "csi", "fsType"), p.Str(spec, "csi", "volumeHandle"), p.Bool(spec, "csi", "readOnly"))
		attrs := p.StringMap(spec, "csi", "volumeAttributes")
		w.Write(2, "VolumeAttributes:\t")
		if len(attrs) == 0 {
			w.WriteLine("<none>")
		} else {
			for i, k := range sortedKeys(attrs) {
				if i != 0 {
					w.Write(2, "%s", "\t")
				}
				w.Write(0, "%s=%s\n", k, attrs[k])
			}
		}
	default:
		w.Write(1, "<unknown>\n")
	}
	return d.describeEvents()
}

// status writes Status: the phase, or how long a deletion has lasted.
func (d *describer) status() {
	if dt := p.Time(d.obj, "metadata", "deletionTimestamp"); !dt.IsZero() {
		d.w.Write(0, "Status:\tTerminating (lasts %s)\n", p.Since(dt, d.opts.Now))
		return
	}
	d.w.Write(0, "Status:\t%s\n", p.Str(d.obj, "status", "phase"))
}

// volumeNodeAffinity is kubectl's printVolumeNodeAffinity.
func (d *describer) volumeNodeAffinity() {
	w := d.w
	w.Write(0, "Node Affinity:\t")
	req := p.Map(d.obj, "spec", "nodeAffinity", "required")
	if req == nil {
		w.WriteLine("<none>")
		return
	}
	w.WriteLine("")
	w.Write(1, "Required Terms:\t")
	terms := p.List(req, "nodeSelectorTerms")
	if len(terms) == 0 {
		w.WriteLine("<none>")
		return
	}
	w.WriteLine("")
	for i, t := range terms {
		w.Write(2, "%s:%s", fmt.Sprintf("Term %v", i), "\t")
		exprs := p.List(t, "matchExpressions")
		if len(exprs) == 0 {
			w.WriteLine("<none>")
			continue
		}
		for j, e := range exprs {
			if j != 0 {
				w.Write(2, "%s", "\t")
			}
			var vals []string
			for _, v := range p.List(e, "values") {
				vals = append(vals, p.Scalar(v))
			}
			exprStr := fmt.Sprintf("%s %s", p.Str(e, "key"), strings.ToLower(p.Str(e, "operator")))
			if len(vals) > 0 {
				exprStr = fmt.Sprintf("%s [%s]", exprStr, strings.Join(vals, ", "))
			}
			w.Write(0, "%s\n", exprStr)
		}
	}
}

// persistentVolumeClaim is kubectl's describePersistentVolumeClaim.
func (d *describer) persistentVolumeClaim() error {
	w, o := d.w, d.obj
	w.Write(0, "Name:\t%s\n", d.meta("name"))
	w.Write(0, "Namespace:\t%s\n", d.meta("namespace"))
	class := p.Str(o, "spec", "storageClassName")
	if a, ok := p.StringMap(o, "metadata", "annotations")["volume.beta.kubernetes.io/storage-class"]; ok {
		class = a
	}
	w.Write(0, "StorageClass:\t%s\n", class)
	d.status()
	volume := p.Str(o, "spec", "volumeName")
	w.Write(0, "Volume:\t%s\n", volume)
	printLabels(w, "", "Labels", "\t", p.StringMap(o, "metadata", "labels"))
	printAnnotations(w, "Annotations", p.StringMap(o, "metadata", "annotations"))
	w.Write(0, "Finalizers:\t%s\n", goStrings(p.List(o, "metadata", "finalizers")))
	capacity, modes := "", ""
	if volume != "" {
		modes = accessModes(p.List(o, "status", "accessModes"))
		capacity = p.Scalar(p.Map(o, "status", "capacity")["storage"])
		if capacity == "" {
			capacity = "0"
		}
	}
	w.Write(0, "Capacity:\t%s\n", capacity)
	w.Write(0, "Access Modes:\t%s\n", modes)
	if m := p.Str(o, "spec", "volumeMode"); m != "" {
		w.Write(0, "VolumeMode:\t%s\n", m)
	}
	if ds := p.Map(o, "spec", "dataSource"); ds != nil {
		w.Write(0, "DataSource:\n")
		if g, ok := ds["apiGroup"].(string); ok {
			w.Write(1, "APIGroup:\t%v\n", g)
		}
		w.Write(1, "Kind:\t%v\n", p.Str(ds, "kind"))
		w.Write(1, "Name:\t%v\n", p.Str(ds, "name"))
	}
	users, err := d.claimUsers()
	if err != nil {
		return err
	}
	w.Write(0, "Used By:\t")
	if len(users) == 0 {
		w.WriteLine("<none>")
	}
	for i, u := range users {
		if i != 0 {
			w.Write(0, "%s", "\t")
		}
		w.Write(0, "%s\n", u)
	}
	if conds := p.List(o, "status", "conditions"); len(conds) > 0 {
		w.Write(0, "Conditions:\n")
		w.Write(1, "Type\tStatus\tLastProbeTime\tLastTransitionTime\tReason\tMessage\n")
		w.Write(1, "----\t------\t-----------------\t------------------\t------\t-------\n")
		for _, c := range conds {
			w.Write(1, "%v \t%v \t%s \t%s \t%v \t%v\n", p.Str(c, "type"), p.Str(c, "status"),
				d.conditionTime(p.Time(c, "lastProbeTime")), d.conditionTime(p.Time(c, "lastTransitionTime")),
				p.Str(c, "reason"), p.Str(c, "message"))
		}
	}
	return d.describeEvents()
}

// conditionTime prints a condition's time as metav1.Time.Format does: in
// the local zone, the zero time as Go's zero time.
func (d *describer) conditionTime(t time.Time) string {
	if t.IsZero() {
		return time.Time{}.Format(time.RFC1123Z)
	}
	return d.rfc1123(t)
}

// claimUsers names the pods of the claim's namespace that mount it, then
// the pods that own it, in name order (kubectl's getPodsForPVC).
func (d *describer) claimUsers() ([]string, error) {
	l, err := d.c.List(d.ctx, schema.GVK{Version: "v1", Kind: "Pod"})
	if err != nil {
		return nil, err
	}
	name, ns := d.meta("name"), d.meta("namespace")
	seen := map[string]bool{}
	var out []string
	for _, pod := range l.Items {
		if p.Str(pod, "metadata", "namespace") != ns {
			continue
		}
		for _, v := range p.List(pod, "spec", "volumes") {
			if p.Str(v, "persistentVolumeClaim", "claimName") == name {
				out = append(out, p.Str(pod, "metadata", "name"))
				seen[p.Str(pod, "metadata", "uid")] = true
			}
		}
	}
	for _, ref := range p.List(d.obj, "metadata", "ownerReferences") {
		if p.Str(ref, "kind") != "Pod" || seen[p.Str(ref, "uid")] {
			continue
		}
		for _, pod := range l.Items {
			if p.Str(pod, "metadata", "uid") == p.Str(ref, "uid") {
				out = append(out, p.Str(pod, "metadata", "name"))
				seen[p.Str(ref, "uid")] = true
				break
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// goStrings prints a list of strings as Go's %v prints a []string.
func goStrings(list []any) string {
	s := make([]string, len(list))
	for i, x := range list {
		s[i] = p.Scalar(x)
	}
	return "[" + strings.Join(s, " ") + "]"
}

// accessModes abbreviates access modes as kubectl does, in its order.
func accessModes(modes []any) string {
	has := map[string]bool{}
	for _, m := range modes {
		if s, ok := m.(string); ok {
			has[s] = true
		}
	}
	var out []string
	for _, m := range [][2]string{{"ReadWriteOnce", "RWO"}, {"ReadOnlyMany", "ROX"}, {"ReadWriteMany", "RWX"}, {"ReadWriteOncePod", "RWOP"}} {
		if has[m[0]] {
			out = append(out, m[1])
		}
	}
	return strings.Join(out, ",")
}
