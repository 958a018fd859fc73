// Package describe prints Kubernetes objects as kubectl describe does:
// kubectl 1.37's layouts for Deployments, ReplicaSets, StatefulSets,
// DaemonSets, Jobs, CronJobs, Pods, Services, ConfigMaps, Secrets,
// Namespaces, ServiceAccounts and Nodes, a generic layout
// (every field, labelled as kubectl labels them) for the other kinds, and
// the events whose involvedObject is the object.
//
// It reads what a description needs through a cluster.Reader (events,
// the ReplicaSets of a Deployment, the pods of a ReplicaSet) and writes
// nothing. Secret values are never printed, only their sizes.
//
// # Not implemented
//
// Volumes other than emptyDir, hostPath, configMap, secret and
// persistentVolumeClaim print their name and type only; resource quotas and
// limit ranges of a namespace print a summary; topology spread constraints
// and scheduling groups are left out.
package describe

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/konverge/konverge/cluster"
	p "github.com/konverge/konverge/internal/printer"
	"github.com/konverge/konverge/schema"
)

// Options tune a description. The zero value describes with events,
// ages measured against the zero time; callers set Now.
type Options struct {
	// Now is the time ages are measured against (the cluster's clock).
	Now time.Time
	// HideEvents leaves out the Events section (kubectl does when it
	// describes several objects, unless --show-events is given).
	HideEvents bool
	// Location is the time zone timestamps print in; nil means time.Local,
	// as kubectl prints them.
	Location *time.Location
}

// Describe returns the description of obj, an object of kind res read
// from c.
func Describe(ctx context.Context, c cluster.Reader, res cluster.Resource, obj map[string]any, opts Options) (string, error) {
	d := &describer{ctx: ctx, c: c, res: res, obj: obj, opts: opts}
	var buf strings.Builder
	tw := tabwriter.NewWriter(&buf, 0, 8, 2, ' ', 0)
	d.w = &prefixWriter{w: tw}
	var err error
	switch res.GVK.Group + "/" + res.GVK.Kind {
	case "apps/Deployment":
		err = d.deployment()
	case "apps/ReplicaSet":
		err = d.replicaSet()
	case "/Pod":
		err = d.pod()
	case "/Service":
		err = d.service()
	case "/ConfigMap":
		err = d.configMap()
	case "/Secret":
		d.secret()
	case "/Namespace":
		err = d.namespace()
	case "/ServiceAccount":
		err = d.serviceAccount()
	case "/Node":
		err = d.node()
	case "apps/StatefulSet":
		err = d.statefulSet()
	case "apps/DaemonSet":
		err = d.daemonSet()
	case "batch/Job":
		err = d.job()
	case "batch/CronJob":
		err = d.cronJob()
	case "/PersistentVolume":
		err = d.persistentVolume()
	case "/PersistentVolumeClaim":
		err = d.persistentVolumeClaim()
	case "autoscaling/HorizontalPodAutoscaler":
		err = d.horizontalPodAutoscaler()
	default:
		err = d.generic()
	}
	if err != nil {
		return "", err
	}
	if err := tw.Flush(); err != nil {
		return "", err
	}
	return buf.String(), nil
}

type describer struct {
	ctx  context.Context
	c    cluster.Reader
	res  cluster.Resource
	obj  map[string]any
	opts Options
	w    *prefixWriter
}

// prefixWriter is kubectl's PrefixWriter: each level indents two spaces.
type prefixWriter struct{ w io.Writer }

func (pw *prefixWriter) Write(level int, format string, a ...any) {
	s := strings.Repeat("  ", level) + fmt.Sprintf(format, a...)
	_, _ = io.WriteString(pw.w, escape(s))
}

func (pw *prefixWriter) WriteLine(a ...any) {
	_, _ = io.WriteString(pw.w, escape(fmt.Sprintln(a...)))
}

// escape replaces terminal escape characters as printers.WriteEscaped.
func escape(s string) string {
	if !strings.ContainsAny(s, "\x1b\r") {
		return s
	}
	return strings.NewReplacer("\x1b", "^[", "\r", `\r`).Replace(s)
}

func (d *describer) rfc1123(t time.Time) string {
	loc := d.opts.Location
	if loc == nil {
		loc = time.Local
	}
	return t.In(loc).Format(time.RFC1123Z)
}

func (d *describer) meta(field string) string { return p.Str(d.obj, "metadata", field) }

