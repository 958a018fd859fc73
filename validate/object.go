package validate

// kindValidators are the Validate/ValidateUpdate of each registry
// strategy, by apiVersion/kind.
var kindValidators = map[string]func(o, old obj) []Error{
	"apps/v1/Deployment":           deployment,
	"apps/v1/ReplicaSet":           replicaSet,
	"apps/v1/StatefulSet":          statefulSet,
	"apps/v1/DaemonSet":            daemonSet,
	"batch/v1/Job":                 job,
	"batch/v1/CronJob":             cronJob,
	"v1/Pod":                       pod,
	"v1/Service":                   service,
	"v1/ConfigMap":                 configMap,
	"v1/Secret":                    secret,
	"v1/Namespace":                 namespace,
	"v1/ServiceAccount":            serviceAccount,
	"v1/ResourceQuota":             resourceQuota,
	"v1/LimitRange":                limitRange,
	"v1/PersistentVolumeClaim":     persistentVolumeClaim,
	"networking.k8s.io/v1/Ingress": ingress,
}

// Object validates obj as kube-apiserver 1.37 validates a create (old is
// nil) or an update (old is the stored object) of its kind, and returns
// the errors in the order kube-apiserver reports them (errors about the
// keys of a map are sorted by key, where kube-apiserver's order is
// random), without repeated messages.
//
// obj must be what the API server validates: decoded and defaulted
// (defaults.Apply) and prepared by the registry strategy (PrepareForCreate
// or PrepareForUpdate: status reset, Job selector generated, Service IPs
// allocated, metadata.name generated from generateName, namespace set,
// and on update resourceVersion, uid and creationTimestamp filled in from
// old when the request left them out). Objects of kinds Object does not
// know get no errors.
func Object(obj, old map[string]any) []Error {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	v := kindValidators[apiVersion+"/"+kind]
	if v == nil {
		return nil
	}
	return dedupe(v(obj, old))
}

// dedupe drops errors whose message repeats an earlier one, as
// kube-apiserver does when it filters handwritten errors against
// declarative ones (ErrorList.Filter goes through ToAggregate): two
// invalid label values that are the same are one error, causes included.
func dedupe(errs []Error) []Error {
	if len(errs) < 2 {
		return errs
	}
	seen := make(map[string]bool, len(errs))
	out := errs[:0:0]
	for _, e := range errs {
		msg := e.Error()
		if seen[msg] {
			continue
		}
		seen[msg] = true
		out = append(out, e)
	}
	return out
}

// Known reports whether Object validates the kind apiVersion/kind.
func Known(apiVersion, kind string) bool { return kindValidators[apiVersion+"/"+kind] != nil }
