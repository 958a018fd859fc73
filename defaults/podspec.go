package defaults

// Pod specs, wherever they are: in Pods (SetObjectDefaults_Pod) and in the
// pod templates of PodTemplates, ReplicationControllers, Deployments,
// ReplicaSets, StatefulSets, DaemonSets, Jobs and CronJobs (the generated
// SetObjectDefaults_* of each kind call the same defaulters on the
// template, without the Pod-only SetDefaults_Pod).

// podTemplate defaults a PodTemplateSpec (its spec; metadata has no
// defaults).
func podTemplate(tmpl map[string]any) {
	if tmpl == nil {
		return
	}
	podSpec(ensure(tmpl, "spec"))
}

// podSpec applies SetDefaults_PodSpec, then the defaulters of volumes,
// containers and resource lists, in the order the generated code does.
func podSpec(spec map[string]any) {
	// DeprecatedServiceAccount (serviceAccount) mirrors serviceAccountName,
	// which wins when both are set.
	if unsetString(spec, "serviceAccountName") {
		if sa := str(spec, "serviceAccount"); sa != "" {
			spec["serviceAccountName"] = sa
		}
	}
	if sa := str(spec, "serviceAccountName"); sa != "" {
		spec["serviceAccount"] = sa
	} else {
		delete(spec, "serviceAccount")
	}
	defaultString(spec, "dnsPolicy", "ClusterFirst")
	defaultString(spec, "restartPolicy", "Always")
	defaultPtr(spec, "securityContext", map[string]any{})
	defaultPtr(spec, "terminationGracePeriodSeconds", int64(30))
	defaultString(spec, "schedulerName", "default-scheduler")

	for _, v := range objects(spec, "volumes") {
		volume(v)
	}
	for _, k := range []string{"initContainers", "containers", "ephemeralContainers"} {
		for _, c := range objects(spec, k) {
			container(c)
		}
	}
	resourceList(spec, "overhead")
	if r := child(spec, "resources"); r != nil {
		resourceList(r, "limits")
		resourceList(r, "requests")
	}
}

// volumeSources are the fields of VolumeSource, the one-of inlined in
// Volume (every field of core/v1 Volume but its name).
func volumeSources() []string {
	st := loadTables().structs["core_v1.Volume"]
	out := make([]string, 0, len(st.fields))
	for _, f := range st.fields {
		if f.name != "name" {
			out = append(out, f.name)
		}
	}
	return out
}

func volume(v map[string]any) {
	// SetDefaults_Volume: a volume without a source is an emptyDir.
	hasSource := false
	for _, k := range volumeSources() {
		if !unsetPtr(v, k) {
			hasSource = true
			break
		}
	}
	if !hasSource {
		v["emptyDir"] = map[string]any{}
	}
	// ImageVolume (GA, locked on in 1.37).
	if img := child(v, "image"); img != nil && unsetString(img, "pullPolicy") {
		img["pullPolicy"] = pullPolicyFor(str(img, "reference"))
	}
	if hp := child(v, "hostPath"); hp != nil {
		defaultPtr(hp, "type", "") // HostPathUnset
	}
	if s := child(v, "secret"); s != nil {
		defaultPtr(s, "defaultMode", int64(0o644))
	}
	if s := child(v, "iscsi"); s != nil {
		defaultString(s, "iscsiInterface", "default")
	}
	if s := child(v, "rbd"); s != nil {
		defaultString(s, "pool", "rbd")
		defaultString(s, "user", "admin")
		defaultString(s, "keyring", "/etc/ceph/keyring")
	}
	if s := child(v, "downwardAPI"); s != nil {
		defaultPtr(s, "defaultMode", int64(0o644))
		for _, it := range objects(s, "items") {
			if fr := child(it, "fieldRef"); fr != nil {
				defaultString(fr, "apiVersion", "v1")
			}
		}
	}
	if s := child(v, "configMap"); s != nil {
		defaultPtr(s, "defaultMode", int64(0o644))
	}
	if s := child(v, "azureDisk"); s != nil {
		defaultPtr(s, "cachingMode", "ReadWrite")
		defaultPtr(s, "fsType", "ext4")
		defaultPtr(s, "readOnly", false)
		defaultPtr(s, "kind", "Shared")
	}
	if s := child(v, "projected"); s != nil {
		defaultPtr(s, "defaultMode", int64(0o644))
		for _, src := range objects(s, "sources") {
			if d := child(src, "downwardAPI"); d != nil {
				for _, it := range objects(d, "items") {
					if fr := child(it, "fieldRef"); fr != nil {
						defaultString(fr, "apiVersion", "v1")
					}
				}
			}
			if t := child(src, "serviceAccountToken"); t != nil {
				defaultPtr(t, "expirationSeconds", int64(3600))
			}
		}
	}
	if s := child(v, "scaleIO"); s != nil {
		defaultString(s, "storageMode", "ThinProvisioned")
		defaultString(s, "fsType", "xfs")
	}
	if e := child(v, "ephemeral"); e != nil {
		if t := child(e, "volumeClaimTemplate"); t != nil {
			pvcSpec(ensure(t, "spec"))
		}
	}
}

