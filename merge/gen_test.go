package merge

// A seeded random generator of realistic (last-applied, config, live)
// triples for the differential and fuzz tests.
//
// Every triple starts from a base manifest of its kind. The last-applied
// configuration is that manifest (sometimes edited like a config, nulls
// included), the config is the last-applied configuration with random
// edits, and live is what an API server and other writers made of the
// last-applied configuration: server defaults, status, a scale, injected
// sidecars and environment variables, reordered and deleted elements.
//
// All choices come from a genSource, which reads them from a byte string
// (the fuzzer's input) before falling back to a PCG generator, so a seed
// alone or a seed plus bytes reproduces a triple exactly. Maps are always
// walked in sorted key order for the same reason.
//
// The generator keeps the merge keys of every list unique (kubectl and
// konverge deliberately differ on lists whose elements share a merge key;
// see TestDifferentialFullKeys for those).

import (
	"encoding/base64"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

// genSource yields the generator's choices: first from data, one or two
// bytes per choice, then from a PCG seeded by seed.
type genSource struct {
	data []byte
	rng  *rand.Rand
}

func newGenSource(seed uint64, data []byte) *genSource {
	return &genSource{data: data, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// intn returns a choice in [0, n).
func (s *genSource) intn(n int) int {
	if n <= 1 {
		return 0
	}
	if len(s.data) > 0 {
		v := int(s.data[0])
		s.data = s.data[1:]
		if n > 256 && len(s.data) > 0 {
			v = v<<8 | int(s.data[0])
			s.data = s.data[1:]
		}
		return v % n
	}
	return s.rng.IntN(n)
}

// genKind is one kind the generator knows.
type genKind struct {
	Name      string
	GVK       schema.GVK
	newStruct func() any // the Go struct strategicpatch takes its patch metadata from
	base      func(g *gen) map[string]any
}

// Type returns the kind's built-in schema.
func (k *genKind) Type() *schema.Type { return schema.Builtin().Lookup(k.GVK) }

var genKinds = []*genKind{
	{Name: "Deployment", GVK: schema.GVK{Group: "apps", Version: "v1", Kind: "Deployment"}, newStruct: func() any { return &appsv1.Deployment{} }, base: (*gen).deployment},
	{Name: "Pod", GVK: schema.GVK{Version: "v1", Kind: "Pod"}, newStruct: func() any { return &corev1.Pod{} }, base: (*gen).pod},
	{Name: "Service", GVK: schema.GVK{Version: "v1", Kind: "Service"}, newStruct: func() any { return &corev1.Service{} }, base: (*gen).service},
	{Name: "StatefulSet", GVK: schema.GVK{Group: "apps", Version: "v1", Kind: "StatefulSet"}, newStruct: func() any { return &appsv1.StatefulSet{} }, base: (*gen).statefulSet},
	{Name: "DaemonSet", GVK: schema.GVK{Group: "apps", Version: "v1", Kind: "DaemonSet"}, newStruct: func() any { return &appsv1.DaemonSet{} }, base: (*gen).daemonSet},
	{Name: "Job", GVK: schema.GVK{Group: "batch", Version: "v1", Kind: "Job"}, newStruct: func() any { return &batchv1.Job{} }, base: (*gen).job},
	{Name: "CronJob", GVK: schema.GVK{Group: "batch", Version: "v1", Kind: "CronJob"}, newStruct: func() any { return &batchv1.CronJob{} }, base: (*gen).cronJob},
	{Name: "ConfigMap", GVK: schema.GVK{Version: "v1", Kind: "ConfigMap"}, newStruct: func() any { return &corev1.ConfigMap{} }, base: (*gen).configMap},
	{Name: "Secret", GVK: schema.GVK{Version: "v1", Kind: "Secret"}, newStruct: func() any { return &corev1.Secret{} }, base: (*gen).secret},
}

func genKindByGVK(gvk schema.GVK) *genKind {
	for _, k := range genKinds {
		if k.GVK == gvk {
			return k
		}
	}
	return nil
}

// triple is one generated case.
type triple struct {
	Kind               *genKind
	Last, Config, Live map[string]any
}

// gen generates values. role names who edits ("c" config, "l" live, "b"
// base) and prefixes the names it makes up, so that config and live add
// different elements unless they pick from the shared pool on purpose.
type gen struct {
	src  *genSource
	seq  int
	role string
}

func newGen(seed uint64, data []byte) *gen {
	return &gen{src: newGenSource(seed, data), role: "b"}
}

func (g *gen) intn(n int) int { return g.src.intn(n) }
func (g *gen) pct(p int) bool { return g.intn(100) < p }
func (g *gen) pick(xs ...string) string {
	return xs[g.intn(len(xs))]
}

// fresh returns a name that nothing else generated has.
func (g *gen) fresh(prefix string) string {
	g.seq++
	return prefix + "-" + g.role + strconv.Itoa(g.seq)
}

// name returns a fresh name, or one of a small shared pool (so that config
// and live sometimes add the same element).
func (g *gen) name(prefix string) string {
	if g.pct(15) {
		return prefix + "-shared" + strconv.Itoa(g.intn(3))
	}
	return g.fresh(prefix)
}

// triple generates a case of kind k.
func (g *gen) triple(k *genKind) triple {
	t := k.Type()
	g.role = "b"
	base := k.base(g)
	last := base
	if g.pct(20) {
		// The last apply had a config with its own edits, maybe nulls.
		last = value.DeepCopyObject(base)
		g.role = "p"
		for n := 1 + g.intn(3); n > 0; n-- {
			g.edit(last, t, true)
		}
	}
	// live is what the server made of the last apply.
	g.role = "l"
	live := stripNulls(value.DeepCopyObject(last)).(map[string]any)
	g.serverDefaults(live, t, k)
	g.otherWriters(live, t, k)
	// the config is the last-applied configuration, edited.
	g.role = "c"
	config := value.DeepCopyObject(last)
	edits := g.intn(9)
	if g.pct(8) {
		edits = 0
	}
	for ; edits > 0; edits-- {
		g.edit(config, t, true)
	}
	if g.pct(8) {
		last = nil // the first apply over an object made by kubectl create
	}
	return triple{Kind: k, Last: last, Config: config, Live: live}
}

// stripNulls removes null fields and null list elements, as a server
// stores an object.
func stripNulls(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, el := range x {
			if el == nil {
				delete(x, k)
				continue
			}
			x[k] = stripNulls(el)
		}
	case []any:
		out := x[:0]
		for _, el := range x {
			if el != nil {
				out = append(out, stripNulls(el))
			}
		}
		return out
	}
	return v
}

// ---------------------------------------------------------------------------
// Base manifests.

func (g *gen) objectMeta(kind string) map[string]any {
	name := strings.ToLower(kind) + "-" + g.pick("web", "api", "db", "cache", "worker")
	m := map[string]any{"name": name}
	if g.pct(70) {
		m["namespace"] = g.pick("default", "prod", "team-a")
	}
	if g.pct(80) {
		labels := map[string]any{"app": name}
		if g.pct(50) {
			labels["tier"] = g.pick("frontend", "backend")
		}
		m["labels"] = labels
	}
	if g.pct(40) {
		m["annotations"] = map[string]any{"team": g.pick("a", "b"), "note": "v" + strconv.Itoa(g.intn(9))}
	}
	if g.pct(15) {
		m["finalizers"] = []any{"example.com/protect", "example.com/" + g.fresh("fin")}
	}
	if g.pct(10) {
		m["ownerReferences"] = []any{g.ownerReference(nil)}
	}
	return m
}

func (g *gen) podSpec(job bool) map[string]any {
	var containers []any
	for n := 1 + g.intn(3); n > 0; n-- {
		containers = append(containers, g.container(containers))
	}
	spec := map[string]any{"containers": containers}
	if g.pct(20) {
		spec["initContainers"] = []any{g.container(nil)}
	}
	if g.pct(45) {
		var vols []any
		for n := 1 + g.intn(3); n > 0; n-- {
			vols = append(vols, g.volume(vols))
		}
		spec["volumes"] = vols
		// mount the first volume in the first container
		c := containers[0].(map[string]any)
		c["volumeMounts"] = []any{map[string]any{"name": vols[0].(map[string]any)["name"], "mountPath": "/data/" + g.fresh("m")}}
	}
	if g.pct(30) {
		spec["tolerations"] = []any{g.toleration()}
	}
	if g.pct(25) {
		spec["nodeSelector"] = map[string]any{"kubernetes.io/os": "linux"}
	}
	if g.pct(30) {
		spec["serviceAccountName"] = g.pick("default", "runner")
	}
	if g.pct(15) {
		spec["imagePullSecrets"] = []any{map[string]any{"name": "regcred"}}
	}
	if g.pct(15) {
		spec["topologySpreadConstraints"] = []any{g.topologySpread(nil)}
	}
	if g.pct(10) {
		spec["hostAliases"] = []any{g.hostAlias(nil)}
	}
	if g.pct(15) {
		spec["terminationGracePeriodSeconds"] = int64(10 + g.intn(50))
	}
	if job {
		spec["restartPolicy"] = g.pick("Never", "OnFailure")
	} else if g.pct(10) {
		spec["restartPolicy"] = "Always"
	}
	return spec
}

func (g *gen) podTemplate(name string, job bool) map[string]any {
	tmpl := map[string]any{
		"metadata": map[string]any{"labels": map[string]any{"app": name}},
		"spec":     g.podSpec(job),
	}
	if g.pct(20) {
		tmpl["metadata"].(map[string]any)["annotations"] = map[string]any{"prometheus.io/scrape": "true"}
	}
	return tmpl
}

func (g *gen) deployment() map[string]any {
	meta := g.objectMeta("Deployment")
	name := meta["name"].(string)
	spec := map[string]any{
		"selector": map[string]any{"matchLabels": map[string]any{"app": name}},
		"template": g.podTemplate(name, false),
	}
	if g.pct(60) {
		spec["replicas"] = int64(1 + g.intn(5))
	}
	if g.pct(25) {
		spec["minReadySeconds"] = int64(g.intn(30))
	}
	switch g.intn(4) {
	case 0:
		spec["strategy"] = map[string]any{"type": "Recreate"}
	case 1:
		spec["strategy"] = map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"maxSurge": int64(1), "maxUnavailable": int64(0)}}
	}
	return map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta, "spec": spec}
}

