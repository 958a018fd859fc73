package apimeta

import "github.com/konverge/konverge/schema"

// Resource is a kind as an API serves it.
type Resource struct {
	GVK schema.GVK
	// Plural is the resource name in URLs ("deployments").
	Plural string
	// Singular is the lowercase singular name ("deployment").
	Singular string
	// ShortNames are kubectl's abbreviations ("deploy").
	ShortNames []string
	// Namespaced is false for cluster-scoped kinds (Namespace, Node,
	// CustomResourceDefinition, ...).
	Namespaced bool
	// Status reports a status subresource: writes to the main resource
	// leave status alone.
	Status bool
	// Strategic reports whether the API accepts strategic merge patches
	// for the kind: built-in kinds do, custom resources do not.
	Strategic bool
}

// GroupResource returns "deployments.apps", or "pods" for the core group:
// how API errors name a resource.
func (r Resource) GroupResource() string {
	if r.GVK.Group == "" {
		return r.Plural
	}
	return r.Plural + "." + r.GVK.Group
}
