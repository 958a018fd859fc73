package kubelet

import (
	"math"
	"strings"
	"time"
)

// The simulation is a pure function of the pod's spec, the time its
// kubelet accepted it (status.startTime), the profile and the cluster time:
// the timeline of every container is computed from those, so that the
// kubelet keeps no state and the status it writes at a time is always the
// same. Each computation also yields the next time the status changes,
// which the kubelet returns as its RequeueAt.

// skipPeriods lets a crash loop skip its whole periods (tests compare
// with the run-by-run walk).
var skipPeriods = true

// never is a time after every other.
var never = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// Durations and times computed from what a pod spec says saturate: a
// probe period of 2147483647 seconds, a failureThreshold as large, or a
// grace period of 2^63-1 seconds make a time that never comes, not an
// overflow.

// seconds is n seconds, saturated (negative: 0).
func seconds(n int64) time.Duration {
	switch {
	case n <= 0:
		return 0
	case n > math.MaxInt64/int64(time.Second):
		return math.MaxInt64
	}
	return time.Duration(n) * time.Second
}

// mulDuration is k*d for k, d >= 0, saturated.
func mulDuration(k int64, d time.Duration) time.Duration {
	if k <= 0 || d <= 0 {
		return 0
	}
	if k > math.MaxInt64/int64(d) {
		return math.MaxInt64
	}
	return time.Duration(k) * d
}

