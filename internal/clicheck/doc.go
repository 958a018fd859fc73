// Package clicheck compares konverge's commands with kubectl's: scenarios
// of command lines under testdata/kubectl, each recorded once from kubectl
// v1.37.1 against a real kube-apiserver (golden files), and replayed by
// `go test` through konverge on the embedded cluster. Outputs are compared
// byte for byte after masking what differs between any two clusters
// (uids, times, ages, resourceVersions, addresses).
//
// The package has tests only; it is not imported by anything.
//
// # Scenario files
//
// testdata/kubectl/NAME.txt holds one command per line, without the
// program's name, in shell quoting:
//
//	# a comment
//	#! controllers          record with kube-controller-manager running
//	#! profile FILE         nodes: record with kube-scheduler and
//	                        scripts/multinode-kubelet.py running the
//	                        profile's nodes (pods of namespace default);
//	                        replay on an embedded cluster initialized with
//	                        --sim-profile FILE; pod name suffixes masked
//	#! unordered            compare each check's lines as sets
//	> apply -f manifests/web.yaml        a step: must succeed, output not compared
//	$ get cm -n web -o name              a check: stdout, stderr and exit code compared
//	$ create -f - < manifests/cm.yaml    standard input from a file
//
// Paths are relative to testdata/kubectl. NAME.golden holds the masked
// results of the checks, as kubectl printed them.
//
// # Recording
//
// scripts/record-kubectl-checks.sh starts a fresh control plane for every
// scenario (scripts/realcluster.sh), runs its lines through kubectl and
// rewrites the golden files. The same lines run through
// `konverge --kubeconfig` against a real cluster with
// KONVERGE_CLICHECK=real.
package clicheck
