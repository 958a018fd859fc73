// Package controlplane holds what kube-apiserver itself keeps in the
// cluster, on a timer, as a controller of the embedded cluster: the
// kubernetes Service of the default namespace.
//
// kube-apiserver v1.37 checks that Service every ten seconds and creates
// it when it is missing (a deleted one is back within ten seconds, with a
// new uid, the first address of the service range and the API server's
// port); it leaves an existing one as it is (a changed port stays).
package controlplane

import (
	"context"
	"fmt"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/controller"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

// Period is how often kube-apiserver checks the kubernetes Service.
const Period = 10 * time.Second

// KubernetesService creates the kubernetes Service of the default
// namespace when it is missing, at the next multiple of Period of the
// cluster time (the embedded cluster's tick of kube-apiserver's timer).
type KubernetesService struct {
	// Service is the Service as kube-apiserver creates it (namespace
	// default, name kubernetes).
	Service map[string]any
	// Manager is the field manager of the create.
	Manager string
}

var _ controller.Controller = KubernetesService{}

var serviceGVK = schema.GVK{Version: "v1", Kind: "Service"}

// Name implements controller.Controller.
func (KubernetesService) Name() string { return "kubernetes-service" }

// Sync creates the Service when it is missing and now is a tick, and
// asks to be run at the next tick when it is missing otherwise.
func (k KubernetesService) Sync(ctx context.Context, c cluster.Interface, now time.Time) (controller.Result, error) {
	_, err := controller.GetShared(ctx, c, serviceGVK, "default", "kubernetes")
	switch {
	case err == nil:
		return controller.Result{}, nil
	case !cluster.IsNotFound(err):
		return controller.Result{}, fmt.Errorf("kubernetes-service: get: %w", err)
	}
	if tick := now.Truncate(Period); !tick.Equal(now) {
		return controller.Result{RequeueAt: tick.Add(Period)}, nil
	}
	var opts []cluster.CreateOption
	if k.Manager != "" {
		opts = append(opts, cluster.FieldOwner(k.Manager))
	}
	_, err = c.Create(ctx, value.DeepCopyObject(k.Service), opts...)
	if err != nil && !cluster.IsAlreadyExists(err) {
		// As kube-apiserver, try again at the next tick (a namespace
		// default being deleted, say).
		return controller.Result{RequeueAt: now.Add(Period)}, nil
	}
	return controller.Result{Changed: err == nil}, nil
}
