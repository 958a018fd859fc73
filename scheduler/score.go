package scheduler

import (
	"fmt"
	"math"
	"sort"

	"github.com/konverge/konverge/nodefit"
	"github.com/konverge/konverge/selector"
)

// MaxNodeScore is the score of a plugin's best node.
const MaxNodeScore = 100

// Weights of the scoring plugins in kube-scheduler's default profile.
const (
	weightTaintToleration = 3
	weightNodeAffinity    = 2
	weightSpread          = 2
	weightPodAffinity     = 2
	weightFit             = 1
	weightBalanced        = 1
)

// best scores the feasible nodes and returns the one with the highest
// total, the first in name order on a tie.
func (in *incoming) best(feasible []*node) *node {
	if len(feasible) == 1 {
		return feasible[0]
	}
	taints := make([]int64, len(feasible))
	affinity := make([]int64, len(feasible))
	var maxTaints, maxAffinity int64
	for i, n := range feasible {
		taints[i] = in.intolerablePreferNoSchedule(n)
		maxTaints = max(maxTaints, taints[i])
		affinity[i] = in.preferredAffinity(n)
		maxAffinity = max(maxAffinity, affinity[i])
	}
	spread := in.spreadScores(feasible)
	podAffinity := in.podAffinityScores(feasible)
	bestIdx, bestScore := 0, int64(-1)
	for i, n := range feasible {
		score := weightFit*in.leastAllocated(n) + weightBalanced*in.balanced(n)
		// TaintToleration: fewer intolerable PreferNoSchedule taints is
		// better (normalized and reversed).
		t := int64(MaxNodeScore)
		if maxTaints > 0 {
			t = MaxNodeScore - taints[i]*MaxNodeScore/maxTaints
		}
		score += weightTaintToleration * t
		if maxAffinity > 0 {
			score += weightNodeAffinity * (affinity[i] * MaxNodeScore / maxAffinity)
		}
		if spread != nil {
			score += weightSpread * spread[i]
		}
		if podAffinity != nil {
			score += weightPodAffinity * podAffinity[i]
		}
		if score > bestScore {
			bestIdx, bestScore = i, score
		}
	}
	return feasible[bestIdx]
}