func (g *gen) pod() map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": g.objectMeta("Pod"), "spec": g.podSpec(false)}
}

func (g *gen) statefulSet() map[string]any {
	meta := g.objectMeta("StatefulSet")
	name := meta["name"].(string)
	spec := map[string]any{
		"serviceName": name,
		"selector":    map[string]any{"matchLabels": map[string]any{"app": name}},
		"template":    g.podTemplate(name, false),
	}
	if g.pct(60) {
		spec["replicas"] = int64(1 + g.intn(5))
	}
	if g.pct(30) {
		spec["podManagementPolicy"] = "Parallel"
	}
	if g.pct(30) {
		spec["updateStrategy"] = map[string]any{"type": "OnDelete"}
	}
	if g.pct(30) {
		spec["volumeClaimTemplates"] = []any{map[string]any{
			"metadata": map[string]any{"name": "data"},
			"spec": map[string]any{
				"accessModes": []any{"ReadWriteOnce"},
				"resources":   map[string]any{"requests": map[string]any{"storage": "1Gi"}},
			},
		}}
	}
	return map[string]any{"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": meta, "spec": spec}
}

func (g *gen) daemonSet() map[string]any {
	meta := g.objectMeta("DaemonSet")
	name := meta["name"].(string)
	spec := map[string]any{
		"selector": map[string]any{"matchLabels": map[string]any{"app": name}},
		"template": g.podTemplate(name, false),
	}
	if g.pct(30) {
		spec["updateStrategy"] = map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"maxUnavailable": int64(1)}}
	}
	return map[string]any{"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": meta, "spec": spec}
}

func (g *gen) jobSpec(name string) map[string]any {
	spec := map[string]any{"template": g.podTemplate(name, true)}
	if g.pct(50) {
		spec["backoffLimit"] = int64(g.intn(6))
	}
	if g.pct(30) {
		spec["completions"] = int64(1 + g.intn(3))
		spec["parallelism"] = int64(1 + g.intn(3))
	}
	if g.pct(20) {
		spec["ttlSecondsAfterFinished"] = int64(100)
	}
	return spec
}

