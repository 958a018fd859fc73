// Package fidelity holds the golden corpus that compares the embedded
// cluster with a real kube-apiserver v1.37.1: cases of manifests and
// command lines (testdata/fidelity), what the real control plane answered
// to each command (recorded by the program in ./record with real kubectl),
// and the masking and comparison that the test of this package runs
// against the embedded cluster under plain `go test`.
//
// # Cases
//
// A case is a directory of manifests with a file named steps, one kubectl
// command line per line (without the word kubectl; '#' starts a comment;
// words are split as a shell splits them, with single and double quotes).
// A case under testdata/fidelity/kinds may also be a single manifest file,
// whose one step is `apply -f FILE -o json`: the object as the API server
// stores it on create.
//
// A case of kinds runs in a namespace of its own on the real control
// plane, which the recording names "default"; the other cases run in the
// default namespace and the recorder deletes what they created. The
// embedded cluster runs the same steps in a fresh state's default
// namespace.
//
// A get of a Deployment, ReplicaSet, StatefulSet, DaemonSet, Job,
// CronJob, ReplicationController, HorizontalPodAutoscaler or Pod shows its status, and a pod's
// node, as "<controllers>": the workload controllers and the kubelet write
// them, at their own pace (the recording's control plane has neither
// scheduler nor kubelet). The objects that apply, create and patch return
// are compared whole. Error lines are compared without the prefix each
// client words its own way (the API server's message is compared).
//
// # Masking
//
// What differs between any two runs of the same steps is replaced by a
// placeholder: uids, timestamps, resourceVersions, cluster IPs, node
// ports, the random suffixes of generated names, certificates and tokens
// (Mask).
//
// It is a test helper: nothing of konverge's product imports it.
package fidelity
