// Package scheduler decides where the pods of the embedded cluster run,
// as kube-scheduler's default profile (v1.37) decides: pure functions over
// the Nodes and the pods already placed, with no I/O (what it reads
// besides, the labels of namespaces and the PodDisruptionBudgets, it asks
// for through the functions it is given).
//
// A Cluster holds the nodes and the pods bound to them. Schedule runs the
// filters of the default profile in kube-scheduler's order (NodeName,
// NodeUnschedulable, TaintToleration, NodeAffinity with the nodeSelector,
// NodePorts, NodeResourcesFit, VolumeBinding, PodTopologySpread,
// InterPodAffinity), the first that rejects a node giving its reason,
// after VolumeBinding's PreFilter (a claim that does not exist, is lost
// or is being deleted turns the pod away before any node is looked at);
// scores the nodes that pass
// (NodeResourcesFit's least-allocated, BalancedAllocation, the
// PreferNoSchedule taints, preferred node affinity, PodTopologySpread's
// ScheduleAnyway constraints or, for a pod that declares none, the
// default spreading of its controller's pods over hostnames and zones,
// InterPodAffinity's preferred terms and the placed pods' terms, weighted
// as the default profile weighs them) and picks the best, the first by
// name on a tie (kube-scheduler picks one of the best at random). When no
// node passes, the Decision carries kube-scheduler's message ("0/3 nodes
// are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu.
// preemption: ...") and, when evicting pods of a lower priority makes
// room, the node and the victims, as DefaultPreemption chooses them
// (sparing first the pods a PodDisruptionBudget protects, and preferring
// the node where the fewest budgets are broken).
//
// VolumeBinding reads the claims, volumes and classes through the
// functions SetVolumes gives (see Volumes): a bound claim's volume must
// exist and its node affinity select the node; a claim of a
// WaitForFirstConsumer class needs an Available volume of its class the
// node reaches (the Decision names it, for its claimRef to be set before
// the pod is bound) or a class that provisions (the Decision names the
// claim without a volume: it gets the node in its selected-node
// annotation and the pod waits for it, nominated there). An unbound
// claim of another class does not hold the pod back, where kube-scheduler's
// PreFilter says "pod has unbound immediate PersistentVolumeClaims":
// the embedded cluster provisions nothing, and every claim of a
// StatefulSet's volumeClaimTemplates would keep its pod Pending for ever.
//
// Not decided here: VolumeZone, volume limits, VolumeRestrictions, the
// end of kube-scheduler's wait for a claim to be provisioned (its
// VolumeBinding gives up after bindTimeoutSeconds, 600 by default; here
// the pod waits until the claim is bound), ImageLocality (the simulated nodes hold no
// images), and the Services that select a pod in its default spreading
// (only its controller's pods count).
package scheduler

import (
	"fmt"
	"sort"
	"strings"

	"github.com/konverge/konverge/nodefit"
	"github.com/konverge/konverge/selector"
)

// Reasons a node is rejected for, as kube-scheduler words them.
const (
	ReasonNodeName            = "node(s) didn't match the requested node name"
	ReasonUnschedulable       = "node(s) were unschedulable"
	ReasonTaints              = "node(s) had untolerated taint(s)"
	ReasonNodeAffinity        = "node(s) didn't match Pod's node affinity/selector"
	ReasonNodePorts           = "node(s) didn't have free ports for the requested pod ports"
	ReasonTooManyPods         = "Too many pods"
	ReasonSpread              = "node(s) didn't match pod topology spread constraints"
	ReasonSpreadLabel         = ReasonSpread + " (missing required label)"
	ReasonPodAffinity         = "node(s) didn't match pod affinity rules"
	ReasonPodAntiAffinity     = "node(s) didn't match pod anti-affinity rules"
	ReasonExistingAntiAffnity = "node(s) didn't satisfy existing pods anti-affinity rules"
	// ReasonNotInNodeNames is the reason of the nodes a pod's required
	// node affinity leaves out by name (matchFields metadata.name In, as
	// a DaemonSet's pods have): NodeAffinity's PreFilter narrows the
	// nodes to those names and the others are not looked at.
	ReasonNotInNodeNames = "node(s) didn't satisfy plugin(s) [NodeAffinity]"
	reasonNotHelpful     = "Preemption is not helpful for scheduling"
	reasonNoVictims      = "No preemption victims found for incoming pod"
)

