package validate

import (
	"fmt"
	"strconv"

	"github.com/konverge/konverge/value"
)

// apps/v1: Deployment, ReplicaSet, StatefulSet, DaemonSet.

func deployment(o, old obj) []Error {
	var errs []Error
	meta := newPath("metadata")
	if old == nil {
		errs = objectMeta(mget(o, "metadata"), true, nameIsDNSSubdomain, meta)
	} else {
		errs = objectMetaUpdate(mget(o, "metadata"), mget(old, "metadata"), meta)
	}
	spec := mget(o, "spec")
	sp := newPath("spec")
	errs = append(errs, nonNegativeValue(ival(spec, "replicas"), sp.child("replicas"))...)
	errs = append(errs, workloadSelector(spec, sp, "deployment")...)
	sel, ok := asSelector(mget(spec, "selector"), has(spec, "selector"))
	if !ok {
		errs = append(errs, invalid(sp.child("selector"), selectorJSON(mget(spec, "selector"), true), "invalid label selector"))
	} else {
		errs = append(errs, podTemplateForReplicaSet(mget(spec, "template"), sel, sp.child("template"), "ReplicaSet")...)
	}
	errs = append(errs, deploymentStrategy(mget(spec, "strategy"), sp.child("strategy"))...)
	errs = append(errs, nonNegativeValue(ival(spec, "minReadySeconds"), sp.child("minReadySeconds"))...)
	if v, ok := iget(spec, "revisionHistoryLimit"); ok {
		errs = append(errs, nonNegativeValue(v, sp.child("revisionHistoryLimit"))...)
	}
	if v, ok := iget(spec, "progressDeadlineSeconds"); ok {
		errs = append(errs, nonNegativeValue(v, sp.child("progressDeadlineSeconds"))...)
		if v <= ival(spec, "minReadySeconds") {
			errs = append(errs, invalid(sp.child("progressDeadlineSeconds"), v, "must be greater than minReadySeconds"))
		}
	}
	if old != nil {
		errs = append(errs, selectorImmutable(spec, mget(old, "spec"), sp.child("selector"))...)
	}
	return errs
}

// workloadSelector is the selector check of Deployments, ReplicaSets and
// StatefulSets: required, valid, not empty.
func workloadSelector(spec obj, sp *path, kind string) []Error {
	if !has(spec, "selector") {
		return []Error{required(sp.child("selector"), "")}
	}
	sel := mget(spec, "selector")
	errs := labelSelector(sel, sp.child("selector"))
	if len(mget(sel, "matchLabels"))+len(lget(sel, "matchExpressions")) == 0 {
		errs = append(errs, invalid(sp.child("selector"), selectorJSON(sel, true), "empty selector is invalid for "+kind))
	}
	return errs
}

func selectorImmutable(spec, oldSpec obj, p *path) []Error {
	if equal(spec["selector"], oldSpec["selector"]) {
		return nil
	}
	return []Error{invalid(p, selectorJSON(mget(spec, "selector"), has(spec, "selector")), fieldImmutable)}
}

// podTemplateForReplicaSet is ValidatePodTemplateSpecForReplicaSet (used by
// Deployments too); kind names the owner in the activeDeadlineSeconds
// message.
func podTemplateForReplicaSet(tmpl obj, sel selector, p *path, kind string) []Error {
	errs := podTemplateLabelsMatch(sel, tmpl, p)
	errs = append(errs, podTemplateSpec(tmpl, p)...)
	spec := mget(tmpl, "spec")
	if rp := sget(spec, "restartPolicy"); rp != "Always" {
		errs = append(errs, notSupported(p.child("spec", "restartPolicy"), rp, "Always"))
	}
	if has(spec, "activeDeadlineSeconds") {
		errs = append(errs, forbidden(p.child("spec", "activeDeadlineSeconds"), "activeDeadlineSeconds in "+kind+" is not Supported"))
	}
	return errs
}