func (g *gen) job() map[string]any {
	meta := g.objectMeta("Job")
	return map[string]any{"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "spec": g.jobSpec(meta["name"].(string))}
}

func (g *gen) cronJob() map[string]any {
	meta := g.objectMeta("CronJob")
	spec := map[string]any{
		"schedule":    g.pick("*/5 * * * *", "0 * * * *", "@daily"),
		"jobTemplate": map[string]any{"spec": g.jobSpec(meta["name"].(string))},
	}
	if g.pct(30) {
		spec["concurrencyPolicy"] = g.pick("Forbid", "Replace")
	}
	if g.pct(20) {
		spec["successfulJobsHistoryLimit"] = int64(g.intn(5))
	}
	return map[string]any{"apiVersion": "batch/v1", "kind": "CronJob", "metadata": meta, "spec": spec}
}

func (g *gen) service() map[string]any {
	meta := g.objectMeta("Service")
	var ports []any
	for n := 1 + g.intn(3); n > 0; n-- {
		ports = append(ports, g.servicePort(ports))
	}
	spec := map[string]any{
		"selector": map[string]any{"app": meta["name"]},
		"ports":    ports,
	}
	if g.pct(30) {
		spec["type"] = g.pick("NodePort", "LoadBalancer", "ClusterIP")
	}
	if g.pct(10) {
		spec["externalIPs"] = []any{"10.1.0.1"}
	}
	if g.pct(10) {
		spec["sessionAffinity"] = "ClientIP"
	}
	return map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": meta, "spec": spec}
}

func (g *gen) configMap() map[string]any {
	m := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": g.objectMeta("ConfigMap")}
	data := map[string]any{}
	for n := g.intn(4); n > 0; n-- {
		data[g.fresh("key")] = g.fresh("value")
	}
	if g.pct(90) {
		m["data"] = data
	}
	if g.pct(15) {
		m["binaryData"] = map[string]any{"blob": base64.StdEncoding.EncodeToString([]byte(g.fresh("b")))}
	}
	if g.pct(10) {
		m["immutable"] = false
	}
	return m
}

func (g *gen) secret() map[string]any {
	m := map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": g.objectMeta("Secret")}
	if g.pct(50) {
		m["type"] = g.pick("Opaque", "kubernetes.io/tls")
	}
	if g.pct(80) {
		data := map[string]any{}
		for n := 1 + g.intn(3); n > 0; n-- {
			data[g.fresh("key")] = base64.StdEncoding.EncodeToString([]byte(g.fresh("s")))
		}
		m["data"] = data
	}
	if g.pct(30) {
		m["stringData"] = map[string]any{g.fresh("plain"): g.fresh("text")}
	}
	return m
}

// ---------------------------------------------------------------------------
// Elements.

// keySet returns the merge key values of a list, as comparable keys.
func keySet(list []any, mergeKey string) map[any]bool {
	s := make(map[any]bool, len(list))
	for _, v := range list {
		if m, ok := v.(map[string]any); ok {
			if k, ok := m[mergeKey]; ok {
				s[comparable(k)] = true
			}
		} else {
			s[comparable(v)] = true
		}
	}
	return s
}

// freshKey draws values from next until one is not a key of list; after
// a few tries it makes one unique with a counter.
func (g *gen) freshKey(list []any, mergeKey string, next func() any) any {
	used := keySet(list, mergeKey)
	for range 20 {
		if v := next(); !used[comparable(v)] {
			return v
		}
	}
	for {
		g.seq++
		var v any = int64(20000 + g.seq)
		if s, ok := next().(string); ok {
			v = s + "-" + strconv.Itoa(g.seq)
		}
		if !used[comparable(v)] {
			return v
		}
	}
}

func (g *gen) image() string {
	return g.pick("nginx", "redis", "busybox", "example.com/app") + ":" + g.pick("1.25", "1.26", "latest", "7")
}

func (g *gen) container(siblings []any) map[string]any {
	c := map[string]any{
		"name":  g.freshKey(siblings, "name", func() any { return g.name(g.pick("app", "helper", "proxy")) }),
		"image": g.image(),
	}
	if g.pct(50) {
		var ports []any
		for n := 1 + g.intn(2); n > 0; n-- {
			ports = append(ports, g.containerPort(ports))
		}
		c["ports"] = ports
	}
	if g.pct(50) {
		var env []any
		for n := 1 + g.intn(4); n > 0; n-- {
			env = append(env, g.envVar(env))
		}
		c["env"] = env
	}
	if g.pct(25) {
		c["args"] = []any{"--port=8080", "--verbose"}
	}
	if g.pct(15) {
		c["command"] = []any{"/bin/sh", "-c", "run"}
	}
	if g.pct(30) {
		c["resources"] = g.resources()
	}
	if g.pct(15) {
		c["imagePullPolicy"] = g.pick("Always", "IfNotPresent")
	}
	if g.pct(15) {
		c["livenessProbe"] = g.probe()
	}
	return c
}

func (g *gen) resources() map[string]any {
	r := map[string]any{}
	if g.pct(70) {
		r["requests"] = map[string]any{"cpu": g.pick("100m", "250m"), "memory": g.pick("64Mi", "128Mi")}
	}
	if g.pct(50) {
		r["limits"] = map[string]any{"memory": g.pick("256Mi", "1Gi")}
	}
	return r
}

func (g *gen) probe() map[string]any {
	p := map[string]any{}
	switch g.intn(3) {
	case 0:
		p["httpGet"] = map[string]any{"path": "/healthz", "port": int64(8080)}
	case 1:
		p["tcpSocket"] = map[string]any{"port": "http"}
	default:
		p["exec"] = map[string]any{"command": []any{"cat", "/tmp/ready"}}
	}
	if g.pct(50) {
		p["initialDelaySeconds"] = int64(g.intn(20))
	}
	return p
}

func (g *gen) containerPort(siblings []any) map[string]any {
	p := map[string]any{"containerPort": g.freshKey(siblings, "containerPort", func() any {
		return int64([]int{80, 443, 8080, 8443, 9090, 53, 5432, 6379, 3000 + g.intn(20)}[g.intn(9)])
	})}
	if g.pct(40) {
		p["name"] = g.pick("http", "https", "metrics", "dns") + strconv.Itoa(g.intn(3))
	}
	if g.pct(30) {
		p["protocol"] = g.pick("TCP", "UDP")
	}
	return p
}

func (g *gen) envVar(siblings []any) map[string]any {
	e := map[string]any{"name": g.freshKey(siblings, "name", func() any { return strings.ToUpper(g.name("var")) })}
	switch g.intn(5) {
	case 0:
		e["valueFrom"] = map[string]any{"fieldRef": map[string]any{"fieldPath": "metadata.name"}}
	case 1:
		e["valueFrom"] = map[string]any{"secretKeyRef": map[string]any{"name": "creds", "key": "password"}}
	default:
		e["value"] = g.fresh("v")
	}
	return e
}

func (g *gen) volumeSource() (string, any) {
	switch g.intn(5) {
	case 0:
		return "emptyDir", map[string]any{}
	case 1:
		return "configMap", map[string]any{"name": g.pick("settings", "scripts")}
	case 2:
		return "secret", map[string]any{"secretName": g.pick("tls", "creds")}
	case 3:
		return "hostPath", map[string]any{"path": "/var/" + g.pick("log", "run"), "type": "Directory"}
	default:
		return "persistentVolumeClaim", map[string]any{"claimName": "data"}
	}
}

func (g *gen) volume(siblings []any) map[string]any {
	v := map[string]any{"name": g.freshKey(siblings, "name", func() any { return g.name("vol") })}
	k, src := g.volumeSource()
	v[k] = src
	return v
}

func (g *gen) volumeMount(siblings []any) map[string]any {
	m := map[string]any{
		"name":      g.name("vol"),
		"mountPath": g.freshKey(siblings, "mountPath", func() any { return "/mnt/" + g.name("p") }),
	}
	if g.pct(30) {
		m["readOnly"] = true
	}
	return m
}

func (g *gen) toleration() map[string]any {
	t := map[string]any{"key": g.pick("dedicated", "gpu", "node.kubernetes.io/not-ready"), "operator": g.pick("Exists", "Equal")}
	if t["operator"] == "Equal" {
		t["value"] = g.pick("true", "infra")
	}
	if g.pct(70) {
		t["effect"] = g.pick("NoSchedule", "NoExecute")
	}
	return t
}

func (g *gen) ownerReference(siblings []any) map[string]any {
	return map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "ReplicaSet",
		"name":       g.fresh("owner"),
		"uid":        g.freshKey(siblings, "uid", func() any { return g.name("uid") }),
		"controller": g.pct(50),
	}
}

func (g *gen) servicePort(siblings []any) map[string]any {
	p := map[string]any{"port": g.freshKey(siblings, "port", func() any {
		return int64([]int{80, 443, 8080, 53, 9090, 5000 + g.intn(20)}[g.intn(6)])
	})}
	if g.pct(70) {
		p["name"] = g.pick("http", "https", "grpc", "dns") + strconv.Itoa(g.intn(9))
	}
	if g.pct(50) {
		if g.pct(50) {
			p["targetPort"] = int64(8000 + g.intn(100))
		} else {
			p["targetPort"] = g.pick("http", "web")
		}
	}
	if g.pct(25) {
		p["protocol"] = g.pick("TCP", "UDP")
	}
	return p
}

func (g *gen) topologySpread(siblings []any) map[string]any {
	return map[string]any{
		"maxSkew": int64(1 + g.intn(2)),
		"topologyKey": g.freshKey(siblings, "topologyKey", func() any {
			return g.pick("kubernetes.io/hostname", "topology.kubernetes.io/zone", "rack", "example.com/"+g.fresh("t"))
		}),
		"whenUnsatisfiable": g.pick("DoNotSchedule", "ScheduleAnyway"),
		"labelSelector":     map[string]any{"matchLabels": map[string]any{"app": "web"}},
	}
}

func (g *gen) hostAlias(siblings []any) map[string]any {
	return map[string]any{
		"ip":        g.freshKey(siblings, "ip", func() any { return "10.0.0." + strconv.Itoa(g.intn(40)) }),
		"hostnames": []any{g.fresh("host") + ".local"},
	}
}

func (g *gen) condition(siblings []any) map[string]any {
	return map[string]any{
		"type":   g.freshKey(siblings, "type", func() any { return g.pick("Available", "Progressing", "Ready", "Initialized", "ReplicaFailure") }),
		"status": g.pick("True", "False"),
		"reason": g.pick("MinimumReplicasAvailable", "NewReplicaSetAvailable"),
	}
}

// newElement makes a new element for the list field of type listT,
// with a merge key that none of list has. ok is false for lists the
// generator cannot make elements for.
func (g *gen) newElement(field string, listT *schema.Type, list []any) (any, bool) {
	elemT := listT.Element()
	switch elemT.Name {
	case "io.k8s.api.core.v1.Container":
		return g.container(list), true
	case "io.k8s.api.core.v1.EnvVar":
		return g.envVar(list), true
	case "io.k8s.api.core.v1.ContainerPort":
		return g.containerPort(list), true
	case "io.k8s.api.core.v1.VolumeMount":
		return g.volumeMount(list), true
	case "io.k8s.api.core.v1.Volume":
		return g.volume(list), true
	case "io.k8s.api.core.v1.Toleration":
		return g.toleration(), true
	case "io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference":
		return g.ownerReference(list), true
	case "io.k8s.api.core.v1.ServicePort":
		return g.servicePort(list), true
	case "io.k8s.api.core.v1.LocalObjectReference":
		return map[string]any{"name": g.freshKey(list, "name", func() any { return g.name("regcred") })}, true
	case "io.k8s.api.core.v1.HostAlias":
		return g.hostAlias(list), true
	case "io.k8s.api.core.v1.TopologySpreadConstraint":
		return g.topologySpread(list), true
	case "io.k8s.api.core.v1.EnvFromSource":
		return map[string]any{"configMapRef": map[string]any{"name": g.fresh("env")}}, true
	case "io.k8s.api.core.v1.KeyToPath":
		return map[string]any{"key": g.fresh("k"), "path": g.fresh("p")}, true
	case "io.k8s.api.apps.v1.DeploymentCondition", "io.k8s.api.core.v1.PodCondition",
		"io.k8s.api.apps.v1.StatefulSetCondition", "io.k8s.api.apps.v1.DaemonSetCondition",
		"io.k8s.api.batch.v1.JobCondition":
		return g.condition(list), true
	}
	if elemT.Name == "" {
		switch field {
		case "ports":
			return g.widgetPort(list), true
		case "members":
			return g.widgetMember(list), true
		}
	}
	if elemT.KindOf() != schema.Scalar {
		return nil, false
	}
	if listT.ListType == schema.Set {
		return g.freshKey(list, "", func() any { return g.scalarFor(field, elemT) }), true
	}
	return g.scalarFor(field, elemT), true
}

