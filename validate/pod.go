package validate

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/konverge/konverge/quantity"
)

// Pod specs, as core/validation's ValidatePodSpec validates them, with the
// validation options of kube-apiserver 1.37 defaults (relaxed env var
// names, EnvFiles, container restart rules and pod-level resources on).

const fileModeErrorMsg = "must be a number between 0 and 0777 (octal), both inclusive"

// podSpecOpts says what differs between a Pod and a pod template.
type podSpecOpts struct {
	isPod bool
	name  string // the Pod's name, for ephemeral volume PVC names
}

func podSpec(spec obj, p *path, o podSpecOpts) []Error {
	var errs []Error
	if !has(spec, "terminationGracePeriodSeconds") {
		errs = append(errs, required(p.child("terminationGracePeriodSeconds"), ""))
	}
	grace, hasGrace := iget(spec, "terminationGracePeriodSeconds")
	vols, vErrs := volumes(lget(spec, "volumes"), o, p.child("volumes"))
	errs = append(errs, vErrs...)
	restartPolicy := sget(spec, "restartPolicy")
	ctx := containerCtx{vols: vols, grace: grace, hasGrace: hasGrace, os: mget(spec, "os"), restartPolicy: restartPolicy}
	errs = append(errs, containers(lget(spec, "containers"), ctx, p.child("containers"))...)
	errs = append(errs, initContainers(lget(spec, "initContainers"), lget(spec, "containers"), ctx, p.child("initContainers"))...)
	errs = append(errs, ephemeralContainers(spec, ctx, p.child("ephemeralContainers"))...)
	if r := mget(spec, "resources"); r != nil {
		errs = append(errs, podResources(spec, r, p)...)
	}
	if bget(spec, "hostNetwork") {
		for i, c := range lget(spec, "containers") {
			for j, port := range lget(asObj(c), "ports") {
				hp, cp := ival(asObj(port), "hostPort"), ival(asObj(port), "containerPort")
				if (o.isPod || hp != 0) && hp != cp {
					errs = append(errs, invalid(p.child("containers").at(i).child("ports").at(j).child("hostPort"), hp, "must match `containerPort` when `hostNetwork` is true"))
				}
			}
		}
	}
	errs = append(errs, oneOf(p.child("restartPolicy"), restartPolicy, "Always", "OnFailure", "Never")...)
	dnsPolicy := sget(spec, "dnsPolicy")
	errs = append(errs, oneOf(p.child("dnsPolicy"), dnsPolicy, "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")...)
	errs = append(errs, labels(mget(spec, "nodeSelector"), p.child("nodeSelector"))...)
	if bget(spec, "shareProcessNamespace") && bget(spec, "hostPID") {
		errs = append(errs, invalid(p.child("shareProcessNamespace"), true, "ShareProcessNamespace and HostPID cannot both be enabled"))
	}
	for i, s := range lget(spec, "imagePullSecrets") {
		ref := asObj(s)
		if len(ref) > 1 || (len(ref) == 1 && !has(ref, "name")) {
			errs = append(errs, invalid(p.child("imagePullSecrets").at(i), goValue(`{"Name":`+formatJSON(sget(ref, "name"))+`}`), "only name may be set"))
		}
	}
	if dnsPolicy == "None" {
		if !has(spec, "dnsConfig") {
			errs = append(errs, required(p.child("dnsConfig"), "must provide `dnsConfig` when `dnsPolicy` is None"))
		} else if len(lget(mget(spec, "dnsConfig"), "nameservers")) == 0 {
			errs = append(errs, required(p.child("dnsConfig", "nameservers"), "must provide at least one DNS nameserver when `dnsPolicy` is None"))
		}
	}
	for i, g := range lget(spec, "readinessGates") {
		errs = append(errs, qualifiedName(sget(asObj(g), "conditionType"), p.child("readinessGates").at(i).child("conditionType"))...)
	}
	seenGates := map[string]bool{}
	for i, g := range lget(spec, "schedulingGates") {
		name := sget(asObj(g), "name")
		errs = append(errs, qualifiedName(name, p.child("schedulingGates").at(i))...)
		if seenGates[name] {
			errs = append(errs, duplicate(p.child("schedulingGates").at(i), name))
		}
		seenGates[name] = true
	}
	if sa := sget(spec, "serviceAccountName"); sa != "" {
		for _, msg := range nameIsDNSSubdomain(sa, false) {
			errs = append(errs, invalid(p.child("serviceAccountName"), sa, msg))
		}
	}
	if sa, san := sget(spec, "serviceAccount"), sget(spec, "serviceAccountName"); sa != san {
		errs = append(errs, invalid(p.child("deprecatedServiceAccount"), sa, fmt.Sprintf("must be the same as serviceAccountName: %q", san)))
	}
	if n := sget(spec, "nodeName"); n != "" {
		for _, msg := range nameIsDNSSubdomain(n, false) {
			errs = append(errs, invalid(p.child("nodeName"), n, msg))
		}
	}
	if ads, ok := iget(spec, "activeDeadlineSeconds"); ok && (ads < 1 || ads > math.MaxInt32) {
		errs = append(errs, invalid(p.child("activeDeadlineSeconds"), ads, inclusiveRangeError(1, math.MaxInt32)))
	}
	if h := sget(spec, "hostname"); h != "" {
		errs = append(errs, dns1123Label(h, p.child("hostname"))...)
	}
	if s := sget(spec, "subdomain"); s != "" {
		errs = append(errs, dns1123Label(s, p.child("subdomain"))...)
	}
	errs = append(errs, tolerations(lget(spec, "tolerations"), p.child("tolerations"))...)
	if pc := sget(spec, "priorityClassName"); pc != "" {
		for _, msg := range nameIsDNSSubdomain(pc, false) {
			errs = append(errs, invalid(p.child("priorityClassName"), pc, msg))
		}
	}
	if rc, ok := spec["runtimeClassName"].(string); ok {
		for _, msg := range nameIsDNSSubdomain(rc, false) {
			errs = append(errs, invalid(p.child("runtimeClassName"), rc, msg))
		}
	}
	if pp, ok := spec["preemptionPolicy"].(string); ok {
		errs = append(errs, oneOf(p.child("preemptionPolicy"), pp, "PreemptLowerPriority", "Never")...)
	}
	if ov := mget(spec, "overhead"); ov != nil {
		errs = append(errs, resourceRequirements(obj{"limits": ov}, p.child("overhead"), containerResourceName)...)
	}
	return errs
}

