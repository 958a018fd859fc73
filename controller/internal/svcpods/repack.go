package svcpods

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/dump"
)

//lint:file-ignore SA1019 RepackSubsets orders the subsets of core/v1 Endpoints (deprecated, still written by kube-controller-manager v1.37) by the hash of their Go values, so it works on that type.

// RepackSubsets is upstream's endpoints.RepackSubsets: addresses grouped
// by the set of ports they serve, each group a subset, sorted as
// upstream sorts them (addresses by IP and pod uid, ports and subsets by
// the hash of their Go value).
func RepackSubsets(subsets []corev1.EndpointSubset) []corev1.EndpointSubset {
	type addressKey struct {
		ip  string
		uid types.UID
	}
	allAddrs := map[addressKey]*corev1.EndpointAddress{}
	// For each port (a sentinel -1 for none), the addresses and whether
	// each is ready.
	portAddrs := map[corev1.EndpointPort]map[*corev1.EndpointAddress]bool{}
	var portOrder []corev1.EndpointPort
	add := func(addr *corev1.EndpointAddress, port corev1.EndpointPort, ready bool) {
		key := addressKey{ip: addr.IP}
		if addr.TargetRef != nil {
			key.uid = addr.TargetRef.UID
		}
		existing := allAddrs[key]
		if existing == nil {
			cp := *addr
			existing = &cp
			allAddrs[key] = existing
		}
		m, ok := portAddrs[port]
		if !ok {
			m = map[*corev1.EndpointAddress]bool{}
			portAddrs[port] = m
			portOrder = append(portOrder, port)
		}
		if wasReady, found := m[existing]; !found || wasReady {
			m[existing] = ready
		}
	}
	for i := range subsets {
		ss := &subsets[i]
		ports := ss.Ports
		if len(ports) == 0 {
			ports = []corev1.EndpointPort{{Port: -1}}
		}
		for _, port := range ports {
			for k := range ss.Addresses {
				add(&ss.Addresses[k], port, true)
			}
			for k := range ss.NotReadyAddresses {
				add(&ss.NotReadyAddresses[k], port, false)
			}
		}
	}
	// Ports with the same addresses (and readiness) make one subset.
	type group struct {
		addrs map[*corev1.EndpointAddress]bool
		ports []corev1.EndpointPort
	}
	var groups []*group
	byKey := map[string]*group{}
	// ids are "IP/uid/" of each address, made once.
	ids := make(map[*corev1.EndpointAddress]string, len(allAddrs))
	for _, port := range portOrder {
		addrs := portAddrs[port]
		keys := make([]string, 0, len(addrs))
		for a, ready := range addrs {
			id, ok := ids[a]
			if !ok {
				var uid types.UID
				if a.TargetRef != nil {
					uid = a.TargetRef.UID
				}
				id = a.IP + "/" + string(uid) + "/"
				ids[a] = id
			}
			keys = append(keys, id+strconv.FormatBool(ready))
		}
		sort.Strings(keys)
		key := strings.Join(keys, " ")
		g := byKey[key]
		if g == nil {
			g = &group{addrs: addrs}
			byKey[key] = g
			groups = append(groups, g)
		}
		if port.Port > 0 {
			g.ports = append(g.ports, port)
		}
	}
	final := []corev1.EndpointSubset{}
	for _, g := range groups {
		var ready, notReady []corev1.EndpointAddress
		for a, r := range g.addrs {
			if r {
				ready = append(ready, *a)
			} else {
				notReady = append(notReady, *a)
			}
		}
		final = append(final, corev1.EndpointSubset{Addresses: ready, NotReadyAddresses: notReady, Ports: g.ports})
	}
	return SortSubsets(final)
}

// lessAddress orders addresses by IP, then those without a target first,
// then by the target's uid.
func lessAddress(a, b corev1.EndpointAddress) bool {
	switch {
	case a.IP != b.IP:
		return a.IP < b.IP
	case a.TargetRef == nil || b.TargetRef == nil:
		return a.TargetRef == nil && b.TargetRef != nil
	}
	return a.TargetRef.UID < b.TargetRef.UID
}

// hashOf is upstream's hashObject: fnv128a of dump.ForHash.
func hashOf(v any) []byte {
	h := fnv.New128a()
	fmt.Fprintf(h, "%v", dump.ForHash(v))
	return h.Sum(nil)
}

// SortSubsets is upstream's endpoints.SortSubsets.
func SortSubsets(subsets []corev1.EndpointSubset) []corev1.EndpointSubset {
	for i := range subsets {
		ss := &subsets[i]
		sort.Slice(ss.Addresses, func(a, b int) bool { return lessAddress(ss.Addresses[a], ss.Addresses[b]) })
		sort.Slice(ss.NotReadyAddresses, func(a, b int) bool { return lessAddress(ss.NotReadyAddresses[a], ss.NotReadyAddresses[b]) })
		sort.Slice(ss.Ports, func(a, b int) bool { return bytes.Compare(hashOf(ss.Ports[a]), hashOf(ss.Ports[b])) < 0 })
	}
	sort.Slice(subsets, func(a, b int) bool { return bytes.Compare(hashOf(subsets[a]), hashOf(subsets[b])) < 0 })
	return subsets
}
