package scheduler

import (
	"slices"
	"strings"

	"github.com/konverge/konverge/nodefit"
	"github.com/konverge/konverge/selector"
)

// incoming is the pod being scheduled, with what the filters need of it
// worked out once.
type incoming struct {
	c            *Cluster
	p            *pod
	nodeName     string
	nodeSelector map[string]string
	required     []any // nodeSelectorTerms; nil: any node
	hasRequired  bool
	preferred    []map[string]any
	tolerations  []map[string]any
	affinity     []term
	antiAffinity []term
	spread       []spreadConstraint
	// defaultSpread: the pod declares no constraint (the system
	// defaults score it).
	defaultSpread bool
	// onlyNodes are the only nodes the pod's node affinity names (nil:
	// no such narrowing).
	onlyNodes map[string]bool

	// volumes are the pod's claims as VolumeBinding's PreFilter found
	// them (nil: no claims).
	volumes *podVolumes

	// Worked out once per Schedule, for the cluster as it is.
	spreadCounts []map[string]int64
	podAffinity  *podAffinityState
}

// term is a pod (anti-)affinity term.
type term struct {
	sel         selector.Labels
	namespaces  map[string]bool // nil: every namespace
	nsSelector  *selector.Labels
	topologyKey string
}

// weightedTerm is a preferred term with its weight.
type weightedTerm struct {
	term
	weight int64
}

// newTerm reads a pod (anti-)affinity term of a pod of ownNamespace: it
// looks in the namespaces it lists and those its namespaceSelector
// selects; with neither, in ownNamespace; an empty namespaceSelector
// selects every namespace.
func newTerm(t map[string]any, ownNamespace string) term {
	tm := term{topologyKey: str(t, "topologyKey")}
	ls, _ := t["labelSelector"].(map[string]any)
	sel, err := selector.FromLabelSelector(ls)
	if ls == nil || err != nil {
		// No labelSelector selects no pod.
		sel = selector.Nothing()
	}
	tm.sel = sel
	nss := listOfStrings(t, "namespaces")
	nsSel, hasNsSel := t["namespaceSelector"].(map[string]any)
	switch {
	case hasNsSel && len(nsSel) == 0:
		// {} selects every namespace.
	default:
		tm.namespaces = map[string]bool{}
		for _, ns := range nss {
			tm.namespaces[ns] = true
		}
		if hasNsSel {
			s, err := selector.FromLabelSelector(nsSel)
			if err != nil {
				s = selector.Nothing()
			}
			tm.nsSelector = &s
		} else if len(nss) == 0 {
			tm.namespaces[ownNamespace] = true
		}
	}
	return tm
}

func newWeightedTerms(l []map[string]any, ownNamespace string) []weightedTerm {
	var out []weightedTerm
	for _, w := range l {
		t, _ := w["podAffinityTerm"].(map[string]any)
		weight, _ := w["weight"].(int64)
		out = append(out, weightedTerm{term: newTerm(t, ownNamespace), weight: weight})
	}
	return out
}

// matches reports whether the term selects pod p; nsLabels gives the
// labels of a namespace (for a namespaceSelector).
func (t term) matches(p *pod, nsLabels func(string) map[string]string) bool {
	if t.namespaces != nil && !t.namespaces[p.namespace] {
		if t.nsSelector == nil || nsLabels == nil || !t.nsSelector.Matches(nsLabels(p.namespace)) {
			return false
		}
	}
	return t.sel.Matches(p.labels)
}

type spreadConstraint struct {
	maxSkew      int64
	topologyKey  string
	hard         bool
	sel          selector.Labels
	extra        selector.Labels // from matchLabelKeys
	minDomains   int64
	honorTaints  bool
	ignoreAffine bool
	// owner, for the default constraints of a pod that has none, is the
	// uid of its controller: they select the pods of the same owner.
	owner string
	// services, for the default constraints, are the labels the selectors
	// of the Services that select the pod require together (nil: none):
	// they narrow what the default constraints count, to the pods of the
	// owner (if any) that carry them all.
	services map[string]string
	// ownerSel, for the default constraints, is the selector of the
	// pod's controller (nil: none, or owner counts by uid).
	ownerSel *selector.Labels
	// tally keeps the counts of a default constraint with services or
	// ownerSel.
	tally *tally
}

