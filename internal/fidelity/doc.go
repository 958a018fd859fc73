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
// Each case runs in a namespace of its own on the real control plane,
// which the recording names "default", so that the embedded cluster runs
// the same steps in a fresh state's default namespace.
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
