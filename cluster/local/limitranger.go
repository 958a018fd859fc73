package local

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/konverge/konverge/cluster"
)

// The LimitRanger admission plugin: Container defaults of the namespace's
// LimitRanges fill in the requests and limits a pod's containers leave
// out (recorded in the kubernetes.io/limit-ranger annotation), and their
// min, max and maxLimitRequestRatio bound containers, pods and claims.

const limitRangerAnnotation = "kubernetes.io/limit-ranger"

func (t *txn) limitRanges(ns string) ([]map[string]any, error) {
	return t.objectsIn(limitRangeGK, ns)
}

// limitRangerMutate fills in a pod's container resources from the
// defaults of every Container limit.
func (t *txn) limitRangerMutate(pod map[string]any) error {
	lrs, err := t.limitRanges(metaString(pod, "namespace"))
	if err != nil || len(lrs) == 0 {
		return err
	}
	spec := child(pod, "spec")
	for _, lr := range lrs {
		defLimits, defRequests := map[string]any{}, map[string]any{}
		for _, item := range objectList(child(lr, "spec")["limits"]) {
			if str(item, "type") != "Container" {
				continue
			}
			for k, v := range child(item, "default") {
				defLimits[k] = v
			}
			for k, v := range child(item, "defaultRequest") {
				defRequests[k] = v
			}
		}
		var notes []string
		for _, c := range objectList(spec["containers"]) {
			notes = mergeContainerResources(c, defLimits, defRequests, "container", notes)
		}
		for _, c := range objectList(spec["initContainers"]) {
			notes = mergeContainerResources(c, defLimits, defRequests, "init container", notes)
		}
		if len(notes) > 0 {
			child(metadata(pod), "annotations")[limitRangerAnnotation] = "LimitRanger plugin set: " + strings.Join(notes, "; ")
		}
	}
	return nil
}

func mergeContainerResources(c, defLimits, defRequests map[string]any, what string, notes []string) []string {
	res := child(c, "resources")
	var setLimits, setRequests []string
	if len(defLimits) > 0 {
		limits := child(res, "limits")
		for k, v := range defLimits {
			if _, ok := limits[k]; !ok {
				limits[k] = v
				setLimits = append(setLimits, k)
			}
		}
	}
	if len(defRequests) > 0 {
		requests := child(res, "requests")
		for k, v := range defRequests {
			if _, ok := requests[k]; !ok {
				requests[k] = v
				setRequests = append(setRequests, k)
			}
		}
	}
	name := str(c, "name")
	if len(setRequests) > 0 {
		sort.Strings(setRequests)
		notes = append(notes, strings.Join(setRequests, ", ")+fmt.Sprintf(" request for %s %s", what, name))
	}
	if len(setLimits) > 0 {
		sort.Strings(setLimits)
		notes = append(notes, strings.Join(setLimits, ", ")+fmt.Sprintf(" limit for %s %s", what, name))
	}
	return notes
}

// limitRangerValidate checks a pod or a claim against every limit of the
// namespace's LimitRanges.
func (t *txn) limitRangerValidate(res cluster.Resource, obj map[string]any, name string) error {
	lrs, err := t.limitRanges(metaString(obj, "namespace"))
	if err != nil || len(lrs) == 0 {
		return err
	}
	var errs []string
	for _, lr := range lrs {
		for _, item := range objectList(child(lr, "spec")["limits"]) {
			typ := str(item, "type")
			switch {
			case gkOf(res) == pvcGK && typ == "PersistentVolumeClaim":
				requests := quantities(child(child(child(obj, "spec"), "resources"), "requests"))
				for _, k := range sortedKeys(child(item, "min")) {
					errs = appendErr(errs, minConstraint(typ, k, quantityOf(child(item, "min")[k]), requests, nil))
				}
				for _, k := range sortedKeys(child(item, "max")) {
					errs = appendErr(errs, maxRequestConstraint(typ, k, quantityOf(child(item, "max")[k]), requests))
				}
			case gkOf(res) == podGK && typ == "Container":
				spec := child(obj, "spec")
				for _, field := range []string{"containers", "initContainers"} {
					for _, c := range objectList(spec[field]) {
						r := child(c, "resources")
						errs = checkLimits(errs, item, typ, quantities(child(r, "requests")), quantities(child(r, "limits")))
					}
				}
			case gkOf(res) == podGK && typ == "Pod":
				requests, limits := podResources(child(obj, "spec"))
				errs = checkLimits(errs, item, typ, requests, limits)
			}
		}
	}
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return admissionForbidden(res, name, errs[0])
	}
	return admissionForbidden(res, name, "["+strings.Join(errs, ", ")+"]")
}

func checkLimits(errs []string, item map[string]any, typ string, requests, limits map[string]resource.Quantity) []string {
	for _, k := range sortedKeys(child(item, "min")) {
		errs = appendErr(errs, minConstraint(typ, k, quantityOf(child(item, "min")[k]), requests, limits))
	}
	for _, k := range sortedKeys(child(item, "max")) {
		errs = appendErr(errs, maxConstraint(typ, k, quantityOf(child(item, "max")[k]), requests, limits))
	}
	for _, k := range sortedKeys(child(item, "maxLimitRequestRatio")) {
		errs = appendErr(errs, ratioConstraint(typ, k, quantityOf(child(item, "maxLimitRequestRatio")[k]), requests, limits))
	}
	return errs
}

func appendErr(errs []string, msg string) []string {
	if msg != "" {
		errs = append(errs, msg)
	}
	return errs
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// quantityOf parses a stored quantity; the store holds only valid ones.
func quantityOf(v any) resource.Quantity {
	s, _ := v.(string)
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return resource.Quantity{}
	}
	return q
}

