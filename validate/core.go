package validate

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net/netip"
	"strings"

	"github.com/konverge/konverge/quantity"
	"github.com/konverge/konverge/value"
)

// core/v1: Pod, Service, ConfigMap, Secret, Namespace, ServiceAccount,
// PersistentVolumeClaim, ResourceQuota, LimitRange.

const maxSecretSize = 1 * 1024 * 1024

func pod(o, old obj) []Error {
	meta := mget(o, "metadata")
	mp := newPath("metadata")
	sp := newPath("spec")
	spec := mget(o, "spec")
	var errs []Error
	if old != nil {
		errs = objectMetaUpdate(meta, mget(old, "metadata"), mp)
	}
	// validatePodMetadataAndSpec
	errs = append(errs, objectMeta(meta, true, nameIsDNSSubdomain, mp)...)
	errs = append(errs, podSpec(spec, sp, podSpecOpts{isPod: true, name: sget(meta, "name")})...)
	if sget(spec, "serviceAccountName") == "" {
		for vi, v := range lget(spec, "volumes") {
			for si, s := range lget(mget(asObj(v), "projected"), "sources") {
				if has(asObj(s), "serviceAccountToken") {
					errs = append(errs, forbidden(sp.child("volumes").at(vi).child("projected", "sources").at(si).child("serviceAccountToken"), "must not be specified when serviceAccountName is not set"))
				}
			}
		}
	}
	if g, ok := iget(spec, "terminationGracePeriodSeconds"); ok {
		errs = append(errs, nonNegativeValue(g, sp.child("terminationGracePeriodSeconds"))...)
	}
	for _, k := range []string{"containers", "initContainers"} {
		for i, c := range lget(spec, k) {
			img := sget(asObj(c), "image")
			if len(img) != len(strings.TrimSpace(img)) {
				errs = append(errs, invalid(sp.child(k).at(i).child("image"), img, "must not have leading or trailing whitespace"))
			}
		}
	}
	if old == nil {
		if len(lget(spec, "ephemeralContainers")) > 0 {
			errs = append(errs, forbidden(sp.child("ephemeralContainers"), "cannot be set on create"))
		}
		if sget(spec, "nodeName") != "" && len(lget(spec, "schedulingGates")) != 0 {
			errs = append(errs, forbidden(sp.child("nodeName"), "cannot be set until all schedulingGates have been cleared"))
		}
		return errs
	}
	return append(errs, podUpdate(spec, mget(old, "spec"), sp)...)
}

// podUpdate is the update part of ValidatePodUpdate: only images,
// activeDeadlineSeconds, added tolerations, removed scheduling gates and a
// negative grace period turned 1 may change. Its final error carries no
// diff of the specs (kube-apiserver appends one).
func podUpdate(spec, oldSpec obj, sp *path) []Error {
	var errs []Error
	for _, k := range []string{"containers", "initContainers"} {
		nc, oc := lget(spec, k), lget(oldSpec, k)
		if len(nc) != len(oc) {
			return append(errs, forbidden(sp.child(k), "pod updates may not add or remove containers"))
		}
		for i, c := range nc {
			img := sget(asObj(c), "image")
			if img == "" {
				errs = append(errs, required(sp.child(k).at(i).child("image"), ""))
			}
			if len(strings.TrimSpace(img)) != len(img) {
				errs = append(errs, invalid(sp.child(k).at(i).child("image"), img, "must not have leading or trailing whitespace"))
			}
		}
	}
	if ads, ok := iget(spec, "activeDeadlineSeconds"); ok {
		if ads < 0 || ads > math.MaxInt32 {
			return append(errs, invalid(sp.child("activeDeadlineSeconds"), ads, inclusiveRangeError(0, math.MaxInt32)))
		}
		if old, ok := iget(oldSpec, "activeDeadlineSeconds"); ok && old < ads {
			return append(errs, invalid(sp.child("activeDeadlineSeconds"), ads, "must be less than or equal to previous value"))
		}
	} else if has(oldSpec, "activeDeadlineSeconds") {
		errs = append(errs, invalid(sp.child("activeDeadlineSeconds"), goValue("null"), "must not update from a positive integer to nil value"))
	}
	if equal(spec, oldSpec) {
		return errs
	}
	munged := asObj(value.DeepCopy(spec))
	for _, k := range []string{"containers", "initContainers"} {
		oc := lget(oldSpec, k)
		for i, c := range lget(munged, k) {
			if img, ok := asObj(oc[i])["image"]; ok {
				asObj(c)["image"] = img
			}
		}
	}
	for _, k := range []string{"activeDeadlineSeconds", "schedulingGates", "tolerations"} {
		if v, ok := oldSpec[k]; ok {
			munged[k] = v
		} else {
			delete(munged, k)
		}
	}
	if og, ok := iget(oldSpec, "terminationGracePeriodSeconds"); ok && og < 0 && ival(munged, "terminationGracePeriodSeconds") == 1 {
		munged["terminationGracePeriodSeconds"] = og
	}
	if !equal(munged, oldSpec) {
		errs = append(errs, forbidden(sp, "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)"))
	}
	return errs
}