// scalarFor makes a new value for a scalar field.
func (g *gen) scalarFor(field string, t *schema.Type) any {
	switch field {
	case "image":
		return g.image()
	case "protocol":
		return g.pick("TCP", "UDP", "SCTP")
	case "imagePullPolicy":
		return g.pick("Always", "IfNotPresent", "Never")
	case "restartPolicy":
		return g.pick("Always", "OnFailure", "Never")
	case "operator":
		return g.pick("Exists", "Equal")
	case "effect":
		return g.pick("NoSchedule", "NoExecute", "PreferNoSchedule")
	case "finalizers":
		return "example.com/" + g.name("fin")
	case "args", "command":
		return "--" + g.name("flag")
	case "maxSurge", "maxUnavailable":
		if g.pct(50) {
			return int64(g.intn(3))
		}
		return g.pick("25%", "50%", "10%")
	case "targetPort", "port":
		if t.KindOf() == schema.Scalar && t.Scalar == schema.IntOrString && g.pct(50) {
			return g.pick("http", "metrics")
		}
	}
	switch {
	case t.KindOf() != schema.Scalar:
		return g.fresh("x")
	case t.Scalar == schema.Integer:
		return int64(g.intn(100))
	case t.Scalar == schema.Boolean:
		return g.pct(50)
	case t.Scalar == schema.IntOrString:
		if g.pct(50) {
			return int64(g.intn(100))
		}
		return g.fresh("s")
	case t.Scalar == schema.Number:
		return int64(g.intn(10))
	}
	return g.fresh(field)
}

// fieldFactories are the fields the generator adds to objects of a type.
var fieldFactories = map[string]map[string]func(g *gen) any{
	"io.k8s.api.core.v1.Container": {
		"image":                    func(g *gen) any { return g.image() },
		"imagePullPolicy":          func(g *gen) any { return g.pick("Always", "IfNotPresent") },
		"args":                     func(g *gen) any { return []any{"--" + g.fresh("a"), "--debug"} },
		"command":                  func(g *gen) any { return []any{"/entrypoint.sh"} },
		"env":                      func(g *gen) any { return []any{g.envVar(nil)} },
		"ports":                    func(g *gen) any { return []any{g.containerPort(nil)} },
		"volumeMounts":             func(g *gen) any { return []any{g.volumeMount(nil)} },
		"resources":                func(g *gen) any { return g.resources() },
		"workingDir":               func(g *gen) any { return "/work" },
		"livenessProbe":            func(g *gen) any { return g.probe() },
		"readinessProbe":           func(g *gen) any { return g.probe() },
		"envFrom":                  func(g *gen) any { return []any{map[string]any{"secretRef": map[string]any{"name": "env"}}} },
		"terminationMessagePolicy": func(g *gen) any { return "FallbackToLogsOnError" },
		"securityContext":          func(g *gen) any { return map[string]any{"runAsNonRoot": true, "runAsUser": int64(1000)} },
		"stdin":                    func(g *gen) any { return true },
	},
	"io.k8s.api.core.v1.PodSpec": {
		"initContainers":                func(g *gen) any { return []any{g.container(nil)} },
		"volumes":                       func(g *gen) any { return []any{g.volume(nil)} },
		"tolerations":                   func(g *gen) any { return []any{g.toleration(), g.toleration()} },
		"nodeSelector":                  func(g *gen) any { return map[string]any{"disk": "ssd"} },
		"serviceAccountName":            func(g *gen) any { return g.pick("default", "builder") },
		"dnsPolicy":                     func(g *gen) any { return g.pick("ClusterFirst", "Default") },
		"terminationGracePeriodSeconds": func(g *gen) any { return int64(g.intn(60)) },
		"imagePullSecrets":              func(g *gen) any { return []any{map[string]any{"name": g.name("regcred")}} },
		"hostAliases":                   func(g *gen) any { return []any{g.hostAlias(nil)} },
		"topologySpreadConstraints":     func(g *gen) any { return []any{g.topologySpread(nil)} },
		"securityContext":               func(g *gen) any { return map[string]any{"fsGroup": int64(2000)} },
		"priorityClassName":             func(g *gen) any { return "high" },
		"hostNetwork":                   func(g *gen) any { return g.pct(50) },
		"affinity": func(g *gen) any {
			return map[string]any{"nodeAffinity": map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{
				"nodeSelectorTerms": []any{map[string]any{"matchExpressions": []any{map[string]any{"key": "zone", "operator": "In", "values": []any{"a", "b"}}}}},
			}}}
		},
	},
	"io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta": {
		"labels":          func(g *gen) any { return map[string]any{g.fresh("l"): "x"} },
		"annotations":     func(g *gen) any { return map[string]any{g.fresh("a"): "y"} },
		"finalizers":      func(g *gen) any { return []any{"example.com/" + g.name("fin")} },
		"ownerReferences": func(g *gen) any { return []any{g.ownerReference(nil)} },
	},
	"io.k8s.api.apps.v1.DeploymentSpec": {
		"replicas":                func(g *gen) any { return int64(g.intn(6)) },
		"minReadySeconds":         func(g *gen) any { return int64(g.intn(30)) },
		"revisionHistoryLimit":    func(g *gen) any { return int64(g.intn(10)) },
		"progressDeadlineSeconds": func(g *gen) any { return int64(300) },
		"paused":                  func(g *gen) any { return true },
		"strategy": func(g *gen) any {
			if g.pct(50) {
				return map[string]any{"type": "Recreate"}
			}
			return map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"maxSurge": "50%"}}
		},
	},
	"io.k8s.api.apps.v1.DeploymentStrategy": {
		"type":          func(g *gen) any { return g.pick("Recreate", "RollingUpdate") },
		"rollingUpdate": func(g *gen) any { return map[string]any{"maxUnavailable": int64(1)} },
	},
	"io.k8s.api.apps.v1.RollingUpdateDeployment": {
		"maxSurge":       func(g *gen) any { return g.scalarFor("maxSurge", nil) },
		"maxUnavailable": func(g *gen) any { return g.scalarFor("maxUnavailable", nil) },
	},
	"io.k8s.api.apps.v1.StatefulSetSpec": {
		"replicas":            func(g *gen) any { return int64(g.intn(6)) },
		"podManagementPolicy": func(g *gen) any { return g.pick("OrderedReady", "Parallel") },
		"updateStrategy": func(g *gen) any {
			return map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"partition": int64(1)}}
		},
		"revisionHistoryLimit": func(g *gen) any { return int64(5) },
		"minReadySeconds":      func(g *gen) any { return int64(3) },
	},
	"io.k8s.api.apps.v1.DaemonSetSpec": {
		"updateStrategy":       func(g *gen) any { return map[string]any{"type": "OnDelete"} },
		"minReadySeconds":      func(g *gen) any { return int64(3) },
		"revisionHistoryLimit": func(g *gen) any { return int64(5) },
	},
	"io.k8s.api.batch.v1.JobSpec": {
		"parallelism":             func(g *gen) any { return int64(1 + g.intn(4)) },
		"completions":             func(g *gen) any { return int64(1 + g.intn(4)) },
		"backoffLimit":            func(g *gen) any { return int64(g.intn(7)) },
		"activeDeadlineSeconds":   func(g *gen) any { return int64(600) },
		"ttlSecondsAfterFinished": func(g *gen) any { return int64(60) },
	},
	"io.k8s.api.batch.v1.CronJobSpec": {
		"concurrencyPolicy":          func(g *gen) any { return g.pick("Allow", "Forbid", "Replace") },
		"suspend":                    func(g *gen) any { return g.pct(50) },
		"successfulJobsHistoryLimit": func(g *gen) any { return int64(g.intn(5)) },
		"failedJobsHistoryLimit":     func(g *gen) any { return int64(g.intn(5)) },
		"startingDeadlineSeconds":    func(g *gen) any { return int64(100) },
	},
	"io.k8s.api.core.v1.ServiceSpec": {
		"type":                     func(g *gen) any { return g.pick("ClusterIP", "NodePort", "LoadBalancer") },
		"sessionAffinity":          func(g *gen) any { return g.pick("None", "ClientIP") },
		"externalIPs":              func(g *gen) any { return []any{"10.1.0." + strconv.Itoa(g.intn(9))} },
		"loadBalancerSourceRanges": func(g *gen) any { return []any{"10.0.0.0/8"} },
		"externalTrafficPolicy":    func(g *gen) any { return g.pick("Cluster", "Local") },
		"publishNotReadyAddresses": func(g *gen) any { return true },
		"selector":                 func(g *gen) any { return map[string]any{"app": "other"} },
		"ports":                    func(g *gen) any { return []any{g.servicePort(nil)} },
	},
	"io.k8s.api.core.v1.ConfigMap": {
		"data":       func(g *gen) any { return map[string]any{g.fresh("k"): g.fresh("v")} },
		"binaryData": func(g *gen) any { return map[string]any{g.fresh("k"): "AAEC"} },
		"immutable":  func(g *gen) any { return g.pct(50) },
	},
	"io.k8s.api.core.v1.Secret": {
		"data":       func(g *gen) any { return map[string]any{g.fresh("k"): "c2VjcmV0"} },
		"stringData": func(g *gen) any { return map[string]any{g.fresh("k"): "plain"} },
		"type":       func(g *gen) any { return g.pick("Opaque", "kubernetes.io/basic-auth") },
		"immutable":  func(g *gen) any { return g.pct(50) },
	},
	"io.k8s.api.core.v1.EnvVar": {
		"value":     func(g *gen) any { return g.fresh("v") },
		"valueFrom": func(g *gen) any { return map[string]any{"configMapKeyRef": map[string]any{"name": "cfg", "key": "k"}} },
	},
	"io.k8s.api.core.v1.ContainerPort": {
		"name":     func(g *gen) any { return g.fresh("p") },
		"protocol": func(g *gen) any { return g.pick("TCP", "UDP") },
		"hostPort": func(g *gen) any { return int64(30000 + g.intn(100)) },
	},
	"io.k8s.api.core.v1.ServicePort": {
		"name":     func(g *gen) any { return g.fresh("p") },
		"protocol": func(g *gen) any { return g.pick("TCP", "UDP") },
		"targetPort": func(g *gen) any {
			return g.scalarFor("targetPort", &schema.Type{Kind: schema.Scalar, Scalar: schema.IntOrString})
		},
		"nodePort": func(g *gen) any { return int64(30000 + g.intn(100)) },
	},
	"io.k8s.api.core.v1.VolumeMount": {
		"readOnly": func(g *gen) any { return g.pct(50) },
		"subPath":  func(g *gen) any { return g.fresh("sub") },
	},
	"io.k8s.api.core.v1.ResourceRequirements": {
		"limits":   func(g *gen) any { return map[string]any{"cpu": "1"} },
		"requests": func(g *gen) any { return map[string]any{"memory": "32Mi"} },
	},
}