// spreadScores is PodTopologySpread's score of the feasible nodes
// (normalized, 0 to MaxNodeScore; nil when it does not score): for the
// pod's ScheduleAnyway constraints, or the system defaults when it
// declares none, the fewer matching pods in a node's domain the better,
// each constraint weighed by the log of its number of domains.
func (in *incoming) spreadScores(feasible []*node) []int64 {
	var cons []spreadConstraint
	if in.defaultSpread {
		owner := in.p.owner
		var ownerSel *selector.Labels
		if owner != "" && in.c.controllers != nil {
			// kube-scheduler counts the pods the controller's selector
			// selects (none by it when the controller is not found).
			owner = ""
			if sel, ok := in.c.controllerSelector(in.p); ok {
				ownerSel = &sel
			}
		}
		cons = defaultSpread(owner, ownerSel, in.c.serviceLabels(in.p.namespace, in.p.labels))
		for i := range cons {
			if cons[i].services != nil || cons[i].ownerSel != nil {
				cons[i].tally = in.c.tallyFor(in.p.namespace, owner, cons[i].ownerSel, cons[i].services)
			}
		}
	} else {
		for _, sc := range in.spread {
			if !sc.hard {
				cons = append(cons, sc)
			}
		}
	}
	if len(cons) == 0 {
		return nil
	}
	// Only with the pod's own constraints must a node have every
	// topology key to be scored.
	requireAll := !in.defaultSpread
	hasAll := func(n *node) bool {
		for _, sc := range cons {
			if _, ok := n.labels[sc.topologyKey]; !ok {
				return false
			}
		}
		return true
	}
	ignored := make([]bool, len(feasible))
	nIgnored := 0
	domains := make([]map[string]int64, len(cons))
	for i := range cons {
		domains[i] = map[string]int64{}
	}
	for j, n := range feasible {
		if requireAll && !hasAll(n) {
			ignored[j] = true
			nIgnored++
			continue
		}
		for i, sc := range cons {
			if sc.topologyKey != labelHostname {
				domains[i][n.labels[sc.topologyKey]] = 0
			}
		}
	}
	weights := make([]float64, len(cons))
	for i, sc := range cons {
		size := len(domains[i])
		if sc.topologyKey == labelHostname {
			size = len(feasible) - nIgnored
		}
		weights[i] = math.Log(float64(size + 2))
	}
	// The pods in each domain, over every node the constraint considers.
	// The default zone spreading of a pod that any node may take has
	// its counts kept by the cluster.
	walk := false
	for i, sc := range cons {
		if sc.topologyKey == labelHostname {
			continue
		}
		if sc.system() && sc.topologyKey == labelZone && !requireAll && !in.hasNodeAffinity() && !sc.honorTaints {
			for d := range domains[i] {
				if sc.tally != nil {
					domains[i][d] = int64(sc.tally.zones[d])
				} else {
					domains[i][d] = int64(in.c.ownerZones[sc.owner][d])
				}
			}
			continue
		}
		walk = true
	}
	for _, m := range in.c.nodes {
		if !walk {
			break
		}
		if requireAll && !hasAll(m) {
			continue
		}
		for i, sc := range cons {
			if sc.topologyKey == labelHostname || sc.system() && sc.topologyKey == labelZone && !requireAll && !in.hasNodeAffinity() && !sc.honorTaints {
				continue
			}
			if !sc.ignoreAffine && !in.nodeAffine(m) || sc.honorTaints && in.untoleratedTaint(m) {
				continue
			}
			d := m.labels[sc.topologyKey]
			if _, ok := domains[i][d]; !ok {
				continue
			}
			domains[i][d] += in.countOn(m, sc)
		}
	}
	raw := make([]int64, len(feasible))
	minScore, maxScore := int64(math.MaxInt64), int64(0)
	for j, n := range feasible {
		if ignored[j] {
			continue
		}
		var score float64
		for i, sc := range cons {
			v, ok := n.labels[sc.topologyKey]
			if !ok {
				continue
			}
			var cnt int64
			if sc.topologyKey == labelHostname {
				cnt = in.countOn(n, sc)
			} else {
				cnt = domains[i][v]
			}
			score += float64(cnt)*weights[i] + float64(sc.maxSkew-1)
		}
		raw[j] = int64(math.Round(score))
		minScore = min(minScore, raw[j])
		maxScore = max(maxScore, raw[j])
	}
	out := make([]int64, len(feasible))
	for j := range feasible {
		switch {
		case ignored[j]:
			out[j] = 0
		case maxScore == 0:
			out[j] = MaxNodeScore
		default:
			out[j] = MaxNodeScore * (maxScore + minScore - raw[j]) / maxScore
		}
	}
	return out
}

// hasNodeAffinity reports a pod whose nodeSelector or required node
// affinity may leave nodes out.
func (in *incoming) hasNodeAffinity() bool { return len(in.nodeSelector) > 0 || in.hasRequired }

// countOn counts the pods on n that constraint sc selects.
func (in *incoming) countOn(n *node, sc spreadConstraint) int64 {
	if sc.tally != nil {
		return int64(sc.tally.nodes[n.name])
	}
	if sc.ownerOnly() {
		return int64(n.owners[sc.owner])
	}
	var cnt int64
	for _, p := range n.pods {
		if sc.counts(p, in.p.namespace) {
			cnt++
		}
	}
	return cnt
}