func deploymentStrategy(s obj, p *path) []Error {
	switch sget(s, "type") {
	case "Recreate":
		if has(s, "rollingUpdate") {
			return []Error{forbidden(p.child("rollingUpdate"), "may not be specified when strategy `type` is 'Recreate'")}
		}
	case "RollingUpdate":
		ru := mget(s, "rollingUpdate")
		if ru == nil {
			return []Error{required(p.child("rollingUpdate"), "this should be defaulted and never be nil")}
		}
		rp := p.child("rollingUpdate")
		errs := positiveIntOrPercent(ru["maxUnavailable"], rp.child("maxUnavailable"))
		errs = append(errs, positiveIntOrPercent(ru["maxSurge"], rp.child("maxSurge"))...)
		if intOrPercentValue(ru["maxUnavailable"]) == 0 && intOrPercentValue(ru["maxSurge"]) == 0 {
			errs = append(errs, invalid(rp.child("maxUnavailable"), intOrStringValue(ru["maxUnavailable"]), "may not be 0 when `maxSurge` is 0"))
		}
		return append(errs, notMoreThan100Percent(ru["maxUnavailable"], rp.child("maxUnavailable"))...)
	default:
		return []Error{notSupported(p, strategyGoValue(s, "RollingUpdate", rollingUpdateDeploymentGo), "Recreate", "RollingUpdate")}
	}
	return nil
}

// strategyGoValue prints a strategy as kube-apiserver prints its internal
// struct: {"Type":"Foo","RollingUpdate":null}.
func strategyGoValue(s obj, ruKey string, ru func(obj) string) goValue {
	r := "null"
	if m := mget(s, ruKey); m != nil {
		r = ru(m)
	}
	return goValue(`{"Type":` + formatJSON(sget(s, "type")) + `,"RollingUpdate":` + r + `}`)
}

func rollingUpdateDeploymentGo(ru obj) string {
	return `{"MaxUnavailable":` + formatJSON(intOrStringValue(ru["maxUnavailable"])) + `,"MaxSurge":` + formatJSON(intOrStringValue(ru["maxSurge"])) + `}`
}

// intOrStringValue is the value of an IntOrString field as Go holds it
// (an absent one is 0).
func intOrStringValue(v any) any {
	if v == nil {
		return int64(0)
	}
	return v
}

func positiveIntOrPercent(v any, p *path) []Error {
	switch x := v.(type) {
	case string:
		var errs []Error
		for _, msg := range isValidPercent(x) {
			errs = append(errs, invalid(p, x, msg))
		}
		return errs
	case int64:
		return nonNegativeValue(x, p)
	case nil:
		return nil
	}
	return []Error{invalid(p, v, "must be an integer or percentage (e.g '5%%')")}
}

// percentValue returns the value of a valid percent string.
func percentValue(v any) (int64, bool) {
	s, ok := v.(string)
	if !ok || len(isValidPercent(s)) != 0 {
		return 0, false
	}
	n, _ := strconv.ParseInt(s[:len(s)-1], 10, 64)
	return n, true
}

// intOrPercentValue is getIntOrPercentValue: a percent's number, an int,
// and 0 for a string that is neither (IntValue of a bad string).
func intOrPercentValue(v any) int64 {
	if n, ok := percentValue(v); ok {
		return n
	}
	switch x := v.(type) {
	case int64:
		return x
	case string:
		n, _ := strconv.Atoi(x)
		return int64(n)
	}
	return 0
}

func notMoreThan100Percent(v any, p *path) []Error {
	n, ok := percentValue(v)
	if !ok || n <= 100 {
		return nil
	}
	return []Error{invalid(p, v, "must not be greater than 100%")}
}

func replicaSet(o, old obj) []Error {
	var errs []Error
	meta := newPath("metadata")
	if old == nil {
		errs = objectMeta(mget(o, "metadata"), true, nameIsDNSSubdomain, meta)
	} else {
		errs = objectMetaUpdate(mget(o, "metadata"), mget(old, "metadata"), meta)
	}
	spec := mget(o, "spec")
	sp := newPath("spec")
	errs = append(errs, nonNegativeValue(ival(spec, "replicas"), sp.child("replicas"))...)
	errs = append(errs, nonNegativeValue(ival(spec, "minReadySeconds"), sp.child("minReadySeconds"))...)
	errs = append(errs, workloadSelector(spec, sp, "deployment")...)
	sel, ok := asSelector(mget(spec, "selector"), has(spec, "selector"))
	if !ok {
		errs = append(errs, invalid(sp.child("selector"), selectorJSON(mget(spec, "selector"), true), "invalid label selector"))
	} else {
		errs = append(errs, podTemplateForReplicaSet(mget(spec, "template"), sel, sp.child("template"), "ReplicaSet")...)
	}
	if old != nil {
		errs = append(errs, selectorImmutable(spec, mget(old, "spec"), sp.child("selector"))...)
	}
	return errs
}