// mapValueFor makes a key and value for a Map-kind field (labels,
// annotations, data, resource limits).
func (g *gen) mapValueFor(field string, m map[string]any) (string, any) {
	switch field {
	case "limits", "requests":
		for _, k := range []string{"cpu", "memory", "ephemeral-storage", "nvidia.com/gpu"} {
			if _, ok := m[k]; !ok {
				return k, g.pick("1", "500m", "2Gi", "64Mi")
			}
		}
	case "data", "binaryData":
		return g.fresh("file") + ".conf", base64.StdEncoding.EncodeToString([]byte(g.fresh("c")))
	}
	if g.pct(20) {
		return g.pick("app", "tier", "version", "team"), g.fresh("v")
	}
	return "example.com/" + g.fresh("k"), g.fresh("v")
}

// ---------------------------------------------------------------------------
// Edits.

// site is a position the generator can edit: an object or a list.
type site struct {
	path string
	t    *schema.Type
	m    map[string]any // an object, or the parent of a list
	l    []any          // a list (m[field])
	// field is the list's field name in m, or the object's own field name
	// (empty for list elements).
	field string
	// elemOf is the type of the list an object is an element of, and
	// siblings that list.
	elemOf   *schema.Type
	siblings []any
}

func sortedKeys(m map[string]any) []string {
	return slices.Sorted(maps.Keys(m))
}

// collectSites lists the editable positions in m, in a deterministic order.
func collectSites(m map[string]any, t *schema.Type, path, field string, elemOf *schema.Type, siblings []any, out []site) []site {
	out = append(out, site{path: path, t: t, m: m, field: field, elemOf: elemOf, siblings: siblings})
	for _, k := range sortedKeys(m) {
		p := path + "." + k
		if p == ".metadata.managedFields" || p == ".status" {
			continue
		}
		ft := t.Field(k)
		switch v := m[k].(type) {
		case map[string]any:
			out = collectSites(v, ft, p, k, nil, nil, out)
		case []any:
			out = append(out, site{path: p, t: ft, m: m, l: v, field: k})
			for _, el := range v {
				if em, ok := el.(map[string]any); ok {
					out = collectSites(em, ft.Element(), p+"[]", "", ft, v, out)
				}
			}
		}
	}
	return out
}

// protected reports whether an edit must leave field k of the object at s
// alone: apiVersion, kind, the object's name and namespace, and merge keys
// (those change only by renaming to a fresh key).
func (s *site) protected(k string) bool {
	switch {
	case s.path == "" && (k == "apiVersion" || k == "kind" || k == "metadata"):
		return true
	case s.path == ".metadata" && (k == "name" || k == "namespace"):
		return true
	case s.elemOf != nil && s.elemOf.MergeKey == k:
		return true
	}
	return false
}

// edit makes one random edit to obj. nulls allows setting fields to null
// (configs have them, live objects do not).
func (g *gen) edit(obj map[string]any, t *schema.Type, nulls bool) {
	sites := collectSites(obj, t, "", "", nil, nil, nil)
	// Lists are where merging is hard: pick one about half of the time.
	var lists []int
	for i := range sites {
		if sites[i].l != nil {
			lists = append(lists, i)
		}
	}
	if len(lists) > 0 && g.pct(45) {
		g.editList(&sites[lists[g.intn(len(lists))]])
		return
	}
	s := &sites[g.intn(len(sites))]
	if s.l != nil {
		g.editList(s)
		return
	}
	g.editMap(s, nulls)
}

