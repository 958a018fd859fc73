// Package prune decides which live objects an apply deletes because its
// input no longer holds them, the two ways kubectl apply --prune does:
//
//   - by label selector (Labels): the objects of an allowlist of kinds
//     that match the selector, in the namespaces the apply visited (and
//     cluster-scoped ones), that carry the last-applied annotation and that
//     the apply did not touch; the seed's `kubectl apply -f DIR --prune -l
//     LABEL`, k8s.io/kubectl/pkg/cmd/apply/prune.go;
//   - by ApplySet (ApplySet, KEP-3659): a parent object (a Secret by
//     default) records the kinds and namespaces of a set, every member
//     carries the applyset.kubernetes.io/part-of label with the set's ID,
//     and exactly the members the input no longer holds are deleted;
//     kubectl's applyset.go and applyset_pruner.go.
//
// It finds candidates and deletes them one by one (Delete, background
// propagation), and it maintains ApplySet parents. It does not apply
// anything, print anything or decide dry-run policy: package apply drives it
// and reports what it deleted as Pruned results.
//
// # Differences from kubectl
//
// kubectl walks the visited namespaces in Go's random map order; Find walks
// them sorted, so that output is stable. An object that is already gone when
// its deletion is sent (a namespace pruned earlier took it along) is not an
// error. kubectl writes ApplySet parents with a server-side apply patch;
// konverge creates them, or patches their labels and annotations with a
// JSON merge patch (removing the deprecated contains-group-resources
// annotation as kubectl's patch does), since the embedded cluster has no
// server-side apply. Parents written by kubectl ("kubectl/v1.37.1") are
// accepted and keep their tooling annotation.
package prune
