// Package diff shows what applying a set of objects would change, as
// kubectl diff does: for each object the live version (or none) and the
// merged one, the object as apply would leave it, which comes from the
// server (a dry-run create or patch, so that defaults and validation are
// the server's), and a unified diff of the two as YAML.
//
// It computes nothing of its own: a Differ runs apply.Applier as a server
// dry run, so a diff shows exactly what the same apply would do, pruning
// included (Options.Prune shows the objects apply --prune would delete as
// deletions). It does not print on its own either: Report renders as a
// unified diff (WriteUnified), as JSON for tools (WriteJSON), or through an
// external program (RunExternal, with KONVERGE_EXTERNAL_DIFF as kubectl
// uses KUBECTL_EXTERNAL_DIFF). Differ.RunUnified renders the unified diff
// while the dry run goes instead, and keeps its text rather than the
// objects: the same output, in a fraction of the memory of a large diff.
//
// # ApplySets and ignored fields
//
// Options.ApplySet diffs the objects as members of an ApplySet, as apply
// --applyset writes them (with the membership label), and with Prune
// shows the members the input dropped as deletions. Options.Ignore leaves
// fields others own out of the diff, as apply leaves them alone.
//
// # What is shown
//
// Both versions are the objects as kubectl diff prints them: as the
// server returns them (resourceVersion, generation and status included; a
// dry-run create has no resourceVersion), without metadata.managedFields
// (kubectl's --show-managed-fields is Options.ShowManagedFields). Secret
// values are masked as kubectl's Masker masks them: "***", or "***
// (before)" and "*** (after)" for a key whose value changes. kubectl masks
// data only and shows the values again inside the last-applied
// annotation; konverge masks data, stringData, and both inside the
// annotation (Options.ShowSecrets shows them all).
//
// As kubectl diff merges the configuration without annotating it, the
// merged version of a client-side diff keeps the live last-applied
// annotation (none on a create), and an object without one is no
// difference for that alone.
//
// # Output
//
// WriteUnified writes, per changed object in the order of their file names
// (as diff -r lists kubectl's directories), a header naming
// live/<name> and merged/<name> with kubectl's file names
// (apps.v1.Deployment.default.web) and the hunks of diff -u -N, computed
// in-process by Myers' algorithm; RenderOptions.Color adds ANSI colors.
// WriteJSON's schema is documented on the method.
//
// # Exit status
//
// Whether an object differs comes from comparing its live and merged
// versions, as kubectl diff runs diff(1) on its two directories: a
// non-empty patch that changes nothing on the server (apply prints
// "configured" for it) is no difference. ExitCode maps an outcome to
// kubectl diff's status: 0 no differences, 1 differences, 2 (>1) an error.
package diff