func statefulSet(o, old obj) []Error {
	var errs []Error
	meta := newPath("metadata")
	if old == nil {
		errs = objectMeta(mget(o, "metadata"), true, nameIsDNSLabel, meta)
	} else {
		errs = objectMetaUpdate(mget(o, "metadata"), mget(old, "metadata"), meta)
	}
	sp := newPath("spec")
	spec := mget(o, "spec")
	skipTemplate := old != nil && len(statefulSetSpec(mget(old, "spec"), sp, false)) > 0
	errs = append(errs, statefulSetSpec(spec, sp, skipTemplate)...)
	if old != nil {
		oldSpec := mget(old, "spec")
		errs = append(errs, selectorImmutable(spec, oldSpec, sp.child("selector"))...)
		if !equal(spec["volumeClaimTemplates"], oldSpec["volumeClaimTemplates"]) {
			errs = append(errs, invalid(sp.child("volumeClaimTemplates"), spec["volumeClaimTemplates"], fieldImmutable))
		}
		for _, k := range []string{"serviceName", "podManagementPolicy"} {
			if sget(spec, k) != sget(oldSpec, k) {
				errs = append(errs, invalid(sp.child(k), sget(spec, k), fieldImmutable))
			}
		}
	}
	return errs
}

func statefulSetSpec(spec obj, sp *path, skipTemplate bool) []Error {
	var errs []Error
	switch pmp := sget(spec, "podManagementPolicy"); pmp {
	case "":
		errs = append(errs, required(sp.child("podManagementPolicy"), ""))
	case "OrderedReady", "Parallel":
	default:
		errs = append(errs, invalid(sp.child("podManagementPolicy"), pmp, "must be 'OrderedReady' or 'Parallel'"))
	}
	us := mget(spec, "updateStrategy")
	switch sget(us, "type") {
	case "":
		errs = append(errs, required(sp.child("updateStrategy"), ""))
	case "OnDelete":
		if ru := mget(us, "rollingUpdate"); ru != nil {
			errs = append(errs, invalid(sp.child("updateStrategy", "rollingUpdate"), goValue(rollingUpdateStatefulSetGo(ru)), "only allowed for updateStrategy 'RollingUpdate'"))
		}
	case "RollingUpdate":
		if ru := mget(us, "rollingUpdate"); ru != nil {
			rp := sp.child("updateStrategy", "rollingUpdate")
			errs = append(errs, nonNegativeValue(ival(ru, "partition"), rp.child("partition"))...)
			if mu, ok := ru["maxUnavailable"]; ok && mu != nil {
				mp := rp.child("maxUnavailable")
				errs = append(errs, positiveIntOrPercent(mu, mp)...)
				if intOrPercentValue(mu) == 0 {
					errs = append(errs, invalid(mp, mu, "cannot be 0"))
				}
				errs = append(errs, notMoreThan100Percent(mu, mp)...)
			}
		}
	default:
		errs = append(errs, invalid(sp.child("updateStrategy"), strategyGoValue(us, "rollingUpdate", rollingUpdateStatefulSetGo), "must be 'RollingUpdate' or 'OnDelete'"))
	}
	if pol := mget(spec, "persistentVolumeClaimRetentionPolicy"); pol != nil {
		for _, k := range []string{"whenDeleted", "whenScaled"} {
			if v := sget(pol, k); v != "Retain" && v != "Delete" {
				errs = append(errs, notSupported(sp.child("persistentVolumeClaimRetentionPolicy", k), v, "Retain", "Delete"))
			}
		}
	}
	for i, t := range lget(spec, "volumeClaimTemplates") {
		errs = append(errs, pvcSpec(mget(asObj(t), "spec"), sp.child("volumeClaimTemplates").at(i).child("spec"))...)
	}
	errs = append(errs, nonNegativeValue(ival(spec, "replicas"), sp.child("replicas"))...)
	errs = append(errs, nonNegativeValue(ival(spec, "minReadySeconds"), sp.child("minReadySeconds"))...)
	if ord := mget(spec, "ordinals"); ord != nil {
		errs = append(errs, nonNegativeValue(ival(ord, "start"), sp.child("ordinals.start"))...)
	}
	if sn := sget(spec, "serviceName"); sn != "" {
		errs = append(errs, dns1123Label(sn, sp.child("serviceName"))...)
	}
	if !has(spec, "selector") {
		errs = append(errs, required(sp.child("selector"), ""))
	} else {
		sel := mget(spec, "selector")
		errs = append(errs, labelSelector(sel, sp.child("selector"))...)
		if len(mget(sel, "matchLabels"))+len(lget(sel, "matchExpressions")) == 0 {
			errs = append(errs, invalid(sp.child("selector"), selectorJSON(sel, true), "empty selector is invalid for statefulset"))
		}
	}
	sel, ok := asSelector(mget(spec, "selector"), has(spec, "selector"))
	tmpl := mget(spec, "template")
	if !ok {
		errs = append(errs, invalid(sp.child("selector"), selectorJSON(mget(spec, "selector"), true), ""))
	} else {
		tp := sp.child("template")
		errs = append(errs, podTemplateLabelsMatch(sel, tmpl, tp)...)
		if !skipTemplate {
			errs = append(errs, podTemplateSpec(statefulSetTemplate(spec, tmpl), tp)...)
		}
		meta := mget(tmpl, "metadata")
		errs = append(errs, labels(mget(meta, "labels"), tp.child("labels"))...)
		errs = append(errs, annotations(mget(meta, "annotations"), tp.child("annotations"))...)
	}
	tspec := mget(tmpl, "spec")
	if rp := sget(tspec, "restartPolicy"); rp != "Always" {
		errs = append(errs, notSupported(sp.child("template", "spec", "restartPolicy"), rp, "Always"))
	}
	if has(tspec, "activeDeadlineSeconds") {
		errs = append(errs, forbidden(sp.child("template", "spec", "activeDeadlineSeconds"), "activeDeadlineSeconds in StatefulSet is not Supported"))
	}
	return errs
}

