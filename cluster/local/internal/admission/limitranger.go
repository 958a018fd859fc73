package admission

import (
	"fmt"
	"maps"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/konverge/konverge/cluster/local/internal/jsonobj"
	"github.com/konverge/konverge/cluster/local/internal/podres"
)

// LimitRanger applies the namespace's LimitRanges to what is created in
// it. Mutating, it fills in what a pod's containers leave out of their
// requests and limits from the Container items' defaultRequest and
// default, and says so in the kubernetes.io/limit-ranger annotation.
// Validating, it holds every container, every pod (its effective totals)
// and every claim to the min, max and maxLimitRequestRatio of the items of
// its type, refusing with every bound it breaks.
type LimitRanger struct{}

// Name implements Plugin.
func (LimitRanger) Name() string { return "LimitRanger" }

const limitRangerAnnotation = "kubernetes.io/limit-ranger"

// podContainerLists are a pod's lists of containers, in the order the
// plugin visits them, and how its annotation names their containers.
var podContainerLists = []struct{ field, noun string }{
	{"containers", "container"},
	{"initContainers", "init container"},
}

// Mutate implements Mutator.
func (LimitRanger) Mutate(s Store, a *Attributes) error {
	if a.Operation != Create || a.Kind() != podGK {
		return nil
	}
	ranges, err := s.List(limitRangeGK, a.Namespace())
	if err != nil || len(ranges) == 0 {
		return err
	}
	spec := child(a.Object, "spec")
	for _, lr := range ranges {
		limits, requests := containerDefaults(lr)
		var said []string
		for _, l := range podContainerLists {
			for _, c := range objectList(spec[l.field]) {
				resources := child(c, "resources")
				for _, fill := range []struct {
					list, noun string
					from       map[string]any
				}{{"requests", "request", requests}, {"limits", "limit", limits}} {
					if set := fillIn(resources, fill.list, fill.from); len(set) > 0 {
						said = append(said, fmt.Sprintf("%s %s for %s %s", strings.Join(set, ", "), fill.noun, l.noun, str(c, "name")))
					}
				}
			}
		}
		// Each LimitRange that fills in something rewrites the
		// annotation: the last one's account stands.
		if len(said) > 0 {
			child(jsonobj.Metadata(a.Object), "annotations")[limitRangerAnnotation] = "LimitRanger plugin set: " + strings.Join(said, "; ")
		}
	}
	return nil
}

// containerDefaults gathers the default limits and requests of a
// LimitRange's Container items (a later item's value for a resource wins).
func containerDefaults(lr map[string]any) (limits, requests map[string]any) {
	limits, requests = map[string]any{}, map[string]any{}
	for _, item := range objectList(peek(lr, "spec")["limits"]) {
		if str(item, "type") != "Container" {
			continue
		}
		maps.Copy(limits, peek(item, "default"))
		maps.Copy(requests, peek(item, "defaultRequest"))
	}
	return limits, requests
}

// fillIn copies into resources[list] (made when there are defaults) each
// default it has no value for, and returns the names it copied, sorted.
func fillIn(resources map[string]any, list string, defaults map[string]any) []string {
	if len(defaults) == 0 {
		return nil
	}
	have := child(resources, list)
	var set []string
	for _, name := range jsonobj.SortedKeys(defaults) {
		if _, ok := have[name]; !ok {
			have[name] = defaults[name]
			set = append(set, name)
		}
	}
	return set
}

// Validate implements Validator.
func (LimitRanger) Validate(s Store, a *Attributes) error {
	gk := a.Kind()
	if a.Operation != Create || (gk != podGK && gk != pvcGK) {
		return nil
	}
	ranges, err := s.List(limitRangeGK, a.Namespace())
	if err != nil || len(ranges) == 0 {
		return err
	}
	var broken []string
	for _, lr := range ranges {
		for _, item := range objectList(peek(lr, "spec")["limits"]) {
			typ := str(item, "type")
			for _, b := range boundedBy(gk, typ, a.Object) {
				broken = append(broken, b.breaks(typ, item)...)
			}
		}
	}
	switch len(broken) {
	case 0:
		return nil
	case 1:
		return a.forbid(broken[0])
	}
	return a.forbid("[" + strings.Join(broken, ", ") + "]")
}

// bounded is one thing a LimitRange item bounds: a container, a pod or a
// claim, with what it requests and limits.
type bounded struct {
	requests, limits podres.List
	// claim: only requests count, max bounds them, and there is no ratio.
	claim bool
}

