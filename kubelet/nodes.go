package kubelet

import (
	"errors"
	"fmt"
	"sort"
	"strconv"

	"github.com/konverge/konverge/quantity"
	"github.com/konverge/konverge/value"
)

// NodeSpec is one node of the simulation profile's `nodes:` list.
type NodeSpec struct {
	Name string `json:"name"`
	// Labels are added to the well-known ones (kubernetes.io/hostname,
	// kubernetes.io/os, kubernetes.io/arch and their beta forms).
	Labels map[string]string `json:"labels,omitempty"`
	// Zone, when given, is the topology.kubernetes.io/zone label.
	Zone   string  `json:"zone,omitempty"`
	Taints []Taint `json:"taints,omitempty"`
	// Capacity is what the node has: cpu, memory and pods (8, 16Gi and
	// 110 when left out), ephemeral-storage (100Gi) and any extended
	// resource. Allocatable is what pods may use of it: Capacity unless
	// given (resources it leaves out are taken from Capacity).
	Capacity    map[string]string `json:"capacity,omitempty"`
	Allocatable map[string]string `json:"allocatable,omitempty"`
	// Unschedulable registers the node cordoned.
	Unschedulable bool `json:"unschedulable,omitempty"`
}

// Taint is a node taint as the kubelet registers it (--register-with-taints).
type Taint struct {
	Key    string `json:"key"`
	Value  string `json:"value,omitempty"`
	Effect string `json:"effect"`
}

// defaultCapacity is what a node has unless the profile says otherwise:
// konverge-node's.
var defaultCapacity = map[string]string{"cpu": "8", "memory": "16Gi", "pods": "110", "ephemeral-storage": "100Gi"}

// ZoneLabel is the well-known label of a node's zone.
const ZoneLabel = "topology.kubernetes.io/zone"

func validateNodes(nodes []NodeSpec) error {
	var errs []error
	seen := map[string]bool{}
	for i, n := range nodes {
		at := fmt.Sprintf("nodes[%d]", i)
		if n.Name == "" {
			errs = append(errs, fmt.Errorf("%s.name: required", at))
		} else if msg := dnsSubdomain(n.Name); msg != "" {
			errs = append(errs, fmt.Errorf("%s.name: %q: %s", at, n.Name, msg))
		} else if seen[n.Name] {
			errs = append(errs, fmt.Errorf("%s.name: %q: duplicate", at, n.Name))
		}
		seen[n.Name] = true
		for j, t := range n.Taints {
			if t.Key == "" {
				errs = append(errs, fmt.Errorf("%s.taints[%d].key: required", at, j))
			}
			switch t.Effect {
			case "NoSchedule", "PreferNoSchedule", "NoExecute":
			default:
				errs = append(errs, fmt.Errorf("%s.taints[%d].effect: %q is not NoSchedule, PreferNoSchedule or NoExecute", at, j, t.Effect))
			}
		}
		for _, field := range []struct {
			name string
			m    map[string]string
		}{{"capacity", n.Capacity}, {"allocatable", n.Allocatable}} {
			for _, k := range sortedStringKeys(field.m) {
				q, err := quantity.Parse(field.m[k])
				if err != nil {
					errs = append(errs, fmt.Errorf("%s.%s.%s: %q: %w", at, field.name, k, field.m[k], err))
				} else if q.Sign() < 0 {
					errs = append(errs, fmt.Errorf("%s.%s.%s: %q is negative", at, field.name, k, field.m[k]))
				}
			}
		}
	}
	return errors.Join(errs...)
}

// dnsSubdomain checks a node name as the API server does (a DNS-1123
// subdomain); "" when it is one.
func dnsSubdomain(s string) string {
	if len(s) > 253 {
		return "must be no more than 253 characters"
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		if alnum || (c == '-' || c == '.') && i > 0 && i < len(s)-1 {
			continue
		}
		return "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"
	}
	return ""
}

func sortedStringKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// node is a node the kubelet runs: its spec and address.
type node struct {
	spec   NodeSpec
	hostIP string
	cidr   string
}

// nodes returns the nodes of the profile, or konverge-node.
func (p *Profile) nodes() []node {
	if len(p.Nodes) == 0 {
		return []node{{spec: NodeSpec{Name: NodeName}, hostIP: HostIP, cidr: PodCIDR}}
	}
	out := make([]node, len(p.Nodes))
	for i, n := range p.Nodes {
		// Addresses as multinode-kubelet.py gives them: 172.18.0.2 on.
		ip := 2 + i
		out[i] = node{spec: n, hostIP: "172." + strconv.Itoa(18+ip>>16) + "." + strconv.Itoa(ip>>8&255) + "." + strconv.Itoa(ip&255),
			cidr: "10." + strconv.Itoa(244+i>>8) + "." + strconv.Itoa(i&255) + ".0/24"}
	}
	return out
}

// object is the Node the kubelet registers for n.
func (n node) object(ts string) map[string]any {
	labels := labelsAny(registeredLabels)
	labels["kubernetes.io/hostname"] = n.spec.Name
	if n.spec.Zone != "" {
		labels[ZoneLabel] = n.spec.Zone
	}
	for k, v := range n.spec.Labels {
		labels[k] = v
	}
	capacity := map[string]any{}
	for k, v := range defaultCapacity {
		capacity[k] = v
	}
	for k, v := range n.spec.Capacity {
		capacity[k] = canonical(v)
	}
	allocatable := value.DeepCopy(capacity).(map[string]any)
	for k, v := range n.spec.Allocatable {
		allocatable[k] = canonical(v)
	}
	cond := func(typ, status, reason, msg string) any {
		return map[string]any{"type": typ, "status": status, "reason": reason, "message": msg,
			"lastHeartbeatTime": ts, "lastTransitionTime": ts}
	}
	spec := map[string]any{"podCIDR": n.cidr, "podCIDRs": []any{n.cidr}}
	if len(n.spec.Taints) > 0 {
		var taints []any
		for _, t := range n.spec.Taints {
			tm := map[string]any{"key": t.Key, "effect": t.Effect}
			if t.Value != "" {
				tm["value"] = t.Value
			}
			taints = append(taints, tm)
		}
		spec["taints"] = taints
	}
	if n.spec.Unschedulable {
		spec["unschedulable"] = true
	}
	return map[string]any{
		"apiVersion": "v1", "kind": "Node",
		"metadata": map[string]any{"name": n.spec.Name, "labels": labels},
		"spec":     spec,
		"status": map[string]any{
			"capacity": capacity, "allocatable": allocatable,
			"conditions": []any{
				cond("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
				cond("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
				cond("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
				cond("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
			},
			"addresses": []any{
				map[string]any{"type": "InternalIP", "address": n.hostIP},
				map[string]any{"type": "Hostname", "address": n.spec.Name},
			},
			"nodeInfo": map[string]any{
				"architecture": "amd64", "operatingSystem": "linux", "osImage": "konverge simulated node",
				"kubeletVersion": "v1.37.1", "containerRuntimeVersion": "konverge://sim",
				"kernelVersion": "", "kubeProxyVersion": "", "machineID": "", "systemUUID": "", "bootID": "",
			},
		},
	}
}

// canonical is a quantity as the API server stores it.
func canonical(s string) string {
	if c, err := quantity.Canonical(s); err == nil {
		return c
	}
	return s
}
