// Package endpointslice is the EndpointSlice controller of the embedded
// cluster, after kube-controller-manager 1.37's
// (pkg/controller/endpointslice and k8s.io/endpointslice's reconciler):
// every Service with a selector (not of type ExternalName) has
// EndpointSlices named after it (generateName "<service>-"), owned by it
// and labelled kubernetes.io/service-name, endpointslice.kubernetes.io/
// managed-by: endpointslice-controller.k8s.io and the Service's labels,
// one set per address family and set of resolved ports, at most 100
// endpoints each, listing the selected pods with an address (terminating
// ones too) with their conditions (ready, serving, terminating), node,
// zone, hostname and pod; a Service without any has one placeholder
// slice. Slices are filled and reused as upstream's reconciler does:
// existing slices keep their endpoints, new endpoints fill the slices
// being updated, then the unchanged slice they fit best, then new slices;
// a slice about to be deleted is reused for one about to be created. The
// endpoints.kubernetes.io/last-change-trigger-time annotation is written
// as the endpoints controller writes it. Slices of deleted Services go
// with them (garbage collection of owned objects).
//
// Mirroring is the EndpointSlice mirroring controller: the Endpoints that
// users write for a Service without a selector get EndpointSlices too.
package endpointslice
