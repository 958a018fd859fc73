package kubelet

import (
	"context"
	"fmt"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/controller"
	"github.com/konverge/konverge/schema"
)

// The kubelet's refusals for what a pod names that does not exist
// (kubelet v1.37: kubelet_pods.go makeEnvironmentVariables, the volume
// manager and the configmap and secret volume plugins):
//
//   - a container whose env valueFrom (configMapKeyRef, secretKeyRef) or
//     envFrom names a ConfigMap or Secret that is missing, or a key its
//     data lacks, and is not optional, is not created: after its image
//     is pulled it stays Waiting, CreateContainerConfigError, with the
//     kubelet's message (`configmap "x" not found`, `couldn't find key k
//     in ConfigMap ns/x`) and a Warning Event Failed "Error: ...". The
//     pod worker retries every 10 seconds; the container is created at
//     the first retry after the object (or key) appears, its image
//     already present.
//   - a configMap or secret volume naming a missing object (or, through
//     items, a missing key) that is not optional is not mounted: the
//     pod's sandbox is not made, it stays ContainerCreating without an
//     address, PodReadyToStartContainers False, and a Warning Event
//     FailedMount `MountVolume.SetUp failed for volume "v" : configmap
//     "x" not found` is recorded. The volume manager retries with its
//     exponential back-off (0.5s doubling to 2m2s); the pod starts at
//     the first retry after the object appears.
//
// As the rest of the simulation this is a function of the objects: the
// time a reference resolved is its object's creationTimestamp, and a
// container (or
// a pod's sandbox) that the stored status shows started before that time
// was not held by it (a ConfigMap deleted or changed under a running pod
// changes nothing). While a reference stays unresolved the pod has no
// work due: a change of a ConfigMap or Secret makes the kubelet look again.
//
// Not simulated: the time a change added a missing key to an existing
// object (a key that is there counts from the object's creation), the
// repeated Failed and FailedMount Events of every retry (each is recorded
// once), the "Unable to attach or mount volumes"
// Event of the volume manager's two-minute timeout, projected volumes and
// the downward API.

var (
	configMapGVK = schema.GVK{Version: "v1", Kind: "ConfigMap"}
	secretGVK    = schema.GVK{Version: "v1", Kind: "Secret"}
)

// configRetry is how often the pod worker retries a pod whose container
// could not be created.
const configRetry = 10 * time.Second

// Bounds of the volume manager's retries of a failed mount.
const (
	mountRetryFirst = 500 * time.Millisecond
	mountRetryMax   = 2*time.Minute + 2*time.Second
)

// refLookup reads the ConfigMaps and Secrets pods name, once per sync.
type refLookup struct {
	ctx  context.Context
	c    cluster.Interface
	seen map[refKey]map[string]any
}

type refKey struct{ kind, namespace, name string }

func newRefLookup(ctx context.Context, c cluster.Interface) *refLookup {
	return &refLookup{ctx: ctx, c: c, seen: map[refKey]map[string]any{}}
}

// get returns the object, nil when it does not exist (or cannot be read:
// the kubelet sees it as missing).
func (l *refLookup) get(kind, namespace, name string) map[string]any {
	if l == nil {
		return nil
	}
	key := refKey{kind, namespace, name}
	if obj, ok := l.seen[key]; ok {
		return obj
	}
	gvk := configMapGVK
	if kind == "Secret" {
		gvk = secretGVK
	}
	obj, err := controller.GetShared(l.ctx, l.c, gvk, namespace, name)
	if err != nil {
		obj = nil
	}
	l.seen[key] = obj
	return obj
}

// ref is one reference of a pod to a ConfigMap or Secret, resolved now.
type ref struct {
	// at is when it resolved; never: it does not (yet).
	at time.Time
	// created is when its object was made (never: missing).
	created time.Time
	// missing and noKey are the kubelet's errors while the object, or
	// the key, is not there.
	missing, noKey string
}

// errorAt is the error of the reference at time t ("" when resolved).
func (r ref) errorAt(t time.Time) string {
	if !r.at.After(t) {
		return ""
	}
	if r.created.After(t) || r.noKey == "" {
		return r.missing
	}
	return r.noKey
}