// --- Service ---------------------------------------------------------------

func service(o, old obj) []Error {
	meta := mget(o, "metadata")
	mp := newPath("metadata")
	sp := newPath("spec")
	spec := mget(o, "spec")
	var errs []Error
	if old == nil {
		// RelaxedServiceNameValidation is GA in 1.37: names are DNS labels.
		errs = objectMeta(meta, true, nameIsDNSLabel, mp)
	} else {
		errs = objectMetaUpdate(meta, mget(old, "metadata"), mp)
		errs = append(errs, clusterIPsUpdate(mget(old, "spec"), spec, sp)...)
	}
	t := sget(spec, "type")
	headless := isHeadless(spec)
	if len(lget(spec, "ports")) == 0 && !headless && t != "ExternalName" {
		errs = append(errs, required(sp.child("ports"), ""))
	}
	switch t {
	case "LoadBalancer", "NodePort":
		if headless {
			errs = append(errs, invalid(sp.child("clusterIPs").at(0), "None", "may not be set to 'None' for "+t+" services"))
		}
	case "ExternalName":
		if len(lget(spec, "clusterIPs")) > 0 {
			errs = append(errs, forbidden(sp.child("clusterIPs"), "may not be set for ExternalName services"))
		}
		if len(lget(spec, "ipFamilies")) > 0 {
			errs = append(errs, forbidden(sp.child("ipFamilies"), "may not be set for ExternalName services"))
		}
		if has(spec, "ipFamilyPolicy") {
			errs = append(errs, forbidden(sp.child("ipFamilyPolicy"), "may not be set for ExternalName services"))
		}
		if cname := strings.TrimSuffix(sget(spec, "externalName"), "."); cname != "" {
			errs = append(errs, dns1123Subdomain(cname, sp.child("externalName"))...)
		} else {
			errs = append(errs, required(sp.child("externalName"), ""))
		}
	}
	ports := lget(spec, "ports")
	names := map[string]bool{}
	for i, po := range ports {
		errs = append(errs, servicePort(asObj(po), len(ports) > 1, names, sp.child("ports").at(i))...)
	}
	if sel := mget(spec, "selector"); sel != nil {
		errs = append(errs, labels(sel, sp.child("selector"))...)
	}
	switch sa := sget(spec, "sessionAffinity"); sa {
	case "":
		errs = append(errs, required(sp.child("sessionAffinity"), ""))
	case "ClientIP":
		cfg := mget(spec, "sessionAffinityConfig")
		cp := sp.child("sessionAffinityConfig")
		switch {
		case cfg == nil:
			errs = append(errs, required(cp, "when session affinity type is ClientIP"))
		case !has(cfg, "clientIP"):
			errs = append(errs, required(cp.child("clientIP"), "when session affinity type is ClientIP"))
		default:
			ts, ok := iget(mget(cfg, "clientIP"), "timeoutSeconds")
			tp := cp.child("clientIP", "timeoutSeconds")
			if !ok {
				errs = append(errs, required(tp, "when session affinity type is ClientIP"))
			} else if ts <= 0 || ts > 86400 {
				errs = append(errs, invalid(tp, ts, "must be greater than 0 and less than 86400"))
			}
		}
	case "None":
		if has(spec, "sessionAffinityConfig") {
			errs = append(errs, forbidden(sp.child("sessionAffinityConfig"), "must not be set when session affinity is None"))
		}
	default:
		errs = append(errs, notSupported(sp.child("sessionAffinity"), sa, "ClientIP", "None"))
	}
	if t != "ExternalName" {
		errs = append(errs, clusterIPs(spec, sp)...)
	}
	errs = append(errs, oneOf(sp.child("type"), t, "ClusterIP", "ExternalName", "LoadBalancer", "NodePort")...)
	if t == "ClusterIP" {
		for i, po := range ports {
			if ival(asObj(po), "nodePort") != 0 {
				errs = append(errs, forbidden(sp.child("ports").at(i).child("nodePort"), "may not be used when `type` is 'ClusterIP'"))
			}
		}
	}
	nodePorts := map[string]bool{}
	for i, po := range ports {
		port := asObj(po)
		np := ival(port, "nodePort")
		if np == 0 {
			continue
		}
		key := fmt.Sprintf("%s/%d", sget(port, "protocol"), np)
		if nodePorts[key] {
			errs = append(errs, duplicate(sp.child("ports").at(i).child("nodePort"), np))
		}
		nodePorts[key] = true
	}
	seen := map[string]bool{}
	for i, po := range ports {
		port := asObj(po)
		key := fmt.Sprintf("%s/%d", sget(port, "protocol"), ival(port, "port"))
		if seen[key] {
			errs = append(errs, duplicate(sp.child("ports").at(i), goValue(fmt.Sprintf(`{"Name":"","Protocol":%s,"AppProtocol":null,"Port":%d,"TargetPort":0,"NodePort":0}`, formatJSON(sget(port, "protocol")), ival(port, "port")))))
		}
		seen[key] = true
	}
	if len(lget(spec, "loadBalancerSourceRanges")) > 0 && t != "LoadBalancer" {
		errs = append(errs, forbidden(sp.child("LoadBalancerSourceRanges"), "may only be used when `type` is 'LoadBalancer'"))
	}
	if has(spec, "allocateLoadBalancerNodePorts") && t != "LoadBalancer" {
		errs = append(errs, forbidden(sp.child("allocateLoadBalancerNodePorts"), "may only be used when `type` is 'LoadBalancer'"))
	}
	if t == "LoadBalancer" && !has(spec, "allocateLoadBalancerNodePorts") {
		errs = append(errs, required(newPath("allocateLoadBalancerNodePorts"), ""))
	}
	if t == "LoadBalancer" {
		if c, ok := spec["loadBalancerClass"].(string); ok {
			errs = append(errs, qualifiedName(c, sp.child("loadBalancerClass"))...)
		}
	} else if has(spec, "loadBalancerClass") {
		errs = append(errs, forbidden(sp.child("loadBalancerClass"), "may only be used when `type` is 'LoadBalancer'"))
	}
	externallyAccessible := t == "LoadBalancer" || t == "NodePort" || (t == "ClusterIP" && len(lget(spec, "externalIPs")) > 0)
	etp := sget(spec, "externalTrafficPolicy")
	if !externallyAccessible {
		if etp != "" {
			errs = append(errs, invalid(sp.child("externalTrafficPolicy"), etp, "may only be set for externally-accessible services"))
		}
	} else if etp == "" {
		errs = append(errs, required(sp.child("externalTrafficPolicy"), ""))
	} else if etp != "Cluster" && etp != "Local" {
		errs = append(errs, notSupported(sp.child("externalTrafficPolicy"), etp, "Cluster", "Local"))
	}
	needsHealthCheck := t == "LoadBalancer" && etp == "Local"
	hc := ival(spec, "healthCheckNodePort")
	if !needsHealthCheck {
		if hc != 0 {
			errs = append(errs, invalid(sp.child("healthCheckNodePort"), hc, "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'"))
		}
	}
	// (healthCheckNodePort is allocated by the registry when needed.)
	itp, hasITP := spec["internalTrafficPolicy"].(string)
	if !hasITP && (t == "NodePort" || t == "LoadBalancer" || t == "ClusterIP") {
		errs = append(errs, required(sp.child("internalTrafficPolicy"), ""))
	}
	if hasITP && itp != "Cluster" && itp != "Local" {
		errs = append(errs, notSupported(sp.child("internalTrafficPolicy"), itp, "Cluster", "Local"))
	}
	if td, ok := spec["trafficDistribution"].(string); ok && td != "PreferClose" && td != "PreferSameZone" && td != "PreferSameNode" {
		errs = append(errs, notSupported(sp.child("trafficDistribution"), td, "PreferClose", "PreferSameZone", "PreferSameNode"))
	}
	return errs
}