// podAffinityScores is InterPodAffinity's score of the feasible nodes
// (normalized, 0 to MaxNodeScore; nil when no term weighs): the weights
// of the pod's preferred terms that the placed pods of a node's domain
// match (anti-affinity counts against), and those of the placed pods'
// terms that the pod matches (their required affinity terms weigh 1).
func (in *incoming) podAffinityScores(feasible []*node) []int64 {
	own := len(in.p.prefAffinity)+len(in.p.prefAnti) > 0
	if !own && len(in.c.affPods) == 0 {
		return nil
	}
	topo := map[string]map[string]int64{}
	add := func(key string, n *node, w int64) {
		v, ok := n.labels[key]
		if !ok {
			return
		}
		if topo[key] == nil {
			topo[key] = map[string]int64{}
		}
		topo[key][v] += w
	}
	visit := func(p *pod) {
		n := in.c.byName[p.node]
		if n == nil || len(n.labels) == 0 {
			return
		}
		for _, t := range in.p.prefAffinity {
			if t.matches(p, in.c.nsLabels) {
				add(t.topologyKey, n, t.weight)
			}
		}
		for _, t := range in.p.prefAnti {
			if t.matches(p, in.c.nsLabels) {
				add(t.topologyKey, n, -t.weight)
			}
		}
		for _, t := range p.affinity {
			if t.matches(in.p, in.c.nsLabels) {
				add(t.topologyKey, n, hardPodAffinityWeight)
			}
		}
		for _, t := range p.prefAffinity {
			if t.matches(in.p, in.c.nsLabels) {
				add(t.topologyKey, n, t.weight)
			}
		}
		for _, t := range p.prefAnti {
			if t.matches(in.p, in.c.nsLabels) {
				add(t.topologyKey, n, -t.weight)
			}
		}
	}
	if own {
		for _, p := range in.c.pods {
			visit(p)
		}
	} else {
		for key := range in.c.affPods {
			if p := in.c.pods[key]; p != nil {
				visit(p)
			}
		}
	}
	if len(topo) == 0 {
		return nil
	}
	raw := make([]int64, len(feasible))
	minScore, maxScore := int64(math.MaxInt64), int64(math.MinInt64)
	for j, n := range feasible {
		for key, values := range topo {
			if v, ok := n.labels[key]; ok {
				raw[j] += values[v]
			}
		}
		minScore = min(minScore, raw[j])
		maxScore = max(maxScore, raw[j])
	}
	out := make([]int64, len(feasible))
	if diff := maxScore - minScore; diff > 0 {
		for j := range feasible {
			out[j] = int64(float64(MaxNodeScore) * float64(raw[j]-minScore) / float64(diff))
		}
	}
	return out
}

// hardPodAffinityWeight is what a placed pod's required affinity term
// that the incoming pod matches weighs in InterPodAffinity's score
// (kube-scheduler's default HardPodAffinityWeight).
const hardPodAffinityWeight = 1

func (in *incoming) intolerablePreferNoSchedule(n *node) int64 {
	var count int64
	for _, t := range n.taints {
		if str(t, "effect") != "PreferNoSchedule" {
			continue
		}
		ok := false
		for _, tol := range in.tolerations {
			if e := str(tol, "effect"); (e == "" || e == "PreferNoSchedule") && nodefit.Tolerates(tol, t) {
				ok = true
				break
			}
		}
		if !ok {
			count++
		}
	}
	return count
}

func (in *incoming) preferredAffinity(n *node) int64 {
	var sum int64
	for _, p := range in.preferred {
		w, _ := p["weight"].(int64)
		pref, _ := p["preference"].(map[string]any)
		if w != 0 && nodefit.TermMatches(pref, n.labels, n.name) {
			sum += w
		}
	}
	return sum
}

// leastAllocated is NodeResourcesFit's default score: the share of CPU
// and memory left free with the pod placed (non-zero requests), averaged.
func (in *incoming) leastAllocated(n *node) int64 {
	score := func(requested, capacity int64) (int64, bool) {
		if capacity == 0 {
			return 0, false
		}
		if requested > capacity {
			return 0, true
		}
		return (capacity - requested) * MaxNodeScore / capacity, true
	}
	var sum, weights int64
	if s, ok := score(n.nonZeroCPU+in.p.nonZeroCPU, n.alloc.MilliCPU); ok {
		sum += s
		weights++
	}
	if s, ok := score(n.nonZeroMem+in.p.nonZeroMem, n.alloc.Memory); ok {
		sum += s
		weights++
	}
	if weights == 0 {
		return 0
	}
	return sum / weights
}

