// Package schema says how every field of a Kubernetes object merges: which
// objects merge field by field, which lists are replaced whole (atomic),
// merged by a key (patchMergeKey) or merged as a set of scalars, and where
// the retainKeys and replace patch strategies apply. It is the policy that
// package merge carries out.
//
// It merges nothing itself, performs no I/O (documents come in as bytes or
// decoded values) and does not validate objects: a Type knows the shape of
// a value only as far as merging needs it, and drops descriptions,
// formats and validation rules.
//
// A Type describes one position of an object; Field and Element walk from a
// kind's root Type to the position of any value, without allocating:
//
//	reg := schema.Builtin()
//	pod := reg.Lookup(schema.GVK{Version: "v1", Kind: "Pod"})
//	containers := pod.Field("spec").Field("containers") // MergeByKey on "name"
//
// # Built-in kinds
//
// Builtin holds every kind of Kubernetes KubernetesVersion, alpha and beta
// versions included, read from the upstream OpenAPI v3 documents
// (api/openapi-spec/v3 of k8s.io/kubernetes) by ParseOpenAPIV3Documents
// and embedded in compact binary form. `go generate ./schema` regenerates
// the table. The strategies are exactly those kubectl and the API server
// derive from the Go struct tags patchStrategy and patchMergeKey, which the
// documents carry as x-kubernetes-patch-strategy and
// x-kubernetes-patch-merge-key; x-kubernetes-list-type, which only
// server-side apply reads, does not make a built-in list mergeable.
//
// # Custom resources
//
// FromCRD turns each version of a CustomResourceDefinition into a Type from
// its openAPIV3Schema: x-kubernetes-list-type map, set and atomic,
// x-kubernetes-list-map-keys, x-kubernetes-map-type, and the patch
// strategy extensions where a schema has them. Add the versions to a
// Registry (the one Builtin returns, say) to look them up by kind.
//
// # Real clusters
//
// ParseOpenAPIV3Documents reads the documents a kube-apiserver serves under
// /openapi/v3, one per group version, into one Registry; fetching them is
// the caller's job. Custom resources appear there too, without patch
// strategies, so all their lists are atomic: what kubectl's client-side
// apply does with them. A Registry can be saved and loaded with
// MarshalBinary and UnmarshalBinary.
//
// # Unknown kinds
//
// Registry.Lookup returns nil for a kind it does not know, and a nil *Type
// is valid: it is Untyped, like every field a schema does not name. Untyped
// objects merge key by key and their lists are atomic, the JSON merge patch
// rules (RFC 7386) that kubectl applies to kinds it has no schema for.
package schema
