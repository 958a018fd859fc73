package kubelet_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/konverge/konverge/clock"
	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/controller"
	"github.com/konverge/konverge/kubelet"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/sim"
)

var configMapGVK = schema.GVK{Version: "v1", Kind: "ConfigMap"}

// TestEnvNamesMissingConfigMap: a container whose environment names a
// missing ConfigMap stays CreateContainerConfigError with the kubelet's
// message and Events, without work due, and is created at the pod
// worker's first retry (every 10s) after the ConfigMap appears.
func TestEnvNamesMissingConfigMap(t *testing.T) {
	e := newEnv(t, "")
	e.create(podYAML("app", `  containers:
  - name: c
    image: nginx:1.14.2
    env:
    - {name: A, valueFrom: {configMapKeyRef: {name: settings, key: mode}}}
    - {name: B, valueFrom: {secretKeyRef: {name: creds, key: pw, optional: true}}}
  - name: side
    image: nginx:1.14.2
`))
	e.at(0)
	e.at(time.Minute)
	e.expect("app", map[string]any{
		"status.phase": "Pending",
		"status.containerStatuses.0.state.waiting.reason":    "CreateContainerConfigError",
		"status.containerStatuses.0.state.waiting.message":   `configmap "settings" not found`,
		"status.containerStatuses.1.state.running.startedAt": "2026-01-01T00:00:03Z",
	})
	evs := e.events("app")
	for _, want := range []string{
		`Normal Pulled Successfully pulled image "nginx:1.14.2"`,
		`Warning Failed Error: configmap "settings" not found (kubelet on konverge-node)`,
	} {
		if !strings.Contains(evs, want) {
			t.Errorf("events\n%s\nwant %s", evs, want)
		}
	}
	if next := e.r.Next(); !next.IsZero() {
		t.Errorf("work due at %v for a pod that waits for a ConfigMap", next)
	}
	// The ConfigMap without the key: another message at the next retry.
	e.at(time.Minute + 5*time.Second)
	e.create("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: default}\ndata: {other: x}\n")
	e.at(time.Minute + 15*time.Second)
	e.expect("app", map[string]any{
		"status.containerStatuses.0.state.waiting.message": "couldn't find key mode in ConfigMap default/settings",
	})
	if evs := e.events("app"); !strings.Contains(evs, "Warning Failed Error: couldn't find key mode in ConfigMap default/settings") {
		t.Errorf("events\n%s", evs)
	}
	// The ConfigMap made again with the key at 1m25s: the container is
	// created at the retry of 1m32s (first try at 2s, when the image was
	// pulled), started a second later.
	e.at(time.Minute + 25*time.Second)
	if err := e.st.Delete(e.ctx, configMapGVK, "default", "settings"); err != nil {
		t.Fatal(err)
	}
	e.create("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: default}\ndata: {mode: fast}\n")
	e.at(time.Minute + 31*time.Second)
	e.expect("app", map[string]any{"status.containerStatuses.0.state.waiting.reason": "CreateContainerConfigError"})
	e.at(2 * time.Minute)
	e.expect("app", map[string]any{
		"status.phase": "Running",
		"status.containerStatuses.0.state.running.startedAt": "2026-01-01T00:01:33Z",
	})
	if evs := e.events("app"); !strings.Contains(evs, `Normal Pulled Container image "nginx:1.14.2" already present on machine`) {
		t.Errorf("events\n%s", evs)
	}
	// A later change of the ConfigMap, or its deletion, changes nothing.
	rv := get(e.pod("app"), "metadata.resourceVersion")
	if err := e.st.Delete(e.ctx, configMapGVK, "default", "settings"); err != nil {
		t.Fatal(err)
	}
	e.at(3 * time.Minute)
	if got := get(e.pod("app"), "metadata.resourceVersion"); got != rv {
		t.Errorf("running pod rewritten after its ConfigMap went: %v", get(e.pod("app"), "status.containerStatuses"))
	}
}