// clusterIPsUpdate is validateUpgradeDowngradeClusterIPs.
func clusterIPsUpdate(oldSpec, spec obj, sp *path) []Error {
	if sget(spec, "type") == "ExternalName" || sget(oldSpec, "type") == "ExternalName" {
		return nil
	}
	if isHeadless(oldSpec) && isHeadless(spec) {
		return nil
	}
	oldIPs, newIPs := lget(oldSpec, "clusterIPs"), lget(spec, "clusterIPs")
	var bad any = newIPs
	if newIPs == nil {
		bad = goValue("null")
	}
	ip0 := sp.child("clusterIPs").at(0)
	var errs []Error
	switch {
	case len(oldIPs) == len(newIPs):
		for i, ip := range oldIPs {
			if !equal(ip, newIPs[i]) {
				errs = append(errs, invalid(sp.child("clusterIPs").at(i), bad, "may not change once set"))
			}
		}
	case len(oldIPs) > len(newIPs):
		if len(newIPs) == 0 {
			errs = append(errs, invalid(ip0, bad, "primary clusterIP can not be unset"))
		}
		if len(oldIPs) > 0 && len(newIPs) > 0 && !equal(newIPs[0], oldIPs[0]) {
			errs = append(errs, invalid(ip0, bad, "may not change once set"))
		}
		if len(newIPs) == 1 && sget(spec, "ipFamilyPolicy") != "SingleStack" {
			var pol any = goValue("null")
			if p, ok := spec["ipFamilyPolicy"].(string); ok {
				pol = p
			}
			errs = append(errs, invalid(sp.child("ipFamilyPolicy"), pol, "must be set to 'SingleStack' when releasing the secondary clusterIP"))
		}
	default:
		if len(oldIPs) > 0 && !equal(newIPs[0], oldIPs[0]) {
			errs = append(errs, invalid(ip0, bad, "may not change once set"))
		}
	}
	return errs
}

