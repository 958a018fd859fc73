// Package merge computes what kubectl apply does to an object: the
// three-way strategic merge patch between the last-applied configuration,
// the config being applied and the live object, and the object that a
// Kubernetes API server makes of live with that patch. It performs no I/O.
//
// Objects are JSON values as package value holds them (map[string]any,
// []any, string, int64, float64, bool, nil: what unstructured.Unstructured
// holds), and how each field merges comes from a *schema.Type.
//
// # Three-way merge
//
// ThreeWay returns the patch, Apply applies it. The rules are kubectl's:
//
//   - a scalar in the config replaces live's;
//   - objects merge field by field;
//   - a field that last-applied has and the config lacks is deleted, and a
//     field the config sets to null is deleted whatever last-applied says;
//   - fields that neither last-applied nor the config has are left alone
//     (replicas set by kubectl scale, server defaults);
//   - lists without a patch strategy (args, command) are replaced whole, in
//     the config's order;
//   - lists merged by key (containers by name) add the config's elements,
//     delete those that last-applied had and the config dropped, keep
//     live-only elements and live-only fields of elements, and order the
//     result by the config, with live-only elements where they were;
//   - lists of scalars with the merge strategy (finalizers) merge as sets.
//
// The patch carries the directives of today's kubectl: $setElementOrder,
// $retainKeys (switching a Deployment to Recreate removes the defaulted
// rollingUpdate), $deleteFromPrimitiveList and $patch.
//
// One deliberate difference: where elements of a list share the patch
// merge key but differ in the list's other key fields (a port over TCP and
// UDP), kubectl collapses them into one. konverge merges such lists by all
// their key fields and sends the whole list with {"$patch": "replace"}.
// An API server applies that list as it is, except that it moves elements
// sharing a merge key next to the first of them; konverge orders the list
// so already, and sends nothing when live already holds it.
//
// # Other patch types
//
// ThreeWayJSONMerge and MergePatch are the JSON merge patch (RFC 7386)
// counterparts that kubectl uses for custom resources and kinds without a
// schema; JSONPatch applies an RFC 6902 JSON patch.
//
// # Errors
//
// Bad input is a *FieldError naming the field path, in the syntax of
// value.Path: spec.template.spec.containers[name="nginx"].ports[containerPort=80].
// Its cause is a *TypeError, *MissingKeyError, *DuplicateError or
// *PatchError (errors.Is with ErrType, ErrMissingKey, ErrDuplicate,
// ErrPatch). With Options.DetectConflicts, ThreeWay returns a
// *ConflictError naming every conflicting field. Errors never include
// field values.
package merge