// system reports a default constraint (of a pod without its own).
func (sc spreadConstraint) system() bool {
	return sc.owner != "" || sc.services != nil || sc.ownerSel != nil
}

// ownerOnly reports a default constraint that counts the pods of an
// owner, whatever their labels: the cluster keeps those counts.
func (sc spreadConstraint) ownerOnly() bool { return sc.owner != "" && sc.services == nil }

func (sc spreadConstraint) matches(labels map[string]string) bool {
	return sc.sel.Matches(labels) && sc.extra.Matches(labels)
}

// counts reports whether pod p counts for the constraint of a pod of
// namespace ns: not terminating, of ns, selected (an empty selector
// counts no pod, as kube-scheduler's).
func (sc spreadConstraint) counts(p *pod, ns string) bool {
	if p.deleting || p.namespace != ns {
		return false
	}
	if sc.system() {
		if sc.owner != "" && p.owner != sc.owner {
			return false
		}
		if sc.ownerSel != nil && !sc.ownerSel.Matches(p.labels) {
			return false
		}
		return hasLabels(p.labels, sc.services)
	}
	if sc.sel.Empty() && sc.extra.Empty() {
		return false
	}
	return sc.matches(p.labels)
}

// defaultSpread are the constraints kube-scheduler gives a pod that
// declares none (its system defaults): hostname with maxSkew 3 and zone
// with maxSkew 5, both ScheduleAnyway, over the pods its default selector
// selects: those that carry every label the selectors of the Services
// selecting it require (services) and, for a pod that a ReplicaSet,
// ReplicationController or StatefulSet controls, that its selector
// selects (ownerSel), or, when the controller cannot be read, that have
// the same owner. A pod with none of these is not spread.
func defaultSpread(owner string, ownerSel *selector.Labels, services map[string]string) []spreadConstraint {
	if len(services) == 0 {
		services = nil
	}
	if owner == "" && ownerSel == nil && services == nil {
		return nil
	}
	return []spreadConstraint{
		{maxSkew: 3, topologyKey: labelHostname, owner: owner, ownerSel: ownerSel, services: services},
		{maxSkew: 5, topologyKey: labelZone, owner: owner, ownerSel: ownerSel, services: services},
	}
}