// boundedBy lists what of obj (of kind gk) an item of type typ bounds.
func boundedBy(gk jsonobj.GroupKind, typ string, obj map[string]any) []bounded {
	spec := child(obj, "spec")
	switch {
	case gk == pvcGK && typ == "PersistentVolumeClaim":
		asked := child(child(spec, "resources"), "requests")
		return []bounded{{requests: jsonobj.Quantities(asked), claim: true}}
	case gk == podGK && typ == "Pod":
		requests, limits := podres.Totals(spec)
		return []bounded{{requests: requests, limits: limits}}
	case gk == podGK && typ == "Container":
		var out []bounded
		for _, field := range []string{"containers", "initContainers"} {
			for _, c := range objectList(spec[field]) {
				resources := child(c, "resources")
				out = append(out, bounded{
					requests: jsonobj.Quantities(child(resources, "requests")),
					limits:   jsonobj.Quantities(child(resources, "limits")),
				})
			}
		}
		return out
	}
	return nil
}

// breaks lists the bounds of item that b breaks: min, then max, then
// maxLimitRequestRatio, each by resource name.
func (b bounded) breaks(typ string, item map[string]any) []string {
	var out []string
	check := func(field string, rule func(what string, bound resource.Quantity) string) {
		bounds := peek(item, field)
		for _, name := range jsonobj.SortedKeys(bounds) {
			if msg := rule(name, jsonobj.Quantity(bounds[name])); msg != "" {
				out = append(out, msg)
			}
		}
	}
	check("min", func(name string, min resource.Quantity) string {
		req, hasReq := b.requests[name]
		lim, hasLim := b.limits[name]
		v := sameUnit(req, lim, min)
		say := fmt.Sprintf("minimum %s usage per %s is %s", name, typ, min.String())
		switch {
		case !hasReq:
			return say + ".  No request is specified"
		case v[0] < v[2]:
			return say + ", but request is " + req.String()
		case hasLim && v[1] < v[2]:
			return say + ", but limit is " + lim.String()
		}
		return ""
	})
	check("max", func(name string, max resource.Quantity) string {
		req, hasReq := b.requests[name]
		lim, hasLim := b.limits[name]
		v := sameUnit(req, lim, max)
		say := fmt.Sprintf("maximum %s usage per %s is %s", name, typ, max.String())
		if b.claim {
			// A claim has no limit: its request is what max bounds.
			switch {
			case !hasReq:
				return say + ".  No request is specified"
			case v[0] > v[2]:
				return say + ", but request is " + req.String()
			}
			return ""
		}
		switch {
		case !hasLim:
			return say + ".  No limit is specified"
		case v[1] > v[2]:
			return say + ", but limit is " + lim.String()
		case hasReq && v[0] > v[2]:
			return say + ", but request is " + req.String()
		}
		return ""
	})
	if b.claim {
		return out
	}
	check("maxLimitRequestRatio", func(name string, ratio resource.Quantity) string {
		req, hasReq := b.requests[name]
		lim, hasLim := b.limits[name]
		v := sameUnit(req, lim, ratio)
		say := fmt.Sprintf("%s max limit to request ratio per %s is %s", name, typ, ratio.String())
		if !hasReq || v[0] == 0 {
			return say + ", but no request is specified or request is 0"
		}
		if !hasLim || v[1] == 0 {
			return say + ", but no limit is specified or limit is 0"
		}
		got := float64(v[1]) / float64(v[0])
		// The ratio compares in thousandths where it can.
		allowed, scaled := float64(ratio.Value()), got
		if ratio.Value() <= resource.MaxMilliValue {
			allowed, scaled = float64(ratio.MilliValue()), got*1000
		}
		if scaled > allowed {
			return say + fmt.Sprintf(", but provided ratio is %f", got)
		}
		return ""
	})
	return out
}

// sameUnit gives the quantities as integers of one unit, so that they
// compare: thousandths when every one of them fits in them, else whole
// units.
func sameUnit(qs ...resource.Quantity) []int64 {
	milli := true
	for _, q := range qs {
		milli = milli && q.Value() <= resource.MaxMilliValue
	}
	out := make([]int64, len(qs))
	for i, q := range qs {
		if milli {
			out[i] = q.MilliValue()
		} else {
			out[i] = q.Value()
		}
	}
	return out
}
