// Package podautoscaler is the HorizontalPodAutoscaler controller of the
// embedded cluster, after kube-controller-manager 1.37's
// (pkg/controller/podautoscaler) in a cluster without a metrics server:
// every 15 seconds of cluster time from its creation (the controller's
// default sync period), and at once when its spec changes, an HPA reads its target's scale subresource,
// brings the replicas inside [minReplicas, maxReplicas] through it
// (SuccessfulRescale), and otherwise fails to read its metrics as the
// real controller does when no metrics API is served
// (FailedGetResourceMetric, FailedGetPodsMetric, ...,
// FailedComputeMetricsReplicas), with upstream's conditions AbleToScale,
// ScalingActive and ScaledToZero and its status fields. ScalingLimited
// comes only from metrics that can be read, so it never appears here.
//
// The controller keeps no state: whether an HPA's current period was
// already carried out is read from the Events it recorded (every period
// of an HPA with replicas records one; the others change nothing when
// run again).
package podautoscaler
