package kubelet

import (
	"context"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/controller"
	"github.com/konverge/konverge/scheduler"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

// selectedNodeAnnotation names the node a claim of a
// WaitForFirstConsumer class is to be provisioned for.
const selectedNodeAnnotation = "volume.kubernetes.io/selected-node"

var (
	pvcGVK   = schema.GVK{Version: "v1", Kind: "PersistentVolumeClaim"}
	pvGVK    = schema.GVK{Version: "v1", Kind: "PersistentVolume"}
	classGVK = schema.GVK{Group: "storage.k8s.io", Version: "v1", Kind: "StorageClass"}
)

// volumeKind reports the kinds whose changes VolumeBinding's pending pods
// wait for (kube-scheduler requeues them on claim, volume and class
// events).
func volumeKind(k controller.Key) bool {
	switch {
	case k.Group == "" && (k.Kind == "PersistentVolumeClaim" || k.Kind == "PersistentVolume"):
		return true
	case k.Group == "storage.k8s.io" && k.Kind == "StorageClass":
		return true
	}
	return false
}

// lookup returns the object for the scheduler's lookups, nil when the
// cluster serves no such kind or has no such object.
func lookup(ctx context.Context, c cluster.Interface, gvk schema.GVK, ns, name string) map[string]any {
	if _, err := c.Mapper().ResourceFor(gvk); err != nil {
		return nil
	}
	o, err := controller.GetShared(ctx, c, gvk, ns, name)
	if err != nil {
		return nil
	}
	return o
}

// volumeLookups lets the scheduler read the claims, volumes and classes
// (VolumeBinding); a cluster that serves none of a kind has none.
func volumeLookups(ctx context.Context, c cluster.Interface) scheduler.Volumes {
	get := func(gvk schema.GVK, ns, name string) map[string]any { return lookup(ctx, c, gvk, ns, name) }
	return scheduler.Volumes{
		Claim:  func(ns, name string) map[string]any { return get(pvcGVK, ns, name) },
		Volume: func(name string) map[string]any { return get(pvGVK, "", name) },
		Class:  func(name string) map[string]any { return get(classGVK, "", name) },
		Volumes: func() []map[string]any {
			if _, err := c.Mapper().ResourceFor(pvGVK); err != nil {
				return nil
			}
			l, err := c.List(ctx, pvGVK)
			if err != nil {
				return nil
			}
			out := make([]map[string]any, len(l.Items))
			copy(out, l.Items)
			return out
		},
	}
}

// bindVolumes gives each volume the scheduler chose for a claim that
// waited for its first consumer the claimRef of the claim (and the
// annotation that says the binding was not the user's), and each claim
// to be provisioned the node chosen (volume.kubernetes.io/selected-node),
// as kube-scheduler's VolumeBinding does before it binds the pod; the
// PersistentVolume binder (or the provisioner) completes the binding. It
// reports whether it wrote anything, and ok false when a claim or volume
// changed meanwhile (the pod is tried again).
func bindVolumes(ctx context.Context, c cluster.Interface, bindings []scheduler.VolumeBinding, nodeName string) (wrote, ok bool, err error) {
	for _, b := range bindings {
		claim, err := c.Get(ctx, pvcGVK, b.Namespace, b.Claim)
		if err != nil {
			if cluster.IsNotFound(err) {
				return wrote, false, nil
			}
			return wrote, false, err
		}
		if b.Volume == "" {
			cmd := mapOf(claim, "metadata")
			if str(mapOf(cmd, "annotations"), selectedNodeAnnotation) == nodeName {
				continue
			}
			claim = value.DeepCopyObject(claim)
			md := mapOf(claim, "metadata")
			ann := mapOf(md, "annotations")
			if ann == nil {
				ann = map[string]any{}
				md["annotations"] = ann
			}
			ann[selectedNodeAnnotation] = nodeName
			if _, err := c.Update(ctx, claim); err != nil {
				if cluster.IsConflict(err) || cluster.IsNotFound(err) {
					return wrote, false, nil
				}
				return wrote, false, err
			}
			wrote = true
			continue
		}
		vol, err := c.Get(ctx, pvGVK, "", b.Volume)
		if err != nil {
			if cluster.IsNotFound(err) {
				return wrote, false, nil
			}
			return wrote, false, err
		}
		vol = value.DeepCopyObject(vol)
		cmd := mapOf(claim, "metadata")
		spec := mapOf(vol, "spec")
		if spec == nil {
			spec = map[string]any{}
			vol["spec"] = spec
		}
		spec["claimRef"] = map[string]any{
			"kind": "PersistentVolumeClaim", "apiVersion": "v1",
			"namespace": b.Namespace, "name": b.Claim,
			"uid": str(cmd, "uid"), "resourceVersion": str(cmd, "resourceVersion"),
		}
		md := mapOf(vol, "metadata")
		ann := mapOf(md, "annotations")
		if ann == nil {
			ann = map[string]any{}
			md["annotations"] = ann
		}
		ann["pv.kubernetes.io/bound-by-controller"] = "yes"
		if _, err := c.Update(ctx, vol); err != nil {
			if cluster.IsConflict(err) || cluster.IsNotFound(err) {
				return wrote, false, nil
			}
			return wrote, false, err
		}
		wrote = true
	}
	return wrote, true, nil
}