// statefulSetTemplate is the template StatefulSet validation checks: the
// hostname and subdomain cleared, and a volume for each claim template
// (so that mounts of claim templates resolve).
func statefulSetTemplate(spec, tmpl obj) obj {
	claims := lget(spec, "volumeClaimTemplates")
	tspec := mget(tmpl, "spec")
	if sget(tspec, "subdomain") == "" && sget(tspec, "hostname") == "" && len(claims) == 0 {
		return tmpl
	}
	cp := asObj(value.DeepCopy(tmpl))
	cs := asObj(cp["spec"])
	cp["spec"] = cs
	delete(cs, "subdomain")
	delete(cs, "hostname")
	if len(claims) > 0 {
		names := map[string]bool{}
		var vols []any
		for _, c := range claims {
			name := sget(mget(asObj(c), "metadata"), "name")
			if names[name] {
				continue
			}
			names[name] = true
			vols = append(vols, map[string]any{"name": name, "persistentVolumeClaim": map[string]any{"claimName": name}})
		}
		for _, v := range lget(cs, "volumes") {
			if !names[sget(asObj(v), "name")] {
				vols = append(vols, v)
			}
		}
		cs["volumes"] = vols
	}
	return cp
}

func rollingUpdateStatefulSetGo(ru obj) string {
	mu := "null"
	if v, ok := ru["maxUnavailable"]; ok && v != nil {
		mu = formatJSON(v)
	}
	return fmt.Sprintf(`{"Partition":%d,"MaxUnavailable":%s}`, ival(ru, "partition"), mu)
}

