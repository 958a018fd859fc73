// Package persistentvolume is kube-controller-manager's PersistentVolume
// binder for the embedded cluster (static provisioning): it binds each
// PersistentVolumeClaim to the smallest Available PersistentVolume that
// satisfies it (access modes, capacity, volumeMode, storage class,
// selector), or to the volume it names (spec.volumeName) or that names
// it (a volume's claimRef), writing the volume's claimRef and the
// annotations pv.kubernetes.io/bound-by-controller and
// pv.kubernetes.io/bind-completed, the claim's spec.volumeName and the
// phases, capacity and access modes of both, as upstream's
// PersistentVolumeController does.
//
// A claim of a class with volumeBindingMode WaitForFirstConsumer waits
// (Event WaitForFirstConsumer, or WaitForPodScheduled naming the pods not
// scheduled yet); a claim of a class whose provisioner nobody serves gets
// the provisioner annotations and the ExternalProvisioning Event; a claim
// without class and volume gets FailedBinding. Those Events come again at
// every resync of the claim (every 15 seconds of cluster time), as
// upstream's periodic sync emits them, and as client-go's recorder
// writes them: every occurrence counts, but its spam filter lets 25
// writes through at once, then one per 5 minutes.
//
// When a bound claim goes, its volume is Released and its reclaim policy
// applies: Retain keeps it; Delete deletes a hostPath volume under /tmp
// (as the hostPath deleter does; nothing on disk is touched), leaves a CSI
// volume to its external deleter and marks every other one Failed with
// the Event VolumeFailedDelete and upstream's message.
//
// A StorageClass created after a claim is not seen by the claim's first
// sync: the real binder syncs a claim as soon as it is created, before a
// class that comes later in the same apply exists.
//
// A volume created after a claim (later in the same apply) is bound to
// it at once, where the real binder binds it at the claim's next resync,
// up to 15 seconds later, after an Event saying the claim found none.
//
// The scheduler's part of WaitForFirstConsumer binding (choosing the
// volume on the pod's node and setting its claimRef) is the embedded
// scheduler's (package scheduler, through the kubelet); the binder then
// completes the binding as for any volume that names its claim.
//
// Not done: dynamic provisioning (nobody serves a provisioner in the
// embedded cluster) and the Recycle policy's recycler pod (a recycled
// volume stays Released).
package persistentvolume
