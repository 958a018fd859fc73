package scheduler

import (
	"fmt"
	"sort"
)

// MaxNodeScore is the score of a plugin's best node.
const MaxNodeScore = 100

// Weights of the scoring plugins in kube-scheduler's default profile.
const (
	weightTaintToleration = 3
	weightNodeAffinity    = 2
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
		if score > bestScore {
			bestIdx, bestScore = i, score
		}
	}
	return feasible[bestIdx]
}

func (in *incoming) intolerablePreferNoSchedule(n *node) int64 {
	var count int64
	for _, t := range n.taints {
		if str(t, "effect") != "PreferNoSchedule" {
			continue
		}
		ok := false
		for _, tol := range in.tolerations {
			if e := str(tol, "effect"); (e == "" || e == "PreferNoSchedule") && tolerates(tol, t) {
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
		if w != 0 && nodeTermMatches(pref, n) {
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

// balanced is NodeResourcesBalancedAllocation: how close the CPU and
// memory shares in use are with the pod placed; 0 for a pod that
// requests neither.
func (in *incoming) balanced(n *node) int64 {
	if in.p.req.MilliCPU == 0 && in.p.req.Memory == 0 {
		return 0
	}
	frac := func(requested, capacity int64) (float64, bool) {
		if capacity == 0 {
			return 0, false
		}
		f := float64(requested) / float64(capacity)
		return min(f, 1), true
	}
	fc, okc := frac(n.requested.MilliCPU+in.p.req.MilliCPU, n.alloc.MilliCPU)
	fm, okm := frac(n.requested.Memory+in.p.req.Memory, n.alloc.Memory)
	if !okc || !okm {
		return MaxNodeScore
	}
	d := fc - fm
	if d < 0 {
		d = -d
	}
	return int64((1 - d/2) * MaxNodeScore)
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
	}
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
		sort.Slice(victims, func(a, b int) bool {
			if victims[a].priority != victims[b].priority {
				return victims[a].priority > victims[b].priority
			}
			if victims[a].start != victims[b].start {
				return victims[a].start < victims[b].start
			}
			return victims[a].key < victims[b].key
		})
		var chosen []*pod
		for _, v := range victims {
			delete(gone, v.key)
			if in.filterWithout(n, gone) != nil {
				gone[v.key] = true
				chosen = append(chosen, v)
			}
		}
		cands = append(cands, candidate{node: n, victims: chosen})
	}
	if len(cands) == 0 {
		return "preemption: " + fitError(len(c.nodes), post, reasonNotHelpful)
	}
	// The candidate whose most important victim matters least, then the
	// smallest sum of priorities, then the fewest victims.
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