// resolve makes a ref to the object kind/ns/name (key: a key its data
// must have; "" for none).
func (l *refLookup) resolve(kind, ns, name, key, missing, noKey string) ref {
	r := ref{at: never, created: never, missing: missing}
	if key != "" {
		r.noKey = noKey
	}
	obj := l.get(kind, ns, name)
	if obj == nil {
		return r
	}
	md := mapOf(obj, "metadata")
	created, err := time.Parse(time.RFC3339, str(md, "creationTimestamp"))
	if err != nil {
		created = time.Time{}
	}
	r.created = created
	if key == "" {
		r.at = created
		return r
	}
	if hasKey(obj, key) {
		// Taken as there since the object was made (the time a change
		// added it is not kept where the kubelet reads).
		r.at = created
	}
	return r
}

func hasKey(obj map[string]any, key string) bool {
	if _, ok := mapOf(obj, "data")[key]; ok {
		return true
	}
	if str(obj, "kind") == "Secret" {
		_, ok := mapOf(obj, "stringData")[key]
		return ok
	}
	return false
}

func optional(m map[string]any) bool {
	b, _ := m["optional"].(bool)
	return b
}

// envRefs are the references of a container's environment that are not
// optional, in the kubelet's order (envFrom, then env).
func (l *refLookup) envRefs(ns string, cm map[string]any) []ref {
	var out []ref
	for _, x := range listOf(cm, "envFrom") {
		ef, _ := x.(map[string]any)
		if r := mapOf(ef, "configMapRef"); r != nil && !optional(r) {
			name := str(r, "name")
			out = append(out, l.resolve("ConfigMap", ns, name, "", fmt.Sprintf("configmap %q not found", name), ""))
		}
		if r := mapOf(ef, "secretRef"); r != nil && !optional(r) {
			name := str(r, "name")
			out = append(out, l.resolve("Secret", ns, name, "", fmt.Sprintf("secret %q not found", name), ""))
		}
	}
	for _, x := range listOf(cm, "env") {
		e, _ := x.(map[string]any)
		if v, ok := e["value"].(string); ok && v != "" {
			continue
		}
		vf := mapOf(e, "valueFrom")
		if r := mapOf(vf, "configMapKeyRef"); r != nil && !optional(r) {
			name, key := str(r, "name"), str(r, "key")
			out = append(out, l.resolve("ConfigMap", ns, name, key, fmt.Sprintf("configmap %q not found", name),
				fmt.Sprintf("couldn't find key %s in ConfigMap %s/%s", key, ns, name)))
		}
		if r := mapOf(vf, "secretKeyRef"); r != nil && !optional(r) {
			name, key := str(r, "name"), str(r, "key")
			out = append(out, l.resolve("Secret", ns, name, key, fmt.Sprintf("secret %q not found", name),
				fmt.Sprintf("couldn't find key %s in Secret %s/%s", key, ns, name)))
		}
	}
	return out
}

// volumeRefs are the pod's configMap and secret volumes that are not
// optional: one ref for the object and one per key its items name, with
// the FailedMount message of each.
func (l *refLookup) volumeRefs(ns string, spec map[string]any) []ref {
	var out []ref
	for _, x := range listOf(spec, "volumes") {
		v, _ := x.(map[string]any)
		prefix := fmt.Sprintf("MountVolume.SetUp failed for volume %q : ", str(v, "name"))
		kind, src, name, noKey := "", map[string]any(nil), "", ""
		if s := mapOf(v, "configMap"); s != nil {
			kind, src, name, noKey = "ConfigMap", s, str(s, "name"), "configmap references non-existent config key: "
		} else if s := mapOf(v, "secret"); s != nil {
			kind, src, name, noKey = "Secret", s, str(s, "secretName"), "references non-existent secret key: "
		}
		if src == nil || optional(src) {
			continue
		}
		missing := prefix + fmt.Sprintf("%s %q not found", map[string]string{"ConfigMap": "configmap", "Secret": "secret"}[kind], name)
		out = append(out, l.resolve(kind, ns, name, "", missing, ""))
		for _, y := range listOf(src, "items") {
			it, _ := y.(map[string]any)
			key := str(it, "key")
			out = append(out, l.resolve(kind, ns, name, key, missing, prefix+noKey+key))
		}
	}
	return out
}