func (g *gen) editMap(s *site, nulls bool) {
	m, t := s.m, s.t
	var scalars, fields, containers []string
	for _, k := range sortedKeys(m) {
		if s.protected(k) {
			continue
		}
		fields = append(fields, k)
		switch m[k].(type) {
		case map[string]any, []any:
			containers = append(containers, k)
		case nil:
		default:
			scalars = append(scalars, k)
		}
	}
	switch op := g.intn(100); {
	case op < 25: // change a scalar
		if s.elemOf != nil && s.elemOf.MergeKey != "" && g.pct(20) {
			// rename the element: a fresh merge key
			mk := s.elemOf.MergeKey
			if nv, ok := g.newElement("", s.elemOf, s.siblings); ok {
				if nm, ok := nv.(map[string]any); ok {
					m[mk] = nm[mk]
				}
			}
			return
		}
		if len(scalars) == 0 {
			g.addField(s)
			return
		}
		k := scalars[g.intn(len(scalars))]
		m[k] = g.changeScalar(k, t.Field(k), m[k])
	case op < 40: // delete a field
		if len(fields) == 0 {
			return
		}
		delete(m, fields[g.intn(len(fields))])
	case op < 65:
		g.addField(s)
	case op < 73: // set a field to null
		if !nulls {
			g.addField(s)
			return
		}
		if t.KindOf() == schema.Struct && g.pct(40) {
			if f := fieldFactories[t.Name]; len(f) > 0 {
				names := sortedKeys2(f)
				m[names[g.intn(len(names))]] = nil
				return
			}
		}
		if len(fields) > 0 {
			m[fields[g.intn(len(fields))]] = nil
		}
	case op < 78: // empty a list or an object
		if len(containers) == 0 {
			return
		}
		k := containers[g.intn(len(containers))]
		if _, ok := m[k].([]any); ok {
			m[k] = []any{}
		} else {
			m[k] = map[string]any{}
		}
	default:
		g.special(s, nulls)
	}
}

func sortedKeys2[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// changeScalar returns a new value for a scalar field, of a type its
// schema allows.
func (g *gen) changeScalar(k string, ft *schema.Type, old any) any {
	if ft.KindOf() != schema.Scalar {
		switch old := old.(type) {
		case int64:
			return int64(g.intn(100))
		case bool:
			return !old
		}
		return g.fresh("x")
	}
	for range 4 {
		if v := g.scalarFor(k, ft); !value.Equal(v, old) {
			return v
		}
	}
	return g.scalarFor(k, ft)
}

// addField adds a field to the object at s.
func (g *gen) addField(s *site) {
	m, t := s.m, s.t
	if t.KindOf() == schema.Map {
		k, v := g.mapValueFor(s.field, m)
		m[k] = v
		return
	}
	f := fieldFactories[t.Name]
	if t.Name == "" {
		f = widgetFields[s.path]
	}
	var missing []string
	for _, k := range sortedKeys2(f) {
		if _, ok := m[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) == 0 {
		return
	}
	k := missing[g.intn(len(missing))]
	m[k] = f[k](g)
}

// special makes an edit that only makes sense for some types.
func (g *gen) special(s *site, nulls bool) {
	m := s.m
	switch s.t.Name {
	case "io.k8s.api.apps.v1.DeploymentStrategy":
		if m["type"] == "Recreate" {
			m["type"] = "RollingUpdate"
			if g.pct(60) {
				m["rollingUpdate"] = map[string]any{"maxSurge": g.scalarFor("maxSurge", nil), "maxUnavailable": int64(0)}
			}
			return
		}
		m["type"] = "Recreate"
		switch {
		case g.pct(70):
			delete(m, "rollingUpdate")
		case nulls && g.pct(50):
			m["rollingUpdate"] = nil
		}
	case "io.k8s.api.apps.v1.DaemonSetUpdateStrategy", "io.k8s.api.apps.v1.StatefulSetUpdateStrategy":
		if m["type"] == "OnDelete" {
			m["type"] = "RollingUpdate"
		} else {
			m["type"] = "OnDelete"
			delete(m, "rollingUpdate")
		}
	case "io.k8s.api.core.v1.Volume":
		for _, k := range sortedKeys(m) {
			if k != "name" && g.pct(85) {
				delete(m, k)
			}
		}
		k, src := g.volumeSource()
		m[k] = src
	case "io.k8s.api.core.v1.EnvVar":
		if _, ok := m["value"]; ok {
			delete(m, "value")
			m["valueFrom"] = map[string]any{"fieldRef": map[string]any{"fieldPath": "status.podIP"}}
		} else {
			delete(m, "valueFrom")
			m["value"] = g.fresh("v")
		}
	case "io.k8s.api.core.v1.ServicePort":
		if _, ok := m["targetPort"].(string); ok {
			m["targetPort"] = int64(8080)
		} else {
			m["targetPort"] = "http"
		}
	default:
		g.addField(s)
	}
}

func (g *gen) editList(s *site) {
	l, t := s.l, s.t
	set := func(nl []any) { s.m[s.field] = nl }
	insert := func(v any) {
		i := g.intn(len(l) + 1)
		nl := make([]any, 0, len(l)+1)
		nl = append(nl, l[:i]...)
		nl = append(nl, v)
		set(append(nl, l[i:]...))
	}
	switch op := g.intn(100); {
	case op < 35: // add an element
		if v, ok := g.newElement(s.field, t, l); ok {
			insert(v)
		}
	case op < 60: // remove one
		if len(l) == 0 {
			return
		}
		i := g.intn(len(l))
		set(append(slices.Clone(l[:i]), l[i+1:]...))
	case op < 80: // move one
		if len(l) < 2 {
			return
		}
		i, j := g.intn(len(l)), g.intn(len(l))
		nl := slices.Clone(l)
		v := nl[i]
		nl = append(nl[:i], nl[i+1:]...)
		nl = slices.Insert(nl, j, v)
		set(nl)
	case op < 90: // shuffle
		nl := slices.Clone(l)
		for i := len(nl) - 1; i > 0; i-- {
			j := g.intn(i + 1)
			nl[i], nl[j] = nl[j], nl[i]
		}
		set(nl)
	case op < 95: // change a scalar element of an atomic list
		if len(l) == 0 || t.ListType != schema.Atomic {
			return
		}
		i := g.intn(len(l))
		if _, ok := l[i].(map[string]any); ok {
			return
		}
		nl := slices.Clone(l)
		nl[i] = g.scalarFor(s.field, t.Element())
		set(nl)
	default:
		set([]any{})
	}
}

// ---------------------------------------------------------------------------
// What the server and other writers do to live.

// serverDefaults fills in what an API server defaults, each most of the
// time.
func (g *gen) serverDefaults(live map[string]any, t *schema.Type, k *genKind) {
	meta, _ := live["metadata"].(map[string]any)
	if meta != nil {
		meta["uid"] = "0f6c" + strconv.Itoa(g.intn(1000))
		meta["resourceVersion"] = strconv.Itoa(1000 + g.intn(9000))
		meta["creationTimestamp"] = "2024-05-01T10:00:00Z"
		if g.pct(30) {
			meta["generation"] = int64(1 + g.intn(5))
		}
		if g.pct(15) {
			meta["managedFields"] = []any{map[string]any{
				"manager": "kubectl-client-side-apply", "operation": "Update", "apiVersion": k.GVK.Group + "/" + k.GVK.Version,
				"fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:metadata": map[string]any{}},
			}}
		}
	}
	g.walkTypes(live, t, func(m map[string]any, t *schema.Type) {
		def := func(k string, v any) {
			if _, ok := m[k]; !ok && g.pct(85) {
				m[k] = v
			}
		}
		switch t.Name {
		case "io.k8s.api.core.v1.Container":
			policy := "IfNotPresent"
			if img, _ := m["image"].(string); strings.HasSuffix(img, ":latest") {
				policy = "Always"
			}
			def("imagePullPolicy", policy)
			def("terminationMessagePath", "/dev/termination-log")
			def("terminationMessagePolicy", "File")
			def("resources", map[string]any{})
		case "io.k8s.api.core.v1.ContainerPort", "io.k8s.api.core.v1.ServicePort":
			def("protocol", "TCP")
			if t.Name == "io.k8s.api.core.v1.ServicePort" {
				def("targetPort", m["port"])
			}
		case "io.k8s.api.core.v1.PodSpec":
			def("restartPolicy", "Always")
			def("dnsPolicy", "ClusterFirst")
			def("schedulerName", "default-scheduler")
			def("securityContext", map[string]any{})
			def("terminationGracePeriodSeconds", int64(30))
		case "io.k8s.api.apps.v1.DeploymentSpec":
			def("replicas", int64(1))
			def("revisionHistoryLimit", int64(10))
			def("progressDeadlineSeconds", int64(600))
			def("strategy", map[string]any{"type": "RollingUpdate"})
		case "io.k8s.api.apps.v1.DeploymentStrategy":
			if m["type"] == "RollingUpdate" {
				def("rollingUpdate", map[string]any{"maxSurge": "25%", "maxUnavailable": "25%"})
			}
		case "io.k8s.api.apps.v1.StatefulSetSpec":
			def("replicas", int64(1))
			def("podManagementPolicy", "OrderedReady")
			def("revisionHistoryLimit", int64(10))
			def("updateStrategy", map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"partition": int64(0)}})
			def("persistentVolumeClaimRetentionPolicy", map[string]any{"whenDeleted": "Retain", "whenScaled": "Retain"})
		case "io.k8s.api.apps.v1.DaemonSetSpec":
			def("revisionHistoryLimit", int64(10))
			def("updateStrategy", map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"maxUnavailable": int64(1), "maxSurge": int64(0)}})
		case "io.k8s.api.batch.v1.JobSpec":
			def("backoffLimit", int64(6))
			def("completions", int64(1))
			def("parallelism", int64(1))
			def("completionMode", "NonIndexed")
			def("suspend", false)
			uid := "7d1e" + strconv.Itoa(g.intn(100))
			def("selector", map[string]any{"matchLabels": map[string]any{"batch.kubernetes.io/controller-uid": uid}})
			if tmpl, ok := m["template"].(map[string]any); ok {
				md, ok := tmpl["metadata"].(map[string]any)
				if !ok {
					md = map[string]any{}
					tmpl["metadata"] = md
				}
				labels, ok := md["labels"].(map[string]any)
				if !ok {
					labels = map[string]any{}
					md["labels"] = labels
				}
				labels["batch.kubernetes.io/controller-uid"] = uid
				labels["batch.kubernetes.io/job-name"] = "job"
			}
		case "io.k8s.api.batch.v1.CronJobSpec":
			def("concurrencyPolicy", "Allow")
			def("suspend", false)
			def("successfulJobsHistoryLimit", int64(3))
			def("failedJobsHistoryLimit", int64(1))
		case "io.k8s.api.core.v1.ServiceSpec":
			ip := "10.96.0." + strconv.Itoa(1+g.intn(200))
			def("clusterIP", ip)
			def("clusterIPs", []any{ip})
			def("type", "ClusterIP")
			def("sessionAffinity", "None")
			def("ipFamilies", []any{"IPv4"})
			def("ipFamilyPolicy", "SingleStack")
			def("internalTrafficPolicy", "Cluster")
		case "io.k8s.api.core.v1.Secret":
			def("type", "Opaque")
			if sd, ok := m["stringData"].(map[string]any); ok {
				data, _ := m["data"].(map[string]any)
				if data == nil {
					data = map[string]any{}
					m["data"] = data
				}
				for _, k := range sortedKeys(sd) {
					if s, ok := sd[k].(string); ok {
						data[k] = base64.StdEncoding.EncodeToString([]byte(s))
					}
				}
				delete(m, "stringData")
			}
		}
	})
	if g.pct(50) {
		g.addStatus(live, k)
	}
}