// pvcSpec applies SetDefaults_PersistentVolumeClaimSpec and the resource
// list defaults of its requests and limits.
func pvcSpec(spec map[string]any) {
	defaultPtr(spec, "volumeMode", "Filesystem")
	if r := child(spec, "resources"); r != nil {
		resourceList(r, "limits")
		resourceList(r, "requests")
	}
}

// container applies SetDefaults_Container and the defaults of its ports,
// env, resources, probes and lifecycle handlers.
func container(c map[string]any) {
	if unsetString(c, "imagePullPolicy") {
		c["imagePullPolicy"] = pullPolicyFor(str(c, "image"))
	}
	defaultString(c, "terminationMessagePath", "/dev/termination-log")
	defaultString(c, "terminationMessagePolicy", "File")
	for _, p := range objects(c, "ports") {
		defaultString(p, "protocol", "TCP")
	}
	for _, e := range objects(c, "env") {
		vf := child(e, "valueFrom")
		if fr := child(vf, "fieldRef"); fr != nil {
			defaultString(fr, "apiVersion", "v1")
		}
		if fk := child(vf, "fileKeyRef"); fk != nil {
			defaultPtr(fk, "optional", false)
		}
	}
	if r := child(c, "resources"); r != nil {
		resourceList(r, "limits")
		resourceList(r, "requests")
	}
	for _, k := range []string{"livenessProbe", "readinessProbe", "startupProbe"} {
		if p := child(c, k); p != nil {
			probe(p)
		}
	}
	if l := child(c, "lifecycle"); l != nil {
		for _, k := range []string{"postStart", "preStop"} {
			if h := child(l, k); h != nil {
				if g := child(h, "httpGet"); g != nil {
					httpGet(g)
				}
			}
		}
	}
}

// probe applies SetDefaults_Probe and its handler's defaults.
func probe(p map[string]any) {
	for k, v := range map[string]int64{"timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3} {
		if isZeroInt(p, k) {
			p[k] = v
		}
	}
	if g := child(p, "httpGet"); g != nil {
		httpGet(g)
	}
	if g := child(p, "grpc"); g != nil {
		defaultPtr(g, "service", "")
	}
}

// httpGet applies SetDefaults_HTTPGetAction. (The H2CContainerProbe
// protocol default is alpha and off in 1.37.)
func httpGet(g map[string]any) {
	defaultString(g, "path", "/")
	defaultString(g, "scheme", "HTTP")
}

// pod applies SetDefaults_Pod, the defaults a Pod has that pod templates
// do not, then the pod spec's and the status's.
func pod(obj map[string]any) {
	spec := ensure(obj, "spec")
	if g, ok := spec["terminationGracePeriodSeconds"].(int64); ok && g < 0 {
		spec["terminationGracePeriodSeconds"] = int64(1)
	}
	// Requests default to limits, for containers and init containers.
	for _, k := range []string{"containers", "initContainers"} {
		for _, c := range objects(spec, k) {
			r := child(c, "resources")
			limits := child(r, "limits")
			if limits == nil {
				continue
			}
			req := ensure(r, "requests")
			for name, q := range limits {
				if _, ok := req[name]; !ok {
					req[name] = q
				}
			}
		}
	}
	// PodLevelResources defaulting runs in PrepareForCreate in 1.37
	// (PodLevelResourcesFixDefaulting is on): the store's job.
	defaultPtr(spec, "enableServiceLinks", true)
	if hn, _ := spec["hostNetwork"].(bool); hn {
		for _, k := range []string{"containers", "initContainers"} {
			for _, c := range objects(spec, k) {
				for _, p := range objects(c, "ports") {
					if isZeroInt(p, "hostPort") {
						if cp, ok := p["containerPort"]; ok {
							p["hostPort"] = cp
						}
					}
				}
			}
		}
	}
	podSpec(spec)
	if st := child(obj, "status"); st != nil {
		podStatus(st)
	}
}

// podStatus applies SetDefaults_PodStatus (podIP and podIPs agree, podIP
// wins) and the resource list defaults of the container statuses.
func podStatus(st map[string]any) {
	ip := str(st, "podIP")
	ips := objects(st, "podIPs")
	switch {
	case ip != "" && len(ips) == 0:
		st["podIPs"] = []any{map[string]any{"ip": ip}}
	case ip == "" && len(ips) > 0:
		if first := str(ips[0], "ip"); first != "" {
			st["podIP"] = first
		}
	case ip != "" && len(ips) > 0 && str(ips[0], "ip") != ip:
		st["podIPs"] = []any{map[string]any{"ip": ip}}
	}
	for _, k := range []string{"initContainerStatuses", "containerStatuses", "ephemeralContainerStatuses"} {
		for _, cs := range objects(st, k) {
			resourceList(cs, "allocatedResources")
			if r := child(cs, "resources"); r != nil {
				resourceList(r, "limits")
				resourceList(r, "requests")
			}
		}
	}
	resourceList(st, "allocatedResources")
	if r := child(st, "resources"); r != nil {
		resourceList(r, "limits")
		resourceList(r, "requests")
	}
}