// UnschedulableTaint is the taint of a cordoned node.
const UnschedulableTaint = "node.kubernetes.io/unschedulable"

// status is why a node was rejected: its reasons, and whether removing
// pods could help (kube-scheduler's Unschedulable, as opposed to
// UnschedulableAndUnresolvable).
type status struct {
	reasons    []string
	resolvable bool
}

type node struct {
	name          string
	labels        map[string]string
	taints        []map[string]any
	unschedulable bool
	alloc         Resources
	allowedPods   int64

	requested              Resources
	nonZeroCPU, nonZeroMem int64
	pods                   map[string]*pod
	ports                  map[hostPort]int
	// owners counts the pods of each owner (not terminating) on the
	// node, for the default spreading.
	owners map[string]int
}

type hostPort struct {
	ip, protocol string
	port         int64
}

type pod struct {
	key, namespace, name, node string
	uid                        string
	labels                     map[string]string
	req                        Resources
	nonZeroCPU, nonZeroMem     int64
	ports                      []hostPort
	priority                   int64
	// antiAffinity are the pod's required anti-affinity terms, which
	// keep other pods away from it.
	antiAffinity []term
	// affinity are its required affinity terms; prefAffinity and
	// prefAnti its preferred ones: InterPodAffinity's score weighs them
	// for the pods that come after it.
	affinity               []term
	prefAffinity, prefAnti []weightedTerm
	// owner is the uid of the ReplicaSet, ReplicationController or
	// StatefulSet that controls the pod: the pods of one owner are
	// spread by default.
	owner string
	// ownerKind and ownerName name that controller.
	ownerKind, ownerName string
	deleting             bool
	start                string
}

// Cluster is the nodes and the pods placed on them.
type Cluster struct {
	nodes  []*node // by name
	byName map[string]*node
	pods   map[string]*pod
	// antiPods are the keys of the pods with required anti-affinity;
	// affPods of those with any pod (anti-)affinity term.
	antiPods, affPods map[string]bool
	// nsLabels returns the labels of a namespace (namespaceSelector).
	nsLabels func(string) map[string]string
	// pdbs lists the PodDisruptionBudgets (for preemption).
	pdbs func() []map[string]any
	// services lists the Services of a namespace (the default spreading
	// counts the pods they select).
	services func(namespace string) []map[string]any
	// controllers reads a ReplicaSet, ReplicationController or
	// StatefulSet (nil: not found), whose selector the default spreading
	// counts the pods of.
	controllers func(kind, namespace, name string) map[string]any
	// ownerZones counts the pods of each owner (not terminating) by the
	// zone of their node ("" for a node without one): the default
	// spreading's zone counts without a walk over the nodes.
	ownerZones map[string]map[string]int
	// tallies count the pods that the default spreading of pods selected
	// by Services counts, by key (see tallyFor) and by namespace.
	tallies     map[string]*tally
	talliesByNS map[string][]*tally
	// volumes reads the claims, volumes and classes (VolumeBinding).
	volumes *Volumes
	// next is where the next search for nodes starts.
	next int
}

// New returns a Cluster of the Node objects given (pods are added with
// SetPod).
func New(nodes []map[string]any) *Cluster {
	c := &Cluster{byName: map[string]*node{}, pods: map[string]*pod{}, antiPods: map[string]bool{}, affPods: map[string]bool{}, ownerZones: map[string]map[string]int{}}
	for _, obj := range nodes {
		md, _ := obj["metadata"].(map[string]any)
		n := &node{
			name:          str(md, "name"),
			labels:        stringMap(md, "labels"),
			unschedulable: boolAt(obj, "spec", "unschedulable"),
			pods:          map[string]*pod{},
			ports:         map[hostPort]int{},
			owners:        map[string]int{},
		}
		if n.name == "" || c.byName[n.name] != nil {
			continue
		}
		n.taints = append(n.taints, listAt(obj, "spec", "taints")...)
		alloc, ok := mapAt(obj, "status", "allocatable")
		if !ok {
			alloc, _ = mapAt(obj, "status", "capacity")
		}
		n.alloc, n.allowedPods = nodefit.ParseResources(alloc)
		c.nodes = append(c.nodes, n)
		c.byName[n.name] = n
	}
	sort.Slice(c.nodes, func(i, j int) bool { return c.nodes[i].name < c.nodes[j].name })
	return c
}

