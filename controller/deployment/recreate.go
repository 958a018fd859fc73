package deployment

import (
	"context"

	"github.com/konverge/konverge/controller/internal/kobj"
)

func kobjName(o map[string]any) string { return kobj.Name(o) }

// rolloutRecreate is recreate.go: old ReplicaSets to 0, wait until no old
// pod runs, then the new ReplicaSet at full size.
func (s *syncer) rolloutRecreate(ctx context.Context, rss []map[string]any) error {
	newRS, old, err := s.getNewRS(ctx, rss, false)
	if err != nil {
		return s.ignoreCollision(err)
	}
	all := append(append([]map[string]any{}, old...), newRS)
	scaled := false
	for _, rs := range activeRSs(old) {
		if rsReplicas(rs) == 0 {
			continue
		}
		ok, err := s.scaleRS(ctx, rs, 0, false)
		if err != nil {
			return err
		}
		scaled = scaled || ok
	}
	if scaled {
		return s.syncRolloutStatus(ctx, all, newRS)
	}
	running, err := s.oldPodsRunning(ctx, newRS, old)
	if err != nil {
		return err
	}
	if running {
		return s.syncRolloutStatus(ctx, all, newRS)
	}
	if newRS == nil {
		newRS, old, err = s.getNewRS(ctx, rss, true)
		if err != nil {
			return s.ignoreCollision(err)
		}
		all = append(append([]map[string]any{}, old...), newRS)
	}
	if _, err := s.scaleRS(ctx, newRS, s.spec.replicas, false); err != nil {
		return err
	}
	if s.complete() {
		if err := s.cleanup(ctx, old); err != nil {
			return err
		}
	}
	return s.syncRolloutStatus(ctx, all, newRS)
}

func (s *syncer) oldPodsRunning(ctx context.Context, newRS map[string]any, old []map[string]any) (bool, error) {
	if sumStatus(old, "replicas") > 0 {
		return true, nil
	}
	for _, rs := range old {
		pods, err := s.podsOf(ctx, kobj.UID(rs))
		if err != nil {
			return false, err
		}
		for _, p := range pods {
			switch kobj.Str(p, "status", "phase") {
			case "Failed", "Succeeded":
				continue
			default:
				return true, nil
			}
		}
	}
	return false, nil
}