// lastResolved is when all the refs resolved (never: some did not).
func lastResolved(refs []ref) time.Time {
	var a time.Time
	for _, r := range refs {
		if r.at.After(a) {
			a = r.at
		}
	}
	return a
}

// firstError is the first reference's error at time t.
func firstError(refs []ref, t time.Time) string {
	for _, r := range refs {
		if e := r.errorAt(t); e != "" {
			return e
		}
	}
	return ""
}

// envGate holds a container until its environment resolves.
type envGate struct {
	refs []ref
	all  time.Time // lastResolved(refs)
	// held reports, once until was asked, a container that was refused
	// at least once.
	held bool
}

// until is, for a container first tried at P, when it is created (never:
// not yet known), and at t < that, the error of the last retry and the
// next time the state changes.
func (g *envGate) until(P, t time.Time) (created time.Time, msg string, next time.Time) {
	if g == nil || !g.all.After(P) {
		return P, "", never
	}
	g.held = true
	// Retries at P + k*configRetry.
	k := int64(0)
	if t.After(P) {
		k = int64(t.Sub(P) / configRetry)
	}
	tick := P.Add(time.Duration(k) * configRetry)
	created = never
	if g.all != never {
		n := int64(g.all.Sub(P) / configRetry)
		if P.Add(time.Duration(n) * configRetry).Before(g.all) {
			n++
		}
		created = P.Add(time.Duration(n) * configRetry)
	}
	msg = firstError(g.refs, tick)
	next = created
	// The message changes at the first retry after an object appears or
	// a ref resolves.
	retryAfter := func(x time.Time) time.Time {
		n := int64(x.Sub(P) / configRetry)
		if P.Add(time.Duration(n) * configRetry).Before(x) {
			n++
		}
		return P.Add(time.Duration(n) * configRetry)
	}
	for _, r := range g.refs {
		for _, x := range []time.Time{r.created, r.at} {
			if x != never && x.After(tick) {
				next = minTime(next, retryAfter(x))
			}
		}
	}
	return created, msg, next
}

// mountRetryAfter is the first retry of a mount tried first at start
// that comes at or after a (never: never).
func mountRetryAfter(start, a time.Time) time.Time {
	if a == never {
		return never
	}
	t, d := start, mountRetryFirst
	for t.Before(a) {
		if d == mountRetryMax {
			// Whole capped periods at once.
			n := a.Sub(t) / d
			t = t.Add(n * d)
			if !t.Before(a) {
				break
			}
		}
		t = t.Add(d)
		d = min(2*d, mountRetryMax)
	}
	return t
}

// startedBefore reports a container status that shows a run started
// before a (at all, when a is never).
func startedBefore(cs map[string]any, a time.Time) bool {
	if cs == nil || str(cs, "containerID") == "" {
		return false
	}
	if a == never {
		return true
	}
	for _, st := range []map[string]any{mapOf(cs, "state"), mapOf(cs, "lastState")} {
		for _, f := range []string{"running", "terminated"} {
			if s, err := time.Parse(time.RFC3339, str(mapOf(st, f), "startedAt")); err == nil && s.Before(a) {
				return true
			}
		}
	}
	return false
}

// storedStatus is a container's status as stored.
func storedStatus(old map[string]any, field, name string) map[string]any {
	for _, x := range listOf(old, field) {
		if m, _ := x.(map[string]any); str(m, "name") == name {
			return m
		}
	}
	return nil
}

// gateEnv holds in (a container of pod, cm its spec) by the references of
// its environment, unless its stored status (in old's field) shows it
// started before they resolved.
func (k *Kubelet) gateEnv(in *ctrInput, pod, cm, old map[string]any, field string) {
	if len(listOf(cm, "env")) == 0 && len(listOf(cm, "envFrom")) == 0 {
		return
	}
	refs := k.refs.envRefs(str(mapOf(pod, "metadata"), "namespace"), cm)
	if len(refs) == 0 {
		return
	}
	all := lastResolved(refs)
	if startedBefore(storedStatus(old, field, str(cm, "name")), all) {
		return
	}
	in.gate = &envGate{refs: refs, all: all}

}

