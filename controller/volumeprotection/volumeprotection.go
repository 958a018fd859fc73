// Package volumeprotection is kube-controller-manager's pvc-protection and
// pv-protection controllers for the embedded cluster: the API server puts
// the finalizers kubernetes.io/pvc-protection and kubernetes.io/pv-protection
// on every PersistentVolumeClaim and PersistentVolume it creates, and these
// controllers remove them from one being deleted once nothing uses it — a
// claim no scheduled pod mounts, a volume not Bound — so that its deletion
// completes. The pvc-protection controller also keeps the Unused condition
// of Bound claims (whether a pod references them).
package volumeprotection

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/controller"
	"github.com/konverge/konverge/controller/internal/kobj"
)

// The finalizers the API server adds.
const (
	PVCFinalizer = "kubernetes.io/pvc-protection"
	PVFinalizer  = "kubernetes.io/pv-protection"
)

// Controller removes the protection finalizers of unused claims and
// volumes being deleted. The zero value is ready to use.
type Controller struct{}

var _ controller.Controller = Controller{}

// Name implements controller.Controller.
func (Controller) Name() string { return "volume-protection" }

// Sync looks at the claims and volumes being deleted.
func (Controller) Sync(ctx context.Context, c cluster.Interface, now time.Time) (controller.Result, error) {
	var res controller.Result
	claims, err := c.List(ctx, kobj.PVCGVK)
	if err != nil {
		return res, fmt.Errorf("volume-protection: list persistentvolumeclaims: %w", err)
	}
	var errs []error
	var used map[[2]string]bool
	for _, pvc := range claims.Items {
		if !candidate(pvc, PVCFinalizer) {
			continue
		}
		if used == nil {
			if used, err = claimsInUse(ctx, c); err != nil {
				return res, err
			}
		}
		if used[[2]string{kobj.Namespace(pvc), kobj.Name(pvc)}] {
			continue
		}
		changed, err := release(ctx, c, pvc, PVCFinalizer)
		res.Changed = res.Changed || changed
		if err != nil {
			errs = append(errs, err)
		}
	}
	changed, err := markUnused(ctx, c, claims.Items, now)
	res.Changed = res.Changed || changed
	if err != nil {
		errs = append(errs, err)
	}
	if _, err := c.Mapper().ResourceFor(kobj.PVGVK); err == nil {
		vols, err := c.List(ctx, kobj.PVGVK)
		if err != nil {
			return res, fmt.Errorf("volume-protection: list persistentvolumes: %w", err)
		}
		for _, pv := range vols.Items {
			if !candidate(pv, PVFinalizer) || kobj.Str(pv, "status", "phase") == "Bound" {
				continue
			}
			changed, err := release(ctx, c, pv, PVFinalizer)
			res.Changed = res.Changed || changed
			if err != nil {
				errs = append(errs, err)
			}
		}
	}
	if len(errs) > 0 {
		return res, fmt.Errorf("volume-protection: %w", errors.Join(errs...))
	}
	return res, nil
}

