// Package kinds knows which resources a Kubernetes API server serves and
// resolves the names kubectl users type to them.
//
// Builtin lists the resources kube-apiserver v1.37.1 serves with its
// default configuration (GA group versions; beta and alpha ones are off by
// default), as discovery reports them: plural, singular and short names,
// scope and status subresource. NewMapper turns such a list, plus the
// merge schemas of a schema.Registry, into a cluster.Mapper, and With adds
// the resources of CustomResourceDefinitions.
//
// It does not talk to an API server: a real cluster's discovery documents
// are read by cluster/kube, which can build a Mapper from them. It does not
// know subresources (pods/log, deployments/scale), and it holds no schemas
// of its own: those come from package schema.
//
// # Name resolution
//
// Mapper.Find resolves what users type as kubectl's RESTMapper does
// (cli-runtime's Builder.mappingFor over client-go's shortcut expander and
// discovery RESTMapper): a plural, a singular or a short name, a kind in
// any case ("Deployment", "DEPLOYMENT" through its singular), optionally
// qualified by a group or a version and a group ("deployments.apps",
// "deploy.apps", "deployments.v1.apps"), a group prefix included
// ("deploy.app"). Short names are case-sensitive, as kubectl's are. When a
// name matches resources of several groups, the group that comes first in
// discovery wins: the core group, then apiregistration.k8s.io, apps,
// events.k8s.io, ... as kube-aggregator orders them by priority, and the
// preferred version within a group, so "events" is the core Event and
// "hpa" is autoscaling/v2.
//
// # Regenerating
//
// zz_generated.go holds every resource of the OpenAPI v3 documents of
// k8s.io/kubernetes (api/openapi-spec/v3): `go generate ./kinds` rewrites
// it. Which group versions are served by default, their order, and short
// names are the hand-written tables of builtin.go; their tests check them
// against the kubernetes sources in the module cache.
package kinds
