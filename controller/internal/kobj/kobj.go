// Package kobj holds what the controllers of the embedded cluster share
// about objects as JSON values: nested field access, owner references,
// pod readiness and availability, and the hashes that name ReplicaSets and
// pods.
package kobj

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"strconv"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

// The kinds the controllers read and write.
var (
	DeploymentGVK = schema.GVK{Group: "apps", Version: "v1", Kind: "Deployment"}
	ReplicaSetGVK = schema.GVK{Group: "apps", Version: "v1", Kind: "ReplicaSet"}
	PodGVK        = schema.GVK{Version: "v1", Kind: "Pod"}
	EventGVK      = schema.GVK{Version: "v1", Kind: "Event"}

	StatefulSetGVK        = schema.GVK{Group: "apps", Version: "v1", Kind: "StatefulSet"}
	DaemonSetGVK          = schema.GVK{Group: "apps", Version: "v1", Kind: "DaemonSet"}
	ControllerRevisionGVK = schema.GVK{Group: "apps", Version: "v1", Kind: "ControllerRevision"}
	JobGVK                = schema.GVK{Group: "batch", Version: "v1", Kind: "Job"}
	CronJobGVK            = schema.GVK{Group: "batch", Version: "v1", Kind: "CronJob"}
	PVCGVK                = schema.GVK{Version: "v1", Kind: "PersistentVolumeClaim"}
	PVGVK                 = schema.GVK{Version: "v1", Kind: "PersistentVolume"}
	NodeGVK               = schema.GVK{Version: "v1", Kind: "Node"}
	LeaseGVK              = schema.GVK{Group: "coordination.k8s.io", Version: "v1", Kind: "Lease"}
)

// Map returns the object at path, or nil.
func Map(obj map[string]any, path ...string) map[string]any {
	cur := obj
	for _, p := range path {
		next, _ := cur[p].(map[string]any)
		if next == nil {
			return nil
		}
		cur = next
	}
	return cur
}

// EnsureMap returns the object at path, creating it (and what leads to
// it) when missing.
func EnsureMap(obj map[string]any, path ...string) map[string]any {
	cur := obj
	for _, p := range path {
		next, _ := cur[p].(map[string]any)
		if next == nil {
			next = map[string]any{}
			cur[p] = next
		}
		cur = next
	}
	return cur
}

// Str returns the string at path, or "".
func Str(obj map[string]any, path ...string) string {
	if len(path) == 0 {
		return ""
	}
	m := Map(obj, path[:len(path)-1]...)
	s, _ := m[path[len(path)-1]].(string)
	return s
}

// Int returns the integer at path and whether it is there.
func Int(obj map[string]any, path ...string) (int64, bool) {
	if len(path) == 0 {
		return 0, false
	}
	m := Map(obj, path[:len(path)-1]...)
	switch v := m[path[len(path)-1]].(type) {
	case int64:
		return v, true
	case float64:
		return int64(v), true
	case int:
		return int64(v), true
	case int32:
		return int64(v), true
	}
	return 0, false
}

// IntOr returns the integer at path, or def when absent.
func IntOr(obj map[string]any, def int64, path ...string) int64 {
	if v, ok := Int(obj, path...); ok {
		return v
	}
	return def
}

// Bool returns the boolean at path, or false.
func Bool(obj map[string]any, path ...string) bool {
	if len(path) == 0 {
		return false
	}
	m := Map(obj, path[:len(path)-1]...)
	b, _ := m[path[len(path)-1]].(bool)
	return b
}

// Slice returns the list at path, or nil.
func Slice(obj map[string]any, path ...string) []any {
	if len(path) == 0 {
		return nil
	}
	m := Map(obj, path[:len(path)-1]...)
	s, _ := m[path[len(path)-1]].([]any)
	return s
}

// Name, Namespace and UID read metadata.
func Name(obj map[string]any) string      { return Str(obj, "metadata", "name") }
func Namespace(obj map[string]any) string { return Str(obj, "metadata", "namespace") }
func UID(obj map[string]any) string       { return Str(obj, "metadata", "uid") }

// Deleting reports a deletionTimestamp.
func Deleting(obj map[string]any) bool { return Str(obj, "metadata", "deletionTimestamp") != "" }

// StringMap returns the string map at path (labels, annotations) as Go
// strings; nil when absent.
func StringMap(obj map[string]any, path ...string) map[string]string {
	m := Map(obj, path...)
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		s, _ := v.(string)
		out[k] = s
	}
	return out
}

// Labels returns metadata.labels.
func Labels(obj map[string]any) map[string]string { return StringMap(obj, "metadata", "labels") }

// Annotation returns one annotation.
func Annotation(obj map[string]any, key string) string {
	return Str(obj, "metadata", "annotations", key)
}

// SetAnnotation sets one annotation.
func SetAnnotation(obj map[string]any, key, val string) {
	EnsureMap(obj, "metadata", "annotations")[key] = val
}

// ControllerRef returns the ownerReference with controller: true, or nil.
func ControllerRef(obj map[string]any) map[string]any {
	for _, r := range Slice(obj, "metadata", "ownerReferences") {
		m, _ := r.(map[string]any)
		if b, _ := m["controller"].(bool); b {
			return m
		}
	}
	return nil
}