// sandboxBefore reports a stored status whose sandbox was made before a
// (at all, when a is never): PodReadyToStartContainers True since then.
func sandboxBefore(old map[string]any, a time.Time) bool {
	c := findCondition(old, "PodReadyToStartContainers")
	if c == nil || str(c, "status") != "True" {
		return false
	}
	if a == never {
		return true
	}
	t, err := time.Parse(time.RFC3339, str(c, "lastTransitionTime"))
	return err == nil && t.Before(a)
}

// mountWaitStatus is the status of a pod whose volumes are not mounted
// yet (they will be at sandbox; never: not known when): no sandbox, no
// address, every container waiting. msg is the FailedMount message.
func (k *Kubelet) mountWaitStatus(pod, st, old map[string]any, start, now, sandbox time.Time, msg string, deleting bool) (map[string]any, time.Time, bool, []ctrInfo) {
	spec, md := mapOf(pod, "spec"), mapOf(pod, "metadata")
	if deleting && len(listOf(md, "finalizers")) == 0 {
		return nil, never, true, nil
	}
	ts := func(x time.Time) string { return x.UTC().Format(time.RFC3339) }
	var initStatuses, ctrStatuses []any
	var pendingInit, unready []string
	for _, x := range listOf(spec, "initContainers") {
		cm, _ := x.(map[string]any)
		initStatuses = append(initStatuses, k.containerStatus(pod, cm, ctrState{waitingReason: "PodInitializing"}, false, old, "initContainerStatuses"))
		pendingInit = append(pendingInit, str(cm, "name"))
		if str(cm, "restartPolicy") == "Always" {
			unready = append(unready, str(cm, "name"))
		}
	}
	for _, x := range listOf(spec, "containers") {
		cm, _ := x.(map[string]any)
		ctrStatuses = append(ctrStatuses, k.containerStatus(pod, cm, ctrState{waitingReason: "ContainerCreating"}, false, old, "containerStatuses"))
		unready = append(unready, str(cm, "name"))
	}
	st["phase"] = "Pending"
	hostIP := k.byName[str(spec, "nodeName")].hostIP
	if hostIP == "" {
		hostIP = HostIP
	}
	st["hostIP"] = hostIP
	st["hostIPs"] = []any{map[string]any{"ip": hostIP}}
	delete(st, "podIP")
	delete(st, "podIPs")
	st["startTime"] = ts(start)
	if len(initStatuses) > 0 {
		st["initContainerStatuses"] = initStatuses
	} else {
		delete(st, "initContainerStatuses")
	}
	st["containerStatuses"] = ctrStatuses
	conds := []any{condition("PodReadyToStartContainers", "False", "", "", old, now)}
	if len(pendingInit) > 0 {
		conds = append(conds, condition("Initialized", "False", "ContainersNotInitialized",
			"containers with incomplete status: ["+joinNames(pendingInit)+"]", old, now))
	} else {
		c := condition("Initialized", "True", "", "", old, now)
		c["lastTransitionTime"] = ts(start)
		conds = append(conds, c)
	}
	notReady := "containers with unready status: [" + joinNames(unready) + "]"
	conds = append(conds, condition("Ready", "False", "ContainersNotReady", notReady, old, now),
		condition("ContainersReady", "False", "ContainersNotReady", notReady, old, now))
	sched := condition("PodScheduled", "True", "", "", old, now)
	sched["lastTransitionTime"] = ts(start)
	conds = append(conds, sched)
	setConditions(st, conds)
	next := sandbox
	if !next.After(now) {
		next = never
	}
	return st, next, deleting, []ctrInfo{{mount: msg}}
}

func joinNames(names []string) string {
	out := ""
	for i, n := range names {
		if i > 0 {
			out += " "
		}
		out += n
	}
	return out
}

// waitsForRefs reports a status held by a missing ConfigMap or Secret
// (no sandbox yet, or a container refused its environment): it may
// change whenever one appears, not at a time known in advance.
func waitsForRefs(st map[string]any) bool {
	if c := findCondition(st, "PodReadyToStartContainers"); c != nil && str(c, "status") == "False" {
		return true
	}
	for _, f := range []string{"initContainerStatuses", "containerStatuses"} {
		for _, x := range listOf(st, f) {
			cs, _ := x.(map[string]any)
			if str(mapOf(mapOf(cs, "state"), "waiting"), "reason") == "CreateContainerConfigError" {
				return true
			}
		}
	}
	return false
}
