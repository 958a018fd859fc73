package validate

import (
	"fmt"
	"regexp"
	"strconv"
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
		errs = append(errs, podFailurePolicy(spec, pfp, sp.child("podFailurePolicy"))...)
	}
	if policy := mget(spec, "successPolicy"); policy != nil {
		if mode != "Indexed" {
			errs = append(errs, invalid(sp.child("successPolicy"), successPolicyGo(policy), "requires indexed completion mode"))
		} else {
			errs = append(errs, successPolicy(policy, completions, hasCompletions, sp.child("successPolicy"))...)
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

// podFailurePolicy is validatePodFailurePolicy.
func podFailurePolicy(spec, pfp obj, p *path) []Error {
	var errs []Error
	rules := lget(pfp, "rules")
	rp := p.child("rules")
	if len(rules) > 20 {
		errs = append(errs, tooMany(rp, len(rules), 20))
	}
	names := map[string]bool{}
	tspec := mget(mget(spec, "template"), "spec")
	for _, k := range []string{"containers", "initContainers"} {
		for _, c := range lget(tspec, k) {
			names[sget(asObj(c), "name")] = true
		}
	}
	for i, r := range rules {
		rule := asObj(r)
		p := rp.at(i)
		ap := p.child("action")
		switch action := sget(rule, "action"); {
		case action == "":
			errs = append(errs, required(ap, `valid values: ["Count" "FailIndex" "FailJob" "Ignore"]`))
		case action == "FailIndex":
			if !has(spec, "backoffLimitPerIndex") {
				errs = append(errs, invalid(ap, action, "requires the backoffLimitPerIndex to be set"))
			}
		case action != "Count" && action != "FailJob" && action != "Ignore":
			errs = append(errs, notSupported(ap, action, "Count", "FailIndex", "FailJob", "Ignore"))
		}
		onExit := mget(rule, "onExitCodes")
		onConds := lget(rule, "onPodConditions")
		if onExit != nil {
			errs = append(errs, onExitCodes(onExit, names, p.child("onExitCodes"))...)
		}
		if len(onConds) > 0 {
			cp := p.child("onPodConditions")
			if len(onConds) > 20 {
				errs = append(errs, tooMany(cp, len(onConds), 20))
			}
			for j, c := range onConds {
				pat := asObj(c)
				for _, msg := range isQualifiedName(sget(pat, "type")) {
					errs = append(errs, invalid(cp.at(j).child("type"), sget(pat, "type"), msg))
				}
				switch st := sget(pat, "status"); st {
				case "":
					errs = append(errs, required(cp.at(j).child("status"), `valid values: ["False" "True" "Unknown"]`))
				case "False", "True", "Unknown":
				default:
					errs = append(errs, notSupported(cp.at(j).child("status"), st, "False", "True", "Unknown"))
				}
			}
		}
		if onExit != nil && len(onConds) > 0 {
			errs = append(errs, invalid(p, omitted{}, "specifying both OnExitCodes and OnPodConditions is not supported"))
		}
		if onExit == nil && len(onConds) == 0 {
			errs = append(errs, invalid(p, omitted{}, "specifying one of OnExitCodes and OnPodConditions is required"))
		}
	}
	return errs
}

// onExitCodes is validatePodFailurePolicyRuleOnExitCodes.
func onExitCodes(req obj, containers map[string]bool, p *path) []Error {
	var errs []Error
	op := sget(req, "operator")
	switch op {
	case "":
		errs = append(errs, required(p.child("operator"), `valid values: ["In" "NotIn"]`))
	case "In", "NotIn":
	default:
		errs = append(errs, notSupported(p.child("operator"), op, "In", "NotIn"))
	}
	if name, ok := req["containerName"].(string); ok && !containers[name] {
		errs = append(errs, invalid(p.child("containerName"), name, "must be one of the container or initContainer names in the pod template"))
	}
	values := lget(req, "values")
	vp := p.child("values")
	if len(values) == 0 {
		errs = append(errs, invalid(vp, goValue("[]"), "at least one value is required"))
	} else if len(values) > 255 {
		errs = append(errs, tooMany(vp, len(values), 255))
	}
	ordered := true
	seen := map[int64]bool{}
	for j, v := range values {
		n, _ := iget(obj{"v": v}, "v")
		if op == "In" && n == 0 {
			errs = append(errs, invalid(vp.at(j), n, "must not be 0 for the In operator"))
		}
		if seen[n] {
			errs = append(errs, duplicate(vp.at(j), n))
		}
		seen[n] = true
		if j > 0 {
			if prev, _ := iget(obj{"v": values[j-1]}, "v"); prev > n {
				ordered = false
			}
		}
	}
	if !ordered {
		errs = append(errs, invalid(vp, values, "must be ordered"))
	}
	return errs
}

// successPolicy is validateSuccessPolicy.
func successPolicy(policy obj, completions int64, hasCompletions bool, p *path) []Error {
	var errs []Error
	rules := lget(policy, "rules")
	rp := p.child("rules")
	if len(rules) == 0 {
		errs = append(errs, required(rp, "at least one rules must be specified when the successPolicy is specified"))
	}
	if len(rules) > 20 {
		errs = append(errs, tooMany(rp, len(rules), 20))
	}
	for i, r := range rules {
		rule := asObj(r)
		p := rp.at(i)
		indexes, hasIndexes := rule["succeededIndexes"].(string)
		count, hasCount := iget(rule, "succeededCount")
		if !hasIndexes && !hasCount {
			errs = append(errs, required(p, "at least one of succeededCount or succeededIndexes must be specified"))
		}
		if !hasCompletions {
			continue // refused already: Indexed needs completions
		}
		var total int64
		if hasIndexes {
			ip := p.child("succeededIndexes")
			if len(indexes) > 64*1024 {
				errs = append(errs, tooLong(ip, 64*1024))
			}
			var err error
			if total, err = indexesFormat(indexes, completions); err != nil {
				errs = append(errs, invalid(ip, indexes, "error parsing succeededIndexes: "+err.Error()))
			}
		}
		if hasCount {
			cp := p.child("succeededCount")
			errs = append(errs, nonNegativeValue(count, cp)...)
			if count > completions {
				errs = append(errs, invalid(cp, count, fmt.Sprintf("must be less than or equal to %d (the number of specified completions)", completions)))
			}
			if hasIndexes && count > total {
				errs = append(errs, invalid(cp, count, fmt.Sprintf("must be less than or equal to %d (the number of indexes in the specified succeededIndexes field)", total)))
			}
		}
	}
	return errs
}

// successPolicyGo prints a successPolicy as kube-apiserver prints its
// internal struct.
func successPolicyGo(policy obj) goValue {
	var rules []string
	for _, r := range lget(policy, "rules") {
		rule := asObj(r)
		idx, cnt := "null", "null"
		if s, ok := rule["succeededIndexes"].(string); ok {
			idx = strconv.Quote(s)
		}
		if n, ok := iget(rule, "succeededCount"); ok {
			cnt = strconv.FormatInt(n, 10)
		}
		rules = append(rules, fmt.Sprintf(`{"SucceededIndexes":%s,"SucceededCount":%s}`, idx, cnt))
	}
	list := "null"
	if rules != nil {
		list = "[" + strings.Join(rules, ",") + "]"
	}
	return goValue(`{"Rules":` + list + `}`)
}

// indexesFormat is validateIndexesFormat: the number of indexes of a
// list of intervals ("1,3-5"), in increasing order, below completions.
func indexesFormat(s string, completions int64) (int64, error) {
	if s == "" {
		return 0, nil
	}
	var total int64
	last := int64(-1)
	for _, interval := range strings.Split(s, ",") {
		x, y, err := indexInterval(interval, completions)
		if err != nil {
			return 0, err
		}
		if last >= 0 && last >= x {
			return 0, fmt.Errorf("non-increasing order, previous: %d, current: %d", last, x)
		}
		total += y - x + 1
		last = y
	}
	return total, nil
}

func indexInterval(s string, completions int64) (int64, int64, error) {
	parts := strings.Split(s, "-")
	if len(parts) > 2 {
		return 0, 0, fmt.Errorf("the fragment %q violates the requirement that an index interval can have at most two parts separated by '-'", s)
	}
	x, err := strconv.Atoi(parts[0])
	if err != nil {
		return 0, 0, fmt.Errorf("cannot convert string to integer for index: %q", parts[0])
	}
	if int64(x) >= completions {
		return 0, 0, fmt.Errorf("too large index: %q", parts[0])
	}
	if len(parts) == 1 {
		return int64(x), int64(x), nil
	}
	y, err := strconv.Atoi(parts[1])
	if err != nil {
		return 0, 0, fmt.Errorf("cannot convert string to integer for index: %q", parts[1])
	}
	if int64(y) >= completions {
		return 0, 0, fmt.Errorf("too large index: %q", parts[1])
	}
	if x >= y {
		return 0, 0, fmt.Errorf("non-increasing order, previous: %d, current: %d", x, y)
	}
	return int64(x), int64(y), nil
}