func quantities(m map[string]any) map[string]resource.Quantity {
	out := make(map[string]resource.Quantity, len(m))
	for k, v := range m {
		out[k] = quantityOf(v)
	}
	return out
}

// enforcedValues compares in milli-units unless a value is too large.
func enforcedValues(req, lim, enforced resource.Quantity) (int64, int64, int64) {
	r, l, e := req.Value(), lim.Value(), enforced.Value()
	if r <= resource.MaxMilliValue && l <= resource.MaxMilliValue && e <= resource.MaxMilliValue {
		r, l, e = req.MilliValue(), lim.MilliValue(), enforced.MilliValue()
	}
	return r, l, e
}

func minConstraint(typ, name string, enforced resource.Quantity, requests, limits map[string]resource.Quantity) string {
	req, reqOK := requests[name]
	lim, limOK := limits[name]
	r, l, e := enforcedValues(req, lim, enforced)
	switch {
	case !reqOK:
		return fmt.Sprintf("minimum %s usage per %s is %s.  No request is specified", name, typ, enforced.String())
	case r < e:
		return fmt.Sprintf("minimum %s usage per %s is %s, but request is %s", name, typ, enforced.String(), req.String())
	case limOK && l < e:
		return fmt.Sprintf("minimum %s usage per %s is %s, but limit is %s", name, typ, enforced.String(), lim.String())
	}
	return ""
}

func maxRequestConstraint(typ, name string, enforced resource.Quantity, requests map[string]resource.Quantity) string {
	req, ok := requests[name]
	r, _, e := enforcedValues(req, resource.Quantity{}, enforced)
	switch {
	case !ok:
		return fmt.Sprintf("maximum %s usage per %s is %s.  No request is specified", name, typ, enforced.String())
	case r > e:
		return fmt.Sprintf("maximum %s usage per %s is %s, but request is %s", name, typ, enforced.String(), req.String())
	}
	return ""
}

func maxConstraint(typ, name string, enforced resource.Quantity, requests, limits map[string]resource.Quantity) string {
	req, reqOK := requests[name]
	lim, limOK := limits[name]
	r, l, e := enforcedValues(req, lim, enforced)
	switch {
	case !limOK:
		return fmt.Sprintf("maximum %s usage per %s is %s.  No limit is specified", name, typ, enforced.String())
	case l > e:
		return fmt.Sprintf("maximum %s usage per %s is %s, but limit is %s", name, typ, enforced.String(), lim.String())
	case reqOK && r > e:
		return fmt.Sprintf("maximum %s usage per %s is %s, but request is %s", name, typ, enforced.String(), req.String())
	}
	return ""
}

func ratioConstraint(typ, name string, enforced resource.Quantity, requests, limits map[string]resource.Quantity) string {
	req, reqOK := requests[name]
	lim, limOK := limits[name]
	r, l, _ := enforcedValues(req, lim, enforced)
	if !reqOK || r == 0 {
		return fmt.Sprintf("%s max limit to request ratio per %s is %s, but no request is specified or request is 0", name, typ, enforced.String())
	}
	if !limOK || l == 0 {
		return fmt.Sprintf("%s max limit to request ratio per %s is %s, but no limit is specified or limit is 0", name, typ, enforced.String())
	}
	observed := float64(l) / float64(r)
	display := observed
	max := float64(enforced.Value())
	if enforced.Value() <= resource.MaxMilliValue {
		observed *= 1000
		max = float64(enforced.MilliValue())
	}
	if observed > max {
		return fmt.Sprintf("%s max limit to request ratio per %s is %s, but provided ratio is %f", name, typ, enforced.String(), display)
	}
	return ""
}

// podResources sums a pod's container requests and limits as the
// scheduler sees them: init containers count by their maximum, sidecars
// (restartable init containers) add up; pod-level resources override cpu
// and memory.
func podResources(spec map[string]any) (requests, limits map[string]resource.Quantity) {
	sum := func(field string) map[string]resource.Quantity {
		total := map[string]resource.Quantity{}
		for _, c := range objectList(spec["containers"]) {
			addQuantities(total, quantities(peek(peek(c, "resources"), field)))
		}
		sidecars, inits := map[string]resource.Quantity{}, map[string]resource.Quantity{}
		for _, c := range objectList(spec["initContainers"]) {
			own := quantities(peek(peek(c, "resources"), field))
			if str(c, "restartPolicy") == "Always" {
				addQuantities(total, own)
				addQuantities(sidecars, own)
				own = copyQuantities(sidecars)
			} else {
				addQuantities(own, sidecars)
			}
			maxQuantities(inits, own)
		}
		maxQuantities(total, inits)
		if pl := peek(peek(spec, "resources"), field); pl != nil {
			for _, k := range []string{"cpu", "memory"} {
				if v, ok := pl[k]; ok {
					total[k] = quantityOf(v)
				}
			}
		}
		return total
	}
	return sum("requests"), sum("limits")
}

func addQuantities(to, from map[string]resource.Quantity) {
	for k, q := range from {
		if v, ok := to[k]; ok {
			v.Add(q)
			to[k] = v
		} else {
			to[k] = q.DeepCopy()
		}
	}
}

func maxQuantities(to, from map[string]resource.Quantity) {
	for k, q := range from {
		if v, ok := to[k]; !ok || q.Cmp(v) > 0 {
			to[k] = q.DeepCopy()
		}
	}
}

func copyQuantities(m map[string]resource.Quantity) map[string]resource.Quantity {
	out := make(map[string]resource.Quantity, len(m))
	for k, q := range m {
		out[k] = q.DeepCopy()
	}
	return out
}