// walkTypes calls f on every object in v with its type, parents first.
func (g *gen) walkTypes(v any, t *schema.Type, f func(m map[string]any, t *schema.Type)) {
	switch x := v.(type) {
	case map[string]any:
		f(x, t)
		for _, k := range sortedKeys(x) {
			g.walkTypes(x[k], t.Field(k), f)
		}
	case []any:
		for _, el := range x {
			g.walkTypes(el, t.Element(), f)
		}
	}
}

func (g *gen) addStatus(live map[string]any, k *genKind) {
	switch k.Name {
	case "Deployment", "StatefulSet":
		live["status"] = map[string]any{
			"replicas": int64(g.intn(4)), "readyReplicas": int64(g.intn(4)), "observedGeneration": int64(1),
			"conditions": []any{g.condition(nil)},
		}
	case "DaemonSet":
		live["status"] = map[string]any{"currentNumberScheduled": int64(3), "desiredNumberScheduled": int64(3), "numberMisscheduled": int64(0), "numberReady": int64(2)}
	case "Pod":
		live["status"] = map[string]any{
			"phase": g.pick("Running", "Pending"), "podIP": "10.244.0." + strconv.Itoa(g.intn(200)),
			"conditions":        []any{g.condition(nil)},
			"containerStatuses": []any{map[string]any{"name": "app", "ready": true, "restartCount": int64(0), "image": "nginx", "imageID": "", "started": true}},
		}
	case "Job":
		live["status"] = map[string]any{"active": int64(1), "startTime": "2024-05-01T10:00:00Z"}
	case "CronJob":
		live["status"] = map[string]any{"lastScheduleTime": "2024-05-01T10:00:00Z"}
	case "Service":
		live["status"] = map[string]any{"loadBalancer": map[string]any{}}
	}
}

// podSpecs returns the pod specs in obj.
func (g *gen) podSpecs(obj map[string]any, t *schema.Type) []map[string]any {
	var out []map[string]any
	g.walkTypes(obj, t, func(m map[string]any, t *schema.Type) {
		if t.Name == "io.k8s.api.core.v1.PodSpec" {
			out = append(out, m)
		}
	})
	return out
}

// insertAt inserts v into the list m[k] at a random position.
func (g *gen) insertAt(m map[string]any, k string, v any) {
	l, _ := m[k].([]any)
	i := g.intn(len(l) + 1)
	nl := make([]any, 0, len(l)+1)
	nl = append(nl, l[:i]...)
	nl = append(nl, v)
	m[k] = append(nl, l[i:]...)
}

// otherWriters makes the changes of controllers, admission webhooks and
// people with kubectl edit to live.
func (g *gen) otherWriters(live map[string]any, t *schema.Type, k *genKind) {
	for n := g.intn(7); n > 0; n-- {
		switch op := g.intn(100); {
		case op < 12: // kubectl scale
			if spec, ok := live["spec"].(map[string]any); ok && t.Field("spec").Field("replicas").KindOf() == schema.Scalar {
				spec["replicas"] = int64(g.intn(10))
			}
		case op < 24: // a sidecar injector
			for _, ps := range g.podSpecs(live, t) {
				cs, _ := ps["containers"].([]any)
				c := map[string]any{
					"name":  g.freshKey(cs, "name", func() any { return g.pick("istio-proxy", "linkerd-proxy", g.fresh("sidecar")) }),
					"image": "proxy:1.0", "args": []any{"proxy"},
				}
				if g.pct(50) {
					c["ports"] = []any{map[string]any{"containerPort": int64(15090), "protocol": "TCP", "name": "http-envoy-prom"}}
				}
				g.insertAt(ps, "containers", c)
				if g.pct(50) {
					vs, _ := ps["volumes"].([]any)
					g.insertAt(ps, "volumes", map[string]any{"name": g.freshKey(vs, "name", func() any { return g.pick("istio-envoy", g.fresh("injected")) }), "emptyDir": map[string]any{"medium": "Memory"}})
				}
				if g.pct(30) {
					ics, _ := ps["initContainers"].([]any)
					g.insertAt(ps, "initContainers", map[string]any{"name": g.freshKey(ics, "name", func() any { return "istio-init" }), "image": "proxy:1.0"})
				}
			}
		case op < 34: // an injected environment variable
			for _, ps := range g.podSpecs(live, t) {
				cs, _ := ps["containers"].([]any)
				if len(cs) == 0 {
					continue
				}
				c, ok := cs[g.intn(len(cs))].(map[string]any)
				if !ok {
					continue
				}
				env, _ := c["env"].([]any)
				g.insertAt(c, "env", map[string]any{"name": g.freshKey(env, "name", func() any { return g.pick("POD_NAME", "NODE_IP", strings.ToUpper(g.name("inj"))) }), "value": "injected"})
			}
		case op < 42: // kubectl set image
			for _, ps := range g.podSpecs(live, t) {
				cs, _ := ps["containers"].([]any)
				if len(cs) > 0 {
					if c, ok := cs[g.intn(len(cs))].(map[string]any); ok {
						c["image"] = g.image()
					}
				}
			}
		case op < 50: // kubectl label / annotate
			meta, ok := live["metadata"].(map[string]any)
			if !ok {
				continue
			}
			field := g.pick("labels", "annotations")
			lm, ok := meta[field].(map[string]any)
			if !ok {
				lm = map[string]any{}
				meta[field] = lm
			}
			if len(lm) > 0 && g.pct(40) {
				keys := sortedKeys(lm)
				delete(lm, keys[g.intn(len(keys))])
			} else {
				lm[g.pick("deployment.kubernetes.io/revision", "owner", g.fresh("x"))] = strconv.Itoa(g.intn(9))
			}
		case op < 56: // a list removed whole
			var lists []site
			for _, s := range collectSites(live, t, "", "", nil, nil, nil) {
				if s.l != nil {
					lists = append(lists, s)
				}
			}
			if len(lists) > 0 {
				s := lists[g.intn(len(lists))]
				delete(s.m, s.field)
			}
		case op < 60: // a finalizer added by a controller
			if meta, ok := live["metadata"].(map[string]any); ok {
				fs, _ := meta["finalizers"].([]any)
				g.insertAt(meta, "finalizers", g.freshKey(fs, "", func() any { return g.pick("kubernetes.io/pvc-protection", "example.com/"+g.fresh("ctrl")) }))
			}
		default: // anything else: add, delete, reorder
			g.edit(live, t, false)
		}
	}
}