func isHeadless(spec obj) bool {
	ips := lget(spec, "clusterIPs")
	return len(ips) == 1 && ips[0] == "None"
}

func servicePort(port obj, requireName bool, names map[string]bool, p *path) []Error {
	var errs []Error
	name := sget(port, "name")
	if requireName && name == "" {
		errs = append(errs, required(p.child("name"), ""))
	} else if name != "" {
		errs = append(errs, dns1123Label(name, p.child("name"))...)
		if names[name] {
			errs = append(errs, duplicate(p.child("name"), name))
		} else {
			names[name] = true
		}
	}
	for _, msg := range isValidPortNum(ival(port, "port")) {
		errs = append(errs, invalid(p.child("port"), ival(port, "port"), msg))
	}
	errs = append(errs, protocol(sget(port, "protocol"), p.child("protocol"))...)
	errs = append(errs, portNumOrName(port["targetPort"], p.child("targetPort"))...)
	if ap, ok := port["appProtocol"].(string); ok {
		errs = append(errs, qualifiedName(ap, p.child("appProtocol"))...)
	}
	return errs
}

// clusterIPs checks the allocated fields (ValidateServiceClusterIPsRelatedFields);
// the store's allocator fills them in before validation.
func clusterIPs(spec obj, sp *path) []Error {
	var errs []Error
	ipsPath := sp.child("clusterIPs")
	ip := sget(spec, "clusterIP")
	ips := lget(spec, "clusterIPs")
	if ip != "" {
		if len(ips) == 0 {
			errs = append(errs, required(ipsPath, ""))
		} else if ips[0] != ip {
			errs = append(errs, invalid(ipsPath, ips, "first value must match `clusterIP`"))
		}
	} else if len(ips) != 0 {
		errs = append(errs, invalid(ipsPath, ips, "must be empty when `clusterIP` is not specified"))
	}
	seen := map[string]bool{}
	for i, f := range lget(spec, "ipFamilies") {
		fam, _ := f.(string)
		if fam != "IPv4" && fam != "IPv6" {
			errs = append(errs, notSupported(sp.child("ipFamilies").at(i), fam, "IPv4", "IPv6"))
		}
		if seen[fam] {
			errs = append(errs, duplicate(sp.child("ipFamilies").at(i), fam))
		}
		seen[fam] = true
	}
	if pol, ok := spec["ipFamilyPolicy"].(string); ok {
		switch pol {
		case "SingleStack", "PreferDualStack", "RequireDualStack":
		default:
			errs = append(errs, notSupported(sp.child("ipFamilyPolicy"), pol, "PreferDualStack", "RequireDualStack", "SingleStack"))
		}
	}
	bad := false
	for i, v := range ips {
		s, _ := v.(string)
		if i == 0 && s == "None" {
			if len(ips) > 1 {
				bad = true
				errs = append(errs, invalid(ipsPath, ips, "'None' must be the first and only value"))
			}
			continue
		}
		if _, err := netip.ParseAddr(s); err != nil {
			bad = true
			errs = append(errs, invalid(ipsPath.at(i), s, "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"))
		}
	}
	if len(ips) > 2 {
		errs = append(errs, invalid(ipsPath, ips, "may only hold up to 2 values"))
	}
	if bad || isHeadless(spec) {
		return errs
	}
	fams := lget(spec, "ipFamilies")
	for i, v := range ips {
		if i >= len(fams) {
			break
		}
		s, _ := v.(string)
		addr, err := netip.ParseAddr(s)
		if err != nil {
			continue
		}
		if fams[i] == "IPv4" && addr.Is6() && !addr.Is4In6() {
			errs = append(errs, invalid(ipsPath.at(i), s, fmt.Sprintf("expected an IPv4 value as indicated by `ipFamilies[%v]`", i)))
		}
		if fams[i] == "IPv6" && !addr.Is6() {
			errs = append(errs, invalid(ipsPath.at(i), s, fmt.Sprintf("expected an IPv6 value as indicated by `ipFamilies[%v]`", i)))
		}
	}
	return errs
}

