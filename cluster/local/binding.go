package local

import (
	"fmt"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/value"
)

var bindingGK = groupKind{"", "Binding"}

// bind is what creating a v1 Binding does (the pods/binding subresource,
// how a scheduler assigns a pod): it sets the pod's spec.nodeName and its
// PodScheduled condition, and stores no Binding. A pod already assigned
// or being deleted is a Conflict, as in kube-apiserver.
func (t *txn) bind(binding map[string]any, ns string, o cluster.CreateOptions) (map[string]any, error) {
	name := metaString(binding, "name")
	target, _ := binding["target"].(map[string]any)
	node := str(target, "name")
	if node == "" {
		return nil, cluster.NewInvalid("Binding", name, []cluster.Cause{{Type: "FieldValueRequired", Field: "target.name", Message: "Required value"}})
	}
	k := objKey{gk: podGK, namespace: ns, name: name}
	rec, err := t.load(k)
	if err != nil {
		return nil, err
	}
	if rec == nil {
		return nil, cluster.NewNotFound("pods", name)
	}
	if uid := metaString(binding, "uid"); uid != "" && uid != metaString(rec.obj, "uid") {
		return nil, cluster.NewConflict("pods/binding", name, fmt.Sprintf("the UID in the binding (%s) does not match the UID of the pod", uid))
	}
	pod := value.DeepCopyObject(rec.obj)
	spec, _ := pod["spec"].(map[string]any)
	if spec == nil {
		spec = map[string]any{}
		pod["spec"] = spec
	}
	if isDeleting(pod) {
		return nil, cluster.NewConflict("pods/binding", name, "pod "+name+" is being deleted, cannot be assigned to a host")
	}
	if cur := str(spec, "nodeName"); cur != "" {
		return nil, cluster.NewConflict("pods/binding", name, fmt.Sprintf("pod %s is already assigned to node %q", name, cur))
	}
	spec["nodeName"] = node
	// The PodTopologyLabels admission of kube-apiserver: the node's zone
	// and region labels are copied onto the pod it is bound to.
	if nrec, err := t.load(objKey{gk: groupKind{"", "Node"}, name: node}); err == nil && nrec != nil {
		nmd, _ := nrec.obj["metadata"].(map[string]any)
		nlabels, _ := nmd["labels"].(map[string]any)
		for _, key := range []string{"topology.kubernetes.io/zone", "topology.kubernetes.io/region"} {
			v, ok := nlabels[key].(string)
			if !ok {
				continue
			}
			md, _ := pod["metadata"].(map[string]any)
			labels, _ := md["labels"].(map[string]any)
			if labels == nil {
				labels = map[string]any{}
				md["labels"] = labels
			}
			labels[key] = v
		}
	}
	status, _ := pod["status"].(map[string]any)
	if status == nil {
		status = map[string]any{}
		pod["status"] = status
	}
	conds, _ := status["conditions"].([]any)
	kept := make([]any, 0, len(conds)+1)
	for _, c := range conds {
		if m, _ := c.(map[string]any); str(m, "type") != "PodScheduled" {
			kept = append(kept, c)
		}
	}
	status["conditions"] = append(kept, map[string]any{"type": "PodScheduled", "status": "True", "lastProbeTime": nil, "lastTransitionTime": t.now()})
	if o.DryRun {
		return binding, nil
	}
	if err := t.put(k, pod, rec); err != nil {
		return nil, err
	}
	return binding, nil
}
