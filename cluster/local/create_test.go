package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/value"
)

func TestOpenCreatesState(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		mode os.FileMode
	}{{dir, 0o700 | os.ModeDir}, {filepath.Join(dir, "state.db"), 0o600}} {
		fi, err := os.Stat(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != c.mode {
			t.Errorf("%s: mode %v, want %v", c.path, fi.Mode(), c.mode)
		}
	}
	ctx := context.Background()
	list, err := s.List(ctx, gvkNamespace)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ns := range list.Items {
		names = append(names, metaString(ns, "name"))
	}
	if got, want := strings.Join(names, ","), "default,kube-node-lease,kube-public,kube-system"; got != want {
		t.Errorf("namespaces %s, want %s", got, want)
	}
	// kube-node-lease may be deleted; Open brings it back.
	if err := s.Delete(ctx, gvkNamespace, "", "kube-node-lease"); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s, `{apiVersion: v1, kind: ConfigMap, metadata: {name: kept, namespace: default}}`)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mustGet(t, s, gvkNamespace, "", "kube-node-lease")
	mustGet(t, s, gvkConfigMap, "default", "kept")
}

func TestCreate(t *testing.T) {
	s, clock := openStore(t)
	ctx := context.Background()
	before, _ := s.List(ctx, gvkNamespace)
	d := mustCreate(t, s, deploymentWeb+`
status:
  replicas: 7
`)
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	if uid := metaString(d, "uid"); !uuid.MatchString(uid) {
		t.Errorf("uid %q is not a v4 UUID", uid)
	}
	if got, want := metaString(d, "creationTimestamp"), clock.Now().Format("2006-01-02T15:04:05Z"); got != want {
		t.Errorf("creationTimestamp %s, want %s", got, want)
	}
	rv, _ := strconv.Atoi(metaString(d, "resourceVersion"))
	if prev, _ := strconv.Atoi(before.ResourceVersion); rv != prev+1 {
		t.Errorf("resourceVersion %d, want %d", rv, prev+1)
	}
	if g := path(d, "metadata.generation"); g != int64(1) {
		t.Errorf("generation %v, want 1", g)
	}
	if st, ok := d["status"].(map[string]any); !ok || len(st) != 0 {
		t.Errorf("status %v, want {} (reset on create)", d["status"])
	}
	if r := path(d, "spec.replicas"); r != int64(1) {
		t.Errorf("spec.replicas %v, want the default 1", r)
	}
	if got := mustGet(t, s, gvkDeployment, "default", "web"); metaString(got, "uid") != metaString(d, "uid") {
		t.Errorf("Get returned another object")
	}

	cm := mustCreate(t, s, `{apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: default}, data: {a: b}}`)
	if _, ok := metadata(cm)["generation"]; ok {
		t.Errorf("ConfigMap has a generation: %v", metadata(cm)["generation"])
	}
	// A cluster-scoped kind drops the namespace.
	ns := mustCreate(t, s, `{apiVersion: v1, kind: Namespace, metadata: {name: team, namespace: default}}`)
	if _, ok := metadata(ns)["namespace"]; ok {
		t.Errorf("Namespace kept metadata.namespace")
	}
	if got := path(ns, "status.phase"); got != "Active" {
		t.Errorf("namespace phase %v", got)
	}
	// No namespace means default.
	mustCreate(t, s, `{apiVersion: v1, kind: ConfigMap, metadata: {name: nons}}`)
	mustGet(t, s, gvkConfigMap, "default", "nons")

	// generateName.
	g := mustCreate(t, s, `{apiVersion: v1, kind: ConfigMap, metadata: {generateName: web-, namespace: default}}`)
	if n := metaString(g, "name"); !regexp.MustCompile(`^web-[bcdfghjklmnpqrstvwxz2456789]{5}$`).MatchString(n) {
		t.Errorf("generated name %q", n)
	}
}