// --- ConfigMap, Secret -----------------------------------------------------

func configMap(o, old obj) []Error {
	var errs []Error
	if old != nil {
		errs = objectMetaUpdate(mget(o, "metadata"), mget(old, "metadata"), newPath("metadata"))
		if b, _ := old["immutable"].(bool); b {
			if nb, _ := o["immutable"].(bool); !nb {
				errs = append(errs, forbidden(newPath("immutable"), "field is immutable when `immutable` is set"))
			}
			for _, k := range []string{"data", "binaryData"} {
				if !equalMaps(mget(o, k), mget(old, k)) {
					errs = append(errs, forbidden(newPath(k), "field is immutable when `immutable` is set"))
				}
			}
		}
	}
	errs = append(errs, objectMeta(mget(o, "metadata"), true, nameIsDNSSubdomain, newPath("metadata"))...)
	total := 0
	data, binary := mget(o, "data"), mget(o, "binaryData")
	for _, k := range sortedKeys(data) {
		for _, msg := range isConfigMapKey(k) {
			errs = append(errs, invalid(newPath("data").key(k), k, msg))
		}
		if _, dup := binary[k]; dup {
			errs = append(errs, invalid(newPath("data").key(k), k, "duplicate of key present in binaryData"))
		}
		s, _ := data[k].(string)
		total += len(s)
	}
	for _, k := range sortedKeys(binary) {
		for _, msg := range isConfigMapKey(k) {
			errs = append(errs, invalid(newPath("binaryData").key(k), k, msg))
		}
		total += decodedLen(binary[k])
	}
	if total > maxSecretSize {
		errs = append(errs, tooLong(newPath(""), maxSecretSize))
	}
	return errs
}

// equalMaps compares maps as reflect.DeepEqual compares Go maps: an
// absent map (nil) and an empty one differ. Stored objects have no empty
// maps; a request that sends data: {} has one.
func equalMaps(a, b obj) bool {
	if (a == nil) != (b == nil) {
		return false
	}
	return equal(a, b) || (len(a) == 0 && len(b) == 0)
}

func decodedLen(v any) int {
	s, _ := v.(string)
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return len(s)
	}
	return len(b)
}

func secret(o, old obj) []Error {
	var errs []Error
	meta := mget(o, "metadata")
	if old != nil {
		errs = objectMetaUpdate(meta, mget(old, "metadata"), newPath("metadata"))
		if sget(o, "type") != sget(old, "type") {
			errs = append(errs, invalid(newPath("type"), sget(o, "type"), fieldImmutable))
		}
		if b, _ := old["immutable"].(bool); b {
			if nb, _ := o["immutable"].(bool); !nb {
				errs = append(errs, forbidden(newPath("immutable"), "field is immutable when `immutable` is set"))
			}
			if !equalMaps(mget(o, "data"), mget(old, "data")) {
				errs = append(errs, forbidden(newPath("data"), "field is immutable when `immutable` is set"))
			}
		}
	}
	errs = append(errs, objectMeta(meta, true, nameIsDNSSubdomain, newPath("metadata"))...)
	dp := newPath("data")
	data := mget(o, "data")
	total := 0
	for _, k := range sortedKeys(data) {
		for _, msg := range isConfigMapKey(k) {
			errs = append(errs, invalid(dp.key(k), k, msg))
		}
		total += decodedLen(data[k])
	}
	if total > maxSecretSize {
		errs = append(errs, tooLong(dp, maxSecretSize))
	}
	present := func(k string) bool { _, ok := data[k]; return ok }
	switch sget(o, "type") {
	case "kubernetes.io/service-account-token":
		if sget(mget(meta, "annotations"), "kubernetes.io/service-account.name") == "" {
			errs = append(errs, required(newPath("metadata", "annotations").key("kubernetes.io/service-account.name"), ""))
		}
	case "kubernetes.io/dockercfg", "kubernetes.io/dockerconfigjson":
		key := ".dockercfg"
		if sget(o, "type") == "kubernetes.io/dockerconfigjson" {
			key = ".dockerconfigjson"
		}
		if !present(key) {
			errs = append(errs, required(dp.key(key), ""))
			break
		}
		s, _ := data[key].(string)
		raw, _ := base64.StdEncoding.DecodeString(s)
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			errs = append(errs, invalid(dp.key(key), "<secret contents redacted>", err.Error()))
		}
	case "kubernetes.io/basic-auth":
		if !present("username") && !present("password") {
			errs = append(errs, required(dp.key("username"), ""), required(dp.key("password"), ""))
		}
	case "kubernetes.io/ssh-auth":
		if decodedLen(data["ssh-privatekey"]) == 0 {
			errs = append(errs, required(dp.key("ssh-privatekey"), ""))
		}
	case "kubernetes.io/tls":
		if !present("tls.crt") {
			errs = append(errs, required(dp.key("tls.crt"), ""))
		}
		if !present("tls.key") {
			errs = append(errs, required(dp.key("tls.key"), ""))
		}
	}
	return errs
}