// addTime is t+d for d >= 0, never when that is not before never.
func addTime(t time.Time, d time.Duration) time.Time {
	if d >= never.Sub(t) {
		return never
	}
	return t.Add(d)
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// The back-off of container restarts and image pulls: 10s, doubling, at
// most 5 minutes; it starts over after a container ran for 10 minutes.
const (
	backoffInitial = 10 * time.Second
	backoffMax     = 5 * time.Minute
	backoffReset   = 10 * time.Minute
)

func backoff(level int) time.Duration {
	d := backoffInitial
	for i := 0; i < level && d < backoffMax; i++ {
		d *= 2
	}
	return min(d, backoffMax)
}

// probeSpec is a container's probe as the pod spec gives it, defaulted.
type probeSpec struct {
	delay, period, timeout time.Duration
	success, failure       int64
}

// probeRun is where a probe's answers change during one run of a
// container: probes at base + k*period; successes for k in [ks, kf).
type probeRun struct {
	p        *probeSpec
	base     time.Time
	ks, kf   int64 // kf < 0: no end
	succeeds bool  // some probe succeeds
}

func (r probeRun) at(k int64) time.Time { return addTime(r.base, mulDuration(k, r.p.period)) }

// indexAtOrAfter is the first k with base + k*period >= t.
func indexAtOrAfter(base time.Time, period time.Duration, t time.Time) int64 {
	if !t.After(base) {
		return 0
	}
	d := t.Sub(base)
	k := int64(d / period)
	if d%period != 0 {
		k++
	}
	return k
}

// newProbeRun places the answers of rule for a run started at R, probing
// from gate on (after the initial delay).
func newProbeRun(p *probeSpec, rule ProbeRule, R, gate time.Time) probeRun {
	r := probeRun{p: p, base: maxTime(addTime(R, p.delay), gate), kf: -1}
	if rule.Latency > 0 && time.Duration(rule.Latency) >= p.timeout {
		return r
	}
	if r.base == never {
		r.ks = 0
		return r
	}
	r.ks = indexAtOrAfter(r.base, p.period, addTime(R, time.Duration(rule.SuccessAfter)))
	if rule.FailAfter > 0 {
		r.kf = indexAtOrAfter(r.base, p.period, addTime(R, time.Duration(rule.FailAfter)))
	}
	r.succeeds = r.kf < 0 || r.ks < r.kf
	return r
}

// killAt is when failureThreshold failures in a row kill the container
// (liveness, startup before its success); never if they do not.
func (r probeRun) killAt() time.Time {
	f := max(r.p.failure, 1)
	if !r.succeeds || r.ks >= f {
		return r.at(f - 1)
	}
	if r.kf >= 0 {
		if r.kf > math.MaxInt64-f {
			return never
		}
		return r.at(r.kf + f - 1)
	}
	return never
}

// ctrInput is one container and what decides its timeline.
type ctrInput struct {
	name, image                   string
	b                             behaviour
	readiness, liveness, startup  *probeSpec
	restartOnSuccess, restartFail bool
	// sidecar is an init container with restartPolicy Always: it counts as
	// done once started and keeps running.
	sidecar bool
	// gate, when set, holds the container's creation until its
	// environment's ConfigMaps and Secrets resolve (see refs.go).
	gate *envGate
}

// term is a terminated state.
type term struct {
	code                  int64
	reason                string
	startedAt, finishedAt time.Time
	// killedBy names the probe that killed the container ("Liveness",
	// "Startup"); "" when its process ended by itself.
	killedBy string
}

// ctrState is a container at one time.
type ctrState struct {
	waitingReason  string // "" when running or terminated
	waitingMessage string
	running        bool
	startedAt      time.Time
	terminated     *term
	last           *term
	restarts       int64
	ready, started bool
	// ran reports the container has run (it has a container id).
	ran bool
	// next is the next time this state changes; never if it does not.
	next time.Time
	// done is when an init container completed (a sidecar: started),
	// never if it has not by now.
	done time.Time
	// failed reports an init container that failed and will not restart.
	failed bool
}

// run is one run of a container.
type run struct {
	start, end time.Time // end: never if it does not end
	code       int64
	reason     string
	killedBy   string
	started    time.Time // startup probe success (start without one)
	readyFrom  time.Time // never: not ready during this run
	readyUntil time.Time
}

func (c *ctrInput) run(R time.Time) run {
	r := run{start: R, end: never, started: R, readyUntil: never}
	if c.b.exits {
		r.end, r.code = addTime(R, c.b.exitAfter), c.b.exitCode
		switch {
		case c.b.oom:
			r.reason = "OOMKilled"
		case r.code == 0:
			r.reason = "Completed"
		default:
			r.reason = "Error"
		}
	}
	kill := func(at time.Time, by string) {
		if at.Before(r.end) {
			r.end, r.code, r.reason, r.killedBy = at, 137, "Error", by
		}
	}
	if c.startup != nil {
		pr := newProbeRun(c.startup, c.b.startup, R, R)
		if k := pr.killAt(); pr.succeeds && pr.ks < max(c.startup.failure, 1) {
			r.started = pr.at(pr.ks)
		} else {
			r.started = never
			kill(k, "Startup")
		}
	}
	if r.started != never && c.liveness != nil {
		kill(newProbeRun(c.liveness, c.b.liveness, R, r.started).killAt(), "Liveness")
	}
	r.readyFrom = r.started
	if c.readiness != nil && r.started != never {
		pr := newProbeRun(c.readiness, c.b.readiness, R, r.started)
		r.readyFrom = never
		if pr.succeeds {
			k := pr.ks + max(c.readiness.success, 1) - 1
			if pr.kf < 0 || k < pr.kf {
				r.readyFrom = pr.at(k)
				if pr.kf >= 0 {
					r.readyUntil = pr.at(pr.kf + max(c.readiness.failure, 1) - 1)
				}
			}
		}
	}
	if r.started.After(r.end) {
		r.started = never
	}
	r.readyUntil = minTime(r.readyUntil, r.end)
	if !r.readyFrom.Before(r.readyUntil) {
		r.readyFrom, r.readyUntil = never, never
	}
	return r
}

// at is the container at time t when its kubelet began creating it at C.
func (c *ctrInput) at(C, t time.Time) ctrState {
	s := ctrState{next: never, done: never}
	if c.b.invalidImage != "" {
		s.waitingReason, s.waitingMessage = "InvalidImageName", c.b.invalidImage
		return s
	}
	pulled := C.Add(c.b.pull)
	if c.gate != nil && !c.b.pullFails {
		// Pulled, then refused until its environment resolves; created
		// at the first retry after that, its image already present.
		if created, msg, next := c.gate.until(pulled, t); !created.Equal(pulled) {
			if t.Before(pulled) {
				s.waitingReason, s.next = "ContainerCreating", pulled
				return s
			}
			if t.Before(created) {
				s.waitingReason, s.waitingMessage, s.next = "CreateContainerConfigError", msg, next
				return s
			}
			pulled = created
		}
	}
	if !c.b.pullFails && t.Before(pulled.Add(c.b.start)) {
		// Pulling, then creating: one state until Running.
		s.waitingReason, s.next = "ContainerCreating", pulled.Add(c.b.start)
		return s
	}
	if t.Before(pulled) {
		s.waitingReason, s.next = "ContainerCreating", pulled
		return s
	}
	if c.b.pullFails {
		// ErrImagePull for a second, then ImagePullBackOff until the next
		// pull fails again.
		x := pulled
		for level := 0; ; level++ {
			if t.Before(x.Add(time.Second)) {
				s.waitingReason, s.next = "ErrImagePull", x.Add(time.Second)
				s.waitingMessage = pullErrorMessage(c.image)
				return s
			}
			nx := x.Add(time.Second + backoff(level) + c.b.pull)
			if t.Before(nx) {
				s.waitingReason, s.next = "ImagePullBackOff", nx
				s.waitingMessage = `Back-off pulling image "` + defaultTag(c.image) + `": ErrImagePull: ` + pullErrorMessage(c.image)
				return s
			}
			if backoff(level) == backoffMax {
				// Skip whole capped periods at once.
				period := time.Second + backoffMax + c.b.pull
				n := t.Sub(nx) / period
				x = nx.Add(n * period)
				continue
			}
			x = nx
		}
	}
	R := pulled.Add(c.b.start)
	s.ran = true
	level := 0
	for {
		r := c.run(R)
		if s.restarts > 0 && r.end != never {
			// Every run of a container lasts as long (it depends only on
			// when it starts), so once the back-off no longer grows the
			// runs repeat with one period: skip the whole periods before
			// t at once, so that the cost does not grow with time.
			dur := r.end.Sub(r.start)
			d := backoff(level)
			if dur >= backoffReset {
				d = backoffInitial
			}
			if d == backoffMax || dur >= backoffReset {
				period := dur + d
				if n := int64(t.Sub(R)/period) - 1; n > 0 && skipPeriods {
					R = R.Add(time.Duration(n) * period)
					s.restarts += n
					prev := c.run(R.Add(-period))
					s.last = &term{code: prev.code, reason: prev.reason, startedAt: prev.start, finishedAt: prev.end, killedBy: prev.killedBy}
					r = c.run(R)
				}
			}
		}
		if c.sidecar && r.started != never && s.done == never {
			s.done = r.started
		}
		if t.Before(r.end) {
			s.running, s.startedAt = true, r.start
			s.started = !t.Before(r.started)
			s.ready = !t.Before(r.readyFrom) && t.Before(r.readyUntil)
			for _, x := range []time.Time{r.started, r.readyFrom, r.readyUntil, r.end} {
				if x.After(t) {
					s.next = minTime(s.next, x)
				}
			}
			return s
		}
		tm := &term{code: r.code, reason: r.reason, startedAt: r.start, finishedAt: r.end, killedBy: r.killedBy}
		restart := c.restartFail
		if r.code == 0 {
			restart = c.restartOnSuccess
		}
		if !restart {
			s.terminated = tm
			if r.code == 0 && !c.sidecar {
				s.done = r.end
			} else if r.code != 0 {
				s.failed = true
			}
			return s
		}
		if r.end.Sub(r.start) >= backoffReset {
			level = 0
		}
		d := backoff(level)
		level++
		s.restarts++
		s.last = tm
		R = r.end.Add(d)
		if t.Before(R) {
			s.waitingReason, s.next = "CrashLoopBackOff", R
			s.waitingMessage = "back-off " + d.String() + " restarting failed container=" + c.name
			return s
		}
	}
}

// fullImage is an image as the runtime names it: docker.io/library/nginx:1.161.
func fullImage(image string) string {
	n := NormalizeImage(image)
	first, _, ok := strings.Cut(n, "/")
	switch {
	case !ok:
		return "docker.io/library/" + n
	case !strings.ContainsAny(first, ".:") && first != "localhost":
		return "docker.io/" + n
	}
	return n
}

// defaultTag is an image as the kubelet names it in its messages: with
// ":latest" when it has neither tag nor digest, and nothing else changed.
func defaultTag(image string) string {
	last := image[strings.LastIndex(image, "/")+1:]
	if !strings.Contains(last, ":") && !strings.Contains(last, "@") {
		return image + ":latest"
	}
	return image
}

func pullErrorMessage(image string) string {
	f := fullImage(image)
	return `rpc error: code = NotFound desc = failed to pull and unpack image "` + f + `": failed to resolve reference "` + f + `": ` + f + `: not found`
}