func TestCreateErrors(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	mustCreate(t, s, `{apiVersion: v1, kind: ConfigMap, metadata: {name: taken, namespace: default}}`)
	mustCreate(t, s, crdWidgets)
	bigValue := strings.Repeat("x", 262144)
	huge := strings.Repeat("y", 1<<20)
	cases := []struct {
		name   string
		doc    string
		reason cluster.Reason
		msg    string
	}{
		{"missing namespace", `{apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: nope}}`,
			cluster.ReasonNotFound, `namespaces "nope" not found`},
		{"unknown kind", `{apiVersion: example.com/v1, kind: Gizmo, metadata: {name: a}}`,
			cluster.ReasonNotFound, `no matches for kind "Gizmo" in version "example.com/v1"`},
		{"already exists", `{apiVersion: v1, kind: ConfigMap, metadata: {name: taken, namespace: default}}`,
			cluster.ReasonAlreadyExists, `configmaps "taken" already exists`},
		{"invalid", `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: -1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: nginx}]}
`, cluster.ReasonInvalid, `Deployment.apps "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0`},
		{"invalid, several causes", `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: nginx}]}
`, cluster.ReasonInvalid, "Deployment.apps \"web\" is invalid: [spec.selector: Required value, spec.template.metadata.labels: Invalid value: {\"app\":\"web\"}: `selector` does not match template `labels`]"},
		{"invalid name", `{apiVersion: v1, kind: ConfigMap, metadata: {name: Bad_Name, namespace: default}}`,
			cluster.ReasonInvalid, `ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`},
		{"resourceVersion set", `{apiVersion: v1, kind: ConfigMap, metadata: {name: rv, namespace: default, resourceVersion: "3"}}`,
			cluster.ReasonInternal, `resourceVersion should not be set on objects to be created`},
		{"annotations too large", `{apiVersion: v1, kind: ConfigMap, metadata: {name: ann, namespace: default, annotations: {a: ` + bigValue + `}}}`,
			cluster.ReasonInvalid, `ConfigMap "ann" is invalid: metadata.annotations: Too long: may not be more than 262144 bytes`},
		{"object too large", `{apiVersion: example.com/v1, kind: Widget, metadata: {name: big, namespace: default}, spec: {size: 1, extra: {a: ` + huge + `, b: ` + huge + `}}}`,
			cluster.ReasonRequestTooLarge, `Request entity too large: limit is 1572864`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := s.Create(ctx, obj(t, c.doc))
			if cluster.ReasonOf(err) != c.reason || errText(err) != c.msg {
				t.Errorf("got %s (%s)\nwant %s (%s)", errText(err), cluster.ReasonOf(err), c.msg, c.reason)
			}
		})
	}
	// Nothing of the failed creates was stored.
	for _, n := range []string{"a", "rv", "ann"} {
		if !isGone(t, s, gvkConfigMap, "default", n) {
			t.Errorf("configmap %s was stored", n)
		}
	}
	if !isGone(t, s, gvkWidget, "default", "big") {
		t.Errorf("widget big was stored")
	}
}

func TestCreateDoesNotModifyInput(t *testing.T) {
	s, _ := openStore(t)
	in := obj(t, deploymentWeb)
	before, _ := encodeString(in)
	if _, err := s.Create(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	if after, _ := encodeString(in); after != before {
		t.Errorf("Create modified its argument:\n%s\n%s", before, after)
	}
}

func TestCreatePodStatus(t *testing.T) {
	s, _ := openStore(t)
	cases := []struct {
		name, resources, qos string
	}{
		{"best effort", `{}`, "BestEffort"},
		{"burstable", `{requests: {cpu: 100m}}`, "Burstable"},
		{"guaranteed", `{limits: {cpu: "1", memory: 1Gi}, requests: {cpu: 1000m, memory: 1024Mi}}`, "Guaranteed"},
		{"guaranteed from limits", `{limits: {cpu: 500m, memory: 64Mi}}`, "Guaranteed"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := mustCreate(t, s, fmt.Sprintf(`{apiVersion: v1, kind: Pod, metadata: {name: p%d, namespace: default}, spec: {containers: [{name: c, image: x, resources: %s}]}, status: {phase: Running}}`, i, c.resources))
			if got := path(p, "status.phase"); got != "Pending" {
				t.Errorf("phase %v", got)
			}
			if got := path(p, "status.qosClass"); got != c.qos {
				t.Errorf("qosClass %v, want %s", got, c.qos)
			}
		})
	}
	// Quantities are stored in canonical form.
	p := mustGet(t, s, gvkPod, "default", "p2")
	res := path(p, "spec.containers").([]any)[0].(map[string]any)["resources"]
	want := map[string]any{"limits": map[string]any{"cpu": "1", "memory": "1Gi"}, "requests": map[string]any{"cpu": "1", "memory": "1Gi"}}
	if !value.Equal(res, want) {
		t.Errorf("resources %v, want %v", res, want)
	}
}

