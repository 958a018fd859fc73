package validate

// GenerateJobSelector is the step of a Job's PrepareForCreate that Object
// expects done on a new Job: unless spec.manualSelector is true, the pod
// template is labelled with the Job's name and uid (job-name,
// controller-uid, and their batch.kubernetes.io/ forms, where absent)
// and the selector matches batch.kubernetes.io/controller-uid. noLabels
// says the Job was written without labels: it then takes its template's.
// It modifies job. The embedded cluster's store and apply's plans both
// call it.
func GenerateJobSelector(job map[string]any, noLabels bool) {
	spec, _ := job["spec"].(map[string]any)
	if spec == nil || spec["manualSelector"] == true {
		return
	}
	md := childObject(job, "metadata")
	tmpl := childObject(spec, "template")
	labels := childObject(childObject(tmpl, "metadata"), "labels")
	name, _ := md["name"].(string)
	uid, _ := md["uid"].(string)
	for _, l := range []string{"job-name", "batch.kubernetes.io/job-name"} {
		if _, ok := labels[l]; !ok {
			labels[l] = name
		}
	}
	for _, l := range []string{"controller-uid", "batch.kubernetes.io/controller-uid"} {
		if _, ok := labels[l]; !ok {
			labels[l] = uid
		}
	}
	match := childObject(childObject(spec, "selector"), "matchLabels")
	if _, ok := match["batch.kubernetes.io/controller-uid"]; !ok {
		match["batch.kubernetes.io/controller-uid"] = uid
	}
	if noLabels {
		// A Job created without labels takes its template's.
		copied := make(map[string]any, len(labels))
		for k, v := range labels {
			copied[k] = v
		}
		md["labels"] = copied
	}
}

// childObject returns m[field], adding an empty object when it is not one.
func childObject(m map[string]any, field string) map[string]any {
	c, ok := m[field].(map[string]any)
	if !ok {
		c = map[string]any{}
		m[field] = c
	}
	return c
}
