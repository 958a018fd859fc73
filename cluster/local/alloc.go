package local

import (
	"encoding/binary"
	"fmt"
	mathrand "math/rand/v2"
	"net/netip"
	"strconv"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/value"
)

// Services get what kube-apiserver allocates them: a cluster IP from
// 10.96.0.0/12 (the default --service-cluster-ip-range, single-stack IPv4)
// and node ports from 30000-32767. The bucket "allocations" records each
// one ("ip/10.96.12.7", "nodeport/30080") for the Service holding it, kept
// with the stored Services by put and remove, so values are unique and come
// free when their Service goes.

var bucketAlloc = []byte("allocations")

var serviceGK = groupKind{"", "Service"}

var (
	serviceCIDR   = netip.MustParsePrefix("10.96.0.0/12")
	nodePortFirst = 30000
	nodePortLast  = 32767
)

// serviceAllocations lists the allocation keys a Service holds.
func serviceAllocations(svc map[string]any) []string {
	spec, _ := svc["spec"].(map[string]any)
	var keys []string
	ips, _ := spec["clusterIPs"].([]any)
	for _, ip := range ips {
		if s, ok := ip.(string); ok && s != "" && s != "None" {
			keys = append(keys, "ip/"+s)
		}
	}
	ports, _ := spec["ports"].([]any)
	for _, p := range ports {
		pm, _ := p.(map[string]any)
		if n, ok := pm["nodePort"].(int64); ok && n != 0 {
			keys = append(keys, "nodeport/"+strconv.FormatInt(n, 10))
		}
	}
	if n, ok := spec["healthCheckNodePort"].(int64); ok && n != 0 {
		keys = append(keys, "nodeport/"+strconv.FormatInt(n, 10))
	}
	return keys
}

// indexAllocations keeps the allocations bucket for a Service going from
// old to obj (either may be nil).
func (t *txn) indexAllocations(k objKey, old, obj map[string]any) error {
	var before, after []string
	if old != nil {
		before = serviceAllocations(old)
	}
	if obj != nil {
		after = serviceAllocations(obj)
	}
	b := t.tx.Bucket(bucketAlloc)
	holder := []byte(k.namespace + "/" + k.name)
	for _, a := range before {
		if !containsString(after, a) {
			if err := b.Delete([]byte(a)); err != nil {
				return t.wrap("release "+a+" of", k, err)
			}
		}
	}
	for _, a := range after {
		if !containsString(before, a) {
			if err := b.Put([]byte(a), holder); err != nil {
				return t.wrap("allocate "+a+" to", k, err)
			}
		}
	}
	return nil
}

// allocated reports who holds an allocation key: "" when it is free.
func (t *txn) allocated(key string) string {
	return string(t.tx.Bucket(bucketAlloc).Get([]byte(key)))
}

func needsClusterIP(spec map[string]any) bool { return str(spec, "type") != "ExternalName" }

func needsNodePorts(spec map[string]any) bool {
	switch str(spec, "type") {
	case "NodePort":
		return true
	case "LoadBalancer":
		return spec["allocateLoadBalancerNodePorts"] != false
	}
	return false
}

func needsHealthCheckNodePort(spec map[string]any) bool {
	return str(spec, "type") == "LoadBalancer" && str(spec, "externalTrafficPolicy") == "Local"
}