// TestVolumeNamesMissingSecret: a secret volume naming a missing Secret
// keeps the pod ContainerCreating without an address, with a FailedMount
// Event, until the volume manager's first retry after it appears.
func TestVolumeNamesMissingSecret(t *testing.T) {
	e := newEnv(t, "")
	e.create(podYAML("app", `  containers:
  - {name: c, image: nginx:1.14.2}
  volumes:
  - {name: v, secret: {secretName: tls}}
  - {name: w, configMap: {name: absent, optional: true}}
`))
	e.at(0)
	e.at(10 * time.Minute)
	e.expect("app", map[string]any{
		"status.phase": "Pending",
		"status.podIP": nil,
		"status.containerStatuses.0.state.waiting.reason": "ContainerCreating",
		"cond:PodReadyToStartContainers":                  "False",
	})
	if evs := e.events("app"); !strings.Contains(evs, `Warning FailedMount MountVolume.SetUp failed for volume "v" : secret "tls" not found (kubelet on konverge-node)`) {
		t.Errorf("events\n%s", evs)
	}
	if next := e.r.Next(); !next.IsZero() {
		t.Errorf("work due at %v for a pod that waits for a Secret", next)
	}
	// Retries at 0, .5, 1.5, 3.5, 7.5, 15.5, 31.5, 63.5, 127.5, 249.5,
	// 371.5, 493.5, 615.5s: the Secret made at 10m is mounted at 615.5s;
	// the pod starts from there (pulled 2s later, running 1s after).
	e.create("apiVersion: v1\nkind: Secret\nmetadata: {name: tls, namespace: default}\ndata: {k: dg==}\n")
	e.at(10*time.Minute + 15*time.Second)
	e.expect("app", map[string]any{"cond:PodReadyToStartContainers": "False"})
	e.at(11 * time.Minute)
	e.expect("app", map[string]any{
		"status.phase":                                       "Running",
		"cond:PodReadyToStartContainers":                     "True",
		"status.containerStatuses.0.state.running.startedAt": "2026-01-01T00:10:18Z",
	})
	if ip := get(e.pod("app"), "status.podIP"); ip == nil {
		t.Errorf("running pod without an address")
	}
}

// makeAt is a controller that creates an object once the clock reaches
// at: a write the runner follows, so the kubelet learns of it through
// SyncChanged rather than a full sync.
type makeAt struct {
	at  time.Time
	obj string
}

func (m makeAt) Name() string { return "make-at" }

func (m makeAt) Sync(ctx context.Context, c cluster.Interface, now time.Time) (controller.Result, error) {
	if now.Before(m.at) {
		return controller.Result{RequeueAt: m.at}, nil
	}
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(m.obj), &obj); err != nil {
		return controller.Result{}, err
	}
	if _, err := c.Create(ctx, obj); err != nil {
		if cluster.IsAlreadyExists(err) {
			return controller.Result{}, nil
		}
		return controller.Result{}, err
	}
	return controller.Result{Changed: true}, nil
}

// TestConfigMapMadeByAController: a ConfigMap another controller creates
// (a write the runner follows) releases the waiting container at the
// next retry, as one created by hand does.
func TestConfigMapMadeByAController(t *testing.T) {
	clk := clock.New(clock.Manual, clock.Epoch)
	st, err := local.Open(t.TempDir(), local.Options{Clock: clk, LockTimeout: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	mk := makeAt{at: clock.Epoch.Add(30 * time.Second), obj: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: default}\ndata: {mode: fast}\n"}
	e := &env{t: t, ctx: context.Background(), st: st, clk: clk, r: sim.New(st, clk, kubelet.New(nil), mk)}
	e.create(podYAML("app", `  containers:
  - name: c
    image: nginx:1.14.2
    env: [{name: A, valueFrom: {configMapKeyRef: {name: settings, key: mode}}}]
`))
	e.at(0)
	e.at(29 * time.Second)
	e.expect("app", map[string]any{"status.containerStatuses.0.state.waiting.reason": "CreateContainerConfigError"})
	// Made at 30s: created at the retry of 32s (tries at 2, 12, 22, 32s).
	e.at(time.Minute)
	e.expect("app", map[string]any{
		"status.phase": "Running",
		"status.containerStatuses.0.state.running.startedAt": "2026-01-01T00:00:33Z",
	})
}
