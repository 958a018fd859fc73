// Package podgc is kube-controller-manager's pod garbage collector (PodGC)
// for the embedded cluster. Each sync it does, in upstream's order:
//
//   - terminated pods (phase neither Pending, Running nor Unknown): when
//     there are more than Threshold of them (--terminated-pod-gc-threshold,
//     12500 by default), the surplus is deleted, evicted pods first
//     (Failed with reason Evicted), then the oldest, then by name;
//   - pods being deleted on a node that exists, is not Ready and carries
//     the node.kubernetes.io/out-of-service taint are deleted at once;
//   - pods bound to a node that does not exist are deleted once the node
//     has been missing for Quarantine (40s), with the pod condition
//     DisruptionTarget (reason DeletionByPodGC, "PodGC: node no longer
//     exists");
//   - pods being deleted that were never bound to a node are deleted.
//
// A pod that is not yet Succeeded or Failed is first marked Failed (with
// the condition, for orphans), then deleted with a grace period of 0:
// with no kubelet left to do it, nothing else would end it.
//
// Against kube-controller-manager v1.37.1, a pod bound by a Binding to a
// node that is then deleted was marked (phase Failed, status and condition
// observedGeneration 1) and deleted 53s after the node: the quarantine
// plus part of its 20-second period. Upstream runs every 20 seconds; here the collector acts at the sync that
// sees the work, and asks to come back when a quarantine ends. The
// quarantine is, as upstream's, kept in memory: a new process starts it
// again for the nodes still missing.
package podgc

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/controller"
	"github.com/konverge/konverge/controller/internal/kobj"
	"github.com/konverge/konverge/schema"
)

// DefaultThreshold is kube-controller-manager's
// --terminated-pod-gc-threshold.
const DefaultThreshold = 12500

// Quarantine is how long a pod's node must be missing before the pod is
// deleted.
const Quarantine = 40 * time.Second

// OutOfServiceTaint is the taint with which an operator declares a node
// out of service.
const OutOfServiceTaint = "node.kubernetes.io/out-of-service"

var nodeGVK = schema.GVK{Version: "v1", Kind: "Node"}

// Controller is the pod garbage collector. Use New.
type Controller struct {
	// Threshold is the number of terminated pods kept; 0 or less keeps
	// them all (upstream's threshold 0 turns that part off).
	Threshold int
	// missing is when each missing node was first seen missing.
	missing map[string]time.Time
}

// New returns a collector with the default threshold.
func New() *Controller { return &Controller{Threshold: DefaultThreshold} }

var _ controller.Controller = (*Controller)(nil)

// Name implements controller.Controller.
func (*Controller) Name() string { return "podgc" }

// Sync implements controller.Controller.
func (g *Controller) Sync(ctx context.Context, c cluster.Interface, now time.Time) (controller.Result, error) {
	var res controller.Result
	pods, err := c.List(ctx, kobj.PodGVK)
	if err != nil {
		return res, fmt.Errorf("podgc: list pods: %w", err)
	}
	nl, err := c.List(ctx, nodeGVK)
	if err != nil {
		return res, fmt.Errorf("podgc: list nodes: %w", err)
	}
	nodes := map[string]cluster.Object{}
	for _, n := range nl.Items {
		nodes[kobj.Name(n)] = n
	}
	gone := map[string]bool{} // pods deleted by this sync, by namespace/name
	var errs []error
	del := func(p cluster.Object, cond map[string]any) {
		key := kobj.Namespace(p) + "/" + kobj.Name(p)
		if gone[key] {
			return
		}
		gone[key] = true
		res.Changed = true
		if err := markFailedAndDelete(ctx, c, p, cond, now); err != nil {
			errs = append(errs, err)
		}
	}

	if g.Threshold > 0 {
		var terminated []cluster.Object
		for _, p := range pods.Items {
			switch kobj.Str(p, "status", "phase") {
			case "Pending", "Running", "Unknown":
			default:
				terminated = append(terminated, p)
			}
		}
		if n := len(terminated) - g.Threshold; n > 0 {
			sortForDeletion(terminated)
			for _, p := range terminated[:n] {
				del(p, nil)
			}
		}
	}

	var outOfService []cluster.Object
	for _, p := range pods.Items {
		if !kobj.Deleting(p) {
			continue
		}
		n, ok := nodes[kobj.Str(p, "spec", "nodeName")]
		if ok && !nodeReady(n) && hasTaint(n, OutOfServiceTaint) {
			outOfService = append(outOfService, p)
		}
	}
	sortForDeletion(outOfService)
	for _, p := range outOfService {
		del(p, nil)
	}

	// Orphans: the quarantine starts when a pod is first seen on a missing
	// node and ends Quarantine later.
	seen := map[string]bool{}
	for _, p := range pods.Items {
		if n := kobj.Str(p, "spec", "nodeName"); n != "" && nodes[n] == nil {
			seen[n] = true
		}
	}
	if g.missing == nil {
		g.missing = map[string]time.Time{}
	}
	for n := range g.missing {
		if !seen[n] {
			delete(g.missing, n)
		}
	}
	for n := range seen {
		if _, ok := g.missing[n]; !ok {
			g.missing[n] = now
		}
	}
	for _, p := range pods.Items {
		n := kobj.Str(p, "spec", "nodeName")
		since, ok := g.missing[n]
		if n == "" || !ok {
			continue
		}
		if due := since.Add(Quarantine); now.Before(due) {
			res.RequeueAt = earlier(res.RequeueAt, due)
			continue
		}
		del(p, map[string]any{
			"type": "DisruptionTarget", "status": "True", "reason": "DeletionByPodGC",
			"message": "PodGC: node no longer exists", "lastProbeTime": nil,
			"lastTransitionTime": kobj.FormatTime(now),
		})
	}

	for _, p := range pods.Items {
		if kobj.Deleting(p) && kobj.Str(p, "spec", "nodeName") == "" {
			del(p, nil)
		}
	}
	if len(errs) > 0 {
		return res, fmt.Errorf("podgc: %w", errors.Join(errs...))
	}
	return res, nil
}