// Nodes returns the names of the nodes, in order.
func (c *Cluster) Nodes() []string {
	out := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		out[i] = n.name
	}
	return out
}

// SetNamespaceLabels gives the cluster the labels of the namespaces,
// which the namespaceSelector of a pod affinity term selects by; without
// it such a selector selects only the namespaces the term lists.
func (c *Cluster) SetNamespaceLabels(labels func(namespace string) map[string]string) {
	c.nsLabels = labels
}

// SetServices gives the cluster the Services of each namespace, read when
// a pod without topology spread constraints of its own is scored: as
// kube-scheduler's system defaults, its spreading then counts the pods
// that the Services selecting it select (with those of its controller,
// if any). Without it only a pod's controller is spread.
func (c *Cluster) SetServices(list func(namespace string) []map[string]any) {
	c.services = list
}

// SetControllers lets the cluster read the ReplicaSet,
// ReplicationController or StatefulSet that controls a pod: as
// kube-scheduler's, the default spreading of a pod without constraints
// of its own then counts the pods its controller's selector selects (and
// does not spread by the controller when it is not found). Without it,
// the pods with the same controller are counted.
func (c *Cluster) SetControllers(get func(kind, namespace, name string) map[string]any) {
	c.controllers = get
}

// controllerSelector is the selector of the controller of p, as the
// default spreading reads it; ok false: the controller is not found or
// its selector selects nothing here.
func (c *Cluster) controllerSelector(p *pod) (sel selector.Labels, ok bool) {
	obj := c.controllers(p.ownerKind, p.namespace, p.ownerName)
	if obj == nil {
		return sel, false
	}
	spec, _ := obj["spec"].(map[string]any)
	var err error
	if p.ownerKind == "ReplicationController" {
		// A ReplicationController's selector is a map of labels.
		m, _ := spec["selector"].(map[string]any)
		sel, err = selector.FromLabelSelector(map[string]any{"matchLabels": m})
	} else {
		m, _ := spec["selector"].(map[string]any)
		sel, err = selector.FromLabelSelector(m)
	}
	if err != nil || sel.Empty() {
		return sel, false
	}
	return sel, true
}

// HasNode reports whether the cluster has a node of that name.
func (c *Cluster) HasNode(name string) bool { return c.byName[name] != nil }

func podKey(namespace, name string) string { return namespace + "/" + name }

// SetPod records a pod as it now is: bound to a node of the cluster and
// not finished, it holds its requests and ports there (a terminating pod
// too, until it is gone); otherwise it holds nothing.
func (c *Cluster) SetPod(obj map[string]any) {
	md, _ := obj["metadata"].(map[string]any)
	key := podKey(str(md, "namespace"), str(md, "name"))
	c.remove(key)
	spec, _ := obj["spec"].(map[string]any)
	nodeName := str(spec, "nodeName")
	n := c.byName[nodeName]
	if n == nil {
		return
	}
	switch phase := strAt(obj, "status", "phase"); phase {
	case "Succeeded", "Failed":
		return
	}
	p := newPod(obj)
	p.node = nodeName
	c.pods[key] = p
	n.pods[key] = p
	if len(p.antiAffinity) > 0 {
		c.antiPods[key] = true
	}
	if p.hasAffinity() {
		c.affPods[key] = true
	}
	if p.owner != "" && !p.deleting {
		n.owners[p.owner]++
		z := c.ownerZones[p.owner]
		if z == nil {
			z = map[string]int{}
			c.ownerZones[p.owner] = z
		}
		z[n.labels[labelZone]]++
	}
	for _, t := range c.talliesByNS[p.namespace] {
		t.add(p, n, 1)
	}
	n.requested.Add(p.req)
	n.nonZeroCPU += p.nonZeroCPU
	n.nonZeroMem += p.nonZeroMem
	for _, hp := range p.ports {
		n.ports[hp]++
	}
}

// Holds reports whether a pod holds resources on a node.
func (c *Cluster) Holds(namespace, name string) bool { return c.pods[podKey(namespace, name)] != nil }

// RemovePod forgets a pod (deleted).
func (c *Cluster) RemovePod(namespace, name string) { c.remove(podKey(namespace, name)) }