func TestClosedAndCancelled(t *testing.T) {
	s, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Get(ctx, gvkNamespace, "", "default"); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled Get: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	_, err = s.Get(context.Background(), gvkNamespace, "", "default")
	if err == nil || !strings.HasPrefix(err.Error(), "local: read state ") {
		t.Errorf("Get after Close: %v", err)
	}
}

func TestCreateJobSelector(t *testing.T) {
	s, _ := openStore(t)
	job := mustCreate(t, s, `
apiVersion: batch/v1
kind: Job
metadata: {name: pi, namespace: default}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: perl}]
`)
	uid := metaString(job, "uid")
	if got := path(job, "spec.selector.matchLabels"); !value.Equal(got, map[string]any{"batch.kubernetes.io/controller-uid": uid}) {
		t.Errorf("selector %v", got)
	}
	want := map[string]any{"batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": "pi", "controller-uid": uid, "job-name": "pi"}
	if got := path(job, "spec.template.metadata.labels"); !value.Equal(got, want) {
		t.Errorf("template labels %v", got)
	}
}

// TestCreateHandOver creates a Deployment, a Service, a ConfigMap and a
// Job (whose generated labels depend on the request's labels, which its
// defaults fill in from the template's) with and without
// cluster.HandOver in two stores on one clock: the results
// and the stored objects are the same but for the uids (and the Service's
// cluster IP, from a random range), a handed-over create works on the
// object it was given and returns it, and one that was not leaves its
// input as it was.
func TestCreateHandOver(t *testing.T) {
	ctx := context.Background()
	docs := []string{deploymentWeb, `
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: default
spec:
  selector:
    app: web
  ports:
  - port: 80
`, `
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: default
data:
  mode: fast
`, `
apiVersion: batch/v1
kind: Job
metadata:
  name: once
  namespace: default
spec:
  template:
    metadata:
      labels:
        app: once
    spec:
      restartPolicy: Never
      containers:
      - name: once
        image: busybox
`}
	copied, _ := openStore(t)
	given, _ := openStore(t)
	mask := func(o map[string]any) string {
		o = value.DeepCopyObject(o)
		delete(metadata(o), "uid")
		// A Job's generated selector and labels hold its uid.
		for _, l := range []any{metadata(o)["labels"], path(o, "spec.selector.matchLabels"), path(o, "spec.template.metadata.labels")} {
			if m, ok := l.(map[string]any); ok {
				for k := range m {
					if strings.HasSuffix(k, "controller-uid") {
						m[k] = "<uid>"
					}
				}
			}
		}
		if spec, ok := o["spec"].(map[string]any); ok {
			delete(spec, "clusterIP")
			delete(spec, "clusterIPs")
		}
		b, err := value.Encode(o)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, doc := range docs {
		in := obj(t, doc)
		before := mask(in)
		a, err := copied.Create(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		if after := mask(in); after != before {
			t.Errorf("a create without HandOver changed its input:\n%s\nto\n%s", before, after)
		}
		mine := obj(t, doc)
		b, err := given.Create(ctx, mine, cluster.HandOver)
		if err != nil {
			t.Fatal(err)
		}
		if reflect.ValueOf(b).UnsafePointer() != reflect.ValueOf(mine).UnsafePointer() {
			t.Errorf("%s: a handed-over create did not return the object it was given", metaString(b, "name"))
		}
		if mask(a) != mask(b) {
			t.Errorf("created with HandOver\n%s\nwithout\n%s", mask(b), mask(a))
		}
		gvk := gvkOf(a)
		sa := mustGet(t, copied, gvk, "default", metaString(a, "name"))
		sb := mustGet(t, given, gvk, "default", metaString(b, "name"))
		if mask(sa) != mask(sb) {
			t.Errorf("stored with HandOver\n%s\nwithout\n%s", mask(sb), mask(sa))
		}
	}
}
