package describe

import (
	"fmt"
	"net"
	"net/url"
	"sort"
	"strings"

	p "github.com/konverge/konverge/internal/printer"
	"github.com/konverge/konverge/quantity"
)

func (d *describer) pod() error {
	w, o := d.w, d.obj
	d.nameNamespace()
	if p.Has(o, "spec", "priority") {
		w.Write(0, "Priority:\t%d\n", p.Int(o, "spec", "priority"))
	}
	if s := p.Str(o, "spec", "priorityClassName"); s != "" {
		w.Write(0, "Priority Class Name:\t%s\n", s)
	}
	if s := p.Str(o, "spec", "runtimeClassName"); s != "" {
		w.Write(0, "Runtime Class Name:\t%s\n", s)
	}
	if s := p.Str(o, "spec", "serviceAccountName"); s != "" {
		w.Write(0, "Service Account:\t%s\n", s)
	}
	if n := p.Str(o, "spec", "nodeName"); n == "" {
		w.Write(0, "Node:\t<none>\n")
	} else {
		w.Write(0, "Node:\t%s\n", n+"/"+p.Str(o, "status", "hostIP"))
	}
	if p.Has(o, "status", "startTime") {
		w.Write(0, "Start Time:\t%s\n", d.rfc1123(p.Time(o, "status", "startTime")))
	}
	d.labelsAnnotations()
	phase := p.Str(o, "status", "phase")
	if p.Has(o, "metadata", "deletionTimestamp") && phase != "Failed" && phase != "Succeeded" {
		w.Write(0, "Status:\tTerminating (lasts %s)\n", p.Since(p.Time(o, "metadata", "deletionTimestamp"), d.opts.Now))
		w.Write(0, "Termination Grace Period:\t%ds\n", p.Int(o, "metadata", "deletionGracePeriodSeconds"))
	} else {
		w.Write(0, "Status:\t%s\n", phase)
	}
	if s := p.Str(o, "status", "reason"); s != "" {
		w.Write(0, "Reason:\t%s\n", s)
	}
	if s := p.Str(o, "status", "message"); s != "" {
		w.Write(0, "Message:\t%s\n", s)
	}
	if sp := p.Map(o, "spec", "securityContext", "seccompProfile"); sp != nil {
		w.Write(0, "SeccompProfile:\t%s\n", p.Str(sp, "type"))
		if p.Str(sp, "type") == "Localhost" {
			w.Write(0, "LocalhostProfile:\t%s\n", p.Str(sp, "localhostProfile"))
		}
	}
	w.Write(0, "IP:\t%s\n", p.Str(o, "status", "podIP"))
	if ips := p.List(o, "status", "podIPs"); len(ips) == 0 {
		w.Write(0, "IPs:\t<none>\n")
	} else {
		w.Write(0, "IPs:\n")
		for _, ip := range ips {
			w.Write(1, "IP:\t%s\n", p.Str(ip, "ip"))
		}
	}
	if cb := controlledBy(o); cb != "" {
		w.Write(0, "Controlled By:\t%s\n", cb)
	}
	if s := p.Str(o, "status", "nominatedNodeName"); s != "" {
		w.Write(0, "NominatedNodeName:\t%s\n", s)
	}
	if r := p.Map(o, "spec", "resources"); r != nil {
		w.Write(0, "Resources:\n")
		describeResources(w, r, 1)
	}
	env := podEnvResolver(o)
	if ic := p.List(o, "spec", "initContainers"); len(ic) > 0 {
		describeContainers(w, "Init Containers", ic, p.List(o, "status", "initContainerStatuses"), env, "", d)
	}
	describeContainers(w, "Containers", p.List(o, "spec", "containers"), p.List(o, "status", "containerStatuses"), env, "", d)
	if gates := p.List(o, "spec", "readinessGates"); len(gates) > 0 {
		w.Write(0, "Readiness Gates:\n  Type\tStatus\n")
		for _, g := range gates {
			status := "<none>"
			for _, c := range p.List(o, "status", "conditions") {
				if p.Str(c, "type") == p.Str(g, "conditionType") {
					status = p.Str(c, "status")
					break
				}
			}
			w.Write(1, "%v \t%v \n", p.Str(g, "conditionType"), status)
		}
	}
	if conds := p.List(o, "status", "conditions"); len(conds) > 0 {
		w.Write(0, "Conditions:\n  Type\tStatus\n")
		for _, c := range conds {
			w.Write(1, "%v \t%v \n", p.Str(c, "type"), p.Str(c, "status"))
		}
	}
	describeVolumes(w, p.List(o, "spec", "volumes"), "")
	qos := p.Str(o, "status", "qosClass")
	if qos == "" {
		qos = computeQOS(o)
	}
	w.Write(0, "QoS Class:\t%s\n", qos)
	printLabels(w, "", "Node-Selectors", "\t", p.StringMap(o, "spec", "nodeSelector"))
	printTolerations(w, "", "Tolerations", "\t", p.List(o, "spec", "tolerations"))
	return d.describeEvents()
}