// String formats a triple for a failure message.
func (tr triple) String() string {
	enc := func(m map[string]any) string {
		if m == nil {
			return "null"
		}
		b, err := value.Encode(m)
		if err != nil {
			return fmt.Sprintf("<%v>", err)
		}
		return string(b)
	}
	return fmt.Sprintf("kind: %s\nlastApplied: %s\nconfig: %s\nlive: %s", tr.Kind.Name, enc(tr.Last), enc(tr.Config), enc(tr.Live))
}

// ---------------------------------------------------------------------------
// Widgets: a custom resource (widgetCRD in differential_test.go).

var widgetFields = map[string]map[string]func(g *gen) any{
	".spec": {
		"replicas": func(g *gen) any { return int64(g.intn(5)) },
		"image":    func(g *gen) any { return g.image() },
		"paused":   func(g *gen) any { return g.pct(50) },
		"size":     func(g *gen) any { return g.scalarFor("maxSurge", nil) },
		"ports":    func(g *gen) any { return []any{g.widgetPort(nil)} },
		"members":  func(g *gen) any { return []any{g.widgetMember(nil)} },
		"tags":     func(g *gen) any { return []any{g.name("tag")} },
		"args":     func(g *gen) any { return []any{"--" + g.fresh("a")} },
		"selector": func(g *gen) any { return map[string]any{"app": g.fresh("s")} },
		"labels":   func(g *gen) any { return map[string]any{g.fresh("l"): "x"} },
		"extra": func(g *gen) any {
			return map[string]any{"nested": map[string]any{"a": int64(1)}, "list": []any{int64(1), "two"}}
		},
	},
	".spec.members[]": {
		"role":     func(g *gen) any { return g.pick("leader", "follower") },
		"weight":   func(g *gen) any { return int64(g.intn(10)) },
		"tags":     func(g *gen) any { return []any{g.name("tag")} },
		"settings": func(g *gen) any { return map[string]any{g.fresh("k"): "v"} },
	},
	".spec.ports[]": {
		"name": func(g *gen) any { return g.fresh("p") },
	},
	".spec.extra": {
		"flag":  func(g *gen) any { return true },
		"items": func(g *gen) any { return []any{map[string]any{"x": int64(g.intn(3))}} },
	},
	".metadata": fieldFactories["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"],
}

// widgetPortKey is a port's identity by all its keys, protocol defaulting
// to TCP.
func widgetPortKey(v any) string {
	m, _ := v.(map[string]any)
	proto, _ := m["protocol"].(string)
	if proto == "" {
		proto = "TCP"
	}
	return keyString(m["port"]) + "/" + proto
}

// widgetPort makes a port whose port and protocol no element of list has;
// its port number may repeat one (53 over TCP and UDP).
func (g *gen) widgetPort(list []any) map[string]any {
	used := map[string]bool{}
	for _, v := range list {
		used[widgetPortKey(v)] = true
	}
	for i := 0; ; i++ {
		p := map[string]any{"port": int64([]int{53, 80, 443, 8080}[g.intn(4)])}
		if i > 10 {
			p["port"] = int64(9000 + g.intn(1000) + i)
		}
		if proto := g.pick("TCP", "UDP", ""); proto != "" {
			p["protocol"] = proto
		}
		if g.pct(40) {
			p["name"] = g.fresh("p")
		}
		if !used[widgetPortKey(p)] {
			return p
		}
	}
}

func (g *gen) widgetMember(list []any) map[string]any {
	m := map[string]any{"name": g.freshKey(list, "name", func() any { return g.name("m") })}
	if g.pct(60) {
		m["role"] = g.pick("leader", "follower")
	}
	if g.pct(40) {
		m["tags"] = []any{"a", g.name("tag")}
	}
	if g.pct(30) {
		m["settings"] = map[string]any{"x": "1"}
	}
	return m
}

func (g *gen) widget() map[string]any {
	spec := map[string]any{"image": g.image()}
	if g.pct(60) {
		spec["replicas"] = int64(1 + g.intn(4))
	}
	if g.pct(60) {
		var ports []any
		for n := 1 + g.intn(3); n > 0; n-- {
			ports = append(ports, g.widgetPort(ports))
		}
		spec["ports"] = ports
	}
	if g.pct(60) {
		var members []any
		for n := 1 + g.intn(3); n > 0; n-- {
			members = append(members, g.widgetMember(members))
		}
		spec["members"] = members
	}
	if g.pct(50) {
		spec["tags"] = []any{"blue", g.name("tag")}
	}
	if g.pct(40) {
		spec["args"] = []any{"--a", "--b"}
	}
	if g.pct(30) {
		spec["selector"] = map[string]any{"app": "w", "tier": "x"}
	}
	if g.pct(30) {
		spec["labels"] = map[string]any{"a": "1"}
	}
	if g.pct(30) {
		spec["extra"] = map[string]any{"nested": map[string]any{"a": int64(1), "b": "x"}, "list": []any{"x"}}
	}
	return map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": g.objectMeta("Widget"), "spec": spec}
}

// widgetTriple generates a Widget case; t is the CRD's type.
func (g *gen) widgetTriple(t *schema.Type) (last, config, live map[string]any) {
	g.role = "b"
	last = g.widget()
	if g.pct(20) {
		g.role = "p"
		for n := 1 + g.intn(3); n > 0; n-- {
			g.edit(last, t, true)
		}
	}
	g.role = "l"
	live = stripNulls(value.DeepCopyObject(last)).(map[string]any)
	if meta, ok := live["metadata"].(map[string]any); ok {
		meta["uid"] = "w-" + strconv.Itoa(g.intn(100))
		meta["generation"] = int64(1 + g.intn(3))
	}
	g.walkTypes(live, t, func(m map[string]any, _ *schema.Type) {
		if _, ok := m["port"]; ok && g.pct(85) {
			if _, ok := m["protocol"]; !ok {
				m["protocol"] = "TCP" // the CRD's default
			}
		}
	})
	if g.pct(40) {
		live["status"] = map[string]any{"phase": "Ready", "observed": int64(1)}
	}
	for n := g.intn(5); n > 0; n-- {
		g.edit(live, t, false)
	}
	g.role = "c"
	config = value.DeepCopyObject(last)
	for n := g.intn(8); n > 0; n-- {
		g.edit(config, t, true)
	}
	if g.pct(8) {
		last = nil
	}
	return last, config, live
}

// TestGeneratorDeterministic: a seed (and choice bytes) gives one triple,
// so that failures reproduce.
func TestGeneratorDeterministic(t *testing.T) {
	for _, k := range genKinds {
		for seed := range uint64(20) {
			a := newGen(seed, []byte{3, 1, 4, 1, 5}).triple(k)
			b := newGen(seed, []byte{3, 1, 4, 1, 5}).triple(k)
			if a.String() != b.String() {
				t.Fatalf("%s seed %d: two triples\n%s\n%s", k.Name, seed, a, b)
			}
		}
	}
}
