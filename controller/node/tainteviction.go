package node

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/controller/event"
	"github.com/konverge/konverge/controller/internal/kobj"
	"github.com/konverge/konverge/nodefit"
)

// EvictionComponent is the source of the taint eviction's Events.
const EvictionComponent = "taint-eviction-controller"

// evictNoExecute is kube-controller-manager's taint eviction: a pod on a
// node with a NoExecute taint it does not tolerate is marked
// (DisruptionTarget DeletionByTaintManager) and deleted, with a
// TaintManagerEviction Event; a pod that tolerates every such taint for
// a limited time (tolerationSeconds) goes that long after the taint's
// timeAdded, or, for a taint that does not say when it was added (one
// written by a patch, not by kubectl taint), after the controller first
// saw it, as kube-controller-manager counts from when it observes the
// node. It returns when it next has work (zero: none).
func evictNoExecute(ctx context.Context, c cluster.Interface, nodes []cluster.Object, now time.Time) (changed bool, next time.Time, err error) {
	tainted := map[string][]map[string]any{}
	present := map[string]bool{}
	for _, n := range nodes {
		for _, t := range kobj.Slice(n, "spec", "taints") {
			tm, _ := t.(map[string]any)
			if kobj.Str(tm, "effect") == "NoExecute" {
				if kobj.Str(tm, "timeAdded") == "" {
					tm = kobj.Copy(tm)
					key := taintKey(kobj.UID(n), tm)
					present[key] = true
					tm["timeAdded"] = kobj.FormatTime(firstSeen(key, now))
				}
				tainted[kobj.Name(n)] = append(tainted[kobj.Name(n)], tm)
			}
		}
	}
	forgetTaints(nodes, present)
	if len(tainted) == 0 {
		return false, next, nil
	}
	pods, err := c.List(ctx, kobj.PodGVK)
	if err != nil {
		return false, next, fmt.Errorf("list pods: %w", err)
	}
	for _, p := range pods.Items {
		taints := tainted[kobj.Str(p, "spec", "nodeName")]
		if len(taints) == 0 || kobj.Deleting(p) {
			continue
		}
		phase := kobj.Str(p, "status", "phase")
		if phase == "Succeeded" || phase == "Failed" {
			continue
		}
		at, ok := evictionTime(kobj.Slice(p, "spec", "tolerations"), taints)
		if !ok {
			continue
		}
		if at.After(now) {
			if next.IsZero() || at.Before(next) {
				next = at
			}
			continue
		}
		if err := evict(ctx, c, p, now); err != nil {
			return changed, next, err
		}
		changed = true
	}
	return changed, next, nil
}

// seenTaints remembers when the controller first saw a NoExecute taint
// without a timeAdded, by node uid and taint (forgotten when the process
// ends, as kube-controller-manager's queue is when it restarts).
var seenTaints sync.Map

func taintKey(nodeUID string, taint map[string]any) string {
	return nodeUID + "\x00" + kobj.Str(taint, "key") + "\x00" + kobj.Str(taint, "value")
}

func firstSeen(key string, now time.Time) time.Time {
	at, _ := seenTaints.LoadOrStore(key, now)
	return at.(time.Time)
}

// forgetTaints forgets the taints of the nodes given that they no longer
// have (present: those they have): a taint added again counts anew.
func forgetTaints(nodes []cluster.Object, present map[string]bool) {
	uids := map[string]bool{}
	for _, n := range nodes {
		uids[kobj.UID(n)] = true
	}
	seenTaints.Range(func(k, _ any) bool {
		key := k.(string)
		uid, _, _ := strings.Cut(key, "\x00")
		if uids[uid] && !present[key] {
			seenTaints.Delete(key)
		}
		return true
	})
}

// evictionTime is when a pod with tolerations goes from a node with the
// NoExecute taints given; ok false: never.
func evictionTime(tolerations []any, taints []map[string]any) (at time.Time, ok bool) {
	limit := time.Duration(-1) // for ever
	var since time.Time
	for _, t := range taints {
		var used []map[string]any
		for _, x := range tolerations {
			tol, _ := x.(map[string]any)
			if nodefit.Tolerates(tol, t) {
				used = append(used, tol)
			}
		}
		if len(used) == 0 {
			return time.Time{}, true // at once
		}
		for _, tol := range used {
			secs, has := kobj.Int(tol, "tolerationSeconds")
			if !has {
				continue
			}
			d := kobj.Seconds(max(secs, 0))
			if limit < 0 || d < limit {
				limit = d
			}
			added := kobj.ParseTime(kobj.Str(t, "timeAdded"))
			if since.IsZero() || added.After(since) {
				since = added
			}
		}
	}
	if limit < 0 || since.IsZero() {
		// Tolerated for ever, or since a time the taint does not say.
		return time.Time{}, limit == 0
	}
	return since.Add(limit), true
}

func evict(ctx context.Context, c cluster.Interface, pod cluster.Object, now time.Time) error {
	ns, name := kobj.Namespace(pod), kobj.Name(pod)
	upd := kobj.Copy(pod)
	st := kobj.EnsureMap(upd, "status")
	conds := kobj.Slice(st, "conditions")
	found := false
	for _, x := range conds {
		if m, _ := x.(map[string]any); kobj.Str(m, "type") == "DisruptionTarget" {
			found = true
		}
	}
	if !found {
		st["conditions"] = append(append([]any{}, conds...), map[string]any{
			"type": "DisruptionTarget", "status": "True", "reason": "DeletionByTaintManager",
			"message": "Taint manager: deleting due to NoExecute taint", "lastProbeTime": nil,
			"lastTransitionTime": kobj.FormatTime(now),
		})
		if _, err := c.UpdateStatus(ctx, upd); err != nil && !cluster.IsNotFound(err) && !cluster.IsConflict(err) {
			return fmt.Errorf("mark pod %s/%s: %w", ns, name, err)
		}
	}
	if err := c.Delete(ctx, kobj.PodGVK, ns, name, cluster.Preconditions{UID: kobj.UID(pod)}); err != nil {
		if cluster.IsNotFound(err) || cluster.IsConflict(err) {
			return nil
		}
		return fmt.Errorf("delete pod %s/%s: %w", ns, name, err)
	}
	_, err := event.Emit(ctx, c, event.Event{Involved: pod, Type: event.Normal, Reason: "TaintManagerEviction",
		Message: "Marking for deletion Pod " + ns + "/" + name, Component: EvictionComponent, Time: now})
	return err
}
