// Package mask hides the values of Kubernetes Secrets in objects and
// patches, as kubectl diff's Masker does, so that a tool can show what an
// apply changes without showing what a Secret holds.
//
// Every value of a Secret's data and stringData becomes "***"; when two
// versions of one Secret are masked together (Pair), a key whose value
// differs becomes "*** (before)" and "*** (after)", so that a change still
// shows. The copies of data and stringData inside the
// kubectl.kubernetes.io/last-applied-configuration annotation are masked by
// the same rules (kubectl diff leaves them visible). Patches (Patch) keep
// their nulls, which delete a key and hold no value.
//
// It does not modify its arguments: masked objects are copies, sharing
// what was not masked. It masks only v1 Secrets (IsSecret); other objects
// are returned as they are.
package mask