// --- Namespace, ServiceAccount, PersistentVolumeClaim ----------------------

func namespace(o, old obj) []Error {
	if old != nil {
		return objectMetaUpdate(mget(o, "metadata"), mget(old, "metadata"), newPath("metadata"))
	}
	errs := objectMeta(mget(o, "metadata"), false, nameIsDNSLabel, newPath("metadata"))
	for _, f := range lget(mget(o, "spec"), "finalizers") {
		s, _ := f.(string)
		fp := newPath("spec", "finalizers")
		for _, msg := range isQualifiedName(s) {
			errs = append(errs, invalid(fp, s, msg))
		}
		errs = append(errs, kubeFinalizerName(s, fp)...)
	}
	return errs
}

func serviceAccount(o, old obj) []Error {
	var errs []Error
	if old != nil {
		errs = objectMetaUpdate(mget(o, "metadata"), mget(old, "metadata"), newPath("metadata"))
	}
	return append(errs, objectMeta(mget(o, "metadata"), true, nameIsDNSSubdomain, newPath("metadata"))...)
}

func persistentVolumeClaim(o, old obj) []Error {
	var errs []Error
	meta := mget(o, "metadata")
	if old != nil {
		errs = objectMetaUpdate(meta, mget(old, "metadata"), newPath("metadata"))
	}
	errs = append(errs, objectMeta(meta, true, nameIsDNSSubdomain, newPath("metadata"))...)
	spec := mget(o, "spec")
	errs = append(errs, pvcSpec(spec, newPath("spec"))...)
	if old == nil {
		return errs
	}
	oldSpec := mget(old, "spec")
	newClone, oldClone := asObj(value.DeepCopy(spec)), asObj(value.DeepCopy(oldSpec))
	if sget(oldSpec, "volumeName") == "" {
		if v, ok := newClone["volumeName"]; ok {
			oldClone["volumeName"] = v
		} else {
			delete(oldClone, "volumeName")
		}
	}
	if sget(mget(o, "status"), "phase") == "Bound" {
		if req := mget(mget(newClone, "resources"), "requests"); req != nil {
			req["storage"] = mget(mget(oldSpec, "resources"), "requests")["storage"]
		}
		if v, ok := oldClone["volumeAttributesClassName"]; ok {
			newClone["volumeAttributesClassName"] = v
		} else {
			delete(newClone, "volumeAttributesClassName")
		}
	}
	if !equal(newClone, oldClone) {
		errs = append(errs, forbidden(newPath("spec"), "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims"))
	}
	newSize, _ := parseQuantity(mget(mget(spec, "resources"), "requests")["storage"])
	oldSize, _ := parseQuantity(mget(mget(oldSpec, "resources"), "requests")["storage"])
	statusSize, _ := parseQuantity(mget(mget(old, "status"), "capacity")["storage"])
	if newSize.Cmp(oldSize) < 0 && newSize.Cmp(statusSize) <= 0 {
		errs = append(errs, forbidden(newPath("spec", "resources", "requests", "storage"), "field can not be less than status.capacity"))
	}
	if !equal(spec["volumeMode"], oldSpec["volumeMode"]) {
		errs = append(errs, invalid(newPath("volumeMode"), spec["volumeMode"], fieldImmutable))
	}
	return errs
}

var accessModes = []string{"ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"}

