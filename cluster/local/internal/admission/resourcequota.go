package admission

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/konverge/konverge/cluster/local/internal/jsonobj"
	"github.com/konverge/konverge/cluster/local/internal/usage"
)

// ResourceQuota refuses a create or update that would take a namespace's
// usage past the hard limit of one of its quotas, with the API server's
// message; a pod created under a quota of cpu or memory must say what each
// container asks of them. (Keeping each quota's status.used is the
// store's part: it counts as objects come and go.)
type ResourceQuota struct{}

// Name implements Plugin.
func (ResourceQuota) Name() string { return "ResourceQuota" }

// Validate implements Validator.
func (ResourceQuota) Validate(s Store, a *Attributes) error {
	obj, old := a.Object, a.Old
	ns := a.Namespace()
	if ns == "" || !a.Resource.Namespaced {
		return nil
	}
	quotas, used, err := s.Quotas(ns)
	if err != nil || len(quotas) == 0 {
		return err
	}
	gk := a.Kind()
	count := s.CountName(gk)
	for i, quota := range quotas {
		if !usage.Selects(quota, gk, obj) {
			continue
		}
		hard := peek(peek(quota, "spec"), "hard")
		delta := usage.Of(count, gk, obj)
		if old != nil && usage.Selects(quota, gk, old) {
			for n, v := range usage.Of(count, gk, old) {
				v.Neg()
				delta.Add(n, v)
			}
		}
		if gk == podGK && old == nil {
			if msg := podConstraints(obj, hard); msg != "" {
				return a.forbid(fmt.Sprintf("failed quota: %s: %s", metaString(quota, "name"), msg))
			}
		}
		var exceeded []string
		for n, d := range delta {
			h, tracked := hard[n]
			if !tracked || d.Sign() <= 0 {
				continue
			}
			total := used[i][n].DeepCopy()
			total.Add(d)
			if total.Cmp(jsonobj.Quantity(h)) > 0 {
				exceeded = append(exceeded, n)
			}
		}
		if len(exceeded) == 0 {
			continue
		}
		sort.Strings(exceeded)
		var req, use, lim []string
		for _, n := range exceeded {
			d, u := delta[n], used[i][n]
			req = append(req, n+"="+d.String())
			use = append(use, n+"="+u.String())
			h := jsonobj.Quantity(hard[n])
			lim = append(lim, n+"="+h.String())
		}
		return a.forbid(fmt.Sprintf("exceeded quota: %s, requested: %s, used: %s, limited: %s",
			metaString(quota, "name"), strings.Join(req, ","), strings.Join(use, ","), strings.Join(lim, ",")))
	}
	return nil
}

// podConstraints is the pod evaluator's requirement that every container
// asks for the cpu and memory a quota tracks.
func podConstraints(pod map[string]any, hard map[string]any) string {
	missing := map[string][]string{}
	spec := peek(pod, "spec")
	for _, field := range []string{"containers", "initContainers"} {
		for _, c := range objectList(spec[field]) {
			res := peek(c, "resources")
			for _, r := range []string{"cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory"} {
				if _, ok := hard[r]; !ok {
					continue
				}
				list, base := "requests", strings.TrimPrefix(r, "requests.")
				if b, ok := strings.CutPrefix(r, "limits."); ok {
					list, base = "limits", b
				}
				if _, ok := peek(res, list)[base]; !ok && !slices.Contains(missing[r], str(c, "name")) {
					missing[r] = append(missing[r], str(c, "name"))
				}
			}
		}
	}
	if len(missing) == 0 {
		return ""
	}
	var parts []string
	for _, r := range jsonobj.SortedKeys(missing) {
		names := missing[r]
		sort.Strings(names)
		parts = append(parts, fmt.Sprintf("%s for: %s", r, strings.Join(names, ",")))
	}
	return "must specify " + strings.Join(parts, "; ")
}
