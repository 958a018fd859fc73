package validate

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// batch/v1: Job, CronJob.

func job(o, old obj) []Error {
	meta := mget(o, "metadata")
	spec := mget(o, "spec")
	sp := newPath("spec")
	var errs []Error
	if old == nil {
		errs = objectMeta(meta, true, nameIsDNSSubdomain, newPath("metadata"))
		errs = append(errs, generatedSelector(o, true)...)
		errs = append(errs, jobSpecWithSelector(spec, sp)...)
	} else {
		oldSpec := mget(old, "spec")
		errs = objectMetaUpdate(meta, mget(old, "metadata"), newPath("metadata"))
		errs = append(errs, jobSpecWithSelector(spec, sp)...)
		// completions is immutable for non-indexed jobs.
		if sget(spec, "completionMode") != "Indexed" {
			if !equal(spec["completions"], oldSpec["completions"]) {
				errs = append(errs, invalid(sp.child("completions"), nullable(spec["completions"]), fieldImmutable))
			}
		} else if !equal(spec["completions"], oldSpec["completions"]) && has(spec, "completions") && ival(spec, "completions") != ival(spec, "parallelism") {
			errs = append(errs, invalid(sp.child("completions"), spec["completions"], "can only be modified in tandem with spec.parallelism"))
		}
		if !equal(spec["selector"], oldSpec["selector"]) {
			errs = append(errs, invalid(sp.child("selector"), selectorJSON(mget(spec, "selector"), has(spec, "selector")), fieldImmutable))
		}
		if !bget(oldSpec, "suspend") && !equal(spec["template"], oldSpec["template"]) {
			// kube-apiserver prints the whole internal PodTemplateSpec as the
			// bad value; konverge prints the template as JSON.
			errs = append(errs, invalid(sp.child("template"), spec["template"], fieldImmutable))
		}
		for _, k := range []string{"completionMode", "podFailurePolicy", "backoffLimitPerIndex", "managedBy", "successPolicy"} {
			if !equal(spec[k], oldSpec[k]) {
				errs = append(errs, invalid(sp.child(k), nullable(spec[k]), fieldImmutable))
			}
		}
	}
	errs = append(errs, nameAllowsCompletions(o)...)
	return errs
}

func nullable(v any) any {
	if v == nil {
		return goValue("null")
	}
	return v
}

// generatedSelector is validateGeneratedSelector: unless manualSelector,
// the registry generated the selector and the template's labels from the
// Job's uid and name.
func generatedSelector(o obj, prefixed bool) []Error {
	spec := mget(o, "spec")
	if bget(spec, "manualSelector") || !has(spec, "selector") {
		return nil
	}
	meta := mget(o, "metadata")
	uid, name := sget(meta, "uid"), sget(meta, "name")
	var errs []Error
	if uid == "" {
		errs = append(errs, required(newPath("metadata", "uid"), ""))
	}
	tmeta := mget(mget(spec, "template"), "metadata")
	tp := newPath("spec", "template", "metadata")
	expected := map[string]string{"controller-uid": uid, "job-name": name}
	check := []string{"controller-uid", "job-name"}
	if prefixed {
		check = append(check, "batch.kubernetes.io/controller-uid", "batch.kubernetes.io/job-name")
		expected["batch.kubernetes.io/controller-uid"] = uid
		expected["batch.kubernetes.io/job-name"] = name
	}
	tl := stringMap(tmeta, "labels")
	for _, k := range check {
		want := expected[k]
		got, ok := tl[k]
		switch {
		case !ok:
			errs = append(errs, required(tp.child("labels").key(k), fmt.Sprintf("must be '%s'", want)))
		case got != want:
			errs = append(errs, invalid(tp.child("labels").key(k), stringMapValue(tl), fmt.Sprintf("must be '%s'", want)))
		}
	}
	if sel, ok := asSelector(mget(spec, "selector"), true); ok && !sel.matches(expected) {
		errs = append(errs, invalid(newPath("spec", "selector"), selectorJSON(mget(spec, "selector"), true), "`selector` not auto-generated"))
	}
	return errs
}

// jobSpecWithSelector is ValidateJobSpec.
func jobSpecWithSelector(spec obj, sp *path) []Error {
	errs := jobSpec(spec, sp)
	if !has(spec, "selector") {
		errs = append(errs, required(sp.child("selector"), ""))
	} else {
		errs = append(errs, labelSelector(mget(spec, "selector"), sp.child("selector"))...)
	}
	if sel, ok := asSelector(mget(spec, "selector"), has(spec, "selector")); ok {
		tl := stringMap(mget(mget(spec, "template"), "metadata"), "labels")
		if !sel.matches(tl) {
			var bad any = goValue("null")
			if tl != nil {
				bad = stringMapValue(tl)
			}
			errs = append(errs, invalid(sp.child("template", "metadata", "labels"), bad, "`selector` does not match template `labels`"))
		}
	}
	return errs
}

var domainPrefixedPathRe = regexp.MustCompile(`^[A-Za-z0-9/\-._~%!$&'()*+,;=:]+$`)

