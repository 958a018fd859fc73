package deployment

import (
	"fmt"
	"maps"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/konverge/konverge/controller/internal/kobj"
	"github.com/konverge/konverge/value"
)

// The annotations and label the controller maintains.
const (
	RevisionAnnotation         = "deployment.kubernetes.io/revision"
	RevisionHistoryAnnotation  = "deployment.kubernetes.io/revision-history"
	DesiredReplicasAnnotation  = "deployment.kubernetes.io/desired-replicas"
	MaxReplicasAnnotation      = "deployment.kubernetes.io/max-replicas"
	ChangeCauseAnnotation      = "kubernetes.io/change-cause"
	PodTemplateHashLabel       = "pod-template-hash"
	lastAppliedAnnotation      = "kubectl.kubernetes.io/last-applied-configuration"
	deprecatedRollbackTo       = "deprecated.deployment.rollback.to"
	maxRevHistoryLengthInChars = 2000
)

// The reasons of the Deployment conditions, as upstream's deployment util.
const (
	ReasonNewRSCreated     = "NewReplicaSetCreated"
	ReasonFoundNewRS       = "FoundNewReplicaSet"
	ReasonRSUpdated        = "ReplicaSetUpdated"
	ReasonNewRSAvailable   = "NewReplicaSetAvailable"
	ReasonTimedOut         = "ProgressDeadlineExceeded"
	ReasonPaused           = "DeploymentPaused"
	ReasonResumed          = "DeploymentResumed"
	ReasonFailedRSCreate   = "ReplicaSetCreateError"
	ReasonMinAvailable     = "MinimumReplicasAvailable"
	ReasonMinUnavailable   = "MinimumReplicasUnavailable"
	ReasonRollbackDone     = "DeploymentRollback"
	Component              = "deployment-controller"
	msgMinAvailable        = "Deployment has minimum availability."
	msgMinUnavailable      = "Deployment does not have minimum availability."
	defaultProgressSeconds = 600
	defaultHistoryLimit    = 10
)

var annotationsToSkip = map[string]bool{
	lastAppliedAnnotation:     true,
	RevisionAnnotation:        true,
	RevisionHistoryAnnotation: true,
	DesiredReplicasAnnotation: true,
	MaxReplicasAnnotation:     true,
	deprecatedRollbackTo:      true,
}

// scaledValue resolves an int-or-percent against total: an integer as is,
// "N%" as N percent of total rounded up or down
// (intstr.GetScaledValueFromIntOrPercent).
func scaledValue(v any, total int64, roundUp bool) (int64, error) {
	switch x := v.(type) {
	case nil:
		return 0, nil
	case int64:
		return x, nil
	case float64:
		return int64(x), nil
	case int:
		return int64(x), nil
	case string:
		if !strings.HasSuffix(x, "%") {
			if n, err := strconv.ParseInt(x, 10, 64); err == nil {
				// An integer in a string is invalid upstream.
				_ = n
			}
			return 0, fmt.Errorf("invalid value for IntOrString: invalid type: string is not a percentage")
		}
		p, err := strconv.Atoi(strings.TrimSuffix(x, "%"))
		if err != nil {
			return 0, fmt.Errorf("invalid value %q: %w", x, err)
		}
		if roundUp {
			return int64(math.Ceil(float64(p) * float64(total) / 100)), nil
		}
		return int64(math.Floor(float64(p) * float64(total) / 100)), nil
	}
	return 0, fmt.Errorf("invalid value for IntOrString: %v", v)
}

// ResolveFenceposts returns maxSurge and maxUnavailable for desired
// replicas: maxSurge rounded up, maxUnavailable rounded down, and
// maxUnavailable 1 when both come out 0 (the rollout must progress).
func ResolveFenceposts(maxSurge, maxUnavailable any, desired int64) (int64, int64, error) {
	surge, err := scaledValue(maxSurge, desired, true)
	if err != nil {
		return 0, 0, err
	}
	unavailable, err := scaledValue(maxUnavailable, desired, false)
	if err != nil {
		return 0, 0, err
	}
	if surge == 0 && unavailable == 0 {
		unavailable = 1
	}
	return surge, unavailable, nil
}

// spec is what the controller reads of a Deployment, with defaults.
type spec struct {
	replicas          int64
	recreate          bool
	surgeRaw, unavRaw any
	paused            bool
	minReady          int64
	progressDeadline  int64 // 0: none
	historyLimit      int64
	hasHistoryLimit   bool
}

