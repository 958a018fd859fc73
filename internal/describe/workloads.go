package describe

import (
	"sort"
	"strings"

	p "github.com/konverge/konverge/internal/printer"
)

// The layouts of kubectl 1.37's StatefulSet, DaemonSet, Job and CronJob
// describers.

func (d *describer) podsStatusLine() {
	running, waiting, succeeded, failed, err := d.podPhases()
	if err != nil {
		d.w.Write(0, "Pods Status:\terror in fetching pods: %s\n", err)
		return
	}
	d.w.Write(0, "Pods Status:\t%d Running / %d Waiting / %d Succeeded / %d Failed\n", running, waiting, succeeded, failed)
}

func (d *describer) statefulSet() error {
	w, o := d.w, d.obj
	d.nameNamespace()
	w.Write(0, "CreationTimestamp:\t%s\n", d.rfc1123(p.Time(o, "metadata", "creationTimestamp")))
	w.Write(0, "Selector:\t%s\n", p.SelectorString(p.Map(o, "spec", "selector")))
	d.labelsAnnotations()
	if s := p.Str(o, "spec", "serviceName"); s != "" {
		w.Write(0, "Service Name:\t%s\n", s)
	}
	if s := p.Str(o, "spec", "podManagementPolicy"); s != "" {
		w.Write(0, "Pod Management Policy:\t%s\n", s)
	}
	w.Write(0, "Replicas:\t%d desired | %d total\n", p.IntOr(o, 1, "spec", "replicas"), p.Int(o, "status", "replicas"))
	w.Write(0, "Update Strategy:\t%s\n", p.Str(o, "spec", "updateStrategy", "type"))
	if ru := p.Map(o, "spec", "updateStrategy", "rollingUpdate"); ru != nil {
		if _, ok := ru["partition"]; ok {
			w.Write(1, "Partition:\t%d\n", p.Int(ru, "partition"))
			if v, ok := ru["maxUnavailable"]; ok && v != nil {
				w.Write(1, "MaxUnavailable:\t%s\n", p.Scalar(v))
			}
		}
	}
	if pol := p.Map(o, "spec", "persistentVolumeClaimRetentionPolicy"); pol != nil {
		w.Write(0, "Persistent Volume Claim Retention Policy:\n")
		w.Write(1, "WhenDeleted:\t%s\n", p.Str(pol, "whenDeleted"))
		w.Write(1, "WhenScaled:\t%s\n", p.Str(pol, "whenScaled"))
	}
	d.podsStatusLine()
	describePodTemplate(w, p.Map(o, "spec", "template"))
	templates := p.List(o, "spec", "volumeClaimTemplates")
	if len(templates) == 0 {
		w.Write(0, "Volume Claims:\t<none>\n")
	} else {
		w.Write(0, "Volume Claims:\n")
		for _, t := range templates {
			w.Write(1, "Name:\t%s\n", p.Str(t, "metadata", "name"))
			w.Write(1, "StorageClass:\t%s\n", claimClass(t))
			printLabels(w, "  ", "Labels", "\t", p.StringMap(t, "metadata", "labels"))
			printLabels(w, "  ", "Annotations", "\t", p.StringMap(t, "metadata", "annotations"))
			if c := p.Str(t, "spec", "resources", "requests", "storage"); c != "" {
				w.Write(1, "Capacity:\t%s\n", c)
			} else {
				w.Write(1, "Capacity:\t%s\n", "<default>")
			}
			var modes []string
			for _, m := range p.List(t, "spec", "accessModes") {
				if s, ok := m.(string); ok {
					modes = append(modes, s)
				}
			}
			w.Write(1, "Access Modes:\t[%s]\n", strings.Join(modes, " "))
		}
	}
	return d.describeEvents()
}

// claimClass is storageutil.GetPersistentVolumeClaimClass: the
// deprecated annotation first, then spec.storageClassName.
func claimClass(pvc any) string {
	if c, ok := p.StringMap(pvc, "metadata", "annotations")["volume.beta.kubernetes.io/storage-class"]; ok {
		return c
	}
	return p.Str(pvc, "spec", "storageClassName")
}

