// Package generate builds the objects of konverge's generator commands
// (create deployment, job, cronjob, service, namespace, serviceaccount,
// configmap, secret, rolebinding, clusterrolebinding, priorityclass,
// quota, poddisruptionbudget, ingress) as functions from options to typed
// Kubernetes objects, with kubectl's checks and messages.
//
// Nothing here reads flags, files or a cluster, or prints: that is the
// commands' job (package cli), which hands the options over and sends or
// prints what comes back. The objects carry their apiVersion and kind.
package generate
