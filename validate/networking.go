package validate

import (
	"fmt"
	"net/netip"
	"strings"
)

// networking.k8s.io/v1: Ingress.

func ingress(o, old obj) []Error {
	meta := mget(o, "metadata")
	var errs []Error
	if old != nil {
		errs = objectMetaUpdate(meta, mget(old, "metadata"), newPath("metadata"))
	}
	errs = append(errs, objectMeta(meta, true, nameIsDNSSubdomain, newPath("metadata"))...)
	spec := mget(o, "spec")
	sp := newPath("spec")
	rules := lget(spec, "rules")
	if len(rules) == 0 && !has(spec, "defaultBackend") {
		var bad any = goValue("null")
		if rules != nil {
			bad = rules
		}
		errs = append(errs, invalid(sp, bad, "either `defaultBackend` or `rules` must be specified"))
	}
	if db := mget(spec, "defaultBackend"); db != nil {
		errs = append(errs, ingressBackend(db, sp.child("defaultBackend"))...)
	}
	for i, r := range rules {
		rule := asObj(r)
		rp := sp.child("rules").at(i)
		if host := sget(rule, "host"); host != "" {
			if _, err := netip.ParseAddr(host); err == nil {
				errs = append(errs, invalid(rp.child("host"), host, "must be a DNS name, not an IP address"))
			}
			if strings.Contains(host, "*") {
				for _, msg := range isWildcardDNS1123Subdomain(host) {
					errs = append(errs, invalid(rp.child("host"), host, msg))
				}
			} else {
				for _, msg := range isDNS1123Subdomain(host) {
					errs = append(errs, invalid(rp.child("host"), host, msg))
				}
			}
		}
		if http := mget(rule, "http"); http != nil {
			hp := rp.child("http")
			paths := lget(http, "paths")
			if len(paths) == 0 {
				errs = append(errs, required(hp.child("paths"), ""))
			}
			for j, pa := range paths {
				errs = append(errs, ingressPath(asObj(pa), hp.child("paths").at(j))...)
			}
		}
	}
	for ti, t := range lget(spec, "tls") {
		tls := asObj(t)
		tp := sp.child("tls").at(ti)
		for hi, h := range lget(tls, "hosts") {
			host, _ := h.(string)
			check := isDNS1123Subdomain
			if strings.Contains(host, "*") {
				check = isWildcardDNS1123Subdomain
			}
			for _, msg := range check(host) {
				errs = append(errs, invalid(tp.child("hosts").at(hi), host, msg))
			}
		}
		if sn := sget(tls, "secretName"); sn != "" {
			for _, msg := range nameIsDNSSubdomain(sn, false) {
				errs = append(errs, invalid(tp.child("secretName"), sn, msg))
			}
		}
	}
	if cn, ok := spec["ingressClassName"].(string); ok {
		for _, msg := range nameIsDNSSubdomain(cn, false) {
			errs = append(errs, invalid(sp.child("ingressClassName"), cn, msg))
		}
	}
	if old == nil {
		if a, ok := mget(meta, "annotations")["kubernetes.io/ingress.class"].(string); ok {
			if cn, ok := spec["ingressClassName"].(string); ok && a != cn {
				errs = append(errs, invalid(newPath("annotations").child("kubernetes.io/ingress.class"), a, "must match `ingressClassName` when both are specified"))
			}
		}
	}
	return errs
}

func ingressPath(pa obj, p *path) []Error {
	pt, ok := pa["pathType"].(string)
	if !ok {
		return []Error{required(p.child("pathType"), "pathType must be specified")}
	}
	var errs []Error
	pth := sget(pa, "path")
	switch pt {
	case "Exact", "Prefix":
		if !strings.HasPrefix(pth, "/") {
			errs = append(errs, invalid(p.child("path"), pth, "must be an absolute path"))
		}
		if pth != "" {
			for _, seq := range []string{"//", "/./", "/../", "%2f", "%2F"} {
				if strings.Contains(pth, seq) {
					errs = append(errs, invalid(p.child("path"), pth, fmt.Sprintf("must not contain '%s'", seq)))
				}
			}
			for _, suf := range []string{"/..", "/."} {
				if strings.HasSuffix(pth, suf) {
					errs = append(errs, invalid(p.child("path"), pth, fmt.Sprintf("cannot end with '%s'", suf)))
				}
			}
		}
	case "ImplementationSpecific":
		if pth != "" && !strings.HasPrefix(pth, "/") {
			errs = append(errs, invalid(p.child("path"), pth, "must be an absolute path"))
		}
	default:
		errs = append(errs, notSupported(p.child("pathType"), pt, "Exact", "ImplementationSpecific", "Prefix"))
	}
	return append(errs, ingressBackend(mget(pa, "backend"), p.child("backend"))...)
}

// pathSegmentName is content.IsPathSegmentName.
func pathSegmentName(name string) []string {
	var errs []string
	if name == "." || name == ".." {
		errs = append(errs, fmt.Sprintf(`may not be '%s'`, name))
	}
	for _, illegal := range []string{"/", "%"} {
		if strings.Contains(name, illegal) {
			errs = append(errs, fmt.Sprintf(`may not contain '%s'`, illegal))
		}
	}
	return errs
}

func ingressBackend(b obj, p *path) []Error {
	res, svc := mget(b, "resource"), mget(b, "service")
	switch {
	case res != nil && svc != nil:
		return []Error{invalid(p, "", "cannot set both resource and service backends")}
	case res != nil:
		var errs []Error
		rp := p.child("resource")
		if g, ok := res["apiGroup"].(string); ok {
			for _, msg := range isDNS1123Subdomain(g) {
				errs = append(errs, invalid(rp.child("apiGroup"), g, msg))
			}
		}
		for _, k := range []string{"kind", "name"} {
			v := sget(res, k)
			if v == "" {
				errs = append(errs, required(rp.child(k), ""))
				continue
			}
			for _, msg := range pathSegmentName(v) {
				errs = append(errs, invalid(rp.child(k), v, msg))
			}
		}
		return errs
	case svc != nil:
		var errs []Error
		if name := sget(svc, "name"); name == "" {
			errs = append(errs, required(p.child("service", "name"), ""))
		} else {
			// RelaxedServiceNameValidation is GA: DNS labels.
			for _, msg := range nameIsDNSLabel(name, false) {
				errs = append(errs, invalid(p.child("service", "name"), name, msg))
			}
		}
		port := mget(svc, "port")
		pname, pnum := sget(port, "name"), ival(port, "number")
		switch {
		case pname != "" && pnum != 0:
			errs = append(errs, invalid(p, "", "cannot set both port name & port number"))
		case pname != "":
			for _, msg := range isValidPortName(pname) {
				errs = append(errs, invalid(p.child("service", "port", "name"), pname, msg))
			}
		case pnum != 0:
			for _, msg := range isValidPortNum(pnum) {
				errs = append(errs, invalid(p.child("service", "port", "number"), pnum, msg))
			}
		default:
			errs = append(errs, required(p, "port name or number is required"))
		}
		return errs
	}
	return []Error{invalid(p, "", "resource or service backend is required")}
}