func (d *describer) daemonSet() error {
	w, o := d.w, d.obj
	d.nameNamespace()
	w.Write(0, "Selector:\t%s\n", p.SelectorString(p.Map(o, "spec", "selector")))
	w.Write(0, "Node-Selector:\t%s\n", formatLabels(p.StringMap(o, "spec", "template", "spec", "nodeSelector")))
	d.labelsAnnotations()
	w.Write(0, "Desired Number of Nodes Scheduled: %d\n", p.Int(o, "status", "desiredNumberScheduled"))
	w.Write(0, "Current Number of Nodes Scheduled: %d\n", p.Int(o, "status", "currentNumberScheduled"))
	w.Write(0, "Number of Nodes Scheduled with Up-to-date Pods: %d\n", p.Int(o, "status", "updatedNumberScheduled"))
	w.Write(0, "Number of Nodes Scheduled with Available Pods: %d\n", p.Int(o, "status", "numberAvailable"))
	w.Write(0, "Number of Nodes Misscheduled: %d\n", p.Int(o, "status", "numberMisscheduled"))
	d.podsStatusLine()
	describePodTemplate(w, p.Map(o, "spec", "template"))
	return d.describeEvents()
}

// formatLabels is labels.FormatLabels: k=v sorted, "<none>" when empty.
func formatLabels(m map[string]string) string {
	if len(m) == 0 {
		return "<none>"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + m[k]
	}
	return strings.Join(parts, ",")
}

func (d *describer) job() error {
	w, o := d.w, d.obj
	d.nameNamespace()
	w.Write(0, "Selector:\t%s\n", p.SelectorString(p.Map(o, "spec", "selector")))
	d.labelsAnnotations()
	if cb := controlledBy(o); cb != "" {
		w.Write(0, "Controlled By:\t%s\n", cb)
	}
	if p.Has(o, "spec", "parallelism") {
		w.Write(0, "Parallelism:\t%d\n", p.Int(o, "spec", "parallelism"))
	}
	if p.Has(o, "spec", "completions") {
		w.Write(0, "Completions:\t%d\n", p.Int(o, "spec", "completions"))
	} else {
		w.Write(0, "Completions:\t<unset>\n")
	}
	if m := p.Str(o, "spec", "completionMode"); m != "" {
		w.Write(0, "Completion Mode:\t%s\n", m)
	}
	if p.Has(o, "spec", "suspend") {
		w.Write(0, "Suspend:\t%v\n", p.Bool(o, "spec", "suspend"))
	}
	if p.Has(o, "spec", "backoffLimit") {
		w.Write(0, "Backoff Limit:\t%v\n", p.Int(o, "spec", "backoffLimit"))
	}
	if p.Has(o, "spec", "ttlSecondsAfterFinished") {
		w.Write(0, "TTL Seconds After Finished:\t%v\n", p.Int(o, "spec", "ttlSecondsAfterFinished"))
	}
	start, hasStart := p.Time(o, "status", "startTime"), p.Str(o, "status", "startTime") != ""
	end, hasEnd := p.Time(o, "status", "completionTime"), p.Str(o, "status", "completionTime") != ""
	if hasStart {
		w.Write(0, "Start Time:\t%s\n", d.rfc1123(start))
	}
	if hasEnd {
		w.Write(0, "Completed At:\t%s\n", d.rfc1123(end))
	}
	if hasStart && hasEnd {
		w.Write(0, "Duration:\t%s\n", p.HumanDuration(end.Sub(start)))
	}
	if p.Has(o, "spec", "activeDeadlineSeconds") {
		w.Write(0, "Active Deadline Seconds:\t%ds\n", p.Int(o, "spec", "activeDeadlineSeconds"))
	}
	if !p.Has(o, "status", "ready") {
		w.Write(0, "Pods Statuses:\t%d Active / %d Succeeded / %d Failed\n", p.Int(o, "status", "active"), p.Int(o, "status", "succeeded"), p.Int(o, "status", "failed"))
	} else {
		w.Write(0, "Pods Statuses:\t%d Active (%d Ready) / %d Succeeded / %d Failed\n", p.Int(o, "status", "active"), p.Int(o, "status", "ready"), p.Int(o, "status", "succeeded"), p.Int(o, "status", "failed"))
	}
	if p.Str(o, "spec", "completionMode") == "Indexed" {
		w.Write(0, "Completed Indexes:\t%s\n", capIndexes(p.Str(o, "status", "completedIndexes"), 50))
	}
	describePodTemplate(w, p.Map(o, "spec", "template"))
	return d.describeEvents()
}