// serviceLabels are the labels that the selectors of the Services of
// namespace ns that select a pod of these labels require, merged (they
// cannot conflict: each matches the pod). A Service without a selector
// selects no pod; one with an empty selector selects every pod and
// requires nothing. nil: no Service requires a label.
func (c *Cluster) serviceLabels(ns string, labels map[string]string) map[string]string {
	if c.services == nil {
		return nil
	}
	var out map[string]string
	for _, svc := range c.services(ns) {
		spec, _ := svc["spec"].(map[string]any)
		raw, ok := spec["selector"].(map[string]any)
		if !ok {
			continue
		}
		sel := make(map[string]string, len(raw))
		for k, v := range raw {
			s, _ := v.(string)
			sel[k] = s
		}
		if !hasLabels(labels, sel) {
			continue
		}
		for k, v := range sel {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	return out
}

// hasLabels reports whether labels carry every key and value of want.
func hasLabels(labels, want map[string]string) bool {
	for k, v := range want {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

const (
	labelHostname = "kubernetes.io/hostname"
	labelZone     = "topology.kubernetes.io/zone"
)

func newIncoming(c *Cluster, p *pod, spec map[string]any) *incoming {
	in := &incoming{c: c, p: p, nodeName: str(spec, "nodeName"), nodeSelector: stringMap(spec, "nodeSelector")}
	if req, ok := mapAt(spec, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution"); ok {
		in.hasRequired = true
		in.required = anyList(req["nodeSelectorTerms"])
	}
	in.preferred = listAt(spec, "affinity", "nodeAffinity", "preferredDuringSchedulingIgnoredDuringExecution")
	in.tolerations = list(spec, "tolerations")
	in.affinity = p.affinity
	in.antiAffinity = p.antiAffinity
	for _, sc := range list(spec, "topologySpreadConstraints") {
		ls, _ := sc["labelSelector"].(map[string]any)
		sel, err := selector.FromLabelSelector(ls)
		if err != nil {
			sel = selector.Nothing()
		}
		extraSel := selector.Everything()
		if keys := listOfStrings(sc, "matchLabelKeys"); len(keys) > 0 {
			// matchLabelKeys add the incoming pod's values to the selector.
			var extra []string
			for _, k := range keys {
				if v, ok := p.labels[k]; ok {
					extra = append(extra, k+"="+v)
				}
			}
			if len(extra) > 0 && ls != nil {
				if more, err := selector.ParseLabels(strings.Join(extra, ",")); err == nil {
					extraSel = more
				}
			}
		}
		maxSkew, _ := sc["maxSkew"].(int64)
		minDomains, _ := sc["minDomains"].(int64)
		in.spread = append(in.spread, spreadConstraint{
			maxSkew:      maxSkew,
			topologyKey:  str(sc, "topologyKey"),
			hard:         str(sc, "whenUnsatisfiable") != "ScheduleAnyway",
			sel:          sel,
			extra:        extraSel,
			minDomains:   minDomains,
			honorTaints:  str(sc, "nodeTaintsPolicy") == "Honor",
			ignoreAffine: str(sc, "nodeAffinityPolicy") == "Ignore",
		})
	}
	in.defaultSpread = len(in.spread) == 0
	in.onlyNodes = nodeNames(in.required)
	return in
}

// nodeNames is the set of nodes that required node selector terms name
// (metadata.name In), when every term names some: NodeAffinity's
// PreFilter looks at those nodes only. nil: the terms do not narrow.
func nodeNames(terms []any) map[string]bool {
	var out map[string]bool
	for _, t := range terms {
		tm, _ := t.(map[string]any)
		var names map[string]bool
		for _, f := range list(tm, "matchFields") {
			if str(f, "key") != "metadata.name" || str(f, "operator") != "In" {
				continue
			}
			set := map[string]bool{}
			for _, v := range listOfStrings(f, "values") {
				if names == nil || names[v] {
					set[v] = true
				}
			}
			names = set
		}
		if names == nil {
			return nil
		}
		if out == nil {
			out = map[string]bool{}
		}
		for n := range names {
			out[n] = true
		}
	}
	if len(out) == 0 {
		// No name at all (the names conflict): the filters decide.
		return nil
	}
	return out
}

// filter runs the filters on n in kube-scheduler's order and returns the
// first rejection (nil: the pod fits).
func (in *incoming) filter(n *node) *status {
	return in.filterWithout(n, nil)
}

// filterWithout is filter with the pods of gone taken off n (for
// preemption).
func (in *incoming) filterWithout(n *node, gone map[string]bool) *status {
	if in.nodeName != "" && in.nodeName != n.name {
		return &status{reasons: []string{ReasonNodeName}}
	}
	if n.unschedulable && !tolerated(in.tolerations, map[string]any{"key": UnschedulableTaint, "effect": "NoSchedule"}) {
		return &status{reasons: []string{ReasonUnschedulable}}
	}
	for _, t := range n.taints {
		if e := str(t, "effect"); (e == "NoSchedule" || e == "NoExecute") && !tolerated(in.tolerations, t) {
			return &status{reasons: []string{ReasonTaints}}
		}
	}
	if !in.nodeAffine(n) {
		return &status{reasons: []string{ReasonNodeAffinity}}
	}
	if st := in.fitsPorts(n, gone); st != nil {
		return st
	}
	if st := in.fitsResources(n, gone); st != nil {
		return st
	}
	if st := in.fitsVolumes(n); st != nil {
		return st
	}
	if st := in.fitsSpread(n, gone); st != nil {
		return st
	}
	return in.fitsPodAffinity(n, gone)
}

func (in *incoming) nodeAffine(n *node) bool {
	for k, v := range in.nodeSelector {
		if got, ok := n.labels[k]; !ok || got != v {
			return false
		}
	}
	if !in.hasRequired {
		return true
	}
	for _, t := range in.required {
		tm, _ := t.(map[string]any)
		if nodefit.TermMatches(tm, n.labels, n.name) {
			return true
		}
	}
	return false
}

func (in *incoming) fitsPorts(n *node, gone map[string]bool) *status {
	if len(in.p.ports) == 0 {
		return nil
	}
	used := n.ports
	if len(gone) > 0 {
		used = map[hostPort]int{}
		for k, p := range n.pods {
			if gone[k] {
				continue
			}
			for _, hp := range p.ports {
				used[hp]++
			}
		}
	}
	for _, want := range in.p.ports {
		for hp := range used {
			if hp.port != want.port || hp.protocol != want.protocol {
				continue
			}
			if hp.ip == want.ip || hp.ip == "0.0.0.0" || want.ip == "0.0.0.0" {
				return &status{reasons: []string{ReasonNodePorts}, resolvable: true}
			}
		}
	}
	return nil
}

func (in *incoming) fitsResources(n *node, gone map[string]bool) *status {
	requested, count := n.requested, int64(len(n.pods))
	if len(gone) > 0 {
		requested = Resources{}
		count = 0
		for k, p := range n.pods {
			if !gone[k] {
				requested.Add(p.req)
				count++
			}
		}
	}
	var reasons []string
	// Preemption cannot help a pod that asks for more than the node has
	// at all (kube-scheduler's UnschedulableAndUnresolvable).
	resolvable := true
	if count+1 > n.allowedPods {
		reasons = append(reasons, ReasonTooManyPods)
	}
	check := func(name string, want, alloc, used int64) {
		if want > 0 && want > alloc-used {
			reasons = append(reasons, "Insufficient "+name)
			if want > alloc {
				resolvable = false
			}
		}
	}
	r := in.p.req
	check("cpu", r.MilliCPU, n.alloc.MilliCPU, requested.MilliCPU)
	check("memory", r.Memory, n.alloc.Memory, requested.Memory)
	check("ephemeral-storage", r.EphemeralStorage, n.alloc.EphemeralStorage, requested.EphemeralStorage)
	for _, name := range sortedKeys(r.Scalar) {
		check(name, r.Scalar[name], n.alloc.Scalar[name], requested.Scalar[name])
	}
	if len(reasons) == 0 {
		return nil
	}
	return &status{reasons: reasons, resolvable: resolvable}
}

// fitsSpread checks the hard topology spread constraints.
func (in *incoming) fitsSpread(n *node, gone map[string]bool) *status {
	for i, sc := range in.spread {
		if !sc.hard {
			continue
		}
		domain, ok := n.labels[sc.topologyKey]
		if !ok {
			return &status{reasons: []string{ReasonSpreadLabel}}
		}
		var counts map[string]int64
		if gone == nil {
			if in.spreadCounts == nil {
				in.spreadCounts = make([]map[string]int64, len(in.spread))
			}
			if in.spreadCounts[i] == nil {
				in.spreadCounts[i] = in.countSpread(sc, nil)
			}
			counts = in.spreadCounts[i]
		} else {
			counts = in.countSpread(sc, gone)
		}
		minMatch := int64(-1)
		for _, v := range counts {
			if minMatch < 0 || v < minMatch {
				minMatch = v
			}
		}
		if minMatch < 0 || int64(len(counts)) < sc.minDomains {
			minMatch = 0
		}
		self := int64(0)
		if sc.matches(in.p.labels) {
			self = 1
		}
		if counts[domain]+self-minMatch > sc.maxSkew {
			return &status{reasons: []string{ReasonSpread}, resolvable: true}
		}
	}
	return nil
}

// countSpread counts the pods a constraint selects in each domain of the
// nodes it considers (their node affinity and, when asked, taints).
func (in *incoming) countSpread(sc spreadConstraint, gone map[string]bool) map[string]int64 {
	counts := map[string]int64{}
	for _, m := range in.c.nodes {
		d, ok := m.labels[sc.topologyKey]
		if !ok {
			continue
		}
		if !sc.ignoreAffine && !in.nodeAffine(m) {
			continue
		}
		if sc.honorTaints && in.untoleratedTaint(m) {
			continue
		}
		if _, seen := counts[d]; !seen {
			counts[d] = 0
		}
		for k, p := range m.pods {
			if gone[k] || !sc.counts(p, in.p.namespace) {
				continue
			}
			counts[d]++
		}
	}
	return counts
}

func (in *incoming) untoleratedTaint(n *node) bool {
	for _, t := range n.taints {
		if e := str(t, "effect"); (e == "NoSchedule" || e == "NoExecute") && !tolerated(in.tolerations, t) {
			return true
		}
	}
	return false
}

// podAffinityState is what InterPodAffinity's filter needs to know of
// the placed pods: for each of the incoming pod's affinity and
// anti-affinity terms, the domains (values of its topology key) that
// hold a pod it selects; and the domains that existing pods' required
// anti-affinity keeps the incoming pod out of.
type podAffinityState struct {
	affinity     []map[string]bool
	anyMatch     bool
	antiAffinity []map[string]bool
	// existing maps a topology key to its forbidden values.
	existing map[string]map[string]bool
}

func (in *incoming) affinityState(gone map[string]bool) *podAffinityState {
	st := &podAffinityState{
		affinity:     make([]map[string]bool, len(in.affinity)),
		antiAffinity: make([]map[string]bool, len(in.antiAffinity)),
		existing:     map[string]map[string]bool{},
	}
	domainOf := func(p *pod, key string) (string, bool) {
		n := in.c.byName[p.node]
		if n == nil {
			return "", false
		}
		v, ok := n.labels[key]
		return v, ok
	}
	if len(in.affinity) > 0 || len(in.antiAffinity) > 0 {
		for i := range in.affinity {
			st.affinity[i] = map[string]bool{}
		}
		for i := range in.antiAffinity {
			st.antiAffinity[i] = map[string]bool{}
		}
		for _, p := range in.c.pods {
			if gone[p.key] {
				continue
			}
			for i, t := range in.affinity {
				if t.matches(p, in.c.nsLabels) {
					st.anyMatch = true
					if v, ok := domainOf(p, t.topologyKey); ok {
						st.affinity[i][v] = true
					}
				}
			}
			for i, t := range in.antiAffinity {
				if t.matches(p, in.c.nsLabels) {
					if v, ok := domainOf(p, t.topologyKey); ok {
						st.antiAffinity[i][v] = true
					}
				}
			}
		}
	}
	for key := range in.c.antiPods {
		p := in.c.pods[key]
		if p == nil || gone[key] {
			continue
		}
		for _, t := range p.antiAffinity {
			if !t.matches(in.p, in.c.nsLabels) {
				continue
			}
			if v, ok := domainOf(p, t.topologyKey); ok {
				if st.existing[t.topologyKey] == nil {
					st.existing[t.topologyKey] = map[string]bool{}
				}
				st.existing[t.topologyKey][v] = true
			}
		}
	}
	return st
}

// fitsPodAffinity is InterPodAffinity's filter.
func (in *incoming) fitsPodAffinity(n *node, gone map[string]bool) *status {
	if len(in.affinity) == 0 && len(in.antiAffinity) == 0 && len(in.c.antiPods) == 0 {
		return nil
	}
	var st *podAffinityState
	if gone == nil {
		if in.podAffinity == nil {
			in.podAffinity = in.affinityState(nil)
		}
		st = in.podAffinity
	} else {
		st = in.affinityState(gone)
	}
	if len(in.affinity) > 0 {
		ok := true
		for i, t := range in.affinity {
			if v, has := n.labels[t.topologyKey]; !has || !st.affinity[i][v] {
				ok = false
				break
			}
		}
		if !ok {
			// The first pod of a group that asks to be near its own kind
			// may go anywhere with the topology labels.
			self := !st.anyMatch
			for _, t := range in.affinity {
				if _, has := n.labels[t.topologyKey]; !has || !t.matches(in.p, in.c.nsLabels) {
					self = false
				}
			}
			if !self {
				return &status{reasons: []string{ReasonPodAffinity}}
			}
		}
	}
	for i, t := range in.antiAffinity {
		if v, has := n.labels[t.topologyKey]; has && st.antiAffinity[i][v] {
			return &status{reasons: []string{ReasonPodAntiAffinity}, resolvable: true}
		}
	}
	for key, values := range st.existing {
		if v, has := n.labels[key]; has && values[v] {
			return &status{reasons: []string{ReasonExistingAntiAffnity}, resolvable: true}
		}
	}
	return nil
}

// tolerated reports whether one of the pod's tolerations tolerates taint.
func tolerated(tolerations []map[string]any, taint map[string]any) bool {
	return slices.ContainsFunc(tolerations, func(t map[string]any) bool { return nodefit.Tolerates(t, taint) })
}