// header writes Name, Namespace and, when withTime, CreationTimestamp.
func (d *describer) nameNamespace() {
	d.w.Write(0, "Name:\t%s\n", d.meta("name"))
	d.w.Write(0, "Namespace:\t%s\n", d.meta("namespace"))
}

func (d *describer) labelsAnnotations() {
	printLabels(d.w, "", "Labels", "\t", p.StringMap(d.obj, "metadata", "labels"))
	printAnnotations(d.w, "Annotations", p.StringMap(d.obj, "metadata", "annotations"))
}

func printLabels(w *prefixWriter, initialIndent, title, innerIndent string, labels map[string]string) {
	w.Write(0, "%s%s:%s", initialIndent, title, innerIndent)
	if len(labels) == 0 {
		w.WriteLine("<none>")
		return
	}
	keys := sortedKeys(labels)
	for i, k := range keys {
		if i != 0 {
			w.Write(0, "%s", initialIndent)
			w.Write(0, "%s", innerIndent)
		}
		w.Write(0, "%s=%s\n", k, labels[k])
	}
}

const maxAnnotationLen = 140

func printAnnotations(w *prefixWriter, title string, annotations map[string]string) {
	w.Write(0, "%s:\t", title)
	var keys []string
	for _, k := range sortedKeys(annotations) {
		if k != "kubectl.kubernetes.io/last-applied-configuration" {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		w.WriteLine("<none>")
		return
	}
	for i, k := range keys {
		if i != 0 {
			w.Write(0, "\t")
		}
		v := strings.TrimSuffix(annotations[k], "\n")
		if len(v)+len(k)+2 > maxAnnotationLen || strings.Contains(v, "\n") {
			w.Write(0, "%s:\n", k)
			for _, s := range strings.Split(v, "\n") {
				if len(s) > maxAnnotationLen-2 {
					s = s[:maxAnnotationLen-2] + "..."
				}
				w.Write(0, "\t  %s\n", s)
			}
		} else {
			w.Write(0, "%s: %s\n", k, v)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// events lists the events about the object, oldest last-seen first: those
// whose involvedObject names its kind, namespace and name, and its uid when
// the event records one.
func (d *describer) events() ([]map[string]any, error) {
	ns := d.meta("namespace")
	var opts []cluster.ListOption
	if ns != "" {
		opts = append(opts, cluster.InNamespace(ns))
	}
	l, err := d.c.List(d.ctx, schema.GVK{Version: "v1", Kind: "Event"}, opts...)
	if err != nil {
		return nil, err
	}
	uid := d.meta("uid")
	var out []map[string]any
	for _, e := range l.Items {
		io := p.Map(e, "involvedObject")
		if p.Str(io, "name") != d.meta("name") || p.Str(io, "namespace") != ns || p.Str(io, "kind") != d.res.GVK.Kind {
			continue
		}
		// A kubelet's events about its node carry the node's name as uid.
		if u := p.Str(io, "uid"); uid != "" && u != "" && u != uid && (d.res.GVK.Kind != "Node" || u != d.meta("name")) {
			continue
		}
		out = append(out, e)
	}
	sort.SliceStable(out, func(i, j int) bool {
		return p.Time(out[i], "lastTimestamp").Before(p.Time(out[j], "lastTimestamp"))
	})
	return out, nil
}

// describeEvents writes the Events section (kubectl's DescribeEvents).
func (d *describer) describeEvents() error {
	if d.opts.HideEvents {
		return nil
	}
	evs, err := d.events()
	if err != nil {
		return err
	}
	w, now := d.w, d.opts.Now
	if len(evs) == 0 {
		w.Write(0, "Events:\t<none>\n")
		return nil
	}
	w.Write(0, "Events:\n  Type\tReason\tAge\tFrom\tMessage\n")
	w.Write(1, "----\t------\t----\t----\t-------\n")
	for _, e := range evs {
		first := p.Since(p.Time(e, "eventTime"), now)
		if p.Time(e, "eventTime").IsZero() {
			first = p.Since(p.Time(e, "firstTimestamp"), now)
		}
		interval := first
		if p.Has(e, "series") {
			interval = fmt.Sprintf("%s (x%d over %s)", p.Since(p.Time(e, "series", "lastObservedTime"), now), p.Int(e, "series", "count"), first)
		} else if n := p.Int(e, "count"); n > 1 {
			interval = fmt.Sprintf("%s (x%d over %s)", p.Since(p.Time(e, "lastTimestamp"), now), n, first)
		}
		source := p.Str(e, "source", "component")
		if source == "" {
			source = p.Str(e, "reportingComponent")
		}
		msg := strings.TrimSpace(p.Str(e, "message"))
		if fp := p.Str(e, "involvedObject", "fieldPath"); fp != "" {
			msg = fp + ": " + msg
		}
		w.Write(1, "%v\t%v\t%s\t%v\t%v\n", p.Str(e, "type"), p.Str(e, "reason"), interval, source, msg)
	}
	return nil
}

// controlledBy returns "Kind/name" of the object's controller owner.
func controlledBy(obj map[string]any) string {
	for _, o := range p.List(obj, "metadata", "ownerReferences") {
		if p.Bool(o, "controller") {
			return p.Str(o, "kind") + "/" + p.Str(o, "name")
		}
	}
	return ""
}

func isControlledBy(obj map[string]any, uid string) bool {
	for _, o := range p.List(obj, "metadata", "ownerReferences") {
		if p.Bool(o, "controller") {
			return p.Str(o, "uid") == uid
		}
	}
	return false
}

func (d *describer) conditionsTable(title bool) {
	conds := p.List(d.obj, "status", "conditions")
	if len(conds) == 0 {
		return
	}
	d.w.Write(0, "Conditions:\n  Type\tStatus\tReason\n")
	d.w.Write(1, "----\t------\t------\n")
	for _, c := range conds {
		d.w.Write(1, "%v \t%v\t%v\n", p.Str(c, "type"), p.Str(c, "status"), p.Str(c, "reason"))
	}
}

func (d *describer) deployment() error {
	w, o := d.w, d.obj
	d.nameNamespace()
	w.Write(0, "CreationTimestamp:\t%s\n", d.rfc1123(p.Time(o, "metadata", "creationTimestamp")))
	d.labelsAnnotations()
	w.Write(0, "Selector:\t%s\n", p.SelectorString(p.Map(o, "spec", "selector")))
	w.Write(0, "Replicas:\t%d desired | %d updated | %d total | %d available | %d unavailable\n",
		p.IntOr(o, 1, "spec", "replicas"), p.Int(o, "status", "updatedReplicas"), p.Int(o, "status", "replicas"),
		p.Int(o, "status", "availableReplicas"), p.Int(o, "status", "unavailableReplicas"))
	w.Write(0, "StrategyType:\t%s\n", p.Str(o, "spec", "strategy", "type"))
	w.Write(0, "MinReadySeconds:\t%d\n", p.Int(o, "spec", "minReadySeconds"))
	if ru := p.Map(o, "spec", "strategy", "rollingUpdate"); ru != nil {
		w.Write(0, "RollingUpdateStrategy:\t%s max unavailable, %s max surge\n", p.Scalar(ru["maxUnavailable"]), p.Scalar(ru["maxSurge"]))
	}
	describePodTemplate(w, p.Map(o, "spec", "template"))
	d.conditionsTable(true)

	oldRSs, newRS, err := d.replicaSetsOf()
	if err != nil {
		return err
	}
	if len(oldRSs) > 0 || newRS != nil {
		w.Write(0, "OldReplicaSets:\t%s\n", replicaSetsString(oldRSs))
		var n []map[string]any
		if newRS != nil {
			n = append(n, newRS)
		}
		w.Write(0, "NewReplicaSet:\t%s\n", replicaSetsString(n))
	}
	return d.describeEvents()
}

// replicaSetsOf finds the Deployment's ReplicaSets as kubectl's
// deployment util does: those it controls that its selector matches; the new
// one has the Deployment's pod template (pod-template-hash aside).
func (d *describer) replicaSetsOf() (old []map[string]any, newRS map[string]any, err error) {
	sel := p.SelectorString(p.Map(d.obj, "spec", "selector"))
	opts := []cluster.ListOption{cluster.InNamespace(d.meta("namespace"))}
	if sel != "" {
		opts = append(opts, cluster.MatchingLabels(sel))
	}
	l, err := d.c.List(d.ctx, schema.GVK{Group: "apps", Version: "v1", Kind: "ReplicaSet"}, opts...)
	if err != nil {
		return nil, nil, err
	}
	var owned []map[string]any
	for _, rs := range l.Items {
		if isControlledBy(rs, d.meta("uid")) {
			owned = append(owned, rs)
		}
	}
	sort.SliceStable(owned, func(i, j int) bool {
		ti, tj := p.Time(owned[i], "metadata", "creationTimestamp"), p.Time(owned[j], "metadata", "creationTimestamp")
		if ti.Equal(tj) {
			return p.Str(owned[i], "metadata", "name") < p.Str(owned[j], "metadata", "name")
		}
		return ti.Before(tj)
	})
	tmpl := templateWithoutHash(p.Map(d.obj, "spec", "template"))
	for _, rs := range owned {
		if newRS == nil && equalJSON(templateWithoutHash(p.Map(rs, "spec", "template")), tmpl) {
			newRS = rs
			continue
		}
		old = append(old, rs)
	}
	return old, newRS, nil
}

func replicaSetsString(rss []map[string]any) string {
	var s []string
	for _, rs := range rss {
		s = append(s, fmt.Sprintf("%s (%d/%d replicas created)", p.Str(rs, "metadata", "name"), p.Int(rs, "status", "replicas"), p.IntOr(rs, 1, "spec", "replicas")))
	}
	if len(s) == 0 {
		return "<none>"
	}
	return strings.Join(s, ", ")
}

func (d *describer) replicaSet() error {
	w, o := d.w, d.obj
	d.nameNamespace()
	w.Write(0, "Selector:\t%s\n", p.FormatLabelSelector(p.Map(o, "spec", "selector")))
	d.labelsAnnotations()
	if cb := controlledBy(o); cb != "" {
		w.Write(0, "Controlled By:\t%s\n", cb)
	}
	w.Write(0, "Replicas:\t%d current / %d desired\n", p.Int(o, "status", "replicas"), p.IntOr(o, 1, "spec", "replicas"))
	w.Write(0, "Pods Status:\t")
	running, waiting, succeeded, failed, err := d.podPhases()
	if err != nil {
		w.Write(0, "error in fetching pods: %s\n", err)
	} else {
		w.Write(0, "%d Running / %d Waiting / %d Succeeded / %d Failed\n", running, waiting, succeeded, failed)
	}
	describePodTemplate(w, p.Map(o, "spec", "template"))
	d.conditionsTable(true)
	return d.describeEvents()
}

// podPhases counts the phases of the pods the object controls.
func (d *describer) podPhases() (running, waiting, succeeded, failed int, err error) {
	opts := []cluster.ListOption{cluster.InNamespace(d.meta("namespace"))}
	if sel := p.SelectorString(p.Map(d.obj, "spec", "selector")); sel != "" {
		opts = append(opts, cluster.MatchingLabels(sel))
	}
	l, err := d.c.List(d.ctx, schema.GVK{Version: "v1", Kind: "Pod"}, opts...)
	if err != nil {
		return 0, 0, 0, 0, err
	}
	for _, pod := range l.Items {
		if !isControlledBy(pod, d.meta("uid")) {
			continue
		}
		switch p.Str(pod, "status", "phase") {
		case "Running":
			running++
		case "Pending":
			waiting++
		case "Succeeded":
			succeeded++
		case "Failed":
			failed++
		}
	}
	return running, waiting, succeeded, failed, nil
}

func (d *describer) configMap() error {
	w := d.w
	d.nameNamespace()
	d.labelsAnnotations()
	w.Write(0, "\nData\n====\n")
	data := p.Map(d.obj, "data")
	for _, k := range sortedKeys(data) {
		w.Write(0, "%s:\n----\n", k)
		w.Write(0, "%s\n", p.Scalar(data[k]))
		w.Write(0, "\n")
	}
	w.Write(0, "\nBinaryData\n====\n")
	bin := p.Map(d.obj, "binaryData")
	for _, k := range sortedKeys(bin) {
		w.Write(0, "%s: %d bytes\n", k, decodedLen(p.Scalar(bin[k])))
	}
	w.Write(0, "\n")
	return d.describeEvents()
}

// decodedLen is the length of base64 data once decoded.
func decodedLen(s string) int {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return base64.StdEncoding.DecodedLen(len(s))
	}
	return len(b)
}

func (d *describer) secret() {
	w := d.w
	d.nameNamespace()
	d.labelsAnnotations()
	typ := p.Str(d.obj, "type")
	w.Write(0, "\nType:\t%s\n", typ)
	w.Write(0, "\nData\n====\n")
	data := p.Map(d.obj, "data")
	for _, k := range sortedKeys(data) {
		// kubectl prints the token of a service account token Secret; konverge
		// never prints Secret values.
		w.Write(0, "%s:\t%d bytes\n", k, decodedLen(p.Scalar(data[k])))
	}
}

func (d *describer) namespace() error {
	w := d.w
	w.Write(0, "Name:\t%s\n", d.meta("name"))
	d.labelsAnnotations()
	w.Write(0, "Status:\t%s\n", p.Str(d.obj, "status", "phase"))
	if conds := p.List(d.obj, "status", "conditions"); len(conds) > 0 {
		w.Write(0, "Conditions:\n")
		w.Write(1, "Type\tStatus\tLastTransitionTime\tReason\tMessage\n")
		w.Write(1, "----\t------\t------------------\t------\t-------\n")
		for _, c := range conds {
			w.Write(1, "%v\t%v\t%s\t%v\t%v\n", p.Str(c, "type"), p.Str(c, "status"),
				d.rfc1123(p.Time(c, "lastTransitionTime")), p.Str(c, "reason"), p.Str(c, "message"))
		}
	}
	in := cluster.InNamespace(d.meta("name"))
	quotas, err := d.c.List(d.ctx, schema.GVK{Version: "v1", Kind: "ResourceQuota"}, in)
	if err == nil {
		w.Write(0, "\n")
		if len(quotas.Items) == 0 {
			w.Write(0, "No resource quota.\n")
		} else {
			w.Write(0, "Resource Quotas\n")
			for _, q := range quotas.Items {
				w.Write(0, "  Name:\t%s\n", p.Str(q, "metadata", "name"))
				w.Write(0, "  Resource\tUsed\tHard\n")
				w.Write(0, "  --------\t---\t---\n")
				hard := p.Map(q, "status", "hard")
				if hard == nil {
					hard = p.Map(q, "spec", "hard")
				}
				used := p.Map(q, "status", "used")
				for _, k := range sortedKeys(hard) {
					u := p.Scalar(used[k])
					if u == "" {
						u = "0"
					}
					w.Write(0, "  %s\t%s\t%s\n", k, u, p.Scalar(hard[k]))
				}
			}
		}
	}
	limits, err := d.c.List(d.ctx, schema.GVK{Version: "v1", Kind: "LimitRange"}, in)
	if err == nil {
		w.Write(0, "\n")
		if len(limits.Items) == 0 {
			w.Write(0, "No LimitRange resource.\n")
		} else {
			w.Write(0, "Resource Limits\n Type\tResource\tMin\tMax\tDefault Request\tDefault Limit\tMax Limit/Request Ratio\n")
			w.Write(0, " ----\t--------\t---\t---\t---------------\t-------------\t-----------------------\n")
			for _, lr := range limits.Items {
				for _, item := range p.List(lr, "spec", "limits") {
					res := map[string]bool{}
					for _, f := range []string{"min", "max", "default", "defaultRequest", "maxLimitRequestRatio"} {
						for k := range p.Map(item, f) {
							res[k] = true
						}
					}
					for _, k := range sortedKeys(res) {
						get := func(f string) string {
							if v := p.Scalar(p.Map(item, f)[k]); v != "" {
								return v
							}
							return "-"
						}
						w.Write(0, " %s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.Str(item, "type"), k, get("min"), get("max"), get("defaultRequest"), get("default"), get("maxLimitRequestRatio"))
					}
				}
			}
		}
	}
	return nil
}

func (d *describer) serviceAccount() error {
	w := d.w
	d.nameNamespace()
	d.labelsAnnotations()
	var pulls, mounts []string
	for _, s := range p.List(d.obj, "imagePullSecrets") {
		pulls = append(pulls, p.Str(s, "name"))
	}
	for _, s := range p.List(d.obj, "secrets") {
		mounts = append(mounts, p.Str(s, "name"))
	}
	list := func(title string, names []string) {
		w.Write(0, "%s:\t", title)
		if len(names) == 0 {
			w.WriteLine("<none>")
			return
		}
		for i, n := range names {
			if i > 0 {
				w.Write(0, "%s\t", strings.Repeat(" ", len(title)+1))
			}
			w.Write(0, "%s\n", n)
		}
	}
	list("Image pull secrets", pulls)
	list("Mountable secrets", mounts)
	list("Tokens", nil)
	return d.describeEvents()
}
