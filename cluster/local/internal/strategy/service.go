package strategy

import "github.com/konverge/konverge/value"

// DropTypeDependentFields is the Service strategy's cleanup when an
// update changes the type: what the old type needed and the new one does
// not goes, unless the update changed it (cluster IPs for ExternalName,
// node ports below NodePort, the health check port, the load balancer's
// settings, the external traffic policy), and only LoadBalancers keep a
// load balancer status.
func DropTypeDependentFields(svc, old map[string]any) {
	spec, _ := svc["spec"].(map[string]any)
	ospec, _ := old["spec"].(map[string]any)
	if spec == nil || ospec == nil {
		return
	}
	typ, otyp := str(spec, "type"), str(ospec, "type")
	needsNodePort := func(t string) bool { return t == "NodePort" || t == "LoadBalancer" }
	if otyp != "ExternalName" && typ == "ExternalName" {
		if value.Equal(spec["clusterIP"], ospec["clusterIP"]) && value.Equal(spec["clusterIPs"], ospec["clusterIPs"]) {
			delete(spec, "clusterIP")
			delete(spec, "clusterIPs")
		}
		if value.Equal(spec["ipFamilies"], ospec["ipFamilies"]) {
			delete(spec, "ipFamilies")
		}
		if value.Equal(spec["ipFamilyPolicy"], ospec["ipFamilyPolicy"]) {
			delete(spec, "ipFamilyPolicy")
		}
	}
	if needsNodePort(otyp) && !needsNodePort(typ) {
		old := map[any]bool{}
		for _, p := range objectList(ospec["ports"]) {
			if n, ok := p["nodePort"]; ok {
				old[n] = true
			}
		}
		same := true
		for _, p := range objectList(spec["ports"]) {
			if n, ok := p["nodePort"]; ok && !old[n] {
				same = false
			}
		}
		if same {
			for _, p := range objectList(spec["ports"]) {
				delete(p, "nodePort")
			}
		}
	}
	needsHC := func(s map[string]any) bool {
		return str(s, "type") == "LoadBalancer" && str(s, "externalTrafficPolicy") == "Local"
	}
	if needsHC(ospec) && !needsHC(spec) && value.Equal(spec["healthCheckNodePort"], ospec["healthCheckNodePort"]) {
		delete(spec, "healthCheckNodePort")
	}
	if otyp == "LoadBalancer" && typ != "LoadBalancer" {
		if a, ok := spec["allocateLoadBalancerNodePorts"]; ok && value.Equal(a, ospec["allocateLoadBalancerNodePorts"]) {
			delete(spec, "allocateLoadBalancerNodePorts")
		}
		if value.Equal(spec["loadBalancerClass"], ospec["loadBalancerClass"]) {
			delete(spec, "loadBalancerClass")
		}
	}
	external := func(s map[string]any) bool {
		t := str(s, "type")
		ips, _ := s["externalIPs"].([]any)
		return t == "LoadBalancer" || t == "NodePort" || len(ips) > 0
	}
	if external(ospec) && !external(spec) && value.Equal(spec["externalTrafficPolicy"], ospec["externalTrafficPolicy"]) {
		delete(spec, "externalTrafficPolicy")
	}
	if typ != "LoadBalancer" {
		if st, ok := svc["status"].(map[string]any); ok {
			st["loadBalancer"] = map[string]any{}
		}
	}
}