// markUnused keeps the Unused condition of Bound claims, as the
// pvc-protection controller of kube-controller-manager 1.37 does: True
// (NoPodsUsingPVC) when no pod that has not terminated references the
// claim, False (PodUsingPVC) when one does, its lastTransitionTime when it
// changes.
func markUnused(ctx context.Context, c cluster.Interface, claims []cluster.Object, now time.Time) (bool, error) {
	var users map[[2]string]bool
	changed := false
	var errs []error
	for _, pvc := range claims {
		if kobj.Deleting(pvc) || kobj.Str(pvc, "status", "phase") != "Bound" {
			continue
		}
		if users == nil {
			pods, err := c.List(ctx, kobj.PodGVK)
			if err != nil {
				return false, fmt.Errorf("volume-protection: list pods: %w", err)
			}
			users = map[[2]string]bool{}
			for _, p := range pods.Items {
				if ph := kobj.Str(p, "status", "phase"); ph == "Succeeded" || ph == "Failed" {
					continue
				}
				for _, v := range kobj.Slice(p, "spec", "volumes") {
					vm, _ := v.(map[string]any)
					if n := kobj.Str(vm, "persistentVolumeClaim", "claimName"); n != "" {
						users[[2]string{kobj.Namespace(p), n}] = true
					}
					if vm["ephemeral"] != nil {
						users[[2]string{kobj.Namespace(p), kobj.Name(p) + "-" + kobj.Str(vm, "name")}] = true
					}
				}
			}
		}
		status, reason, msg := "True", "NoPodsUsingPVC", "No pods are currently referencing this PVC"
		if users[[2]string{kobj.Namespace(pvc), kobj.Name(pvc)}] {
			status, reason, msg = "False", "PodUsingPVC", "A pod is currently referencing this PVC"
		}
		cond := kobj.Condition(pvc, "Unused")
		if cond != nil && kobj.Str(cond, "status") == status {
			continue
		}
		next := kobj.Copy(pvc)
		st := kobj.EnsureMap(next, "status")
		nc := map[string]any{"type": "Unused", "status": status, "reason": reason, "message": msg,
			"lastProbeTime": nil, "lastTransitionTime": kobj.FormatTime(now)}
		conds := kobj.Slice(next, "status", "conditions")
		replaced := false
		for i, x := range conds {
			if m, _ := x.(map[string]any); kobj.Str(m, "type") == "Unused" {
				conds[i], replaced = nc, true
			}
		}
		if !replaced {
			conds = append(conds, nc)
		}
		st["conditions"] = conds
		if _, err := c.UpdateStatus(ctx, next); err != nil {
			if cluster.IsNotFound(err) || cluster.IsConflict(err) {
				changed = true
				continue
			}
			errs = append(errs, fmt.Errorf("update the Unused condition of %s/%s: %w", kobj.Namespace(pvc), kobj.Name(pvc), err))
			continue
		}
		changed = true
	}
	return changed, errors.Join(errs...)
}

// candidate reports an object being deleted that still has finalizer.
func candidate(obj map[string]any, finalizer string) bool {
	if !kobj.Deleting(obj) {
		return false
	}
	for _, f := range kobj.Slice(obj, "metadata", "finalizers") {
		if f == finalizer {
			return true
		}
	}
	return false
}

// claimsInUse returns the claims that scheduled pods mount (whatever
// their phase, as upstream's podUsesPVCForDeletion).
func claimsInUse(ctx context.Context, c cluster.Interface) (map[[2]string]bool, error) {
	pods, err := c.List(ctx, kobj.PodGVK)
	if err != nil {
		return nil, fmt.Errorf("volume-protection: list pods: %w", err)
	}
	used := map[[2]string]bool{}
	for _, p := range pods.Items {
		if kobj.Str(p, "spec", "nodeName") == "" {
			continue
		}
		for _, v := range kobj.Slice(p, "spec", "volumes") {
			vm, _ := v.(map[string]any)
			if n := kobj.Str(vm, "persistentVolumeClaim", "claimName"); n != "" {
				used[[2]string{kobj.Namespace(p), n}] = true
			}
		}
	}
	return used, nil
}

// release removes finalizer from obj.
func release(ctx context.Context, c cluster.Interface, obj map[string]any, finalizer string) (bool, error) {
	next := kobj.Copy(obj)
	md := kobj.EnsureMap(next, "metadata")
	var kept []any
	for _, f := range kobj.Slice(obj, "metadata", "finalizers") {
		if f != finalizer {
			kept = append(kept, f)
		}
	}
	if len(kept) == 0 {
		delete(md, "finalizers")
	} else {
		md["finalizers"] = kept
	}
	if _, err := c.Update(ctx, next); err != nil {
		if cluster.IsNotFound(err) || cluster.IsConflict(err) {
			return true, nil
		}
		return false, fmt.Errorf("remove %s from %s %s: %w", finalizer, kobj.Str(obj, "kind"), kobj.Name(obj), err)
	}
	return true, nil
}
