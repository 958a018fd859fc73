package replicaset

import (
	"context"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/controller"
	"github.com/konverge/konverge/controller/internal/kobj"
	"github.com/konverge/konverge/controller/internal/podmemo"
	"github.com/konverge/konverge/controller/internal/reconcile"
)

// memory is what New's controller keeps between syncs: the ReplicaSets
// and their work queue (reconcile.Queue), their keys by uid, and the
// pods by controller (podmemo.Memory).
type memory struct {
	q     reconcile.Queue
	byUID map[string]reconcile.Key
	pods  podmemo.Memory
}

func (m *memory) reset() { *m = memory{} }

// rebuild starts the memory again from every ReplicaSet (all queued) and
// pod.
func (m *memory) rebuild(rss, pods []map[string]any) {
	m.q = reconcile.Queue{GVK: kobj.ReplicaSetGVK}
	m.q.Rebuild(rss)
	m.byUID = make(map[string]reconcile.Key, len(rss))
	for _, rs := range rss {
		m.byUID[kobj.UID(rs)] = reconcile.KeyOf(rs)
	}
	m.pods.Rebuild(pods)
}

// Synced makes the memory a reconcile.Recorder.
func (m *memory) Synced(owner map[string]any, wrote bool, requeue time.Time) {
	m.q.Synced(owner, wrote, requeue)
}

// pending brings the memory up to date with the writes in changed and
// returns the ReplicaSets to sync at now, in List order (see New), and
// the earliest requeue time of the others in res.
func (m *memory) pending(ctx context.Context, c cluster.Interface, changed []controller.Key, now time.Time) ([]map[string]any, controller.Result, error) {
	var res controller.Result
	// ReplicaSets first, so that the pods of a new one find it.
	for _, k := range changed {
		if !m.q.Is(k) {
			continue
		}
		old, cur, err := m.q.Update(ctx, c, k)
		if err != nil {
			return nil, res, err
		}
		if old != nil {
			delete(m.byUID, kobj.UID(old))
		}
		if cur != nil {
			m.byUID[kobj.UID(cur)] = reconcile.KeyOf(cur)
		}
	}
	d, err := m.pods.DirtyBy(ctx, c, changed, podmemo.Kinds{Group: "apps", Kind: "ReplicaSet"}, podmemo.Lookup{
		Any: m.q.Len() > 0,
		UID: func(uid string) (reconcile.Key, bool) {
			k, ok := m.byUID[uid]
			return k, ok
		},
		InNamespace: m.q.InNamespace,
	})
	if err != nil {
		return nil, res, err
	}
	m.q.AddDirty(d)
	todo, next := m.q.Due(now)
	res.RequeueAt = next
	return todo, res, nil
}