func dns1123Label(v string, p *path) []Error {
	var errs []Error
	for _, msg := range isDNS1123Label(v) {
		errs = append(errs, invalid(p, v, msg))
	}
	return errs
}

func dns1123Subdomain(v string, p *path) []Error {
	var errs []Error
	for _, msg := range isDNS1123Subdomain(v) {
		errs = append(errs, invalid(p, v, msg))
	}
	return errs
}

func qualifiedName(v string, p *path) []Error {
	var errs []Error
	for _, msg := range isQualifiedName(v) {
		errs = append(errs, invalid(p, v, msg))
	}
	return errs
}

func tolerations(l []any, p *path) []Error {
	var errs []Error
	for i, t := range l {
		tol := asObj(t)
		ip := p.at(i)
		key, op, val, effect := sget(tol, "key"), sget(tol, "operator"), sget(tol, "value"), sget(tol, "effect")
		if key != "" {
			errs = append(errs, labelName(key, ip.child("key"))...)
		}
		if key == "" && op != "Exists" {
			errs = append(errs, invalid(ip.child("operator"), op, "operator must be Exists when `key` is empty, which means \"match all values and all keys\""))
		}
		if has(tol, "tolerationSeconds") && effect != "NoExecute" {
			errs = append(errs, invalid(ip.child("effect"), effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"))
		}
		switch op {
		case "Equal", "":
			if msgs := isLabelValue(val); len(msgs) != 0 {
				errs = append(errs, invalid(ip.child("operator"), val, strings.Join(msgs, ";")))
			}
		case "Exists":
			if val != "" {
				errs = append(errs, invalid(ip.child("operator"), val, "value must be empty when `operator` is 'Exists'"))
			}
		default:
			// Lt and Gt need TaintTolerationComparisonOperators (alpha, off).
			errs = append(errs, notSupported(ip.child("operator"), op, "Equal", "Exists"))
		}
		if effect != "" {
			switch effect {
			case "NoSchedule", "PreferNoSchedule", "NoExecute":
			default:
				errs = append(errs, notSupported(ip.child("effect"), effect, "NoSchedule", "PreferNoSchedule", "NoExecute"))
			}
		}
	}
	return errs
}

// --- volumes ---------------------------------------------------------------

// volumeCheckOrder is the order of validateVolumeSource, which differs
// from the declaration order.
var volumeCheckOrder = []string{
	"emptyDir", "hostPath", "gitRepo", "gcePersistentDisk", "awsElasticBlockStore", "secret", "nfs", "iscsi",
	"glusterfs", "flocker", "persistentVolumeClaim", "rbd", "cinder", "cephfs", "quobyte", "downwardAPI",
	"fc", "flexVolume", "configMap", "azureFile", "vsphereVolume", "photonPersistentDisk", "portworxVolume",
	"azureDisk", "storageos", "projected", "scaleIO", "csi", "ephemeral", "image",
}

// volumeErrorName is the field name validateVolumeSource prints for a
// second volume type (it has a few typos of its own).
var volumeErrorName = map[string]string{"downwardAPI": "downwarAPI", "cephfs": "cephFS"}

func volumes(l []any, o podSpecOpts, p *path) (map[string]obj, []Error) {
	var errs []Error
	names := map[string]bool{}
	created := map[string]bool{}
	if o.name != "" {
		for _, v := range l {
			if has(asObj(v), "ephemeral") {
				created[o.name+"-"+sget(asObj(v), "name")] = true
			}
		}
	}
	vols := map[string]obj{}
	for i, v := range l {
		vol := asObj(v)
		ip := p.at(i)
		name := sget(vol, "name")
		el := volumeSource(vol, name, o, ip)
		if name == "" {
			el = append(el, required(ip.child("name"), ""))
		} else {
			el = append(el, dns1123Label(name, ip.child("name"))...)
		}
		if names[name] {
			el = append(el, duplicate(ip.child("name"), name))
		}
		if len(el) == 0 {
			names[name] = true
			vols[name] = vol
		} else {
			errs = append(errs, el...)
		}
		if pvc := mget(vol, "persistentVolumeClaim"); pvc != nil && created[sget(pvc, "claimName")] {
			errs = append(errs, invalid(ip.child("persistentVolumeClaim", "claimName"), sget(pvc, "claimName"), "must not reference a PVC that gets created for an ephemeral volume"))
		}
	}
	return vols, errs
}

func volumeSource(vol obj, name string, o podSpecOpts, p *path) []Error {
	var errs []Error
	n := 0
	for _, k := range volumeCheckOrder {
		src := mget(vol, k)
		if src == nil {
			continue
		}
		if n > 0 {
			ename := k
			if e, ok := volumeErrorName[k]; ok {
				ename = e
			}
			errs = append(errs, forbidden(p.child(ename), "may not specify more than 1 volume type"))
			continue
		}
		n++
		sp := p.child(k)
		switch k {
		case "emptyDir":
			if sl, ok := src["sizeLimit"].(string); ok {
				if q, err := quantity.Parse(sl); err == nil && q.Sign() < 0 {
					errs = append(errs, forbidden(sp.child("sizeLimit"), "SizeLimit field must be a valid resource quantity"))
				}
			}
			if m, ok := iget(src, "mode"); ok && (m > 0o1777 || m < 0) {
				errs = append(errs, invalid(sp.child("mode"), m, "must be a number between 0 and 01777 (octal), both inclusive"))
			}
		case "hostPath":
			hp := sget(src, "path")
			if hp == "" {
				errs = append(errs, required(sp.child("path"), ""))
				break
			}
			errs = append(errs, noBacksteps(hp, sp.child("path"))...)
			if t, ok := src["type"].(string); ok {
				switch t {
				case "", "DirectoryOrCreate", "Directory", "FileOrCreate", "File", "Socket", "CharDevice", "BlockDevice":
				default:
					errs = append(errs, notSupported(sp.child("type"), t, "", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate", "Socket"))
				}
			}
		case "secret":
			if sget(src, "secretName") == "" {
				errs = append(errs, required(sp.child("secretName"), ""))
			}
			errs = append(errs, fileMode(src, "defaultMode", sp)...)
			errs = append(errs, keyToPaths(lget(src, "items"), sp.child("items"))...)
		case "configMap":
			if sget(src, "name") == "" {
				errs = append(errs, required(sp.child("name"), ""))
			}
			errs = append(errs, fileMode(src, "defaultMode", sp)...)
			errs = append(errs, keyToPaths(lget(src, "items"), sp.child("items"))...)
		case "persistentVolumeClaim":
			if sget(src, "claimName") == "" {
				errs = append(errs, required(sp.child("claimName"), ""))
			}
		case "downwardAPI":
			errs = append(errs, fileMode(src, "defaultMode", sp)...)
			for _, it := range lget(src, "items") {
				item := asObj(it)
				if sget(item, "path") == "" {
					errs = append(errs, required(sp.child("path"), ""))
				}
				errs = append(errs, localNonReservedPath(sget(item, "path"), sp.child("path"))...)
				if !has(item, "fieldRef") && !has(item, "resourceFieldRef") {
					errs = append(errs, required(sp, "one of fieldRef and resourceFieldRef is required"))
				}
				errs = append(errs, fileMode(item, "mode", sp)...)
			}
		case "projected":
			errs = append(errs, fileMode(src, "defaultMode", sp)...)
		case "nfs":
			if sget(src, "server") == "" {
				errs = append(errs, required(sp.child("server"), ""))
			}
			if pth := sget(src, "path"); pth == "" {
				errs = append(errs, required(sp.child("path"), ""))
			} else if !strings.HasPrefix(pth, "/") {
				errs = append(errs, invalid(sp.child("path"), pth, "must be an absolute path"))
			}
		case "ephemeral":
			tmpl := mget(src, "volumeClaimTemplate")
			if tmpl == nil {
				errs = append(errs, required(sp.child("volumeClaimTemplate"), ""))
			} else {
				errs = append(errs, templateObjectMeta(mget(tmpl, "metadata"), sp.child("volumeClaimTemplate", "metadata"))...)
				errs = append(errs, pvcSpec(mget(tmpl, "spec"), sp.child("volumeClaimTemplate", "spec"))...)
			}
			if o.name != "" && name != "" {
				pvcName := o.name + "-" + name
				for _, msg := range nameIsDNSSubdomain(pvcName, false) {
					errs = append(errs, invalid(p.child("name"), name, fmt.Sprintf("PVC name %q: %v", pvcName, msg)))
				}
			}
		case "image":
			if sget(src, "reference") == "" {
				errs = append(errs, required(sp.child("reference"), ""))
			}
			errs = append(errs, pullPolicy(sget(src, "pullPolicy"), sp.child("pullPolicy"))...)
		}
	}
	if n == 0 {
		errs = append(errs, required(p, "must specify a volume type"))
	}
	return errs
}

func fileMode(m obj, k string, p *path) []Error {
	if v, ok := iget(m, k); ok && (v > 0o777 || v < 0) {
		return []Error{invalid(p.child(k), v, fileModeErrorMsg)}
	}
	return nil
}

func keyToPaths(items []any, p *path) []Error {
	var errs []Error
	for i, it := range items {
		kp := asObj(it)
		ip := p.at(i)
		if sget(kp, "key") == "" {
			errs = append(errs, required(ip.child("key"), ""))
		}
		if sget(kp, "path") == "" {
			errs = append(errs, required(ip.child("path"), ""))
		}
		errs = append(errs, localNonReservedPath(sget(kp, "path"), ip.child("path"))...)
		errs = append(errs, fileMode(kp, "mode", ip)...)
	}
	return errs
}

func noBacksteps(target string, p *path) []Error {
	for _, item := range strings.Split(filepath.ToSlash(target), "/") {
		if item == ".." {
			return []Error{invalid(p, target, "must not contain '..'")}
		}
	}
	return nil
}

func localDescendingPath(target string, p *path) []Error {
	var errs []Error
	if strings.HasPrefix(target, "/") {
		errs = append(errs, invalid(p, target, "must be a relative path"))
	}
	return append(errs, noBacksteps(target, p)...)
}

func localNonReservedPath(target string, p *path) []Error {
	errs := localDescendingPath(target, p)
	if strings.HasPrefix(target, "..") && !strings.HasPrefix(target, "../") {
		errs = append(errs, invalid(p, target, "must not start with '..'"))
	}
	return errs
}

// --- containers ------------------------------------------------------------

type containerCtx struct {
	vols          map[string]obj
	grace         int64
	hasGrace      bool
	os            obj
	restartPolicy string
}

func containers(l []any, ctx containerCtx, p *path) []Error {
	if len(l) == 0 {
		return []Error{required(p, "")}
	}
	var errs []Error
	names := map[string]bool{}
	for i, c := range l {
		ctr := asObj(c)
		ip := p.at(i)
		errs = append(errs, containerCommon(ctr, ctx, ip)...)
		name := sget(ctr, "name")
		if names[name] {
			errs = append(errs, duplicate(ip.child("name"), name))
		} else {
			names[name] = true
		}
		if lc := mget(ctr, "lifecycle"); lc != nil {
			errs = append(errs, lifecycle(lc, ctx, ip.child("lifecycle"))...)
		}
		errs = append(errs, probes(ctr, ctx, ip)...)
		errs = append(errs, containerRestartPolicy(ctr, ip)...)
	}
	return append(errs, hostPortConflicts(l, p)...)
}

func probes(ctr obj, ctx containerCtx, p *path) []Error {
	var errs []Error
	if pr := mget(ctr, "livenessProbe"); pr != nil {
		pp := p.child("livenessProbe")
		errs = append(errs, probe(pr, ctx, pp)...)
		if ival(pr, "successThreshold") != 1 {
			errs = append(errs, invalid(pp.child("successThreshold"), ival(pr, "successThreshold"), "must be 1"))
		}
	}
	if pr := mget(ctr, "readinessProbe"); pr != nil {
		pp := p.child("readinessProbe")
		errs = append(errs, probe(pr, ctx, pp)...)
		if v, ok := iget(pr, "terminationGracePeriodSeconds"); ok {
			errs = append(errs, invalid(pp.child("terminationGracePeriodSeconds"), v, "must not be set for readinessProbes"))
		}
	}
	if pr := mget(ctr, "startupProbe"); pr != nil {
		pp := p.child("startupProbe")
		errs = append(errs, probe(pr, ctx, pp)...)
		if ival(pr, "successThreshold") != 1 {
			errs = append(errs, invalid(pp.child("successThreshold"), ival(pr, "successThreshold"), "must be 1"))
		}
	}
	return errs
}

func containerRestartPolicy(ctr obj, p *path) []Error {
	var errs []Error
	policy, hasPolicy := ctr["restartPolicy"].(string)
	rules := lget(ctr, "restartPolicyRules")
	if !hasPolicy {
		if len(rules) > 0 {
			errs = append(errs, required(p.child("restartPolicy"), "must specify restartPolicy when restart rules are used"))
		}
		return errs
	}
	switch policy {
	case "Always", "Never", "OnFailure":
	default:
		errs = append(errs, notSupported(p.child("restartPolicy"), policy, "Always", "Never", "OnFailure"))
	}
	if len(rules) > 20 {
		errs = append(errs, tooMany(p.child("restartPolicyRules"), len(rules), 20))
	}
	for i, r := range rules {
		rule := asObj(r)
		rp := p.child("restartPolicyRules").at(i)
		if a := sget(rule, "action"); a != "Restart" {
			errs = append(errs, notSupported(rp.child("action"), a, "Restart"))
		}
		if ec := mget(rule, "exitCodes"); ec != nil {
			if op := sget(ec, "operator"); op != "In" && op != "NotIn" {
				errs = append(errs, notSupported(rp.child("exitCodes", "operator"), op, "In", "NotIn"))
			}
			if n := len(lget(ec, "values")); n > 255 {
				errs = append(errs, tooMany(rp.child("exitCodes", "values"), n, 255))
			}
		} else {
			errs = append(errs, required(rp.child("exitCodes"), "must be specified"))
		}
	}
	return errs
}

func initContainers(l, regular []any, ctx containerCtx, p *path) []Error {
	var errs []Error
	names := map[string]bool{}
	for _, c := range regular {
		names[sget(asObj(c), "name")] = true
	}
	for i, c := range l {
		ctr := asObj(c)
		ip := p.at(i)
		errs = append(errs, containerCommon(ctr, ctx, ip)...)
		policy, hasPolicy := ctr["restartPolicy"].(string)
		restartAlways := hasPolicy && policy == "Always"
		if hasPolicy && !restartAlways {
			errs = append(errs, containerRestartPolicy(ctr, ip)...)
		} else if restartAlways && len(lget(ctr, "restartPolicyRules")) > 0 {
			errs = append(errs, forbidden(ip.child("restartPolicyRules"), "restartPolicyRules are not allowed for init containers with restart policy Always"))
		} else if !hasPolicy && len(lget(ctr, "restartPolicyRules")) > 0 {
			errs = append(errs, required(ip.child("restartPolicy"), "must specify restartPolicy when restart rules are used"))
		}
		name := sget(ctr, "name")
		if names[name] {
			errs = append(errs, duplicate(ip.child("name"), name))
		} else if name != "" {
			names[name] = true
		}
		errs = append(errs, hostPortConflicts([]any{c}, p)...)
		if restartAlways {
			if lc := mget(ctr, "lifecycle"); lc != nil {
				errs = append(errs, lifecycle(lc, ctx, ip.child("lifecycle"))...)
			}
			errs = append(errs, probes(ctr, ctx, ip)...)
		} else {
			for _, k := range []string{"lifecycle", "livenessProbe", "readinessProbe", "startupProbe"} {
				if has(ctr, k) {
					errs = append(errs, forbidden(ip.child(k), "may not be set for init containers without restartPolicy=Always"))
				}
			}
		}
		if !restartAlways {
			for j, rp := range lget(ctr, "resizePolicy") {
				if sget(asObj(rp), "restartPolicy") == "RestartContainer" {
					errs = append(errs, invalid(p.at(i).child("resizePolicy").at(j).child("restartPolicy"), "RestartContainer", "must not be set to 'RestartContainer' for non-sidecar initContainers"))
				}
			}
		}
	}
	return errs
}

// ephemeralContainers checks only what a Pod or template can get wrong at
// create: ephemeral containers are refused there anyway.
func ephemeralContainers(spec obj, ctx containerCtx, p *path) []Error {
	l := lget(spec, "ephemeralContainers")
	if len(l) == 0 {
		return nil
	}
	var errs []Error
	names := map[string]bool{}
	for _, k := range []string{"containers", "initContainers"} {
		for _, c := range lget(spec, k) {
			names[sget(asObj(c), "name")] = true
		}
	}
	other := map[string]bool{}
	for k := range names {
		other[k] = true
	}
	for i, c := range l {
		ctr := asObj(c)
		ip := p.at(i)
		errs = append(errs, containerCommon(ctr, ctx, ip)...)
		name := sget(ctr, "name")
		if names[name] {
			errs = append(errs, duplicate(ip.child("name"), name))
		} else {
			names[name] = true
		}
		if t := sget(ctr, "targetContainerName"); t != "" && !other[t] {
			errs = append(errs, notFound(ip.child("targetContainerName"), t))
		}
	}
	return errs
}

func containerCommon(ctr obj, ctx containerCtx, p *path) []Error {
	var errs []Error
	if name := sget(ctr, "name"); name == "" {
		errs = append(errs, required(p.child("name"), ""))
	} else {
		errs = append(errs, dns1123Label(name, p.child("name"))...)
	}
	if sget(ctr, "image") == "" {
		errs = append(errs, required(p.child("image"), ""))
	}
	errs = append(errs, oneOf(p.child("terminationMessagePolicy"), sget(ctr, "terminationMessagePolicy"), "File", "FallbackToLogsOnError")...)
	devices := map[string]string{}
	for _, d := range lget(ctr, "volumeDevices") {
		devices[sget(asObj(d), "name")] = sget(asObj(d), "devicePath")
	}
	errs = append(errs, containerPorts(lget(ctr, "ports"), p.child("ports"))...)
	errs = append(errs, env(lget(ctr, "env"), p.child("env"))...)
	errs = append(errs, envFrom(lget(ctr, "envFrom"), p.child("envFrom"))...)
	errs = append(errs, volumeMounts(lget(ctr, "volumeMounts"), devices, ctx.vols, p.child("volumeMounts"))...)
	errs = append(errs, pullPolicy(sget(ctr, "imagePullPolicy"), p.child("imagePullPolicy"))...)
	errs = append(errs, resourceRequirements(mget(ctr, "resources"), p.child("resources"), containerResourceName)...)
	for i, rp := range lget(ctr, "resizePolicy") {
		r := asObj(rp)
		ip := p.child("resizePolicy").at(i)
		errs = append(errs, oneOf(ip.child("resourceName"), sget(r, "resourceName"), "cpu", "memory")...)
		errs = append(errs, oneOf(ip.child("restartPolicy"), sget(r, "restartPolicy"), "NotRequired", "RestartContainer")...)
	}
	return errs
}

func pullPolicy(policy string, p *path) []Error {
	return oneOf(p, policy, "Always", "IfNotPresent", "Never")
}

func containerPorts(ports []any, p *path) []Error {
	var errs []Error
	names := map[string]bool{}
	for i, po := range ports {
		port := asObj(po)
		ip := p.at(i)
		if name := sget(port, "name"); name != "" {
			if msgs := isValidPortName(name); len(msgs) != 0 {
				for _, msg := range msgs {
					errs = append(errs, invalid(ip.child("name"), name, msg))
				}
			} else if names[name] {
				errs = append(errs, duplicate(ip.child("name"), name))
			} else {
				names[name] = true
			}
		}
		if cp := ival(port, "containerPort"); cp == 0 {
			errs = append(errs, required(ip.child("containerPort"), ""))
		} else {
			for _, msg := range isValidPortNum(cp) {
				errs = append(errs, invalid(ip.child("containerPort"), cp, msg))
			}
		}
		if hp := ival(port, "hostPort"); hp != 0 {
			for _, msg := range isValidPortNum(hp) {
				errs = append(errs, invalid(ip.child("hostPort"), hp, msg))
			}
		}
		errs = append(errs, protocol(sget(port, "protocol"), ip.child("protocol"))...)
	}
	return errs
}

func protocol(proto string, p *path) []Error {
	return oneOf(p, proto, "SCTP", "TCP", "UDP")
}

func hostPortConflicts(ctrs []any, p *path) []Error {
	var errs []Error
	seen := map[string]bool{}
	for ci, c := range ctrs {
		for pi, po := range lget(asObj(c), "ports") {
			port := asObj(po)
			hp := ival(port, "hostPort")
			if hp == 0 {
				continue
			}
			key := fmt.Sprintf("%s/%s/%d", sget(port, "protocol"), sget(port, "hostIP"), hp)
			if seen[key] {
				errs = append(errs, duplicate(p.at(ci).child("ports").at(pi).child("hostPort"), key))
			} else {
				seen[key] = true
			}
		}
	}
	return errs
}

var validEnvFieldPaths = map[string]bool{
	"metadata.name": true, "metadata.namespace": true, "metadata.uid": true, "spec.nodeName": true,
	"spec.serviceAccountName": true, "status.hostIP": true, "status.hostIPs": true, "status.podIP": true, "status.podIPs": true,
}

func env(vars []any, p *path) []Error {
	var errs []Error
	for i, e := range vars {
		ev := asObj(e)
		ip := p.at(i)
		if name := sget(ev, "name"); name == "" {
			errs = append(errs, required(ip.child("name"), ""))
		} else {
			for _, msg := range isRelaxedEnvVarName(name) {
				errs = append(errs, invalid(ip.child("name"), name, msg))
			}
		}
		errs = append(errs, envValueFrom(ev, ip.child("valueFrom"))...)
	}
	return errs
}

func envValueFrom(ev obj, p *path) []Error {
	vf := mget(ev, "valueFrom")
	if vf == nil {
		return nil
	}
	var errs []Error
	n := 0
	if fr := mget(vf, "fieldRef"); fr != nil {
		n++
		errs = append(errs, objectFieldSelector(fr, p.child("fieldRef"))...)
	}
	if has(vf, "resourceFieldRef") {
		n++
	}
	for _, k := range []string{"configMapKeyRef", "secretKeyRef"} {
		ref := mget(vf, k)
		if ref == nil {
			continue
		}
		n++
		rp := p.child(k)
		for _, msg := range nameIsDNSSubdomain(sget(ref, "name"), false) {
			errs = append(errs, invalid(rp.child("name"), sget(ref, "name"), msg))
		}
		if key := sget(ref, "key"); key == "" {
			errs = append(errs, required(rp.child("key"), ""))
		} else {
			for _, msg := range isConfigMapKey(key) {
				errs = append(errs, invalid(rp.child("key"), key, msg))
			}
		}
	}
	if has(vf, "fileKeyRef") {
		n++
	}
	switch {
	case n == 0:
		errs = append(errs, invalid(p, "", "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef`, `secretKeyRef` or `fileKeyRef`"))
	case sget(ev, "value") != "":
		errs = append(errs, invalid(p, "", "may not be specified when `value` is not empty"))
	case n > 1:
		errs = append(errs, invalid(p, "", "may not have more than one field specified at a time"))
	}
	return errs
}

// objectFieldSelector is validateObjectFieldSelector for env vars.
func objectFieldSelector(fr obj, fp *path) []Error {
	if sget(fr, "apiVersion") == "" {
		return []Error{required(fp.child("apiVersion"), "")}
	}
	fpath := sget(fr, "fieldPath")
	if fpath == "" {
		return []Error{required(fp.child("fieldPath"), "")}
	}
	internal, err := convertDownwardAPIFieldLabel(sget(fr, "apiVersion"), fpath)
	if err != "" {
		return []Error{invalid(fp.child("fieldPath"), fpath, "error converting fieldPath: "+err)}
	}
	if base, sub, ok := splitSubscript(internal); ok {
		switch base {
		case "metadata.annotations":
			return qualifiedName(strings.ToLower(sub), fp)
		case "metadata.labels":
			return qualifiedName(sub, fp)
		}
		return []Error{invalid(fp, base, "does not support subscript")}
	}
	if !validEnvFieldPaths[internal] {
		return []Error{notSupported(fp.child("fieldPath"), internal, "metadata.name", "metadata.namespace", "metadata.uid",
			"spec.nodeName", "spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs")}
	}
	return nil
}

// convertDownwardAPIFieldLabel is the pods helper of the same name; it
// returns the internal field path or an error message.
func convertDownwardAPIFieldLabel(version, label string) (string, string) {
	if version != "v1" {
		return "", "unsupported pod version: " + version
	}
	if base, _, ok := splitSubscript(label); ok {
		if base == "metadata.annotations" || base == "metadata.labels" {
			return label, ""
		}
		return "", "field label does not support subscript: " + label
	}
	switch label {
	case "metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace", "metadata.uid",
		"spec.nodeName", "spec.restartPolicy", "spec.serviceAccountName", "spec.schedulerName",
		"status.phase", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs":
		return label, ""
	case "spec.host":
		return "spec.nodeName", ""
	}
	return "", "field label not supported: " + label
}

// splitSubscript splits "metadata.labels['app']" into its path and key.
func splitSubscript(fp string) (string, string, bool) {
	if !strings.HasSuffix(fp, "']") {
		return fp, "", false
	}
	i := strings.Index(fp, "['")
	if i <= 0 {
		return fp, "", false
	}
	return fp[:i], fp[i+2 : len(fp)-2], true
}

func envFrom(l []any, p *path) []Error {
	var errs []Error
	for i, e := range l {
		ef := asObj(e)
		ip := p.at(i)
		if prefix := sget(ef, "prefix"); prefix != "" {
			for _, msg := range isRelaxedEnvVarName(prefix) {
				errs = append(errs, invalid(ip.child("prefix"), prefix, msg))
			}
		}
		n := 0
		for _, k := range []string{"configMapRef", "secretRef"} {
			ref := mget(ef, k)
			if ref == nil {
				continue
			}
			n++
			if name := sget(ref, "name"); name == "" {
				errs = append(errs, required(ip.child(k, "name"), ""))
			} else {
				for _, msg := range nameIsDNSSubdomain(name, true) {
					errs = append(errs, invalid(ip.child(k, "name"), name, msg))
				}
			}
		}
		if n == 0 {
			errs = append(errs, invalid(p, "", "must specify one of: `configMapRef` or `secretRef`"))
		} else if n > 1 {
			errs = append(errs, invalid(p, "", "may not have more than one field specified at a time"))
		}
	}
	return errs
}

func volumeMounts(mounts []any, devices map[string]string, vols map[string]obj, p *path) []Error {
	var errs []Error
	mountPoints := map[string]bool{}
	for i, m := range mounts {
		mnt := asObj(m)
		ip := p.at(i)
		name, mp := sget(mnt, "name"), sget(mnt, "mountPath")
		if name == "" {
			errs = append(errs, required(ip.child("name"), ""))
		}
		if _, ok := vols[name]; !ok {
			errs = append(errs, notFound(ip.child("name"), name))
		}
		if mp == "" {
			errs = append(errs, required(ip.child("mountPath"), ""))
		}
		if mountPoints[mp] {
			errs = append(errs, invalid(ip.child("mountPath"), mp, "must be unique"))
		}
		mountPoints[mp] = true
		if _, ok := devices[name]; ok {
			errs = append(errs, invalid(ip.child("name"), name, "must not already exist in volumeDevices"))
		}
		for _, dp := range devices {
			if dp == mp {
				errs = append(errs, invalid(ip.child("mountPath"), mp, "must not already exist as a path in volumeDevices"))
				break
			}
		}
		if sp := sget(mnt, "subPath"); sp != "" {
			errs = append(errs, localDescendingPath(sp, p.child("subPath"))...)
		}
		if spe := sget(mnt, "subPathExpr"); spe != "" {
			if sget(mnt, "subPath") != "" {
				errs = append(errs, invalid(ip.child("subPathExpr"), spe, "subPathExpr and subPath are mutually exclusive"))
			}
			errs = append(errs, localDescendingPath(spe, p.child("subPathExpr"))...)
		}
	}
	return errs
}

func lifecycle(lc obj, ctx containerCtx, p *path) []Error {
	var errs []Error
	for _, k := range []string{"postStart", "preStop"} {
		if h := mget(lc, k); h != nil {
			errs = append(errs, handler(h, ctx, p.child(k), true)...)
		}
	}
	if _, ok := lc["stopSignal"].(string); ok && ctx.os == nil {
		errs = append(errs, forbidden(p.child("stopSignal"), "may not be set for containers with empty `spec.os.name`"))
	}
	return errs
}

func probe(pr obj, ctx containerCtx, p *path) []Error {
	errs := handler(pr, ctx, p, false)
	for _, k := range []string{"initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold", "failureThreshold"} {
		errs = append(errs, nonNegativeValue(ival(pr, k), p.child(k))...)
	}
	if v, ok := iget(pr, "terminationGracePeriodSeconds"); ok && v <= 0 {
		errs = append(errs, invalid(p.child("terminationGracePeriodSeconds"), v, "must be greater than 0"))
	}
	return errs
}

// handler is validateHandler: exactly one handler type.
func handler(h obj, ctx containerCtx, p *path, lifecycle bool) []Error {
	var errs []Error
	kinds := []string{"exec", "httpGet", "tcpSocket", "grpc"}
	if lifecycle {
		kinds = []string{"exec", "httpGet", "tcpSocket", "sleep"}
	}
	n := 0
	for _, k := range kinds {
		a := mget(h, k)
		if a == nil {
			continue
		}
		if n > 0 {
			errs = append(errs, forbidden(p.child(k), "may not specify more than 1 handler type"))
			continue
		}
		n++
		ap := p.child(k)
		switch k {
		case "exec":
			if len(lget(a, "command")) == 0 {
				errs = append(errs, required(ap.child("command"), ""))
			}
		case "httpGet":
			if sget(a, "path") == "" {
				errs = append(errs, required(ap.child("path"), ""))
			}
			errs = append(errs, portNumOrName(a["port"], ap.child("port"))...)
			if s := sget(a, "scheme"); s != "HTTP" && s != "HTTPS" {
				errs = append(errs, notSupported(ap.child("scheme"), s, "HTTP", "HTTPS"))
			}
			for _, hdr := range lget(a, "httpHeaders") {
				name := sget(asObj(hdr), "name")
				for _, msg := range isHTTPHeaderName(name) {
					errs = append(errs, invalid(ap.child("httpHeaders"), name, msg))
				}
			}
		case "tcpSocket":
			errs = append(errs, portNumOrName(a["port"], ap.child("port"))...)
		case "grpc":
			errs = append(errs, portNumOrName(ival(a, "port"), ap.child("port"))...)
		case "sleep":
			secs := ival(a, "seconds")
			if ctx.hasGrace && (secs < 0 || secs > ctx.grace) {
				errs = append(errs, invalid(ap, secs, fmt.Sprintf("must be non-negative and less than terminationGracePeriodSeconds (%d)", ctx.grace)))
			}
		}
	}
	if n == 0 {
		errs = append(errs, required(p, "must specify a handler type"))
	}
	return errs
}

// portNumOrName is ValidatePortNumOrName of an IntOrString.
func portNumOrName(v any, p *path) []Error {
	var errs []Error
	switch x := v.(type) {
	case string:
		for _, msg := range isValidPortName(x) {
			errs = append(errs, invalid(p, x, msg))
		}
	case int64:
		for _, msg := range isValidPortNum(x) {
			errs = append(errs, invalid(p, x, msg))
		}
	case nil:
		for _, msg := range isValidPortNum(0) {
			errs = append(errs, invalid(p, int64(0), msg))
		}
	}
	return errs
}

// --- resources -------------------------------------------------------------

type resourceNameFunc func(name string, p *path) []Error

func resourceName(name string, p *path) []Error {
	var errs []Error
	for _, msg := range isQualifiedName(name) {
		errs = append(errs, invalid(p, name, msg))
	}
	if len(errs) != 0 {
		return errs
	}
	if !strings.Contains(name, "/") && !isStandardResourceName(name) {
		return append(errs, invalid(p, name, "must be a standard resource type or fully qualified"))
	}
	return errs
}

func containerResourceName(name string, p *path) []Error {
	errs := resourceName(name, p)
	if !strings.Contains(name, "/") {
		if !isStandardContainerResourceName(name) {
			return append(errs, invalid(p, name, "must be a standard resource for containers"))
		}
	} else if !isNativeResource(name) && !isExtendedResourceName(name) {
		return append(errs, invalid(p, name, "doesn't follow extended resource name standard"))
	}
	return errs
}

var standardResources = map[string]bool{
	"cpu": true, "memory": true, "ephemeral-storage": true, "requests.cpu": true, "requests.memory": true,
	"requests.ephemeral-storage": true, "limits.cpu": true, "limits.memory": true, "limits.ephemeral-storage": true,
	"pods": true, "resourcequotas": true, "services": true, "replicationcontrollers": true, "secrets": true,
	"configmaps": true, "persistentvolumeclaims": true, "storage": true, "requests.storage": true,
	"services.nodeports": true, "services.loadbalancers": true,
}

var integerResources = map[string]bool{
	"pods": true, "resourcequotas": true, "services": true, "replicationcontrollers": true, "secrets": true,
	"configmaps": true, "persistentvolumeclaims": true, "services.nodeports": true, "services.loadbalancers": true,
}

func isHugePages(name string) bool { return strings.HasPrefix(name, "hugepages-") }

func isStandardResourceName(name string) bool {
	return standardResources[name] || isHugePages(name) || strings.HasPrefix(name, "requests.hugepages-")
}

func isStandardContainerResourceName(name string) bool {
	return name == "cpu" || name == "memory" || name == "ephemeral-storage" || isHugePages(name)
}

func isNativeResource(name string) bool {
	return !strings.Contains(name, "/") || strings.Contains(name, "kubernetes.io/")
}

func isExtendedResourceName(name string) bool {
	if isNativeResource(name) || strings.HasPrefix(name, "requests.") {
		return false
	}
	return len(isQualifiedName("requests."+name)) == 0
}

func isOvercommitAllowed(name string) bool { return isNativeResource(name) && !isHugePages(name) }

func isIntegerResource(name string) bool {
	return integerResources[name] || isExtendedResourceName(name)
}

// resourceRequirements is validateResourceRequirements: names, values,
// requests <= limits (== for resources that cannot be overcommitted).
func resourceRequirements(r obj, p *path, nameFn resourceNameFunc) []Error {
	if r == nil {
		return nil
	}
	var errs []Error
	limPath, reqPath := p.child("limits"), p.child("requests")
	limits, requests := mget(r, "limits"), mget(r, "requests")
	limCPUOrMem, reqCPUOrMem, limHuge, reqHuge := false, false, false, false
	for _, name := range sortedKeys(limits) {
		fp := limPath.key(name)
		errs = append(errs, nameFn(name, fp)...)
		q, qs := parseQuantity(limits[name])
		errs = append(errs, quantityValue(name, q, qs, fp)...)
		if isHugePages(name) {
			limHuge = true
		}
		if name == "cpu" || name == "memory" {
			limCPUOrMem = true
		}
	}
	for _, name := range sortedKeys(requests) {
		fp := reqPath.key(name)
		errs = append(errs, nameFn(name, fp)...)
		q, qs := parseQuantity(requests[name])
		errs = append(errs, quantityValue(name, q, qs, fp)...)
		if lv, ok := limits[name]; ok {
			lq, ls := parseQuantity(lv)
			if q.Cmp(lq) != 0 && !isOvercommitAllowed(name) {
				errs = append(errs, invalid(reqPath, qs, fmt.Sprintf("must be equal to %s limit of %s", name, ls)))
			} else if q.Cmp(lq) > 0 {
				errs = append(errs, invalid(reqPath, qs, fmt.Sprintf("must be less than or equal to %s limit of %s", name, ls)))
			}
		} else if !isOvercommitAllowed(name) {
			errs = append(errs, required(limPath, "Limit must be set for non overcommitable resources"))
		}
		if isHugePages(name) {
			reqHuge = true
		}
		if name == "cpu" || name == "memory" {
			reqCPUOrMem = true
		}
	}
	if !limCPUOrMem && !reqCPUOrMem && (reqHuge || limHuge) {
		errs = append(errs, forbidden(p, "HugePages require cpu or memory"))
	}
	return errs
}

// parseQuantity parses a (canonical) quantity of a resource list; it
// returns the string the API server would print.
func parseQuantity(v any) (quantity.Quantity, string) {
	s, _ := v.(string)
	q, err := quantity.Parse(s)
	if err != nil {
		return quantity.Quantity{}, s
	}
	return q, q.String()
}

func quantityValue(name string, q quantity.Quantity, qs string, p *path) []Error {
	var errs []Error
	if q.Sign() < 0 {
		errs = append(errs, invalid(p, qs, isNegativeErrorMsg))
	}
	if isIntegerResource(name) && q.MilliValue()%1000 != 0 {
		errs = append(errs, invalid(p, qs, "must be an integer"))
	}
	return errs
}

// podResources is validatePodResources (PodLevelResources is beta and on),
// without the checks against the containers' sums.
func podResources(spec, r obj, p *path) []Error {
	rp := p.child("resources")
	if os := mget(spec, "os"); sget(os, "name") == "windows" {
		return []Error{forbidden(rp, "may not be set for a windows pod")}
	}
	var errs []Error
	if has(r, "claims") {
		errs = append(errs, forbidden(rp.child("claims"), "claims may not be set for Resources at pod-level"))
	}
	podName := func(name string, fp *path) []Error {
		e := resourceName(name, fp)
		if len(e) != 0 {
			return e
		}
		if name != "cpu" && name != "memory" && !isHugePages(name) {
			return []Error{notSupported(fp, name, "cpu", "hugepages-", "memory")}
		}
		return nil
	}
	return append(errs, resourceRequirements(r, rp, podName)...)
}

// --- pod templates ---------------------------------------------------------

// podTemplateSpec is ValidatePodTemplateSpec. Note that its labels and
// annotations are reported at <template>.labels, not .metadata.labels.
func podTemplateSpec(tmpl obj, p *path) []Error {
	meta := mget(tmpl, "metadata")
	errs := labels(mget(meta, "labels"), p.child("labels"))
	errs = append(errs, annotations(mget(meta, "annotations"), p.child("annotations"))...)
	errs = append(errs, podSpec(mget(tmpl, "spec"), p.child("spec"), podSpecOpts{})...)
	if len(lget(mget(tmpl, "spec"), "ephemeralContainers")) > 0 {
		errs = append(errs, forbidden(p.child("spec", "ephemeralContainers"), "ephemeral containers not allowed in pod template"))
	}
	return errs
}

// templateObjectMeta is ValidateTemplateObjectMeta: only labels and
// annotations may be set.
func templateObjectMeta(meta obj, p *path) []Error {
	errs := annotations(mget(meta, "annotations"), p.child("annotations"))
	errs = append(errs, labels(mget(meta, "labels"), p.child("labels"))...)
	for _, k := range objectMetaFields {
		if k == "labels" || k == "annotations" {
			continue
		}
		if has(meta, k) {
			errs = append(errs, forbidden(p.child(k), "cannot be set"))
		}
	}
	return errs
}

// objectMetaFields are the JSON names of ObjectMeta's fields in
// declaration order.
var objectMetaFields = []string{"name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
	"creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations", "ownerReferences",
	"finalizers", "managedFields"}

// podTemplateLabelsMatch is the `selector` does not match template
// `labels` check of the workloads.
func podTemplateLabelsMatch(sel selector, tmpl obj, p *path) []Error {
	if sel.empty() {
		return nil
	}
	tl := stringMap(mget(tmpl, "metadata"), "labels")
	if !sel.matches(tl) {
		var bad any = goValue("null")
		if tl != nil {
			bad = stringMapValue(tl)
		}
		return []Error{invalid(p.child("metadata", "labels"), bad, "`selector` does not match template `labels`")}
	}
	return nil
}

func stringMapValue(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