func readSpec(d map[string]any) spec {
	s := spec{
		replicas: kobj.IntOr(d, 1, "spec", "replicas"),
		recreate: kobj.Str(d, "spec", "strategy", "type") == "Recreate",
		paused:   kobj.Bool(d, "spec", "paused"),
		minReady: kobj.IntOr(d, 0, "spec", "minReadySeconds"),
	}
	if !s.recreate {
		ru := kobj.Map(d, "spec", "strategy", "rollingUpdate")
		s.surgeRaw, s.unavRaw = "25%", "25%"
		if v, ok := ru["maxSurge"]; ok {
			s.surgeRaw = v
		}
		if v, ok := ru["maxUnavailable"]; ok {
			s.unavRaw = v
		}
	}
	s.progressDeadline = kobj.IntOr(d, defaultProgressSeconds, "spec", "progressDeadlineSeconds")
	if s.progressDeadline == math.MaxInt32 {
		s.progressDeadline = 0
	}
	s.historyLimit = kobj.IntOr(d, defaultHistoryLimit, "spec", "revisionHistoryLimit")
	s.hasHistoryLimit = true
	return s
}

// MaxSurge is the Deployment's resolved maxSurge (0 for Recreate).
func (s spec) MaxSurge() int64 {
	if s.recreate {
		return 0
	}
	surge, _, _ := ResolveFenceposts(s.surgeRaw, s.unavRaw, s.replicas)
	return surge
}

// MaxUnavailable is the resolved maxUnavailable, at most replicas (0 for
// Recreate or no replicas).
func (s spec) MaxUnavailable() int64 {
	if s.recreate || s.replicas == 0 {
		return 0
	}
	_, u, _ := ResolveFenceposts(s.surgeRaw, s.unavRaw, s.replicas)
	if u > s.replicas {
		return s.replicas
	}
	return u
}

// rsReplicas, rsStatus read a ReplicaSet.
func rsReplicas(rs map[string]any) int64 { return kobj.IntOr(rs, 1, "spec", "replicas") }
func rsStatus(rs map[string]any, f string) int64 {
	return kobj.IntOr(rs, 0, "status", f)
}

func sumSpec(rss []map[string]any) (n int64) {
	for _, rs := range rss {
		if rs != nil {
			n += rsReplicas(rs)
		}
	}
	return n
}

func sumStatus(rss []map[string]any, f string) (n int64) {
	for _, rs := range rss {
		if rs != nil {
			n += rsStatus(rs, f)
		}
	}
	return n
}

func activeRSs(rss []map[string]any) []map[string]any {
	var out []map[string]any
	for _, rs := range rss {
		if rs != nil && rsReplicas(rs) > 0 {
			out = append(out, rs)
		}
	}
	return out
}

func created(rs map[string]any) string { return kobj.Str(rs, "metadata", "creationTimestamp") }

// sortByCreation orders oldest first, then by name.
func sortByCreation(rss []map[string]any) {
	sort.SliceStable(rss, func(i, j int) bool {
		a, b := created(rss[i]), created(rss[j])
		if a != b {
			return a < b
		}
		return kobj.Name(rss[i]) < kobj.Name(rss[j])
	})
}

// sortBySize orders larger first, then newer (newer=true) or older first.
func sortBySize(rss []map[string]any, newer bool) {
	sort.SliceStable(rss, func(i, j int) bool {
		a, b := rsReplicas(rss[i]), rsReplicas(rss[j])
		if a != b {
			return a > b
		}
		ca, cb := created(rss[i]), created(rss[j])
		if ca != cb {
			if newer {
				return ca > cb
			}
			return ca < cb
		}
		return kobj.Name(rss[i]) > kobj.Name(rss[j]) == newer
	})
}

func revision(rs map[string]any) (int64, bool) {
	v, err := strconv.ParseInt(kobj.Annotation(rs, RevisionAnnotation), 10, 64)
	return v, err == nil
}

func maxRevision(rss []map[string]any) int64 {
	var m int64
	for _, rs := range rss {
		if v, ok := revision(rs); ok && v > m {
			m = v
		}
	}
	return m
}

// templateWithoutHash is a pod template less its pod-template-hash label.
func templateWithoutHash(t map[string]any) map[string]any {
	if kobj.Str(t, "metadata", "labels", PodTemplateHashLabel) == "" {
		if _, ok := kobj.Map(t, "metadata", "labels")[PodTemplateHashLabel]; !ok {
			return t
		}
	}
	// Copy only the path to the label: the rest is shared with t.
	c := maps.Clone(t)
	md := maps.Clone(kobj.Map(t, "metadata"))
	c["metadata"] = md
	l := maps.Clone(kobj.Map(md, "labels"))
	delete(l, PodTemplateHashLabel)
	if len(l) == 0 {
		delete(md, "labels")
	} else {
		md["labels"] = l
	}
	return c
}

