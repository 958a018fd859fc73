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
//   - Deployment, StatefulSet, DaemonSet: InProgress with kubectl rollout
//     status's line while rollout status would wait; then, as kstatus,
//     InProgress until every replica is updated, available and ready with
//     none left to terminate (and a Deployment's Available and Progressing
//     conditions say so); then Current, with rollout status's last line.
//     A Deployment whose Progressing condition says ProgressDeadlineExceeded
//     is Failed. Rollout gives rollout status's own answer.
//   - ReplicaSet, Service, PersistentVolumeClaim, CustomResourceDefinition:
//     as kstatus (a LoadBalancer Service is Current once it has a cluster
//     IP; a CRD is Current when Established, Failed when its names are not
//     accepted).
//   - Job: Current when Complete (or suspended), Failed when its Failed
//     condition is true, InProgress otherwise.
//   - Pod: Current when Running and Ready, or Succeeded; Failed when it
//     Failed, or when a container waits in CrashLoopBackOff,
//     ImagePullBackOff, ErrImagePull, InvalidImageName or
//     CreateContainerConfigError; InProgress otherwise.
//   - Namespace: Current when Active.
//   - Anything else, custom resources included: the standard conditions.
//     Reconciling=True is InProgress, Stalled=True is Failed (the first of
//     the two in the list wins, as in kstatus), Ready=True is Current and
//     Ready=False or Unknown InProgress; without them the object is
//     Current.
//
// # Differences from kstatus
//
// TestAssessMatchesKstatus compares Assess with kstatus on random objects
// of these kinds; they agree except on purpose: a Job that runs is
// InProgress (kstatus: Current once started, so that an apply does not
// wait for it; a GitOps sync waits for it to complete), a Pod that Failed
// is Failed (kstatus: Current, it has completed), a container that cannot
// pull its image fails its Pod and so does a crash loop in any phase
// (kstatus: a crash loop while Running), a PVC whose volume is Lost is
// Failed, an unschedulable Pod stays InProgress (kstatus fails it after 15
// seconds of wall time), a StatefulSet with the OnDelete strategy waits
// for its pods to be ready, and a custom resource's Ready condition counts
// (kstatus reads Reconciling and Stalled only).
//
// For every kind, an object with a deletionTimestamp is Terminating, and
// one whose status.observedGeneration (or a condition's) is behind its
// metadata.generation is InProgress.
package health