// podEnvResolver resolves the fieldRef environment variables of a pod.
func podEnvResolver(pod map[string]any) func(fieldPath string) string {
	return func(fp string) string {
		switch fp {
		case "metadata.name":
			return p.Str(pod, "metadata", "name")
		case "metadata.namespace":
			return p.Str(pod, "metadata", "namespace")
		case "metadata.uid":
			return p.Str(pod, "metadata", "uid")
		case "spec.nodeName":
			return p.Str(pod, "spec", "nodeName")
		case "spec.serviceAccountName":
			return p.Str(pod, "spec", "serviceAccountName")
		case "status.podIP":
			return p.Str(pod, "status", "podIP")
		case "status.hostIP":
			return p.Str(pod, "status", "hostIP")
		}
		if k, ok := strings.CutPrefix(fp, "metadata.labels['"); ok {
			return p.StringMap(pod, "metadata", "labels")[strings.TrimSuffix(k, "']")]
		}
		if k, ok := strings.CutPrefix(fp, "metadata.annotations['"); ok {
			return p.StringMap(pod, "metadata", "annotations")[strings.TrimSuffix(k, "']")]
		}
		return ""
	}
}

// computeQOS is the pod's QoS class as the API server computes it when
// status.qosClass is unset.
func computeQOS(pod map[string]any) string {
	var cs []any
	cs = append(cs, p.List(pod, "spec", "initContainers")...)
	cs = append(cs, p.List(pod, "spec", "containers")...)
	any := false
	guaranteed := true
	for _, c := range cs {
		for _, r := range []string{"cpu", "memory"} {
			lim := norm(p.Map(c, "resources", "limits")[r])
			req := norm(p.Map(c, "resources", "requests")[r])
			if req == "" {
				req = lim
			}
			if (lim != "" && lim != "0") || (req != "" && req != "0") {
				any = true
			}
			if lim == "" || req != lim {
				guaranteed = false
			}
		}
	}
	switch {
	case !any:
		return "BestEffort"
	case guaranteed:
		return "Guaranteed"
	}
	return "Burstable"
}

func norm(v any) string {
	if v == nil {
		return ""
	}
	n, err := quantity.Normalize(v)
	if err != nil {
		return p.Scalar(v)
	}
	return p.Scalar(n)
}