func (c *Cluster) remove(key string) {
	p := c.pods[key]
	if p == nil {
		return
	}
	delete(c.pods, key)
	delete(c.antiPods, key)
	delete(c.affPods, key)
	n := c.byName[p.node]
	if n == nil {
		return
	}
	delete(n.pods, key)
	for _, t := range c.talliesByNS[p.namespace] {
		t.add(p, n, -1)
	}
	if p.owner != "" && !p.deleting {
		if n.owners[p.owner]--; n.owners[p.owner] <= 0 {
			delete(n.owners, p.owner)
		}
		z := c.ownerZones[p.owner]
		if z[n.labels[labelZone]]--; z[n.labels[labelZone]] <= 0 {
			delete(z, n.labels[labelZone])
			if len(z) == 0 {
				delete(c.ownerZones, p.owner)
			}
		}
	}
	n.requested.Sub(p.req)
	n.nonZeroCPU -= p.nonZeroCPU
	n.nonZeroMem -= p.nonZeroMem
	for _, hp := range p.ports {
		if n.ports[hp]--; n.ports[hp] <= 0 {
			delete(n.ports, hp)
		}
	}
}

func newPod(obj map[string]any) *pod {
	md, _ := obj["metadata"].(map[string]any)
	spec, _ := obj["spec"].(map[string]any)
	p := &pod{
		namespace: str(md, "namespace"),
		name:      str(md, "name"),
		uid:       str(md, "uid"),
		labels:    stringMap(md, "labels"),
		deleting:  str(md, "deletionTimestamp") != "",
		start:     strAt(obj, "status", "startTime"),
	}
	p.key = podKey(p.namespace, p.name)
	p.req, p.nonZeroCPU, p.nonZeroMem = nodefit.PodRequests(spec)
	p.ports = podPorts(spec)
	if v, ok := spec["priority"].(int64); ok {
		p.priority = v
	}
	for _, t := range listAt(spec, "affinity", "podAntiAffinity", "requiredDuringSchedulingIgnoredDuringExecution") {
		p.antiAffinity = append(p.antiAffinity, newTerm(t, p.namespace))
	}
	for _, t := range listAt(spec, "affinity", "podAffinity", "requiredDuringSchedulingIgnoredDuringExecution") {
		p.affinity = append(p.affinity, newTerm(t, p.namespace))
	}
	p.prefAffinity = newWeightedTerms(listAt(spec, "affinity", "podAffinity", "preferredDuringSchedulingIgnoredDuringExecution"), p.namespace)
	p.prefAnti = newWeightedTerms(listAt(spec, "affinity", "podAntiAffinity", "preferredDuringSchedulingIgnoredDuringExecution"), p.namespace)
	for _, r := range list(md, "ownerReferences") {
		if c, _ := r["controller"].(bool); !c {
			continue
		}
		switch str(r, "kind") {
		case "ReplicaSet", "ReplicationController", "StatefulSet":
			p.owner = str(r, "uid")
			p.ownerKind, p.ownerName = str(r, "kind"), str(r, "name")
		}
	}
	return p
}

func (p *pod) hasAffinity() bool {
	return len(p.antiAffinity)+len(p.affinity)+len(p.prefAffinity)+len(p.prefAnti) > 0
}

// podPorts are the host ports a pod's containers ask for.
func podPorts(spec map[string]any) []hostPort {
	var out []hostPort
	for _, field := range []string{"initContainers", "containers"} {
		for _, c := range list(spec, field) {
			if field == "initContainers" && str(c, "restartPolicy") != "Always" {
				continue
			}
			for _, p := range list(c, "ports") {
				hp, _ := p["hostPort"].(int64)
				if hp <= 0 {
					continue
				}
				proto := str(p, "protocol")
				if proto == "" {
					proto = "TCP"
				}
				ip := str(p, "hostIP")
				if ip == "" {
					ip = "0.0.0.0"
				}
				out = append(out, hostPort{ip: ip, protocol: proto, port: hp})
			}
		}
	}
	return out
}

