package deployment

import (
	"context"
	"fmt"
)

// rolloutRolling is rolling.go's rolloutRolling.
func (s *syncer) rolloutRolling(ctx context.Context, rss []map[string]any) error {
	newRS, old, err := s.getNewRS(ctx, rss, true)
	if err != nil {
		return s.ignoreCollision(err)
	}
	all := append(append([]map[string]any{}, old...), newRS)
	up, err := s.reconcileNewRS(ctx, all, newRS)
	if err != nil {
		return err
	}
	if up {
		return s.syncRolloutStatus(ctx, all, newRS)
	}
	down, err := s.reconcileOldRSs(ctx, all, activeRSs(old), newRS)
	if err != nil {
		return err
	}
	if down {
		return s.syncRolloutStatus(ctx, all, newRS)
	}
	if s.complete() {
		if err := s.cleanup(ctx, old); err != nil {
			return err
		}
	}
	return s.syncRolloutStatus(ctx, all, newRS)
}

func (s *syncer) reconcileNewRS(ctx context.Context, all []map[string]any, newRS map[string]any) (bool, error) {
	cur := rsReplicas(newRS)
	if cur == s.spec.replicas {
		return false, nil
	}
	if cur > s.spec.replicas {
		return s.scaleRS(ctx, newRS, s.spec.replicas, false)
	}
	n, err := NewRSNewReplicas(s.d, all, newRS)
	if err != nil {
		return false, err
	}
	return s.scaleRS(ctx, newRS, n, false)
}

func (s *syncer) reconcileOldRSs(ctx context.Context, all, old []map[string]any, newRS map[string]any) (bool, error) {
	if sumSpec(old) == 0 {
		return false, nil
	}
	allPods := sumSpec(all)
	minAvailable := s.spec.replicas - s.spec.MaxUnavailable()
	newUnavailable := rsReplicas(newRS) - rsStatus(newRS, "availableReplicas")
	maxScaledDown := allPods - minAvailable - newUnavailable
	if maxScaledDown <= 0 {
		return false, nil
	}
	cleaned, err := s.cleanupUnhealthy(ctx, old, maxScaledDown)
	if err != nil {
		return false, err
	}
	all = append(append([]map[string]any{}, old...), newRS)
	down, err := s.scaleDownOld(ctx, all, old)
	if err != nil {
		return false, err
	}
	return cleaned+down > 0, nil
}

// cleanupUnhealthy scales down the unavailable replicas of old
// ReplicaSets, oldest first, up to maxCleanup.
func (s *syncer) cleanupUnhealthy(ctx context.Context, old []map[string]any, maxCleanup int64) (int64, error) {
	sortByCreation(old)
	var total int64
	for _, rs := range old {
		if total >= maxCleanup {
			break
		}
		r := rsReplicas(rs)
		avail := rsStatus(rs, "availableReplicas")
		if r == 0 || r == avail {
			continue
		}
		down := min(maxCleanup-total, r-avail)
		n := r - down
		if n > r {
			// An adopted ReplicaSet whose status still counts more
			// available pods than its spec asks for: upstream's sync
			// fails with this message and is retried, as here.
			return 0, fmt.Errorf("%w: when cleaning up unhealthy replicas, got invalid request to scale down %s %d -> %d", errRetry, kobjName(rs), r, n)
		}
		if _, err := s.scaleRS(ctx, rs, n, false); err != nil {
			return total, err
		}
		total += down
	}
	return total, nil
}

// scaleDownOld scales old ReplicaSets down, oldest first, as far as
// availability allows.
func (s *syncer) scaleDownOld(ctx context.Context, all, old []map[string]any) (int64, error) {
	minAvailable := s.spec.replicas - s.spec.MaxUnavailable()
	available := sumStatus(all, "availableReplicas")
	if available <= minAvailable {
		return 0, nil
	}
	totalDown := available - minAvailable
	sortByCreation(old)
	var total int64
	for _, rs := range old {
		if total >= totalDown {
			break
		}
		r := rsReplicas(rs)
		if r == 0 {
			continue
		}
		down := min(r, totalDown-total)
		if _, err := s.scaleRS(ctx, rs, r-down, false); err != nil {
			return total, err
		}
		total += down
	}
	return total, nil
}
