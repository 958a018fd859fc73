package kinds

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/konverge/konverge/apimeta"
	"github.com/konverge/konverge/schema"
)

// Mapper tells which resources an API serves and resolves names to them.
// It implements cluster.Mapper.
//
// A Mapper is immutable and safe for concurrent use; With returns a new
// one.
type Mapper struct {
	// resources in discovery order.
	resources []apimeta.Resource
	schemas   *schema.Registry
	byGVK     map[schema.GVK]int
	// gvs are the group versions in discovery order, each with its
	// resources; groups holds the group order.
	gvs       []*gvIndex
	groups    []string
	preferred map[string]string
	// shortcuts in discovery order.
	shortcuts []shortcut
	// prio is the KindPriority of kubectl's discovery mapper.
	prio []gvPattern
}

// gvIndex is the resources of one group version, as one DefaultRESTMapper
// of kubectl's discovery RESTMapper holds them.
type gvIndex struct {
	group, version string
	// names maps plurals and singulars to resources.
	names map[string]int
	// kinds maps kinds, and kinds in lower case, to resources.
	kinds map[string]int
}

// shortcut is a short name of a resource.
type shortcut struct {
	group, short, plural string
}

// NewMapper returns a Mapper of the given resources, which must be in the
// order of discovery (groups by priority, the preferred version of each
// group first), as Builtin returns them; schemas gives Schema its answers
// and may be nil. A GVK given twice keeps its last definition.
func NewMapper(resources []apimeta.Resource, schemas *schema.Registry) *Mapper {
	m := &Mapper{schemas: schemas}
	m.index(cloneResources(resources))
	return m
}

// With returns a Mapper that also serves more, as an API server does after
// CustomResourceDefinitions are created. Resources of a GVK already
// served replace it. The groups of more that are new rank after all
// existing groups, ordered by name, and their versions by kube-aware
// version order (v1, v1beta2, v1beta1, v1alpha1, then others), as
// discovery orders the groups of CRDs; within a version, resources are
// ordered by plural. m is not changed.
func (m *Mapper) With(more ...apimeta.Resource) *Mapper {
	rs := cloneResources(m.resources)
	at := map[schema.GVK]int{}
	for i, r := range rs {
		at[r.GVK] = i
	}
	oldGV := map[[2]string]bool{}
	for _, gv := range m.gvs {
		oldGV[[2]string{gv.group, gv.version}] = true
	}
	var added []apimeta.Resource
	addedAt := map[schema.GVK]int{}
	for _, r := range more {
		r.ShortNames = slices.Clone(r.ShortNames)
		if i, ok := at[r.GVK]; ok {
			rs[i] = r
			continue
		}
		if i, ok := addedAt[r.GVK]; ok {
			added[i] = r
			continue
		}
		addedAt[r.GVK] = len(added)
		added = append(added, r)
	}
	// Order what is added: groups (existing ones first, in their order,
	// then new ones by name), versions (existing ones first, then new ones
	// by kube-aware order), plurals.
	groupRank := map[string]int{}
	for i, g := range m.groups {
		groupRank[g] = i
	}
	slices.SortStableFunc(added, func(a, b apimeta.Resource) int {
		ga, gb := a.GVK.Group, b.GVK.Group
		if ga != gb {
			ra, oka := groupRank[ga]
			rb, okb := groupRank[gb]
			switch {
			case oka && okb:
				return cmp.Compare(ra, rb)
			case oka:
				return -1
			case okb:
				return 1
			}
			return strings.Compare(ga, gb)
		}
		va, vb := a.GVK.Version, b.GVK.Version
		if va != vb {
			oa, ob := oldGV[[2]string{ga, va}], oldGV[[2]string{gb, vb}]
			switch {
			case oa && !ob:
				return -1
			case ob && !oa:
				return 1
			case !oa && !ob:
				return -compareKubeAwareVersions(va, vb)
			}
			return 0
		}
		return strings.Compare(a.Plural, b.Plural)
	})
	// Insert each added resource after the last resource of its group
	// version, or of its group, or at the end.
	for _, r := range added {
		pos := len(rs)
		lastGV, lastGroup := -1, -1
		for i, x := range rs {
			if x.GVK.Group == r.GVK.Group {
				lastGroup = i
				if x.GVK.Version == r.GVK.Version {
					lastGV = i
				}
			}
		}
		switch {
		case lastGV >= 0:
			pos = lastGV + 1
			for pos < len(rs) && rs[pos].GVK.Group == r.GVK.Group && rs[pos].GVK.Version == r.GVK.Version {
				pos++
			}
		case lastGroup >= 0:
			pos = lastGroup + 1
		}
		rs = slices.Insert(rs, pos, r)
	}
	n := &Mapper{schemas: m.schemas}
	n.index(rs)
	return n
}