// balanced is NodeResourcesBalancedAllocation as v1.37 scores it: how
// much placing the pod evens out the node's CPU and memory shares in use
// (requests as they are, without the non-zero defaults), 50 when it
// changes nothing; 0 for a pod that requests neither.
func (in *incoming) balanced(n *node) int64 {
	if in.p.req.MilliCPU == 0 && in.p.req.Memory == 0 {
		return 0
	}
	with := balance(n.requested.MilliCPU+in.p.req.MilliCPU, n.alloc.MilliCPU, n.requested.Memory+in.p.req.Memory, n.alloc.Memory)
	without := balance(n.requested.MilliCPU, n.alloc.MilliCPU, n.requested.Memory, n.alloc.Memory)
	return MaxNodeScore/2 + (MaxNodeScore/2+with-without)/2
}

// balance scores how close the CPU and memory shares in use are (100:
// equal); a resource the node has none of is left out.
func balance(cpu, cpuAlloc, mem, memAlloc int64) int64 {
	var fracs []float64
	for _, r := range [][2]int64{{cpu, cpuAlloc}, {mem, memAlloc}} {
		if r[1] == 0 {
			continue
		}
		fracs = append(fracs, min(float64(r[0])/float64(r[1]), 1))
	}
	std := 0.0
	if len(fracs) == 2 {
		std = math.Abs(fracs[0]-fracs[1]) / 2
	}
	return int64((1 - std) * MaxNodeScore)
}

// preempt is DefaultPreemption: it returns the message's "preemption:
// ..." part and, when evicting pods of a lower priority makes room on a
// node, sets d's NominatedNode and Victims.
func (c *Cluster) preempt(in *incoming, spec map[string]any, statuses []*status, d *Decision) string {
	if str(spec, "preemptionPolicy") == "Never" {
		return "preemption: not eligible due to preemptionPolicy=Never."
	}

	type candidate struct {
		node    *node
		victims []*pod
		// violations counts the victims whose eviction a
		// PodDisruptionBudget does not allow.
		violations int
	}
	budgets := c.budgets()
	var cands []candidate
	post := make([]*status, len(c.nodes))
	for i, n := range c.nodes {
		st := statuses[i]
		if st == nil || !st.resolvable {
			continue
		}
		var victims []*pod
		for _, p := range n.pods {
			if p.priority < in.p.priority {
				victims = append(victims, p)
			}
		}
		if len(victims) == 0 {
			post[i] = &status{reasons: []string{reasonNoVictims}}
			continue
		}
		gone := map[string]bool{}
		for _, v := range victims {
			gone[v.key] = true
		}
		if st := in.filterWithout(n, gone); st != nil {
			post[i] = st
			continue
		}
		// Spare the most important first: higher priority, then the
		// longer running.
		sort.Slice(victims, func(a, b int) bool { return moreImportant(victims[a], victims[b]) })
		// The pods a budget protects are spared first, then the others,
		// each group most important first.
		violating, other := splitByBudgets(victims, budgets)
		var chosen []*pod
		violations := 0
		for k, group := range [][]*pod{violating, other} {
			for _, v := range group {
				delete(gone, v.key)
				if in.filterWithout(n, gone) != nil {
					gone[v.key] = true
					chosen = append(chosen, v)
					if k == 0 {
						violations++
					}
				}
			}
		}
		// Victims listed most important first.
		sort.SliceStable(chosen, func(a, b int) bool { return moreImportant(chosen[a], chosen[b]) })
		cands = append(cands, candidate{node: n, victims: chosen, violations: violations})
	}
	if len(cands) == 0 {
		return "preemption: " + fitError(len(c.nodes), post, reasonNotHelpful)
	}
	// The candidate with the fewest budget violations, then whose most
	// important victim matters least, then the smallest sum of
	// priorities, then the fewest victims.
	score := func(cd candidate) (top, sum int64) {
		top = -1 << 62
		for _, v := range cd.victims {
			top = max(top, v.priority)
			sum += v.priority
		}
		return top, sum
	}
	best := 0
	for i := 1; i < len(cands); i++ {
		ti, si := score(cands[i])
		tb, sb := score(cands[best])
		switch {
		case cands[i].violations != cands[best].violations:
			if cands[i].violations < cands[best].violations {
				best = i
			}
		case ti != tb:
			if ti < tb {
				best = i
			}
		case si != sb:
			if si < sb {
				best = i
			}
		case len(cands[i].victims) < len(cands[best].victims):
			best = i
		}
	}
	cd := cands[best]
	d.NominatedNode = cd.node.name
	for i := len(cd.victims) - 1; i >= 0; i-- {
		d.Victims = append(d.Victims, cd.victims[i].key)
	}
	return fmt.Sprintf("preemption: found a potential placement for pod on node %s, preempting %d victims", cd.node.name, len(cd.victims))
}

