// Package endpoint is the endpoints controller of the embedded cluster,
// after kube-controller-manager 1.37's (pkg/controller/endpoint): every
// Service with a selector (not of type ExternalName) has an Endpoints
// object of its name, labelled as the Service plus
// endpoints.kubernetes.io/managed-by: endpoint-controller (and
// service.kubernetes.io/headless without a cluster IP), whose subsets
// list the selected pods' addresses (ready, or not ready unless the
// Service publishes them) with the Service's ports resolved on each pod
// (named target ports by the containers' ports), grouped and sorted as
// upstream's RepackSubsets, at most 1000 addresses (then annotated
// endpoints.kubernetes.io/over-capacity: truncated), with the
// endpoints.kubernetes.io/last-change-trigger-time annotation. The
// Endpoints of a deleted Service go. Services without a selector are left
// alone: their Endpoints are their users'.
//
// Sorting subsets and ports hashes their Go values as upstream does, so
// this package decodes them into k8s.io/api's types.
package endpoint
