package admission

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/cluster/local/internal/jsonobj"
	"github.com/konverge/konverge/cluster/local/internal/usage"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

// memStore is a Store over objects in memory, for the plugins' own tests
// (package local runs the chain over its real store).
type memStore struct {
	objects []map[string]any
}

func (m memStore) Get(gk jsonobj.GroupKind, ns, name string) (map[string]any, error) {
	for _, o := range m.objects {
		if kindOf(o) == gk && jsonobj.MetaString(o, "namespace") == ns && jsonobj.MetaString(o, "name") == name {
			return value.DeepCopyObject(o), nil
		}
	}
	return nil, nil
}

func (m memStore) List(gk jsonobj.GroupKind, ns string) ([]map[string]any, error) {
	var out []map[string]any
	for _, o := range m.objects {
		if kindOf(o) == gk && jsonobj.MetaString(o, "namespace") == ns {
			out = append(out, value.DeepCopyObject(o))
		}
	}
	return out, nil
}

func (m memStore) NamespacePhase(name string) (string, error) { return "Active", nil }

func (m memStore) Quotas(string) ([]map[string]any, []usage.Set, error) { return nil, nil, nil }

func (m memStore) CountName(gk jsonobj.GroupKind) string {
	return "count/" + strings.ToLower(gk.Kind) + "s"
}

func kindOf(o map[string]any) jsonobj.GroupKind {
	gvk := schema.ParseGVK(jsonobj.Str(o, "apiVersion"), jsonobj.Str(o, "kind"))
	return jsonobj.GroupKind{Group: gvk.Group, Kind: gvk.Kind}
}

// obj decodes a YAML document as the store holds objects.
func obj(t *testing.T, doc string) map[string]any {
	t.Helper()
	j, yerr := yaml.YAMLToJSON([]byte(doc))
	o, err := value.DecodeObject(j)
	if err := errors.Join(yerr, err); err != nil {
		t.Fatalf("%s: %v", doc, err)
	}
	return o
}

var (
	podResource = cluster.Resource{GVK: schema.GVK{Version: "v1", Kind: "Pod"}, Plural: "pods", Namespaced: true}
	pvcResource = cluster.Resource{GVK: schema.GVK{Version: "v1", Kind: "PersistentVolumeClaim"}, Plural: "persistentvolumeclaims", Namespaced: true}
)

// The chain runs kube-apiserver's plugins in its order, each in the
// phases it takes part in.
func TestDefaultChain(t *testing.T) {
	var lifecycle, mutating, validating []string
	for _, p := range Default() {
		if _, ok := p.(LifecycleChecker); ok {
			lifecycle = append(lifecycle, p.Name())
		}
		if _, ok := p.(Mutator); ok {
			mutating = append(mutating, p.Name())
		}
		if _, ok := p.(Validator); ok {
			validating = append(validating, p.Name())
		}
	}
	want := [][]string{
		{"NamespaceLifecycle"},
		{"LimitRanger", "ServiceAccount", "Priority", "DefaultTolerationSeconds", "RuntimeClass", "DefaultStorageClass", "StorageObjectInUseProtection"},
		{"LimitRanger", "Priority", "RuntimeClass", "ResourceQuota"},
	}
	if got := [][]string{lifecycle, mutating, validating}; !reflect.DeepEqual(got, want) {
		t.Errorf("phases:\n got %q\nwant %q", got, want)
	}
}

const bounds = `
apiVersion: v1
kind: LimitRange
metadata: {name: bounds, namespace: ns}
spec:
  limits:
  - type: Container
    min: {cpu: 100m, memory: 64Mi}
    max: {cpu: "3", memory: 1Gi}
    maxLimitRequestRatio: {cpu: "4", memory: "2"}
  - type: Pod
    min: {memory: 128Mi}
    max: {cpu: "3"}
    maxLimitRequestRatio: {memory: "3"}
  - type: PersistentVolumeClaim
    min: {storage: 2Gi}
    max: {storage: 10Gi}
`