// describePodTemplate is kubectl's DescribePodTemplate.
func describePodTemplate(w *prefixWriter, t map[string]any) {
	w.Write(0, "Pod Template:\n")
	if t == nil {
		w.Write(1, "<unset>")
		return
	}
	printLabels(w, "", "  Labels", "\t", p.StringMap(t, "metadata", "labels"))
	if a := p.StringMap(t, "metadata", "annotations"); len(a) > 0 {
		printAnnotations(w, "  Annotations", a)
	}
	if s := p.Str(t, "spec", "serviceAccountName"); s != "" {
		w.Write(1, "Service Account:\t%s\n", s)
	}
	if ic := p.List(t, "spec", "initContainers"); len(ic) > 0 {
		describeContainers(w, "Init Containers", ic, nil, nil, "  ", nil)
	}
	describeContainers(w, "Containers", p.List(t, "spec", "containers"), nil, nil, "  ", nil)
	describeVolumes(w, p.List(t, "spec", "volumes"), "  ")
	if s := p.Str(t, "spec", "priorityClassName"); s != "" {
		w.Write(1, "Priority Class Name:\t%s\n", s)
	}
	printLabels(w, "", "  Node-Selectors", "\t", p.StringMap(t, "spec", "nodeSelector"))
	printTolerations(w, "", "  Tolerations", "\t", p.List(t, "spec", "tolerations"))
}