// moreImportant is kube-scheduler's order of pods to spare: higher
// priority, then the one that started earlier.
func moreImportant(a, b *pod) bool {
	if a.priority != b.priority {
		return a.priority > b.priority
	}
	if a.start != b.start {
		return a.start < b.start
	}
	return a.key < b.key
}

// budget is what preemption needs of a PodDisruptionBudget.
type budget struct {
	namespace string
	sel       selector.Labels
	allowed   int64
	disrupted map[string]bool
}

// SetDisruptionBudgets gives the cluster the PodDisruptionBudgets
// (read when a preemption is considered): preemption spares the pods
// they protect first, and prefers the node where it evicts the fewest
// of them, as DefaultPreemption does.
func (c *Cluster) SetDisruptionBudgets(list func() []map[string]any) { c.pdbs = list }

func (c *Cluster) budgets() []budget {
	if c.pdbs == nil {
		return nil
	}
	var out []budget
	for _, obj := range c.pdbs() {
		md, _ := obj["metadata"].(map[string]any)
		spec, _ := obj["spec"].(map[string]any)
		ls, _ := spec["selector"].(map[string]any)
		sel, err := selector.FromLabelSelector(ls)
		if err != nil || sel.Empty() {
			// An empty or invalid selector protects no pod here.
			continue
		}
		b := budget{namespace: str(md, "namespace"), sel: sel, disrupted: map[string]bool{}}
		if st, ok := obj["status"].(map[string]any); ok {
			b.allowed, _ = st["disruptionsAllowed"].(int64)
			if d, ok := st["disruptedPods"].(map[string]any); ok {
				for name := range d {
					b.disrupted[name] = true
				}
			}
		}
		out = append(out, b)
	}
	return out
}

// splitByBudgets splits victims (in order) into those whose eviction
// would take a budget below what it allows and the others: each victim
// a budget selects uses up one of its allowed disruptions, unless the
// budget already counts it as disrupted.
func splitByBudgets(victims []*pod, budgets []budget) (violating, other []*pod) {
	allowed := make([]int64, len(budgets))
	for i, b := range budgets {
		allowed[i] = b.allowed
	}
	for _, v := range victims {
		violates := false
		for i, b := range budgets {
			if len(v.labels) == 0 {
				break
			}
			if b.namespace != v.namespace || !b.sel.Matches(v.labels) || b.disrupted[v.name] {
				continue
			}
			if allowed[i]--; allowed[i] < 0 {
				violates = true
				break
			}
		}
		if violates {
			violating = append(violating, v)
		} else {
			other = append(other, v)
		}
	}
	return violating, other
}