// prepareService fills in a Service's cluster IP, IP families and node
// ports: kept from old on update where the request leaves them out, and
// allocated where still missing. The allocations are recorded when the
// Service is stored.
func (t *txn) prepareService(k objKey, svc, old map[string]any) error {
	spec := child(svc, "spec")
	var oldSpec map[string]any
	if old != nil {
		oldSpec, _ = old["spec"].(map[string]any)
	}
	if !needsClusterIP(spec) {
		return nil
	}
	if oldSpec != nil && needsClusterIP(oldSpec) {
		for _, f := range []string{"clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"} {
			if _, ok := spec[f]; !ok && oldSpec[f] != nil {
				spec[f] = value.DeepCopy(oldSpec[f])
			}
		}
	}
	if oldSpec != nil && needsNodePorts(oldSpec) && needsNodePorts(spec) {
		keepNodePorts(spec, oldSpec)
	}
	if oldSpec != nil && needsHealthCheckNodePort(oldSpec) && needsHealthCheckNodePort(spec) {
		if _, ok := spec["healthCheckNodePort"]; !ok && oldSpec["healthCheckNodePort"] != nil {
			spec["healthCheckNodePort"] = oldSpec["healthCheckNodePort"]
		}
	}
	if _, ok := spec["ipFamilyPolicy"]; !ok {
		spec["ipFamilyPolicy"] = "SingleStack"
	}
	if _, ok := spec["ipFamilies"]; !ok {
		spec["ipFamilies"] = []any{"IPv4"}
	}

	holder := k.namespace + "/" + k.name
	ip := str(spec, "clusterIP")
	if ip == "" {
		if ips, _ := spec["clusterIPs"].([]any); len(ips) > 0 {
			ip, _ = ips[0].(string)
		}
	}
	switch {
	case ip == "None":
	case ip == "":
		var err error
		if ip, err = t.allocateIP(); err != nil {
			return err
		}
	default:
		addr, err := netip.ParseAddr(ip)
		switch {
		case err != nil || !serviceCIDR.Contains(addr):
			return cluster.NewInvalid("Service", k.name, []cluster.Cause{{Type: "FieldValueInvalid", Field: "spec.clusterIPs",
				Message: fmt.Sprintf("Invalid value: []string{%q}: failed to allocate IP %s: the provided IP (%s) is not in the valid range. The range of valid IPs is %s", ip, ip, ip, serviceCIDR)}})
		case t.allocated("ip/"+ip) != "" && t.allocated("ip/"+ip) != holder:
			return cluster.NewInvalid("Service", k.name, []cluster.Cause{{Type: "FieldValueInvalid", Field: "spec.clusterIPs",
				Message: fmt.Sprintf("Invalid value: []string{%q}: failed to allocate IP %s: provided IP is already allocated", ip, ip)}})
		}
	}
	spec["clusterIP"] = ip
	spec["clusterIPs"] = []any{ip}

	taken := map[int64]bool{}
	port := func(path string, n int64) (int64, error) {
		if n == 0 {
			p, err := t.allocateNodePort(taken)
			taken[p] = true
			return p, err
		}
		owner := t.allocated("nodeport/" + strconv.FormatInt(n, 10))
		switch {
		case n < int64(nodePortFirst) || n > int64(nodePortLast):
			return 0, cluster.NewInvalid("Service", k.name, []cluster.Cause{{Type: "FieldValueInvalid", Field: path,
				Message: fmt.Sprintf("Invalid value: %d: provided port is not in the valid range. The range of valid ports is %d-%d", n, nodePortFirst, nodePortLast)}})
		case (owner != "" && owner != holder) || taken[n]:
			return 0, cluster.NewInvalid("Service", k.name, []cluster.Cause{{Type: "FieldValueInvalid", Field: path,
				Message: fmt.Sprintf("Invalid value: %d: provided port is already allocated", n)}})
		}
		taken[n] = true
		return n, nil
	}
	if needsNodePorts(spec) {
		ports, _ := spec["ports"].([]any)
		for i, p := range ports {
			pm, ok := p.(map[string]any)
			if !ok {
				continue
			}
			n, _ := pm["nodePort"].(int64)
			got, err := port(fmt.Sprintf("spec.ports[%d].nodePort", i), n)
			if err != nil {
				return err
			}
			pm["nodePort"] = got
		}
	}
	if needsHealthCheckNodePort(spec) {
		n, _ := spec["healthCheckNodePort"].(int64)
		got, err := port("spec.healthCheckNodePort", n)
		if err != nil {
			return err
		}
		spec["healthCheckNodePort"] = got
	}
	return nil
}

// keepNodePorts gives the ports of an update without a nodePort the one the
// port of the same name had, unless another port took it.
func keepNodePorts(spec, oldSpec map[string]any) {
	used := func(s map[string]any) map[int64]bool {
		out := map[int64]bool{}
		ports, _ := s["ports"].([]any)
		for _, p := range ports {
			pm, _ := p.(map[string]any)
			if n, ok := pm["nodePort"].(int64); ok && n != 0 {
				out[n] = true
			}
		}
		return out
	}
	inNew := used(spec)
	byName := map[string]int64{}
	oldPorts, _ := oldSpec["ports"].([]any)
	for _, p := range oldPorts {
		pm, _ := p.(map[string]any)
		n, _ := pm["nodePort"].(int64)
		byName[str(pm, "name")] = n
	}
	ports, _ := spec["ports"].([]any)
	for _, p := range ports {
		pm, _ := p.(map[string]any)
		if pm == nil {
			continue
		}
		if n, _ := pm["nodePort"].(int64); n == 0 {
			if old := byName[str(pm, "name")]; old != 0 && !inNew[old] {
				pm["nodePort"] = old
				inNew[old] = true
			}
		}
	}
}

// allocateIP picks a free cluster IP at random in the upper part of the
// range, as the API server's allocator does (the lower part is kept for
// IPs chosen by users).
func (t *txn) allocateIP() (string, error) {
	base := serviceCIDR.Addr().As4()
	first := binary.BigEndian.Uint32(base[:])
	size := uint32(1) << (32 - serviceCIDR.Bits())
	reserved := min(max(16, size/16), 256)
	for range 1000 {
		n := first + reserved + mathrand.Uint32N(size-reserved-1)
		var b [4]byte
		binary.BigEndian.PutUint32(b[:], n)
		ip := netip.AddrFrom4(b).String()
		if t.allocated("ip/"+ip) == "" {
			return ip, nil
		}
	}
	return "", internalError("failed to allocate a serviceIP: range is full")
}

// allocateNodePort picks a free node port at random.
func (t *txn) allocateNodePort(taken map[int64]bool) (int64, error) {
	span := nodePortLast - nodePortFirst + 1
	start := mathrand.IntN(span)
	for i := range span {
		n := int64(nodePortFirst + (start+i)%span)
		if !taken[n] && t.allocated("nodeport/"+strconv.FormatInt(n, 10)) == "" {
			return n, nil
		}
	}
	return 0, internalError("failed to allocate a nodePort: range is full")
}