func pvcSpec(spec obj, p *path) []Error {
	var errs []Error
	modes := lget(spec, "accessModes")
	if len(modes) == 0 {
		errs = append(errs, required(p.child("accessModes"), "at least 1 access mode is required"))
	}
	if sel := mget(spec, "selector"); sel != nil {
		errs = append(errs, labelSelector(sel, p.child("selector"))...)
	}
	rwop, other := false, false
	for _, m := range modes {
		s, _ := m.(string)
		if !contains(accessModes, s) {
			errs = append(errs, notSupported(p.child("accessModes"), s, accessModes...))
		}
		if s == "ReadWriteOncePod" {
			rwop = true
		} else if contains(accessModes, s) {
			other = true
		}
	}
	if rwop && other {
		errs = append(errs, forbidden(p.child("accessModes"), "may not use ReadWriteOncePod with other access modes"))
	}
	sp := p.child("resources").key("storage")
	if v, ok := mget(mget(spec, "resources"), "requests")["storage"]; !ok {
		errs = append(errs, required(sp, ""))
	} else {
		q, qs := parseQuantity(v)
		if q.Sign() <= 0 {
			errs = append(errs, invalid(sp, qs, "must be greater than zero"))
		}
	}
	if sc, ok := spec["storageClassName"].(string); ok && sc != "" {
		for _, msg := range nameIsDNSSubdomain(sc, false) {
			errs = append(errs, invalid(p.child("storageClassName"), sc, msg))
		}
	}
	if vm, ok := spec["volumeMode"].(string); ok && vm != "Block" && vm != "Filesystem" {
		errs = append(errs, notSupported(p.child("volumeMode"), vm, "Block", "Filesystem"))
	}
	if vac, ok := spec["volumeAttributesClassName"].(string); ok && vac != "" {
		for _, msg := range nameIsDNSSubdomain(vac, false) {
			errs = append(errs, invalid(p.child("volumeAttributesClassName"), vac, msg))
		}
	}
	return errs
}

// resourceQuota is ValidateResourceQuota: spec.hard names are standard quota resources or
// qualified, quantities are not negative, and integers for the resources
// counted in units (pods, services, count/...); spec.scopes and the
// scopeSelector's scopes are known, apply to every resource and do not
// exclude each other, and its operators and values fit.
func resourceQuota(o, old obj) []Error {
	var errs []Error
	if old != nil {
		errs = objectMetaUpdate(mget(o, "metadata"), mget(old, "metadata"), newPath("metadata"))
	}
	errs = append(errs, objectMeta(mget(o, "metadata"), true, nameIsDNSSubdomain, newPath("metadata"))...)
	hard := mget(mget(o, "spec"), "hard")
	hp := newPath("spec", "hard")
	for _, name := range sortedKeys(hard) {
		errs = append(errs, quotaResourceName(hp.key(name), name)...)
		q, qs := parseQuantity(hard[name])
		errs = append(errs, quantityValue(name, q, qs, hp.key(name))...)
	}
	errs = append(errs, quotaScopes(mget(o, "spec"), newPath("spec", "scopes"))...)
	errs = append(errs, quotaScopeSelector(mget(o, "spec"), newPath("spec", "scopeSelector"))...)
	return errs
}