// index builds the lookup tables of m from resources in discovery order.
func (m *Mapper) index(resources []apimeta.Resource) {
	// Keep the last definition of a GVK at the place of the first.
	first := map[schema.GVK]int{}
	for _, r := range resources {
		if i, ok := first[r.GVK]; ok {
			m.resources[i] = r
			continue
		}
		first[r.GVK] = len(m.resources)
		m.resources = append(m.resources, r)
	}
	m.byGVK = first
	m.preferred = map[string]string{}
	gvAt := map[[2]string]*gvIndex{}
	for i, r := range m.resources {
		g, v := r.GVK.Group, r.GVK.Version
		if _, ok := m.preferred[g]; !ok {
			m.preferred[g] = v
			m.groups = append(m.groups, g)
		}
		gv := gvAt[[2]string{g, v}]
		if gv == nil {
			gv = &gvIndex{group: g, version: v, names: map[string]int{}, kinds: map[string]int{}}
			gvAt[[2]string{g, v}] = gv
			m.gvs = append(m.gvs, gv)
		}
		// As DefaultRESTMapper.AddSpecific: later resources win a name
		// they share with earlier ones.
		for _, name := range []string{r.Singular, r.Plural} {
			if name != "" {
				gv.names[name] = i
			}
		}
		gv.kinds[strings.ToLower(r.GVK.Kind)] = i
		gv.kinds[r.GVK.Kind] = i
	}
	// Discovery lists groups, then the versions of each group: keep the
	// versions of a group together in the order they came.
	slices.SortStableFunc(m.gvs, func(a, b *gvIndex) int {
		return cmp.Compare(slices.Index(m.groups, a.group), slices.Index(m.groups, b.group))
	})
	m.prio = m.priorities()
	for _, gv := range m.gvs {
		for _, r := range m.resources {
			if r.GVK.Group == gv.group && r.GVK.Version == gv.version {
				for _, s := range r.ShortNames {
					m.shortcuts = append(m.shortcuts, shortcut{group: gv.group, short: s, plural: r.Plural})
				}
			}
		}
	}
}

// Resources returns every resource of m in the order of discovery. The
// slice is a copy.
func (m *Mapper) Resources() []apimeta.Resource { return cloneResources(m.resources) }

// ResourceFor returns how a kind is served, or a NotFound
// *apimeta.StatusError worded as kubectl words it: `no matches for kind
// "Foo" in version "example.com/v1"`.
func (m *Mapper) ResourceFor(gvk schema.GVK) (apimeta.Resource, error) {
	if i, ok := m.byGVK[gvk]; ok {
		r := m.resources[i]
		r.ShortNames = slices.Clone(r.ShortNames)
		return r, nil
	}
	var msg string
	if gvk.Version == "" {
		msg = fmt.Sprintf("no matches for kind %q in group %q", gvk.Kind, gvk.Group)
	} else {
		msg = fmt.Sprintf("no matches for kind %q in version %q", gvk.Kind, gvk.APIVersion())
	}
	return apimeta.Resource{}, &apimeta.StatusError{Code: 404, Reason: apimeta.ReasonNotFound, Message: msg, Group: gvk.Group, Kind: gvk.Kind}
}

// Schema returns the merge schema of a kind from the registry given to
// NewMapper; nil means none (JSON merge patch semantics).
func (m *Mapper) Schema(gvk schema.GVK) *schema.Type {
	return m.schemas.Lookup(gvk)
}

// gvr is a partly specified group, version and resource.
type gvr struct{ group, version, resource string }

// gvkArg is a partly specified group, version and kind.
type gvkArg struct{ group, version, kind string }

// Find resolves a name as kubectl resolves the resource argument of `kubectl
// get`: see the package documentation. A name that matches nothing is a
// NotFound *apimeta.StatusError worded as kubectl's: `the server doesn't
// have a resource type "foo"`, or `... "foo" in group "bar"` when the name
// is qualified.
func (m *Mapper) Find(name string) (apimeta.Resource, error) {
	// schema.ParseResourceArg
	var full *gvr
	if strings.Count(name, ".") >= 2 {
		s := strings.SplitN(name, ".", 3)
		full = &gvr{group: s[2], version: s[1], resource: s[0]}
	}
	gr := gvr{resource: name}
	if i := strings.Index(name, "."); i >= 0 {
		gr = gvr{group: name[i+1:], resource: name[:i]}
	}

	i, ok := -1, false
	if full != nil {
		i, ok = m.kindFor(*full)
	}
	if !ok {
		i, ok = m.kindFor(gr)
	}
	if ok {
		return m.resourceAt(i), nil
	}

	// schema.ParseKindArg: "Kind.version.group" or "Kind.group".
	gk := gvkArg{kind: name}
	if i := strings.Index(name, "."); i >= 0 {
		gk = gvkArg{group: name[i+1:], kind: name[:i]}
	}
	if full != nil {
		if i, ok := m.restMapping(gvkArg{group: full.group, version: full.version, kind: full.resource}); ok {
			return m.resourceAt(i), nil
		}
	}
	if i, ok := m.restMapping(gk); ok {
		return m.resourceAt(i), nil
	}
	msg := fmt.Sprintf("the server doesn't have a resource type %q", gr.resource)
	if gr.group != "" {
		msg = fmt.Sprintf("the server doesn't have a resource type %q in group %q", gr.resource, gr.group)
	}
	return apimeta.Resource{}, &apimeta.StatusError{Code: 404, Reason: apimeta.ReasonNotFound, Message: msg}
}

