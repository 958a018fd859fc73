// Package health tells whether a Kubernetes object has become what its
// spec asks for: Current, InProgress, Failed (with a reason), Terminating
// or NotFound, with the semantics of kstatus (sigs.k8s.io/cli-utils), which
// GitOps tools share, and kubectl rollout status's messages for the kinds
// that roll out.
//
// Assess reads one object as a client reads it (a map from the API) and
// does no I/O; package wait polls a cluster until a set of objects is
// Current.
//
// # Kinds
//
//   - Deployment, StatefulSet, DaemonSet: Current when the controller has
//     observed the latest generation and kubectl rollout status would say
//     the rollout is done; the message is rollout status's line. A
//     Deployment whose Progressing condition says ProgressDeadlineExceeded
//     is Failed. Rollout gives rollout status's own answer.
//   - ReplicaSet: Current when every replica is ready and available.
//   - Job: Current when Complete (or suspended), Failed when its Failed
//     condition is true.
//   - Pod: Current when Ready or Succeeded; Failed when it Failed, or when a
//     container waits in CrashLoopBackOff, ImagePullBackOff, ErrImagePull,
//     InvalidImageName or CreateContainerConfigError (kstatus fails only
//     CrashLoopBackOff; an image that cannot be pulled is as final for a
//     rollout).
//   - Service: Current unless it is a LoadBalancer without ingress yet.
//   - PersistentVolumeClaim: Current when Bound, Failed when Lost.
//   - CustomResourceDefinition: Current when Established, Failed when its
//     names are not accepted.
//   - Namespace: Current when Active.
//   - Anything else, custom resources included: the standard conditions.
//     Stalled=True is Failed, Reconciling=True is InProgress, Ready=True is
//     Current and Ready=False or Unknown InProgress; without them the
//     object is Current.
//
// For every kind, an object with a deletionTimestamp is Terminating, and
// one whose status.observedGeneration (or a condition's) is behind its
// metadata.generation is InProgress.
package health
