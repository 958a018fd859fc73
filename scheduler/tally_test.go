package scheduler

import (
	"fmt"
	"maps"
	"testing"
)

// TestTallyFollowsPods checks that a tally, once built, keeps the same
// counts as a walk over the pods while pods are placed, relabeled,
// marked terminating and removed.
func TestTallyFollowsPods(t *testing.T) {
	var nodes []map[string]any
	for i := range 3 {
		nodes = append(nodes, obj(t, fmt.Sprintf("metadata: {name: n%d, labels: {topology.kubernetes.io/zone: z%d}}\nstatus: {allocatable: {cpu: \"8\", pods: \"20\"}}", i, i%2)))
	}
	c := New(nodes)
	put := func(name, node, labels, extra string) {
		c.SetPod(obj(t, fmt.Sprintf("metadata: {name: %s, namespace: d, labels: {%s}%s}\nspec: {nodeName: %s, containers: [{name: c}]}", name, labels, extra, node)))
	}
	put("a", "n0", "app: web", "")
	put("b", "n1", "app: web", "")
	tl := c.tallyFor("d", "", nil, map[string]string{"app": "web"})
	put("c", "n2", "app: web", "")
	put("d", "n2", "app: db", "")
	put("a", "n0", "app: db", "")                                               // relabeled
	put("b", "n1", "app: web", ", deletionTimestamp: \"2026-01-01T00:00:00Z\"") // terminating
	c.SetPod(obj(t, "metadata: {name: e, namespace: other, labels: {app: web}}\nspec: {nodeName: n0, containers: [{name: c}]}"))
	put("f", "n1", "app: web", "")
	c.RemovePod("d", "f")
	put("g", "n0", "app: web", "")

	wantNodes, wantZones := map[string]int{}, map[string]int{}
	for _, p := range c.pods {
		if tl.selects(p) {
			wantNodes[p.node]++
			wantZones[c.byName[p.node].labels[labelZone]]++
		}
	}
	if !maps.Equal(tl.nodes, wantNodes) || !maps.Equal(tl.zones, wantZones) {
		t.Errorf("tally nodes %v zones %v, want %v %v", tl.nodes, tl.zones, wantNodes, wantZones)
	}
	if want := map[string]int{"n0": 1, "n2": 1}; !maps.Equal(tl.nodes, want) {
		t.Errorf("tally nodes %v, want %v", tl.nodes, want)
	}
}
