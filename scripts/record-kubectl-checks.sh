#!/usr/bin/env bash
# record-kubectl-checks.sh - record testdata/kubectl/*.golden: every scenario
# of testdata/kubectl runs through kubectl v1.37.1 against a fresh real
# control plane (scripts/realcluster.sh up, with kube-controller-manager when
# the scenario asks for it), and its checks' masked outputs are written to
# the scenario's golden file. `go test ./internal/clicheck` then compares
# konverge on the embedded cluster with them.
#
# Usage: REALCLUSTER_HOME=DIR scripts/record-kubectl-checks.sh [SCENARIO]
#   DIR holds bin/ (kubectl, kube-apiserver, ...; scripts/realcluster.sh build)
#   and is where the control plane runs; it is stopped afterwards.
#
# KONVERGE_CLICHECK=real instead of record runs the same checks through
# `konverge --kubeconfig` on the real control plane and compares them.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${REALCLUSTER_HOME:?set REALCLUSTER_HOME (see scripts/realcluster.sh)}"
export REALCLUSTER_HOME
KONVERGE_CLICHECK="${KONVERGE_CLICHECK:-record}" \
  go test -count=1 -timeout 60m -run "TestKubectlChecks/${1:-}" ./internal/clicheck -v