// ControllerUID returns the uid of the controller owner, or "".
func ControllerUID(obj map[string]any) string {
	r := ControllerRef(obj)
	if r == nil {
		return ""
	}
	s, _ := r["uid"].(string)
	return s
}

// NewControllerRef is the ownerReference a controller puts on what it
// creates or adopts.
func NewControllerRef(owner map[string]any, gvk schema.GVK) map[string]any {
	return map[string]any{
		"apiVersion":         gvk.APIVersion(),
		"kind":               gvk.Kind,
		"name":               Name(owner),
		"uid":                UID(owner),
		"controller":         true,
		"blockOwnerDeletion": true,
	}
}

// FormatTime is how the API writes times (RFC 3339, UTC, seconds).
func FormatTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// FormatMicroTime is how the API writes metav1.MicroTime (RFC 3339 with
// microseconds, UTC).
func FormatMicroTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000000Z07:00")
}

// ParseTime reads an RFC 3339 time; the zero time when absent or bad.
func ParseTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

// Condition returns the condition of a type in status.conditions, or nil.
func Condition(obj map[string]any, typ string) map[string]any {
	for _, c := range Slice(obj, "status", "conditions") {
		m, _ := c.(map[string]any)
		if s, _ := m["type"].(string); s == typ {
			return m
		}
	}
	return nil
}

// Seconds is n seconds (a count read from an object), saturated at the
// largest Duration; negative counts are 0.
func Seconds(n int64) time.Duration {
	switch {
	case n <= 0:
		return 0
	case n > math.MaxInt64/int64(time.Second):
		return math.MaxInt64
	}
	return time.Duration(n) * time.Second
}

// PodReady reports the pod's Ready condition being True, and since when.
func PodReady(pod map[string]any) (bool, time.Time) {
	c := Condition(pod, "Ready")
	if c == nil || c["status"] != "True" {
		return false, time.Time{}
	}
	s, _ := c["lastTransitionTime"].(string)
	return true, ParseTime(s)
}

// PodAvailable reports whether a pod is available at now: ready for at
// least minReadySeconds (as podutil.IsPodAvailable). When it is ready but
// not yet available, at is when it will be.
func PodAvailable(pod map[string]any, minReadySeconds int64, now time.Time) (ok bool, at time.Time) {
	ready, since := PodReady(pod)
	if !ready {
		return false, time.Time{}
	}
	if minReadySeconds == 0 {
		return true, time.Time{}
	}
	at = since.Add(Seconds(minReadySeconds))
	if since.IsZero() || !at.After(now) {
		return true, time.Time{}
	}
	return false, at
}

// PodRunningAndReady reports a Running pod whose Ready condition is True.
func PodRunningAndReady(pod map[string]any) bool {
	if Str(pod, "status", "phase") != "Running" {
		return false
	}
	ok, _ := PodReady(pod)
	return ok
}

// PodActive reports a pod that counts towards its ReplicaSet's replicas:
// not terminating and neither Succeeded nor Failed (controller.IsPodActive).
func PodActive(pod map[string]any) bool {
	if Deleting(pod) {
		return false
	}
	p := Str(pod, "status", "phase")
	return p != "Succeeded" && p != "Failed"
}

// PodTerminating reports a pod being deleted that has not finished
// (controller.IsPodTerminating).
func PodTerminating(pod map[string]any) bool {
	if !Deleting(pod) {
		return false
	}
	p := Str(pod, "status", "phase")
	return p != "Succeeded" && p != "Failed"
}

// safeAlphabet is rand.SafeEncodeString's alphabet: no vowels, no
// confusable characters.
const safeAlphabet = "bcdfghjklmnpqrstvwxz2456789"

// SafeEncode maps each byte of s into the safe alphabet, as
// k8s.io/apimachinery's rand.SafeEncodeString.
func SafeEncode(s string) string {
	b := make([]byte, len(s))
	for i := 0; i < len(s); i++ {
		b[i] = safeAlphabet[int(s[i])%len(safeAlphabet)]
	}
	return string(b)
}

// TemplateHash is the pod-template-hash of a pod template: fnv32a of its
// canonical JSON (and the collision count, as upstream's ComputeHash),
// its decimal form encoded with SafeEncode.
func TemplateHash(template map[string]any, collisionCount *int64) string {
	h := fnv.New32a()
	data, err := value.Encode(template)
	if err != nil {
		// Objects decoded from the store always encode.
		data = []byte(err.Error())
	}
	h.Write(data)
	if collisionCount != nil {
		var b [4]byte
		binary.LittleEndian.PutUint32(b[:], uint32(*collisionCount))
		h.Write(b[:])
	}
	return SafeEncode(strconv.FormatUint(uint64(h.Sum32()), 10))
}

// ShortName returns n characters of the safe alphabet drawn from the
// fnv32a hash of parts: a deterministic stand-in for rand.String.
func ShortName(n int, parts ...string) string {
	h := fnv.New32a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	v := h.Sum32()
	b := make([]byte, n)
	for i := range b {
		b[i] = safeAlphabet[v%uint32(len(safeAlphabet))]
		v /= uint32(len(safeAlphabet))
		if v == 0 {
			v = h.Sum32()*2654435761 + uint32(i)
		}
	}
	return string(b)
}

// Copy deep-copies an object.
func Copy(obj cluster.Object) cluster.Object { return value.DeepCopyObject(obj) }