// LimitRanger's refusals, as kube-apiserver words them (the cases of the
// recorded story testdata/fidelity/stories/limitrange-bounds, which
// internal/fidelity replays through the whole registry).
func TestLimitRangerValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		res  cluster.Resource
		obj  string
		want string
	}{{
		name: "ratios and the pod's totals",
		res:  podResource,
		obj: `{apiVersion: v1, kind: Pod, metadata: {name: ratio, namespace: ns}, spec: {containers: [
			{name: app, resources: {requests: {cpu: 100m, memory: 64Mi}, limits: {cpu: 300m, memory: 256Mi}}}]}}`,
		want: `pods "ratio" is forbidden: [memory max limit to request ratio per Container is 2, but provided ratio is 4.000000, ` +
			`minimum memory usage per Pod is 128Mi, but request is 64Mi, memory max limit to request ratio per Pod is 3, but provided ratio is 4.000000]`,
	}, {
		name: "a quantity too large for thousandths",
		res:  podResource,
		obj: `{apiVersion: v1, kind: Pod, metadata: {name: huge, namespace: ns}, spec: {containers: [
			{name: app, resources: {requests: {cpu: 500m, memory: 8E}, limits: {cpu: 500m, memory: 9E}}}]}}`,
		want: `pods "huge" is forbidden: maximum memory usage per Container is 1Gi, but limit is 9E`,
	}, {
		name: "a sidecar runs beside the init containers after it",
		res:  podResource,
		obj: `{apiVersion: v1, kind: Pod, metadata: {name: sidecar-first, namespace: ns}, spec: {
			initContainers: [
				{name: proxy, restartPolicy: Always, resources: {requests: {cpu: "1", memory: 128Mi}, limits: {cpu: "1", memory: 128Mi}}},
				{name: setup, resources: {requests: {cpu: 1500m, memory: 64Mi}, limits: {cpu: 2500m, memory: 64Mi}}}],
			containers: [{name: app, resources: {requests: {cpu: "1", memory: 128Mi}, limits: {cpu: "1", memory: 128Mi}}}]}}`,
		want: `pods "sidecar-first" is forbidden: maximum cpu usage per Pod is 3, but limit is 3500m`,
	}, {
		name: "a sidecar after the init container does not add to it",
		res:  podResource,
		obj: `{apiVersion: v1, kind: Pod, metadata: {name: sidecar-last, namespace: ns}, spec: {
			initContainers: [
				{name: setup, resources: {requests: {cpu: 1500m, memory: 64Mi}, limits: {cpu: 2500m, memory: 64Mi}}},
				{name: proxy, restartPolicy: Always, resources: {requests: {cpu: "1", memory: 128Mi}, limits: {cpu: "1", memory: 128Mi}}}],
			containers: [{name: app, resources: {requests: {cpu: "1", memory: 128Mi}, limits: {cpu: "1", memory: 128Mi}}}]}}`,
	}, {
		name: "a claim's request is bounded by max",
		res:  pvcResource,
		obj:  `{apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: big, namespace: ns}, spec: {resources: {requests: {storage: 20Gi}}}}`,
		want: `persistentvolumeclaims "big" is forbidden: maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi`,
	}, {
		name: "a claim without a request",
		res:  pvcResource,
		obj:  `{apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: none, namespace: ns}, spec: {}}`,
		want: `persistentvolumeclaims "none" is forbidden: [minimum storage usage per PersistentVolumeClaim is 2Gi.  No request is specified, ` +
			`maximum storage usage per PersistentVolumeClaim is 10Gi.  No request is specified]`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			s := memStore{objects: []map[string]any{obj(t, bounds)}}
			o := obj(t, tc.obj)
			err := LimitRanger{}.Validate(s, &Attributes{Operation: Create, Resource: tc.res, Name: jsonobj.MetaString(o, "name"), Object: o})
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// LimitRanger fills in the defaults of each LimitRange in turn; the
// annotation tells what the last one that filled in something set
// (recorded: testdata/fidelity/stories/limitrange-two-defaults).
func TestLimitRangerMutate(t *testing.T) {
	s := memStore{objects: []map[string]any{
		obj(t, `{apiVersion: v1, kind: LimitRange, metadata: {name: cpu, namespace: ns}, spec: {limits: [
			{type: Container, default: {cpu: 300m}, defaultRequest: {cpu: 200m}}]}}`),
		obj(t, `{apiVersion: v1, kind: LimitRange, metadata: {name: memory, namespace: ns}, spec: {limits: [
			{type: Container, default: {memory: 512Mi, ephemeral-storage: 1Gi}, defaultRequest: {memory: 128Mi, ephemeral-storage: 1Gi}}]}}`),
	}}
	pod := obj(t, `{apiVersion: v1, kind: Pod, metadata: {name: filled, namespace: ns}, spec: {
		initContainers: [{name: setup, resources: {limits: {memory: 64Mi}, requests: {memory: 64Mi}}}],
		containers: [{name: app}, {name: tuned, resources: {requests: {cpu: 250m, memory: 1Gi}, limits: {cpu: 250m, memory: 1Gi}}}]}}`)
	if err := (LimitRanger{}).Mutate(s, &Attributes{Operation: Create, Resource: podResource, Name: "filled", Object: pod}); err != nil {
		t.Fatal(err)
	}
	want := obj(t, `{apiVersion: v1, kind: Pod, metadata: {name: filled, namespace: ns, annotations: {
		kubernetes.io/limit-ranger: "LimitRanger plugin set: ephemeral-storage, memory request for container app; ephemeral-storage, memory limit for container app; ephemeral-storage request for container tuned; ephemeral-storage limit for container tuned; ephemeral-storage request for init container setup; ephemeral-storage limit for init container setup"}},
	spec: {
		initContainers: [{name: setup, resources: {limits: {cpu: 300m, memory: 64Mi, ephemeral-storage: 1Gi}, requests: {cpu: 200m, memory: 64Mi, ephemeral-storage: 1Gi}}}],
		containers: [
			{name: app, resources: {limits: {cpu: 300m, memory: 512Mi, ephemeral-storage: 1Gi}, requests: {cpu: 200m, memory: 128Mi, ephemeral-storage: 1Gi}}},
			{name: tuned, resources: {requests: {cpu: 250m, memory: 1Gi, ephemeral-storage: 1Gi}, limits: {cpu: 250m, memory: 1Gi, ephemeral-storage: 1Gi}}}]}}`)
	if !value.Equal(pod, want) {
		got, _ := yaml.Marshal(pod)
		t.Errorf("mutated pod:\n%s", got)
	}
}
