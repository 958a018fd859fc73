// Package validate checks objects as kube-apiserver 1.37 validates them on
// create and update, and reports the errors in its words: field paths as
// the API server prints them (spec.template.spec.containers[0].image,
// data[key]), the same error types, values and details
// (`spec.replicas: Invalid value: -1: must be greater than or equal to 0`),
// in the same order.
//
// Object validates the built-in kinds konverge's embedded cluster stores
// (apps/v1 Deployment, ReplicaSet, StatefulSet, DaemonSet; batch/v1 Job,
// CronJob; v1 Pod, Service, ConfigMap, Secret, Namespace, ServiceAccount,
// PersistentVolumeClaim, ResourceQuota, LimitRange; networking.k8s.io/v1
// Ingress); CustomResource and
// ObjectMeta validate custom resources against their structural schema.
// ToCauses turns the errors into the causes of apimeta.NewInvalid (and cluster.NewInvalid).
//
// It validates objects as the API server has them at that point: decoded
// and defaulted (package defaults) and prepared by the registry strategy,
// which is the store's job. It performs no I/O and changes nothing.
//
// # Against a real API server
//
// TestRealServer sends every case of testdata/validate to a kube-apiserver
// v1.37.1 (scripts/realcluster.sh up; KONVERGE_REALCLUSTER=1 go
// test ./validate -run RealServer) and compares the causes of its answer
// with the case's errors.
//
// # What is not checked
//
// Security contexts, affinity, topology spread constraints, host aliases,
// DNS config details, resource claims, sysctls, seccomp/AppArmor
// annotations, volume sources other than the common ones (emptyDir,
// hostPath, configMap, secret, downwardAPI, projected, persistentVolumeClaim,
// nfs, ephemeral, image), Pod status and resize updates, Service
// dual-stack upgrade rules beyond the primary clusterIP (a ResourceQuota's
// and a LimitRange's names, types, scopes and quantities are checked,
// resource by resource in name order: kube-apiserver reports them in map
// order), and CRD formats,
// allOf/anyOf/oneOf/not and CEL rules. Where kube-apiserver prints a whole
// internal Go struct as the bad value (an immutable Job template, a
// StatefulSet's volumeClaimTemplates) the value konverge prints differs.
package validate