// jobSpec is validateJobSpec.
func jobSpec(spec obj, sp *path) []Error {
	var errs []Error
	for _, k := range []string{"parallelism", "completions", "activeDeadlineSeconds", "backoffLimit", "ttlSecondsAfterFinished", "backoffLimitPerIndex"} {
		if v, ok := iget(spec, k); ok {
			errs = append(errs, nonNegativeValue(v, sp.child(k))...)
		}
	}
	if v, ok := iget(spec, "maxFailedIndexes"); ok {
		errs = append(errs, nonNegativeValue(v, sp.child("maxFailedIndexes"))...)
		if !has(spec, "backoffLimitPerIndex") {
			errs = append(errs, required(sp.child("backoffLimitPerIndex"), "when maxFailedIndexes is specified"))
		}
	}
	if mb, ok := spec["managedBy"].(string); ok {
		mp := sp.child("managedBy")
		segs := strings.SplitN(mb, "/", 2)
		switch {
		case mb == "":
			errs = append(errs, required(mp, ""))
		case len(segs) != 2 || segs[0] == "" || segs[1] == "":
			errs = append(errs, invalid(mp, mb, "must be a domain-prefixed path (such as \"acme.io/foo\")"))
		default:
			for _, msg := range isDNS1123Subdomain(segs[0]) {
				errs = append(errs, invalid(mp, segs[0], msg))
			}
			if !domainPrefixedPathRe.MatchString(segs[1]) {
				errs = append(errs, invalid(mp, segs[1], regexError("Invalid path", `[A-Za-z0-9/\-._~%!$&'()*+,;=:]+`)))
			}
		}
		if len(mb) > 63 {
			errs = append(errs, tooLong(mp, 63))
		}
	}
	mode, hasMode := spec["completionMode"].(string)
	completions, hasCompletions := iget(spec, "completions")
	parallelism, hasParallelism := iget(spec, "parallelism")
	maxFailed, hasMaxFailed := iget(spec, "maxFailedIndexes")
	if hasMode {
		if mode != "NonIndexed" && mode != "Indexed" {
			errs = append(errs, notSupported(sp.child("completionMode"), mode, "NonIndexed", "Indexed"))
		}
		if mode == "Indexed" {
			if !hasCompletions {
				errs = append(errs, required(sp.child("completions"), "when completion mode is Indexed"))
			}
			if hasParallelism && parallelism > 100000 {
				errs = append(errs, invalid(sp.child("parallelism"), parallelism, "must be less than or equal to 100000 when completion mode is Indexed"))
			}
			if hasCompletions && hasMaxFailed && maxFailed > completions {
				errs = append(errs, invalid(sp.child("maxFailedIndexes"), maxFailed, "must be less than or equal to completions"))
			}
			if hasMaxFailed && maxFailed > 100000 {
				errs = append(errs, invalid(sp.child("maxFailedIndexes"), maxFailed, "must be less than or equal to 100000"))
			}
			if hasCompletions && completions > 100000 && has(spec, "backoffLimitPerIndex") {
				if !hasMaxFailed {
					errs = append(errs, required(sp.child("maxFailedIndexes"), "must be specified when completions is above 100000"))
				}
				if hasParallelism && parallelism > 10000 {
					errs = append(errs, invalid(sp.child("parallelism"), parallelism, "must be less than or equal to 10000 when completions are above 100000 and used with backoff limit per index"))
				}
				if hasMaxFailed && maxFailed > 10000 {
					errs = append(errs, invalid(sp.child("maxFailedIndexes"), maxFailed, "must be less than or equal to 10000 when completions are above 100000 and used with backoff limit per index"))
				}
			}
		}
	}
	if !hasMode || mode == "NonIndexed" {
		if v, ok := iget(spec, "backoffLimitPerIndex"); ok {
			errs = append(errs, invalid(sp.child("backoffLimitPerIndex"), v, "requires indexed completion mode"))
		}
		if hasMaxFailed {
			errs = append(errs, invalid(sp.child("maxFailedIndexes"), maxFailed, "requires indexed completion mode"))
		}
	}
	if pfp := mget(spec, "podFailurePolicy"); pfp != nil {
		if n := len(lget(pfp, "rules")); n > 20 {
			errs = append(errs, tooMany(sp.child("podFailurePolicy", "rules"), n, 20))
		}
	}
	if rp, ok := spec["podReplacementPolicy"].(string); ok {
		pp := sp.child("podReplacementPolicy")
		if has(spec, "podFailurePolicy") {
			if rp != "Failed" {
				errs = append(errs, notSupported(pp, rp, "Failed"))
			}
		} else if rp != "Failed" && rp != "TerminatingOrFailed" {
			errs = append(errs, notSupported(pp, rp, "Failed", "TerminatingOrFailed"))
		}
	}
	tp := sp.child("template")
	errs = append(errs, podTemplateSpec(mget(spec, "template"), tp)...)
	restart := sget(mget(mget(spec, "template"), "spec"), "restartPolicy")
	switch {
	case restart == "Always" || restart == "":
		errs = append(errs, required(tp.child("spec", "restartPolicy"), `valid values: "OnFailure", "Never"`))
	case restart != "OnFailure" && restart != "Never":
		errs = append(errs, notSupported(tp.child("spec", "restartPolicy"), restart, "OnFailure", "Never"))
	case has(spec, "podFailurePolicy") && restart != "Never":
		errs = append(errs, invalid(tp.child("spec", "restartPolicy"), restart, `only "Never" is supported when podFailurePolicy is specified`))
	}
	return errs
}