func earlier(a, b time.Time) time.Time {
	if a.IsZero() || b.Before(a) {
		return b
	}
	return a
}

// sortForDeletion orders pods as the collector deletes them: evicted ones
// first, then by creation time, then by name.
func sortForDeletion(pods []cluster.Object) {
	sort.SliceStable(pods, func(i, j int) bool {
		ei, ej := evicted(pods[i]), evicted(pods[j])
		if ei != ej {
			return ei
		}
		ti := kobj.ParseTime(kobj.Str(pods[i], "metadata", "creationTimestamp"))
		tj := kobj.ParseTime(kobj.Str(pods[j], "metadata", "creationTimestamp"))
		if !ti.Equal(tj) {
			return ti.Before(tj)
		}
		return kobj.Name(pods[i]) < kobj.Name(pods[j])
	})
}

func evicted(p cluster.Object) bool {
	return kobj.Str(p, "status", "phase") == "Failed" && kobj.Str(p, "status", "reason") == "Evicted"
}

func nodeReady(n cluster.Object) bool {
	c := kobj.Condition(n, "Ready")
	return c != nil && kobj.Str(c, "status") == "True"
}

func hasTaint(n cluster.Object, key string) bool {
	for _, t := range kobj.Slice(n, "spec", "taints") {
		if m, _ := t.(map[string]any); kobj.Str(m, "key") == key {
			return true
		}
	}
	return false
}

// markFailedAndDelete moves a pod that has not ended to Failed (adding
// cond, when given, unless the pod has a condition of that type already)
// and deletes it with a grace period of 0.
func markFailedAndDelete(ctx context.Context, c cluster.Interface, pod cluster.Object, cond map[string]any, now time.Time) error {
	ns, name := kobj.Namespace(pod), kobj.Name(pod)
	if ph := kobj.Str(pod, "status", "phase"); ph != "Succeeded" && ph != "Failed" {
		upd := kobj.Copy(pod)
		st := kobj.EnsureMap(upd, "status")
		st["phase"] = "Failed"
		if gen, ok := kobj.Int(upd, "metadata", "generation"); ok {
			st["observedGeneration"] = gen
		}
		if cond != nil {
			if g, ok := kobj.Int(upd, "metadata", "generation"); ok {
				cond["observedGeneration"] = g
			}
			conds := kobj.Slice(st, "conditions")
			out := make([]any, 0, len(conds)+1)
			replaced := false
			for _, x := range conds {
				if m, _ := x.(map[string]any); kobj.Str(m, "type") == kobj.Str(cond, "type") {
					if kobj.Str(m, "status") == kobj.Str(cond, "status") {
						cond["lastTransitionTime"] = m["lastTransitionTime"]
					}
					out = append(out, cond)
					replaced = true
					continue
				}
				out = append(out, x)
			}
			if !replaced {
				out = append(out, cond)
			}
			st["conditions"] = out
		}
		if _, err := c.UpdateStatus(ctx, upd); err != nil {
			if cluster.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("mark pod %s/%s failed: %w", ns, name, err)
		}
	}
	if err := c.Delete(ctx, kobj.PodGVK, ns, name, cluster.GracePeriod(0), cluster.Preconditions{UID: kobj.UID(pod)}); err != nil {
		if cluster.IsNotFound(err) || cluster.IsConflict(err) {
			return nil
		}
		return fmt.Errorf("delete pod %s/%s: %w", ns, name, err)
	}
	return nil
}