func daemonSet(o, old obj) []Error {
	var errs []Error
	meta := newPath("metadata")
	sp := newPath("spec")
	spec := mget(o, "spec")
	if old == nil {
		errs = objectMeta(mget(o, "metadata"), true, nameIsDNSSubdomain, meta)
	} else {
		errs = objectMetaUpdate(mget(o, "metadata"), mget(old, "metadata"), meta)
		errs = append(errs, selectorImmutable(spec, mget(old, "spec"), sp.child("selector"))...)
	}
	sel := mget(spec, "selector")
	errs = append(errs, labelSelector(sel, sp.child("selector"))...)
	s, ok := asSelector(sel, has(spec, "selector"))
	tmpl := mget(spec, "template")
	if ok && !s.matches(stringMap(mget(tmpl, "metadata"), "labels")) {
		var bad any = goValue("null")
		if tl := stringMap(mget(tmpl, "metadata"), "labels"); tl != nil {
			bad = stringMapValue(tl)
		}
		errs = append(errs, invalid(sp.child("template", "metadata", "labels"), bad, "`selector` does not match template `labels`"))
	}
	if has(spec, "selector") && len(mget(sel, "matchLabels"))+len(lget(sel, "matchExpressions")) == 0 {
		errs = append(errs, invalid(sp.child("selector"), selectorJSON(sel, true), "empty selector is invalid for daemonset"))
	}
	errs = append(errs, podTemplateSpec(tmpl, sp.child("template"))...)
	tspec := mget(tmpl, "spec")
	if rp := sget(tspec, "restartPolicy"); rp != "Always" {
		errs = append(errs, notSupported(sp.child("template", "spec", "restartPolicy"), rp, "Always"))
	}
	if has(tspec, "activeDeadlineSeconds") {
		errs = append(errs, forbidden(sp.child("template", "spec", "activeDeadlineSeconds"), "activeDeadlineSeconds in DaemonSet is not Supported"))
	}
	errs = append(errs, nonNegativeValue(ival(spec, "minReadySeconds"), sp.child("minReadySeconds"))...)
	us := mget(spec, "updateStrategy")
	up := sp.child("updateStrategy")
	switch sget(us, "type") {
	case "OnDelete":
	case "RollingUpdate":
		ru := mget(us, "rollingUpdate")
		if ru == nil {
			errs = append(errs, required(up.child("rollingUpdate"), ""))
			break
		}
		rp := up.child("rollingUpdate")
		errs = append(errs, positiveIntOrPercent(intOrStringValue(ru["maxUnavailable"]), rp.child("maxUnavailable"))...)
		errs = append(errs, positiveIntOrPercent(intOrStringValue(ru["maxSurge"]), rp.child("maxSurge"))...)
		errs = append(errs, notMoreThan100Percent(ru["maxUnavailable"], rp.child("maxUnavailable"))...)
		errs = append(errs, notMoreThan100Percent(ru["maxSurge"], rp.child("maxSurge"))...)
		hasUnavailable := intOrPercentValue(ru["maxUnavailable"]) != 0
		hasSurge := intOrPercentValue(ru["maxSurge"]) != 0
		switch {
		case hasUnavailable && hasSurge:
			errs = append(errs, invalid(rp.child("maxSurge"), ru["maxSurge"], "may not be set when maxUnavailable is non-zero"))
		case !hasUnavailable && !hasSurge:
			errs = append(errs, required(rp.child("maxUnavailable"), "cannot be 0 when maxSurge is 0"))
		}
	default:
		errs = append(errs, notSupported(up, strategyGoValue(us, "rollingUpdate", func(ru obj) string {
			return `{"MaxUnavailable":` + formatJSON(intOrStringValue(ru["maxUnavailable"])) + `,"MaxSurge":` + formatJSON(intOrStringValue(ru["maxSurge"])) + `}`
		}), "RollingUpdate", "OnDelete"))
	}
	if v, ok := iget(spec, "revisionHistoryLimit"); ok {
		errs = append(errs, nonNegativeValue(v, sp.child("revisionHistoryLimit"))...)
	}
	return errs
}