func (m *Mapper) resourceAt(i int) apimeta.Resource {
	r := m.resources[i]
	r.ShortNames = slices.Clone(r.ShortNames)
	return r
}

// kindFor is the shortcut expander's KindFor over the priority mapper's.
func (m *Mapper) kindFor(r gvr) (int, bool) {
	r = m.expandShortcut(r)
	return m.prioritize(m.kindsFor(r), nil)
}

// expandShortcut is client-go's shortcutExpander.expandResourceShortcut.
func (m *Mapper) expandShortcut(r gvr) gvr {
	// An exact plural or singular (case-sensitive) is not expanded.
	for _, gv := range m.gvs {
		if r.group != "" && r.group != gv.group {
			continue
		}
		if _, ok := gv.names[r.resource]; ok {
			return r
		}
	}
	for _, s := range m.shortcuts {
		if r.group != "" && r.group != s.group {
			continue
		}
		if r.resource == s.short {
			return gvr{group: s.group, resource: s.plural}
		}
	}
	if r.group == "" {
		return r
	}
	for _, s := range m.shortcuts {
		if strings.HasPrefix(s.group, r.group) && r.resource == s.short {
			return gvr{group: s.group, version: r.version, resource: s.plural}
		}
	}
	return r
}

// kindsFor is the union over group versions of DefaultRESTMapper.KindsFor,
// without duplicates, in discovery order.
func (m *Mapper) kindsFor(r gvr) []int {
	r.resource = strings.ToLower(r.resource)
	if r.resource == "" {
		return nil
	}
	var out []int
	add := func(i int) {
		if !slices.Contains(out, i) {
			out = append(out, i)
		}
	}
	for _, gv := range m.gvs {
		i, ok := gv.names[r.resource]
		switch {
		case r.group != "" && r.version != "":
			if ok && gv.group == r.group && gv.version == r.version {
				add(i)
			}
		case r.group != "":
			if gv.group == r.group {
				if ok {
					add(i)
				}
				continue
			}
			// No exact match in this group version: try the group as a
			// prefix ("autoscal" for autoscaling).
			if ok && strings.HasPrefix(gv.group, r.group) {
				add(i)
			}
		case r.version != "":
			if ok && gv.version == r.version {
				add(i)
			}
		default:
			if ok {
				add(i)
			}
		}
	}
	return out
}

// prioritize picks one of several matches as PriorityRESTMapper does:
// patterns of group and version ("" for any version) in priority order;
// the first that leaves one match decides. first lists patterns to try
// before the discovery ones.
func (m *Mapper) prioritize(matches []int, first []gvPattern) (int, bool) {
	switch len(matches) {
	case 0:
		return -1, false
	case 1:
		return matches[0], true
	}
	remaining := matches
	for _, p := range slices.Concat(first, m.prio) {
		var matched []int
		for _, i := range remaining {
			g := m.resources[i].GVK
			if g.Group == p.group && (p.version == "*" || g.Version == p.version) {
				matched = append(matched, i)
			}
		}
		switch len(matched) {
		case 0:
			continue
		case 1:
			return matched[0], true
		default:
			remaining = matched
		}
	}
	return -1, false
}

type gvPattern struct{ group, version string }

// priorities are the KindPriority of client-go's NewDiscoveryRESTMapper:
// core v1, then each group's preferred version and its other versions in
// order, then each group at any version.
func (m *Mapper) priorities() []gvPattern {
	ps := []gvPattern{{group: "", version: "v1"}}
	for _, g := range m.groups {
		ps = append(ps, gvPattern{group: g, version: m.preferred[g]})
		for _, gv := range m.gvs {
			if gv.group == g && gv.version != m.preferred[g] {
				ps = append(ps, gvPattern{group: g, version: gv.version})
			}
		}
	}
	for _, g := range m.groups {
		ps = append(ps, gvPattern{group: g, version: "*"})
	}
	return ps
}

// restMapping is the priority mapper's RESTMapping(GroupKind, version):
// the kind must match exactly (or in lower case) and the group exactly.
func (m *Mapper) restMapping(k gvkArg) (int, bool) {
	var matches []int
	for _, gv := range m.gvs {
		if gv.group != k.group {
			continue
		}
		if k.version != "" && gv.version != k.version {
			continue
		}
		if i, ok := gv.kinds[k.kind]; ok {
			matches = append(matches, i)
		}
	}
	var first []gvPattern
	if k.version != "" {
		first = []gvPattern{{group: k.group, version: k.version}}
	}
	return m.prioritize(matches, first)
}