func describeContainers(w *prefixWriter, label string, containers, statuses []any, env func(string) string, space string, d *describer) {
	byName := map[string]map[string]any{}
	for _, s := range statuses {
		if m, ok := s.(map[string]any); ok {
			byName[p.Str(m, "name")] = m
		}
	}
	none := ""
	if len(containers) == 0 {
		none = " <none>"
	}
	w.Write(0, "%s%s:%s\n", space, label, none)
	nameIndent := ""
	if space != "" {
		nameIndent = " "
	}
	for _, c := range containers {
		st, ok := byName[p.Str(c, "name")]
		w.Write(1, "%s%v:\n", nameIndent, p.Str(c, "name"))
		if ok {
			w.Write(2, "Container ID:\t%s\n", p.Str(st, "containerID"))
		}
		w.Write(2, "Image:\t%s\n", p.Str(c, "image"))
		if ok {
			w.Write(2, "Image ID:\t%s\n", p.Str(st, "imageID"))
		}
		ports, hostPorts := containerPorts(c)
		if strings.Contains(ports, ",") {
			w.Write(2, "Ports:\t%s\n", ports)
		} else {
			w.Write(2, "Port:\t%s\n", orNone(ports))
		}
		if strings.Contains(hostPorts, ",") {
			w.Write(2, "Host Ports:\t%s\n", hostPorts)
		} else {
			w.Write(2, "Host Port:\t%s\n", orNone(hostPorts))
		}
		if sp := p.Map(c, "securityContext", "seccompProfile"); sp != nil {
			w.Write(2, "SeccompProfile:\t%s\n", p.Str(sp, "type"))
			if p.Str(sp, "type") == "Localhost" {
				w.Write(3, "LocalhostProfile:\t%s\n", p.Str(sp, "localhostProfile"))
			}
		}
		if cmd := p.List(c, "command"); len(cmd) > 0 {
			w.Write(2, "Command:\n")
			for _, s := range cmd {
				for _, l := range strings.Split(p.Scalar(s), "\n") {
					w.Write(3, "%s\n", l)
				}
			}
		}
		if args := p.List(c, "args"); len(args) > 0 {
			w.Write(2, "Args:\n")
			for _, s := range args {
				for _, l := range strings.Split(p.Scalar(s), "\n") {
					w.Write(3, "%s\n", l)
				}
			}
		}
		if ok {
			describeState(w, d, "State", p.Map(st, "state"))
			if p.Has(st, "lastState", "terminated") {
				describeState(w, d, "Last State", p.Map(st, "lastState"))
			}
			ready := "False"
			if p.Bool(st, "ready") {
				ready = "True"
			}
			w.Write(2, "Ready:\t%v\n", ready)
			w.Write(2, "Restart Count:\t%d\n", p.Int(st, "restartCount"))
		}
		describeResources(w, p.Map(c, "resources"), 2)
		for _, pr := range []struct{ field, title string }{{"livenessProbe", "Liveness"}, {"readinessProbe", "Readiness"}, {"startupProbe", "Startup"}} {
			if probe := p.Map(c, pr.field); probe != nil {
				w.Write(2, "%s:\t%s\n", pr.title, describeProbe(probe))
			}
		}
		if ef := p.List(c, "envFrom"); len(ef) > 0 {
			w.Write(2, "Environment Variables from:\n")
			for _, e := range ef {
				from, name, optional := "", "", false
				if r := p.Map(e, "configMapRef"); r != nil {
					from, name, optional = "ConfigMap", p.Str(r, "name"), p.Bool(r, "optional")
				} else if r := p.Map(e, "secretRef"); r != nil {
					from, name, optional = "Secret", p.Str(r, "name"), p.Bool(r, "optional")
				}
				if pre := p.Str(e, "prefix"); pre == "" {
					w.Write(3, "%s\t%s\tOptional: %t\n", name, from, optional)
				} else {
					w.Write(3, "%s\t%s with prefix '%s'\tOptional: %t\n", name, from, pre, optional)
				}
			}
		}
		describeEnv(w, p.List(c, "env"), env)
		describeMounts(w, c)
	}
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

func containerPorts(c any) (ports, hostPorts string) {
	var ps, hs []string
	for _, cp := range p.List(c, "ports") {
		proto := p.Str(cp, "protocol")
		s := fmt.Sprintf("%d/%s", p.Int(cp, "containerPort"), proto)
		h := fmt.Sprintf("%d/%s", p.Int(cp, "hostPort"), proto)
		if n := p.Str(cp, "name"); n != "" {
			s += " (" + n + ")"
			h += " (" + n + ")"
		}
		ps = append(ps, s)
		hs = append(hs, h)
	}
	return strings.Join(ps, ", "), strings.Join(hs, ", ")
}

func describeState(w *prefixWriter, d *describer, name string, state map[string]any) {
	rfc := func(t string) string {
		if d == nil {
			return t
		}
		return d.rfc1123(p.Time(t))
	}
	switch {
	case p.Map(state, "running") != nil:
		w.Write(2, "%s:\tRunning\n", name)
		w.Write(3, "Started:\t%v\n", rfc(p.Str(state, "running", "startedAt")))
	case p.Map(state, "waiting") != nil:
		w.Write(2, "%s:\tWaiting\n", name)
		if r := p.Str(state, "waiting", "reason"); r != "" {
			w.Write(3, "Reason:\t%s\n", r)
		}
	case p.Map(state, "terminated") != nil:
		t := p.Map(state, "terminated")
		w.Write(2, "%s:\tTerminated\n", name)
		if r := p.Str(t, "reason"); r != "" {
			w.Write(3, "Reason:\t%s\n", r)
		}
		if m := p.Str(t, "message"); m != "" {
			w.Write(3, "Message:\t%s\n", m)
		}
		w.Write(3, "Exit Code:\t%d\n", p.Int(t, "exitCode"))
		if s := p.Int(t, "signal"); s > 0 {
			w.Write(3, "Signal:\t%d\n", s)
		}
		w.Write(3, "Started:\t%s\n", rfc(p.Str(t, "startedAt")))
		w.Write(3, "Finished:\t%s\n", rfc(p.Str(t, "finishedAt")))
	default:
		w.Write(2, "%s:\tWaiting\n", name)
	}
}

func describeResources(w *prefixWriter, r map[string]any, level int) {
	for _, f := range []struct{ field, title string }{{"limits", "Limits"}, {"requests", "Requests"}} {
		m := p.Map(r, f.field)
		if len(m) == 0 {
			continue
		}
		w.Write(level, "%s:\n", f.title)
		for _, k := range sortedKeys(m) {
			w.Write(level+1, "%s:\t%s\n", k, norm(m[k]))
		}
	}
}

func describeProbe(pr map[string]any) string {
	attrs := fmt.Sprintf("delay=%ds timeout=%ds period=%ds successThreshold=%d failureThreshold=%d",
		p.Int(pr, "initialDelaySeconds"), p.Int(pr, "timeoutSeconds"), p.Int(pr, "periodSeconds"),
		p.Int(pr, "successThreshold"), p.Int(pr, "failureThreshold"))
	switch {
	case p.Has(pr, "exec"):
		var cmd []string
		for _, c := range p.List(pr, "exec", "command") {
			cmd = append(cmd, p.Scalar(c))
		}
		return fmt.Sprintf("exec [%s] %s", strings.Join(cmd, " "), attrs)
	case p.Has(pr, "httpGet"):
		h := p.Map(pr, "httpGet")
		u := &url.URL{Scheme: strings.ToLower(p.Str(h, "scheme")), Path: p.Str(h, "path")}
		if port := p.Scalar(h["port"]); port != "" {
			u.Host = net.JoinHostPort(p.Str(h, "host"), port)
		} else {
			u.Host = p.Str(h, "host")
		}
		return fmt.Sprintf("http-get %s %s", u.String(), attrs)
	case p.Has(pr, "tcpSocket"):
		return fmt.Sprintf("tcp-socket %s:%s %s", p.Str(pr, "tcpSocket", "host"), p.Scalar(p.Map(pr, "tcpSocket")["port"]), attrs)
	case p.Has(pr, "grpc"):
		return fmt.Sprintf("grpc <pod>:%d %s %s", p.Int(pr, "grpc", "port"), p.Str(pr, "grpc", "service"), attrs)
	}
	return "unknown " + attrs
}

func describeEnv(w *prefixWriter, env []any, resolve func(string) string) {
	if len(env) == 0 {
		w.Write(2, "Environment:\t<none>\n")
		return
	}
	w.Write(2, "Environment:\n")
	for _, e := range env {
		name := p.Str(e, "name")
		vf := p.Map(e, "valueFrom")
		if vf == nil {
			for i, s := range strings.Split(p.Str(e, "value"), "\n") {
				if i == 0 {
					w.Write(3, "%s:\t%s\n", name, s)
				} else {
					w.Write(3, "\t%s\n", s)
				}
			}
			continue
		}
		switch {
		case p.Has(vf, "fieldRef"):
			v := ""
			if resolve != nil {
				v = resolve(p.Str(vf, "fieldRef", "fieldPath"))
			}
			w.Write(3, "%s:\t%s (%s:%s)\n", name, v, p.Str(vf, "fieldRef", "apiVersion"), p.Str(vf, "fieldRef", "fieldPath"))
		case p.Has(vf, "resourceFieldRef"):
			w.Write(3, "%s:\t%s (%s)\n", name, "", p.Str(vf, "resourceFieldRef", "resource"))
		case p.Has(vf, "secretKeyRef"):
			r := p.Map(vf, "secretKeyRef")
			w.Write(3, "%s:\t<set to the key '%s' in secret '%s'>\tOptional: %t\n", name, p.Str(r, "key"), p.Str(r, "name"), p.Bool(r, "optional"))
		case p.Has(vf, "configMapKeyRef"):
			r := p.Map(vf, "configMapKeyRef")
			w.Write(3, "%s:\t<set to the key '%s' of config map '%s'>\tOptional: %t\n", name, p.Str(r, "key"), p.Str(r, "name"), p.Bool(r, "optional"))
		}
	}
}

func describeMounts(w *prefixWriter, c any) {
	mounts := append([]any(nil), p.List(c, "volumeMounts")...)
	if len(mounts) == 0 {
		w.Write(2, "Mounts:\t<none>\n")
	} else {
		w.Write(2, "Mounts:\n")
	}
	sort.SliceStable(mounts, func(i, j int) bool { return p.Str(mounts[i], "mountPath") < p.Str(mounts[j], "mountPath") })
	for _, m := range mounts {
		flags := []string{"rw"}
		if p.Bool(m, "readOnly") {
			flags = []string{"ro"}
		}
		if sp := p.Str(m, "subPath"); sp != "" {
			flags = append(flags, fmt.Sprintf("path=%q", sp))
		}
		w.Write(3, "%s from %s (%s)\n", p.Str(m, "mountPath"), p.Str(m, "name"), strings.Join(flags, ","))
	}
}

func describeVolumes(w *prefixWriter, vols []any, space string) {
	if len(vols) == 0 {
		w.Write(0, "%sVolumes:\t<none>\n", space)
		return
	}
	w.Write(0, "%sVolumes:\n", space)
	nameIndent := ""
	if space != "" {
		nameIndent = " "
	}
	for _, v := range vols {
		w.Write(1, "%s%v:\n", nameIndent, p.Str(v, "name"))
		switch {
		case p.Has(v, "hostPath"):
			w.Write(2, "Type:\tHostPath (bare host directory volume)\n    Path:\t%v\n    HostPathType:\t%v\n", p.Str(v, "hostPath", "path"), p.Str(v, "hostPath", "type"))
		case p.Has(v, "emptyDir"):
			ed := p.Map(v, "emptyDir")
			w.Write(2, "Type:\tEmptyDir (a temporary directory that shares a pod's lifetime)\n    Medium:\t%s\n", p.Str(ed, "medium"))
			if l, ok := ed["sizeLimit"]; ok {
				w.Write(2, "SizeLimit:\t%s\n", norm(l))
			} else {
				w.Write(2, "SizeLimit:\t<unset>\n")
			}
		case p.Has(v, "secret"):
			w.Write(2, "Type:\tSecret (a volume populated by a Secret)\n    SecretName:\t%v\n    Optional:\t%v\n", p.Str(v, "secret", "secretName"), p.Bool(v, "secret", "optional"))
		case p.Has(v, "configMap"):
			w.Write(2, "Type:\tConfigMap (a volume populated by a ConfigMap)\n    Name:\t%v\n    Optional:\t%v\n", p.Str(v, "configMap", "name"), p.Bool(v, "configMap", "optional"))
		case p.Has(v, "persistentVolumeClaim"):
			w.Write(2, "Type:\tPersistentVolumeClaim (a reference to a PersistentVolumeClaim in the same namespace)\n    ClaimName:\t%v\n    ReadOnly:\t%v\n", p.Str(v, "persistentVolumeClaim", "claimName"), p.Bool(v, "persistentVolumeClaim", "readOnly"))
		default:
			for k := range p.Map(v) {
				if k != "name" {
					w.Write(2, "Type:\t%s\n", k)
				}
			}
		}
	}
}

func printTolerations(w *prefixWriter, initialIndent, title, innerIndent string, tols []any) {
	w.Write(0, "%s%s:%s", initialIndent, title, innerIndent)
	if len(tols) == 0 {
		w.WriteLine("<none>")
		return
	}
	tols = append([]any(nil), tols...)
	sort.SliceStable(tols, func(i, j int) bool { return p.Str(tols[i], "key") < p.Str(tols[j], "key") })
	for i, t := range tols {
		if i != 0 {
			w.Write(0, "%s", initialIndent)
			w.Write(0, "%s", innerIndent)
		}
		w.Write(0, "%s", p.Str(t, "key"))
		if v := p.Str(t, "value"); v != "" {
			w.Write(0, "=%s", v)
		}
		if e := p.Str(t, "effect"); e != "" {
			w.Write(0, ":%s", e)
		}
		if p.Str(t, "operator") == "Exists" && p.Str(t, "value") == "" {
			if p.Str(t, "key") != "" || p.Str(t, "effect") != "" {
				w.Write(0, " op=Exists")
			} else {
				w.Write(0, "op=Exists")
			}
		}
		if p.Has(t, "tolerationSeconds") {
			w.Write(0, " for %ds", p.Int(t, "tolerationSeconds"))
		}
		w.Write(0, "\n")
	}
}
