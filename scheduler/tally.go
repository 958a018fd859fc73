package scheduler

import (
	"sort"
	"strings"

	"github.com/konverge/konverge/selector"
)

// tally counts the pods (not terminating) of a namespace that carry some
// labels, and have some owner when owner is set, and that a controller's
// selector selects when sel is set, by node and by zone:
// the pods that the default spreading of a pod selected by Services
// counts. The cluster builds a tally the first time a decision needs it
// and keeps it as pods come and go, so that a decision reads its counts
// instead of walking every pod.
type tally struct {
	namespace, owner string
	labels           map[string]string
	sel              *selector.Labels
	nodes            map[string]int
	zones            map[string]int
}

func (t *tally) selects(p *pod) bool {
	return !p.deleting && p.namespace == t.namespace && (t.owner == "" || p.owner == t.owner) &&
		(t.sel == nil || t.sel.Matches(p.labels)) && hasLabels(p.labels, t.labels)
}

// add counts p, placed on n, d times (1 or -1) if the tally selects it.
func (t *tally) add(p *pod, n *node, d int) {
	if !t.selects(p) {
		return
	}
	t.nodes[n.name] += d
	if t.nodes[n.name] <= 0 {
		delete(t.nodes, n.name)
	}
	z := n.labels[labelZone]
	t.zones[z] += d
	if t.zones[z] <= 0 {
		delete(t.zones, z)
	}
}

// tallyFor returns the tally of the pods of namespace ns that carry
// labels (and have owner, if not "", and that sel selects, if not nil),
// built now if no decision has
// needed it yet.
func (c *Cluster) tallyFor(ns, owner string, sel *selector.Labels, labels map[string]string) *tally {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(ns)
	b.WriteByte(0)
	b.WriteString(owner)
	b.WriteByte(0)
	if sel != nil {
		b.WriteString(sel.String())
	}
	for _, k := range keys {
		b.WriteByte(0)
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(labels[k])
	}
	key := b.String()
	if t := c.tallies[key]; t != nil {
		return t
	}
	t := &tally{namespace: ns, owner: owner, labels: labels, sel: sel, nodes: map[string]int{}, zones: map[string]int{}}
	for _, p := range c.pods {
		if n := c.byName[p.node]; n != nil {
			t.add(p, n, 1)
		}
	}
	if c.tallies == nil {
		c.tallies = map[string]*tally{}
		c.talliesByNS = map[string][]*tally{}
	}
	c.tallies[key] = t
	c.talliesByNS[ns] = append(c.talliesByNS[ns], t)
	return t
}