// Decision is where a pod goes, or why it cannot go anywhere.
type Decision struct {
	// Node is the node chosen; empty when none fits.
	Node string
	// Message is kube-scheduler's FailedScheduling message when no node
	// fits.
	Message string
	// NominatedNode and Victims are set when preempting the Victims
	// (namespace/name, lowest priority first) makes room on
	// NominatedNode.
	NominatedNode string
	Victims       []string
	// VolumeBindings are the volumes chosen on Node for the pod's claims
	// that wait for their first consumer: each volume's claimRef is set
	// to its claim before the pod is bound.
	VolumeBindings []VolumeBinding
}

// Schedule decides where pod goes.
func (c *Cluster) Schedule(obj map[string]any) Decision {
	if len(c.nodes) == 0 {
		return Decision{Message: "no nodes available to schedule pods"}
	}
	p := newPod(obj)
	spec, _ := obj["spec"].(map[string]any)
	vols, rejected := c.preFilterVolumes(p, spec)
	if rejected != "" {
		// A PreFilter rejection: no node is looked at, and preemption
		// has nothing to go by (kube-scheduler's PostFilter reports its
		// missing state as "not found").
		return Decision{Message: fmt.Sprintf("0/%d nodes are available: %s. not found", len(c.nodes), rejected)}
	}
	in := newIncoming(c, p, spec)
	in.volumes = vols
	// As kube-scheduler, the node an earlier preemption nominated is
	// tried first, and taken if the pod fits there.
	if nom := c.byName[strAt(obj, "status", "nominatedNodeName")]; nom != nil && (in.onlyNodes == nil || in.onlyNodes[nom.name]) && in.filter(nom) == nil {
		return Decision{Node: nom.name, VolumeBindings: in.volumeBindings(nom.name)}
	}
	statuses := make([]*status, len(c.nodes))
	var feasible []*node
	// As kube-scheduler, a large cluster is searched from where the last
	// search stopped, until enough feasible nodes are found.
	want := numFeasibleNodesToFind(len(c.nodes))
	start := c.next % len(c.nodes)
	processed := 0
	for k := 0; k < len(c.nodes) && len(feasible) < want; k++ {
		i := (start + k) % len(c.nodes)
		processed++
		n := c.nodes[i]
		if in.onlyNodes != nil && !in.onlyNodes[n.name] {
			statuses[i] = &status{reasons: []string{ReasonNotInNodeNames}}
			continue
		}
		if st := in.filter(n); st != nil {
			statuses[i] = st
			continue
		}
		feasible = append(feasible, n)
	}
	c.next = (start + processed) % len(c.nodes)
	if len(feasible) > 0 {
		if len(c.nodes) <= minFeasibleNodesToFind {
			// Small clusters: every node was looked at; the tie-break
			// is by name.
			sort.Slice(feasible, func(a, b int) bool { return feasible[a].name < feasible[b].name })
		}
		best := in.best(feasible).name
		return Decision{Node: best, VolumeBindings: in.volumeBindings(best)}
	}
	msg := fitError(len(c.nodes), statuses, "")
	d := Decision{}
	post := c.preempt(in, spec, statuses, &d)
	return Decision{Message: msg + " " + post, NominatedNode: d.NominatedNode, Victims: d.Victims}
}

// minFeasibleNodesToFind is the number of nodes kube-scheduler looks at
// at least; in larger clusters it stops once it has found a share of
// them feasible (percentageOfNodesToScore's adaptive default).
const minFeasibleNodesToFind = 100

func numFeasibleNodesToFind(all int) int {
	if all <= minFeasibleNodesToFind {
		return all
	}
	pct := 50 - all/125
	if pct < 5 {
		pct = 5
	}
	n := all * pct / 100
	if n < minFeasibleNodesToFind {
		return minFeasibleNodesToFind
	}
	return n
}

// fitError is kube-scheduler's "0/N nodes are available: ..." message:
// the reasons counted over the nodes, sorted; a nil status counts as
// absent, with absent's reason when given.
func fitError(total int, statuses []*status, absent string) string {
	counts := map[string]int{}
	for _, st := range statuses {
		if st == nil {
			if absent != "" {
				counts[absent]++
			}
			continue
		}
		for _, r := range st.reasons {
			counts[r]++
		}
	}
	var parts []string
	for r, n := range counts {
		parts = append(parts, fmt.Sprintf("%d %s", n, r))
	}
	sort.Strings(parts)
	msg := fmt.Sprintf("0/%d nodes are available:", total)
	if len(parts) > 0 {
		msg += " " + strings.Join(parts, ", ") + "."
	}
	return msg
}