// capIndexes is capIndexesListOrNone.
func capIndexes(indexes string, soft int) string {
	if indexes == "" {
		return "<none>"
	}
	if soft >= len(indexes) {
		return indexes
	}
	comma := strings.IndexByte(indexes[soft:], ',')
	if comma < 0 {
		return indexes
	}
	return indexes[:soft+comma+1] + "..."
}

func (d *describer) cronJob() error {
	w, o := d.w, d.obj
	d.nameNamespace()
	d.labelsAnnotations()
	w.Write(0, "Schedule:\t%s\n", p.Str(o, "spec", "schedule"))
	w.Write(0, "Concurrency Policy:\t%s\n", p.Str(o, "spec", "concurrencyPolicy"))
	w.Write(0, "Suspend:\t%s\n", boolPtr(o, "spec", "suspend"))
	optional := func(label, format string, path ...string) {
		if p.Has(o, path...) {
			w.Write(0, "%s:\t"+format+"\n", label, p.Int(o, path...))
		} else {
			w.Write(0, "%s:\t<unset>\n", label)
		}
	}
	if tz := p.Str(o, "spec", "timeZone"); p.Has(o, "spec", "timeZone") {
		w.Write(0, "Time Zone:\t%s\n", tz)
	} else {
		w.Write(0, "Time Zone:\t<unset>\n")
	}
	optional("Successful Job History Limit", "%d", "spec", "successfulJobsHistoryLimit")
	optional("Failed Job History Limit", "%d", "spec", "failedJobsHistoryLimit")
	optional("Starting Deadline Seconds", "%ds", "spec", "startingDeadlineSeconds")
	jt := p.Map(o, "spec", "jobTemplate")
	if p.Has(jt, "spec", "selector") {
		w.Write(0, "Selector:\t%s\n", p.SelectorString(p.Map(jt, "spec", "selector")))
	} else {
		w.Write(0, "Selector:\t<unset>\n")
	}
	for _, f := range [][2]string{{"Parallelism", "parallelism"}, {"Completions", "completions"}} {
		if p.Has(jt, "spec", f[1]) {
			w.Write(0, "%s:\t%d\n", f[0], p.Int(jt, "spec", f[1]))
		} else {
			w.Write(0, "%s:\t<unset>\n", f[0])
		}
	}
	if p.Has(jt, "spec", "activeDeadlineSeconds") {
		w.Write(0, "Active Deadline Seconds:\t%ds\n", p.Int(jt, "spec", "activeDeadlineSeconds"))
	}
	describePodTemplate(w, p.Map(jt, "spec", "template"))
	if p.Str(o, "status", "lastScheduleTime") != "" {
		w.Write(0, "Last Schedule Time:\t%s\n", d.rfc1123(p.Time(o, "status", "lastScheduleTime")))
	} else {
		w.Write(0, "Last Schedule Time:\t<unset>\n")
	}
	w.Write(0, "Active Jobs:\t")
	active := p.List(o, "status", "active")
	if len(active) == 0 {
		w.WriteLine("<none>")
	} else {
		for i, j := range active {
			if i != 0 {
				w.Write(0, ", ")
			}
			w.Write(0, "%s", p.Str(j, "name"))
		}
		w.WriteLine("")
	}
	return d.describeEvents()
}

func boolPtr(o map[string]any, path ...string) string {
	if !p.Has(o, path...) {
		return "<unset>"
	}
	if p.Bool(o, path...) {
		return "True"
	}
	return "False"
}