func nameAllowsCompletions(o obj) []Error {
	spec := mget(o, "spec")
	c, ok := iget(spec, "completions")
	if sget(spec, "completionMode") != "Indexed" || !ok || c <= 0 {
		return nil
	}
	name := sget(mget(o, "metadata"), "name")
	host := fmt.Sprintf("%s-%d", name, c-1)
	if len(isDNS1123Label(host)) > 0 {
		return []Error{invalid(newPath("metadata", "name"), name, "will not able to create pod with invalid DNS label: "+host)}
	}
	return nil
}

var timeZoneRe = regexp.MustCompile(`^[A-Za-z\.\-_0-9+]{1,14}$`)

func cronJob(o, old obj) []Error {
	meta := mget(o, "metadata")
	spec := mget(o, "spec")
	sp := newPath("spec")
	var errs []Error
	var oldSpec obj
	if old == nil {
		errs = objectMeta(meta, true, nameIsDNSSubdomain, newPath("metadata"))
	} else {
		oldSpec = mget(old, "spec")
		errs = objectMetaUpdate(meta, mget(old, "metadata"), newPath("metadata"))
	}
	schedule := sget(spec, "schedule")
	var scheduleRequired []Error
	if schedule == "" {
		// Declarative validation (beta, enforced) reports this one, after
		// all handwritten errors.
		scheduleRequired = []Error{required(sp.child("schedule"), "")}
	} else {
		allowTZ := oldSpec != nil && strings.Contains(sget(oldSpec, "schedule"), "TZ")
		if err := parseCron(schedule); err != nil {
			errs = append(errs, invalid(sp.child("schedule"), schedule, err.Error()))
		}
		_, hasTZ := spec["timeZone"].(string)
		switch {
		case allowTZ && strings.Contains(schedule, "TZ") && hasTZ:
			errs = append(errs, invalid(sp.child("schedule"), schedule, "cannot use both timeZone field and TZ or CRON_TZ in schedule"))
		case !allowTZ && strings.Contains(schedule, "TZ"):
			errs = append(errs, invalid(sp.child("schedule"), schedule, "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"))
		}
	}
	if v, ok := iget(spec, "startingDeadlineSeconds"); ok {
		errs = append(errs, nonNegativeValue(v, sp.child("startingDeadlineSeconds"))...)
	}
	if tz, ok := spec["timeZone"].(string); ok && (oldSpec == nil || !equal(spec["timeZone"], oldSpec["timeZone"])) {
		errs = append(errs, timeZone(tz, sp.child("timeZone"))...)
	}
	errs = append(errs, oneOf(sp.child("concurrencyPolicy"), sget(spec, "concurrencyPolicy"), "Allow", "Forbid", "Replace")...)
	jt := mget(spec, "jobTemplate")
	jp := sp.child("jobTemplate")
	jspec := mget(jt, "spec")
	errs = append(errs, jobSpec(jspec, jp.child("spec"))...)
	if has(jspec, "selector") {
		errs = append(errs, invalid(jp.child("spec", "selector"), selectorJSON(mget(jspec, "selector"), true), "`selector` will be auto-generated"))
	}
	if bget(jspec, "manualSelector") {
		errs = append(errs, notSupported(jp.child("spec", "manualSelector"), true, "nil", "false"))
	}
	for _, k := range []string{"successfulJobsHistoryLimit", "failedJobsHistoryLimit"} {
		if v, ok := iget(spec, k); ok {
			errs = append(errs, nonNegativeValue(v, sp.child(k))...)
		}
	}
	if old == nil && len(sget(meta, "name")) > 52 {
		errs = append(errs, invalid(newPath("metadata", "name"), sget(meta, "name"), "must be no more than 52 characters"))
	}
	return append(errs, scheduleRequired...)
}

func timeZone(tz string, p *path) []Error {
	if tz == "" {
		return []Error{invalid(p, tz, "timeZone must be nil or non-empty string")}
	}
	for _, part := range strings.Split(tz, "/") {
		if part == "." || part == ".." || strings.HasPrefix(part, "-") || !timeZoneRe.MatchString(part) {
			return []Error{invalid(p, tz, "unknown time zone "+tz)}
		}
	}
	var errs []Error
	if strings.EqualFold(tz, "Local") {
		errs = append(errs, invalid(p, tz, "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"))
	}
	if _, err := time.LoadLocation(tz); err != nil {
		errs = append(errs, invalid(p, tz, err.Error()))
	}
	return errs
}
