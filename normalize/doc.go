// Package normalize puts Kubernetes objects in the form in which two
// versions compare equal exactly when they mean the same to the API server,
// for tools that compare desired and live objects themselves.
//
// Server (and Options.Defaults) does to an object what kube-apiserver 1.37
// does when it decodes a write: quantities in canonical form ("0.5" is
// "500m", "1024Mi" is "1Gi"), a Secret's stringData folded into data, the
// fields of built-in kinds defaulted (imagePullPolicy, strategy,
// terminationMessagePath, ...; a CustomResourceDefinition's conversion
// and names, with the code the embedded cluster's store runs), nulls and
// unknown fields dropped (see package defaults). Object then also leaves out what neither side of a
// comparison controls: the metadata the server writes (uid,
// resourceVersion, generation, creationTimestamp, managedFields, selfLink),
// status, and on request the last-applied annotation and the ApplySet
// membership label that apply adds.
//
// It does not know about admission webhooks or the mutations of other
// controllers, nor what the API server's registry strategies and
// allocators add on a create (a Namespace's spec.finalizers, a Service's
// clusterIP, clusterIPs, ipFamilies and ipFamilyPolicy: compare those
// with apply's Change.Drift, which keeps them), and custom resources are
// not defaulted (their defaults live in their CRD's schema). It performs no I/O and never modifies its
// arguments.
package normalize
