// Package defaults fills in the fields kube-apiserver 1.37 fills in when it
// decodes an object, so that konverge's embedded cluster stores what a real
// API server stores: Apply for built-in kinds, ApplyCustomResource (after
// PruneUnknown) for custom resources.
//
// It does what happens before the registry strategy runs: the typed decode
// (unknown fields dropped, nulls and empty omitempty fields removed,
// non-pointer structs filled in as {}, quantities and Secret data in
// canonical form), the v1 conversion quirks (Secret stringData, StatefulSet
// volumeClaimTemplates' apiVersion and kind) and the SetDefaults_* functions
// of k8s.io/kubernetes/pkg/apis/*/v1 with the feature gates that are on by
// default in 1.37 (ImageVolume, MaxUnavailableStatefulSet, PodLevelResources
// with PodLevelResourcesFixDefaulting; not the alpha H2CContainerProbe).
//
// It does not do what the registry strategies and admission plugins do on
// top (status reset, generation, Job selectors, Namespace finalizers,
// Service IP allocation, service-account volumes...): that is the store's
// job. It performs no I/O.
//
// # Kinds
//
// apps/v1 Deployment, ReplicaSet, StatefulSet, DaemonSet; batch/v1 Job,
// CronJob; v1 Pod, PodTemplate, ReplicationController, Service, ConfigMap,
// Secret, Namespace, ServiceAccount, PersistentVolumeClaim;
// networking.k8s.io/v1 Ingress, IngressClass, NetworkPolicy;
// rbac.authorization.k8s.io/v1 Role, ClusterRole, RoleBinding,
// ClusterRoleBinding; v1 PersistentVolume, Endpoints, LimitRange,
// ResourceQuota; admissionregistration.k8s.io/v1 webhook configurations,
// ValidatingAdmissionPolicy and its binding; autoscaling/v1 and v2
// HorizontalPodAutoscaler; coordination.k8s.io/v1 Lease;
// discovery.k8s.io/v1 EndpointSlice; node.k8s.io/v1 RuntimeClass;
// policy/v1 PodDisruptionBudget; scheduling.k8s.io/v1 PriorityClass;
// storage.k8s.io/v1 StorageClass, CSIDriver. Other kinds are left alone.
//
// # Type table
//
// The JSON shape of the Go types (which fields exist, which are pointers,
// omitempty, structs, quantities) is a table generated from k8s.io/api by
// a test (typetable_generated.go; go test -run TestTypeTable -update), and
// TestTypedPassMatchesGoTypes checks the typed pass against the real Go
// types on every case of testdata/defaults.
//
// # Against a real API server
//
// TestRealServer creates every case of testdata/defaults with dryRun=All on
// a kube-apiserver v1.37.1 (scripts/realcluster.sh up;
// KONVERGE_REALCLUSTER=1 go test ./defaults -run RealServer) and compares
// what it stores, less what the registry and admission add (storeOwned
// lists it), with the case's want.
//
// # Errors
//
// A value that the kind's Go type cannot hold is a *DecodeError naming the
// field; kube-apiserver rejects such a request with 400 Bad Request.
package defaults