// EqualIgnoreHash compares two pod templates, ignoring the
// pod-template-hash label.
func EqualIgnoreHash(a, b map[string]any) bool {
	return value.Equal(normTemplate(templateWithoutHash(a)), normTemplate(templateWithoutHash(b)))
}

// normTemplate drops empty metadata maps that an API round trip may leave.
func normTemplate(t map[string]any) map[string]any {
	md := kobj.Map(t, "metadata")
	if md == nil {
		return t
	}
	empty := len(md) == 0
	if !empty {
		return t
	}
	c := make(map[string]any, len(t))
	for k, v := range t {
		if k != "metadata" {
			c[k] = v
		}
	}
	return c
}

// findNewRS is the oldest ReplicaSet whose template equals the
// Deployment's.
func findNewRS(d map[string]any, rss []map[string]any) map[string]any {
	sorted := append([]map[string]any(nil), rss...)
	sortByCreation(sorted)
	tmpl := kobj.Map(d, "spec", "template")
	for _, rs := range sorted {
		if EqualIgnoreHash(kobj.Map(rs, "spec", "template"), tmpl) {
			return rs
		}
	}
	return nil
}

// NewRSNewReplicas is how many replicas the new ReplicaSet should have
// now (deploymentutil.NewRSNewReplicas).
func NewRSNewReplicas(d map[string]any, allRSs []map[string]any, newRS map[string]any) (int64, error) {
	s := readSpec(d)
	if s.recreate {
		return s.replicas, nil
	}
	surge, err := scaledValue(s.surgeRaw, s.replicas, true)
	if err != nil {
		return 0, err
	}
	current := sumSpec(allRSs)
	maxTotal := s.replicas + surge
	if current >= maxTotal {
		return rsReplicas(newRS), nil
	}
	up := min(maxTotal-current, s.replicas-rsReplicas(newRS))
	return rsReplicas(newRS) + up, nil
}

// GetProportion is how many replicas to add to (or remove from) rs in a
// proportional scale (deploymentutil.GetReplicaSetProportion).
func GetProportion(rs, d map[string]any, toAdd, added int64) int64 {
	if rs == nil || rsReplicas(rs) == 0 || toAdd == 0 || toAdd == added {
		return 0
	}
	frac := fraction(rs, d)
	allowed := toAdd - added
	if toAdd > 0 {
		return min(frac, allowed)
	}
	return max(frac, allowed)
}

func fraction(rs, d map[string]any) int64 {
	s := readSpec(d)
	if s.replicas == 0 {
		return -rsReplicas(rs)
	}
	maxReplicas := s.replicas + s.MaxSurge()
	before, err := strconv.ParseInt(kobj.Annotation(rs, MaxReplicasAnnotation), 10, 64)
	if err != nil || before == 0 {
		before = kobj.IntOr(d, 0, "status", "replicas")
		if before == 0 {
			return 0
		}
	}
	size := float64(rsReplicas(rs)*maxReplicas) / float64(before)
	return int64(math.Round(size)) - rsReplicas(rs)
}

// condition helpers on a status map.

func getCond(status map[string]any, typ string) map[string]any {
	for _, c := range sliceOf(status["conditions"]) {
		m, _ := c.(map[string]any)
		if m["type"] == typ {
			return m
		}
	}
	return nil
}

func sliceOf(v any) []any { s, _ := v.([]any); return s }

func newCond(typ, status, reason, msg string, now time.Time) map[string]any {
	ts := kobj.FormatTime(now)
	return map[string]any{
		"type": typ, "status": status, "reason": reason, "message": msg,
		"lastUpdateTime": ts, "lastTransitionTime": ts,
	}
}

// setCond is SetDeploymentCondition: nothing when status and reason are
// the same; the transition time kept when only the reason changes.
func setCond(status map[string]any, c map[string]any) {
	cur := getCond(status, c["type"].(string))
	if cur != nil && cur["status"] == c["status"] && cur["reason"] == c["reason"] {
		return
	}
	if cur != nil && cur["status"] == c["status"] {
		c["lastTransitionTime"] = cur["lastTransitionTime"]
	}
	removeCond(status, c["type"].(string))
	status["conditions"] = append(sliceOf(status["conditions"]), c)
}

func removeCond(status map[string]any, typ string) {
	var kept []any
	for _, c := range sliceOf(status["conditions"]) {
		if m, _ := c.(map[string]any); m["type"] != typ {
			kept = append(kept, c)
		}
	}
	if len(kept) == 0 {
		delete(status, "conditions")
		return
	}
	status["conditions"] = kept
}