// limitRange is ValidateLimitRange: types are standard or qualified,
// resource names are fit for the type (containers and pods: cpu, memory,
// ephemeral-storage, huge pages, extended resources), the bounds of each
// limit agree (min <= default request
// <= default <= max, ratios at least 1 and within max/min), Pod limits
// have no defaults, PersistentVolumeClaim limits bound storage. Resources
// are checked in name order (kube-apiserver: map order).
func limitRange(o, old obj) []Error {
	var errs []Error
	if old != nil {
		errs = objectMetaUpdate(mget(o, "metadata"), mget(old, "metadata"), newPath("metadata"))
	}
	errs = append(errs, objectMeta(mget(o, "metadata"), true, nameIsDNSSubdomain, newPath("metadata"))...)
	lp := newPath("spec", "limits")
	seen := map[string]bool{}
	for i, l := range lget(mget(o, "spec"), "limits") {
		limit := asObj(l)
		p := lp.at(i)
		typ := sget(limit, "type")
		errs = append(errs, limitType(p.child("type"), typ)...)
		names := func(field string) {
			for _, k := range sortedKeys(mget(limit, field)) {
				errs = append(errs, limitResourceName(typ, p.child(field).key(k), k)...)
			}
		}
		if seen[typ] {
			errs = append(errs, duplicate(p.child("type"), typ))
		}
		seen[typ] = true
		read := func(field string) map[string]quantity.Quantity {
			m := map[string]quantity.Quantity{}
			for k, v := range mget(limit, field) {
				q, _ := parseQuantity(v)
				m[k] = q
			}
			return m
		}
		keys := map[string]bool{}
		add := func(m map[string]quantity.Quantity) {
			for k := range m {
				keys[k] = true
			}
		}
		names("max")
		names("min")
		minQ, maxQ := read("min"), read("max")
		add(maxQ)
		add(minQ)
		defQ, defReqQ := map[string]quantity.Quantity{}, map[string]quantity.Quantity{}
		if typ == "Pod" {
			if len(mget(limit, "default")) > 0 {
				errs = append(errs, forbidden(p.child("default"), "may not be specified when `type` is 'Pod'"))
			}
			if len(mget(limit, "defaultRequest")) > 0 {
				errs = append(errs, forbidden(p.child("defaultRequest"), "may not be specified when `type` is 'Pod'"))
			}
		} else {
			names("default")
			names("defaultRequest")
			defQ, defReqQ = read("default"), read("defaultRequest")
			add(defQ)
			add(defReqQ)
		}
		if typ == "PersistentVolumeClaim" {
			_, hasMin := minQ["storage"]
			_, hasMax := maxQ["storage"]
			if !hasMin && !hasMax {
				errs = append(errs, required(p.child("limits"), "either minimum or maximum storage value is required, but neither was provided"))
			}
		}
		names("maxLimitRequestRatio")
		ratioQ := read("maxLimitRequestRatio")
		add(ratioQ)
		one, _ := quantity.Parse("1")
		for _, k := range sortedKeys(keys) {
			mn, hasMin := minQ[k]
			mx, hasMax := maxQ[k]
			def, hasDef := defQ[k]
			req, hasReq := defReqQ[k]
			ratio, hasRatio := ratioQ[k]
			if hasMin && hasMax && mn.Cmp(mx) > 0 {
				errs = append(errs, invalid(p.child("min").key(k), mn.String(), fmt.Sprintf("min value %s is greater than max value %s", mn, mx)))
			}
			if hasReq && hasMin && mn.Cmp(req) > 0 {
				errs = append(errs, invalid(p.child("defaultRequest").key(k), req.String(), fmt.Sprintf("min value %s is greater than default request value %s", mn, req)))
			}
			if hasReq && hasMax && req.Cmp(mx) > 0 {
				errs = append(errs, invalid(p.child("defaultRequest").key(k), req.String(), fmt.Sprintf("default request value %s is greater than max value %s", req, mx)))
			}
			if hasReq && hasDef && req.Cmp(def) > 0 {
				errs = append(errs, invalid(p.child("defaultRequest").key(k), req.String(), fmt.Sprintf("default request value %s is greater than default limit value %s", req, def)))
			}
			if hasDef && hasMin && mn.Cmp(def) > 0 {
				errs = append(errs, invalid(p.child("default").key(k), mn.String(), fmt.Sprintf("min value %s is greater than default value %s", mn, def)))
			}
			if hasDef && hasMax && def.Cmp(mx) > 0 {
				errs = append(errs, invalid(p.child("default").key(k), mx.String(), fmt.Sprintf("default value %s is greater than max value %s", def, mx)))
			}
			if hasRatio && ratio.Cmp(one) < 0 {
				errs = append(errs, invalid(p.child("maxLimitRequestRatio").key(k), ratio.String(), fmt.Sprintf("ratio %s is less than 1", ratio)))
			}
			if hasRatio && hasMin && hasMax {
				const maxMilli = (1<<63 - 1) / 1000
				r, mnv, mxv := float64(ratio.Value()), mn.Value(), mx.Value()
				if ratio.Value() < maxMilli && mnv < maxMilli && mxv < maxMilli {
					r, mnv, mxv = float64(ratio.MilliValue())/1000, mn.MilliValue(), mx.MilliValue()
				}
				if limit := float64(mxv) / float64(mnv); r > limit {
					errs = append(errs, invalid(p.child("maxLimitRequestRatio").key(k), ratio.String(), fmt.Sprintf("ratio %s is greater than max/min = %f", ratio, limit)))
				}
			}
			if !isOvercommitAllowed(k) && hasDef && hasReq && def.Cmp(req) != 0 {
				errs = append(errs, invalid(p.child("defaultRequest").key(k), req.String(), fmt.Sprintf("default value %s must equal to defaultRequest value %s in %s", def, req, k)))
			}
		}
	}
	return errs
}
