package sim

import (
	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/controller"
	"github.com/konverge/konverge/controller/controlplane"
	"github.com/konverge/konverge/controller/cronjob"
	"github.com/konverge/konverge/controller/daemonset"
	"github.com/konverge/konverge/controller/deployment"
	"github.com/konverge/konverge/controller/disruption"
	"github.com/konverge/konverge/controller/endpoint"
	"github.com/konverge/konverge/controller/endpointslice"
	"github.com/konverge/konverge/controller/event"
	"github.com/konverge/konverge/controller/gc"
	"github.com/konverge/konverge/controller/job"
	"github.com/konverge/konverge/controller/node"
	"github.com/konverge/konverge/controller/persistentvolume"
	"github.com/konverge/konverge/controller/podautoscaler"
	"github.com/konverge/konverge/controller/podgc"
	"github.com/konverge/konverge/controller/replicaset"
	"github.com/konverge/konverge/controller/replication"
	"github.com/konverge/konverge/controller/statefulset"
	"github.com/konverge/konverge/controller/volumeprotection"
	"github.com/konverge/konverge/kubelet"
)

// Controllers returns the controllers of the embedded cluster, in the
// order every round runs them: the HorizontalPodAutoscalers, the Deployment, ReplicaSet, ReplicationController, StatefulSet,
// DaemonSet, CronJob and Job controllers (and the Jobs' time to live), the kubelet of the simulated node (with profile p; nil
// means the default profile), the Endpoints and EndpointSlices of
// Services (and the mirrors of the Endpoints of Services without a
// selector), the node's Lease, the status of PodDisruptionBudgets
// (disruption), the pod garbage collector (podgc: terminated pods over
// the threshold, pods of nodes that are gone), the binder of PersistentVolumes and their
// claims, the protection of claims and volumes in use, the
// garbage collector, kube-apiserver's own kubernetes Service (recreated
// within ten seconds of its deletion),
// then the Event TTL (Events go an hour after their last write, as in
// kube-apiserver). Cascading deletion of dependents happens in the store
// itself (cluster/local), inside the deleting call; the garbage collector
// deletes what is left with owners that do not exist.
//
// This is the one list: add a controller here.
func Controllers(p *kubelet.Profile) []controller.Controller {
	return []controller.Controller{
		podautoscaler.Controller{},
		deployment.New(),
		replicaset.New(),
		replication.Controller{},
		statefulset.New(),
		daemonset.New(),
		cronjob.Controller{},
		job.New(),
		job.TTLAfterFinished{},
		// The binder sees a new claim before the scheduler tries the
		// pods that wait for it again (as kube-controller-manager's
		// reacts to the claim's creation at once).
		persistentvolume.Controller{},
		kubelet.New(p),
		endpoint.New(),
		endpointslice.New(),
		endpointslice.NewMirroring(),
		node.Controller{},
		disruption.Controller{},
		podgc.New(),
		volumeprotection.Controller{},
		gc.Controller{},
		controlplane.KubernetesService{Service: local.KubernetesService(), Manager: local.ManagerAPIServer},
		&event.TTLController{},
	}
}
