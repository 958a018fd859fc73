package defaults

// The SetDefaults_* of the kinds beyond workloads: storage, policy,
// autoscaling, admission registration, scheduling, endpoints and limits.

func init() {
	for k, fn := range map[string]func(map[string]any){
		"v1/PersistentVolume": persistentVolume,
		"v1/Endpoints":        endpoints,
		"v1/LimitRange":       limitRange,
		"v1/ResourceQuota":    func(obj map[string]any) {},
		"admissionregistration.k8s.io/v1/MutatingWebhookConfiguration": func(obj map[string]any) {
			for _, w := range objects(obj, "webhooks") {
				webhook(w)
				defaultPtr(w, "reinvocationPolicy", "Never")
			}
		},
		"admissionregistration.k8s.io/v1/ValidatingWebhookConfiguration": func(obj map[string]any) {
			for _, w := range objects(obj, "webhooks") {
				webhook(w)
			}
		},
		"admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy": func(obj map[string]any) {
			spec := ensure(obj, "spec")
			defaultPtr(spec, "failurePolicy", "Fail")
			if mr := child(spec, "matchConstraints"); mr != nil {
				matchResources(mr)
			}
		},
		"admissionregistration.k8s.io/v1/ValidatingAdmissionPolicyBinding": func(obj map[string]any) {
			if mr := child(ensure(obj, "spec"), "matchResources"); mr != nil {
				matchResources(mr)
			}
		},
		"autoscaling/v1/HorizontalPodAutoscaler": func(obj map[string]any) {
			defaultPtr(ensure(obj, "spec"), "minReplicas", int64(1))
		},
		"autoscaling/v2/HorizontalPodAutoscaler": hpaV2,
		"coordination.k8s.io/v1/Lease":           func(obj map[string]any) {},
		"discovery.k8s.io/v1/EndpointSlice": func(obj map[string]any) {
			for _, p := range objects(obj, "ports") {
				defaultPtr(p, "name", "")
				defaultPtr(p, "protocol", "TCP")
			}
		},
		"node.k8s.io/v1/RuntimeClass":   func(obj map[string]any) {},
		"policy/v1/PodDisruptionBudget": func(obj map[string]any) {},
		"scheduling.k8s.io/v1/PriorityClass": func(obj map[string]any) {
			defaultPtr(obj, "preemptionPolicy", "PreemptLowerPriority")
		},
		"storage.k8s.io/v1/StorageClass": func(obj map[string]any) {
			defaultPtr(obj, "reclaimPolicy", "Delete")
			defaultPtr(obj, "volumeBindingMode", "Immediate")
		},
		"storage.k8s.io/v1/CSIDriver": csiDriver,
	} {
		kindDefaults[k] = fn
	}
}

func persistentVolume(obj map[string]any) {
	defaultString(ensure(obj, "status"), "phase", "Pending")
	spec := ensure(obj, "spec")
	defaultString(spec, "persistentVolumeReclaimPolicy", "Retain")
	defaultPtr(spec, "volumeMode", "Filesystem")
	if hp := child(spec, "hostPath"); hp != nil {
		defaultPtr(hp, "type", "") // HostPathUnset
	}
	resourceList(spec, "capacity")
}

func endpoints(obj map[string]any) {
	for _, ss := range objects(obj, "subsets") {
		for _, p := range objects(ss, "ports") {
			defaultString(p, "protocol", "TCP")
		}
	}
}

// limitRange is SetDefaults_LimitRangeItem: a Container limit's default
// comes from max, and its defaultRequest from default, then from min.
func limitRange(obj map[string]any) {
	for _, item := range objects(ensure(obj, "spec"), "limits") {
		if str(item, "type") != "Container" {
			continue
		}
		def := ensure(item, "default")
		req := ensure(item, "defaultRequest")
		fill := func(to, from map[string]any) {
			for k, v := range from {
				if _, ok := to[k]; !ok {
					to[k] = v
				}
			}
		}
		fill(def, child(item, "max"))
		fill(req, def)
		fill(req, child(item, "min"))
	}
}

func webhook(w map[string]any) {
	defaultPtr(w, "failurePolicy", "Fail")
	defaultPtr(w, "matchPolicy", "Equivalent")
	defaultPtr(w, "namespaceSelector", map[string]any{})
	defaultPtr(w, "objectSelector", map[string]any{})
	defaultPtr(w, "timeoutSeconds", int64(10))
	for _, r := range objects(w, "rules") {
		defaultPtr(r, "scope", "*")
	}
	if svc := child(child(w, "clientConfig"), "service"); svc != nil {
		defaultPtr(svc, "port", int64(443))
	}
}

func matchResources(mr map[string]any) {
	defaultPtr(mr, "matchPolicy", "Equivalent")
	defaultPtr(mr, "namespaceSelector", map[string]any{})
	defaultPtr(mr, "objectSelector", map[string]any{})
	for _, f := range []string{"resourceRules", "excludeResourceRules"} {
		for _, r := range objects(mr, f) {
			defaultPtr(r, "scope", "*")
		}
	}
}

// hpaV2 is SetDefaults_HorizontalPodAutoscaler of autoscaling/v2.
func hpaV2(obj map[string]any) {
	spec := ensure(obj, "spec")
	defaultPtr(spec, "minReplicas", int64(1))
	if m, _ := spec["metrics"].([]any); len(m) == 0 {
		spec["metrics"] = []any{map[string]any{
			"type": "Resource",
			"resource": map[string]any{
				"name":   "cpu",
				"target": map[string]any{"type": "Utilization", "averageUtilization": int64(80)},
			},
		}}
	}
	b := child(spec, "behavior")
	if b == nil {
		return
	}
	up := ensure(b, "scaleUp")
	defaultPtr(up, "stabilizationWindowSeconds", int64(0))
	defaultPtr(up, "selectPolicy", "Max")
	defaultPtr(up, "policies", []any{
		map[string]any{"type": "Pods", "value": int64(4), "periodSeconds": int64(15)},
		map[string]any{"type": "Percent", "value": int64(100), "periodSeconds": int64(15)},
	})
	down := ensure(b, "scaleDown")
	defaultPtr(down, "selectPolicy", "Max")
	defaultPtr(down, "policies", []any{
		map[string]any{"type": "Percent", "value": int64(100), "periodSeconds": int64(15)},
	})
}

// csiDriver is SetDefaults_CSIDriver with 1.37's default feature gates
// (SELinuxMountReadWriteOncePod and VolumeLimitScaling on).
func csiDriver(obj map[string]any) {
	spec := ensure(obj, "spec")
	defaultPtr(spec, "attachRequired", true)
	defaultPtr(spec, "podInfoOnMount", false)
	defaultPtr(spec, "storageCapacity", false)
	defaultPtr(spec, "fsGroupPolicy", "ReadWriteOnceWithFSType")
	if l, _ := spec["volumeLifecycleModes"].([]any); len(l) == 0 {
		spec["volumeLifecycleModes"] = []any{"Persistent"}
	}
	defaultPtr(spec, "requiresRepublish", false)
	defaultPtr(spec, "seLinuxMount", false)
	defaultPtr(spec, "preventPodSchedulingIfMissing", false)
}
