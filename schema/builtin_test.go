package schema

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// at walks from t along a dotted path. A segment "name[]" is the elements of
// the list field name; a segment "*" is any value of a map.
func at(t *Type, path string) *Type {
	for seg := range strings.SplitSeq(path, ".") {
		if name, ok := strings.CutSuffix(seg, "[]"); ok {
			t = t.Field(name).Element()
			continue
		}
		if seg == "*" {
			seg = "any-key"
		}
		t = t.Field(seg)
	}
	return t
}

// describe summarizes how values of t merge, one level deep.
func describe(t *Type) string {
	var b strings.Builder
	switch t.KindOf() {
	case Untyped:
		b.WriteString("untyped")
	case Scalar:
		b.WriteString("scalar/" + t.Scalar.String())
	case Struct:
		b.WriteString("struct")
	case Map:
		b.WriteString("map")
	case List:
		b.WriteString("list/" + t.ListType.String())
		if t.MergeKey != "" {
			fmt.Fprintf(&b, " key=%s keys=%v", t.MergeKey, t.Keys)
		}
	}
	if t != nil && t.RetainKeys {
		b.WriteString(" retainKeys")
	}
	if t != nil && t.Replace {
		b.WriteString(" replace")
	}
	if t != nil && t.Default != nil {
		fmt.Fprintf(&b, " default=%v", t.Default)
	}
	if k := t.KindOf(); k == List || k == Map {
		e := t.Elem
		switch e.KindOf() {
		case Scalar:
			b.WriteString(" of scalar/" + e.Scalar.String())
		default:
			b.WriteString(" of " + e.KindOf().String())
		}
	}
	return b.String()
}

var (
	pod         = GVK{Version: "v1", Kind: "Pod"}
	service     = GVK{Version: "v1", Kind: "Service"}
	configMap   = GVK{Version: "v1", Kind: "ConfigMap"}
	secret      = GVK{Version: "v1", Kind: "Secret"}
	nodeKind    = GVK{Version: "v1", Kind: "Node"}
	deployment  = GVK{Group: "apps", Version: "v1", Kind: "Deployment"}
	statefulSet = GVK{Group: "apps", Version: "v1", Kind: "StatefulSet"}
	cronJob     = GVK{Group: "batch", Version: "v1", Kind: "CronJob"}
	job         = GVK{Group: "batch", Version: "v1", Kind: "Job"}
	pdb         = GVK{Group: "policy", Version: "v1", Kind: "PodDisruptionBudget"}
	crdKind     = GVK{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}
)

func TestBuiltinPositions(t *testing.T) {
	const (
		podSpec   = "spec.template.spec."
		container = podSpec + "containers[]."
	)
	tests := []struct {
		name string
		kind GVK
		path string
		want string
	}{
		{"containers", deployment, podSpec + "containers", "list/map key=name keys=[name] of struct"},
		{"initContainers", deployment, podSpec + "initContainers", "list/map key=name keys=[name] of struct"},
		{"ports", deployment, container + "ports", "list/map key=containerPort keys=[containerPort protocol] of struct"},
		{"port protocol", deployment, container + "ports[].protocol", "scalar/string default=TCP"},
		{"containerPort", deployment, container + "ports[].containerPort", "scalar/integer default=0"},
		{"env", deployment, container + "env", "list/map key=name keys=[name] of struct"},
		{"volumeMounts", deployment, container + "volumeMounts", "list/map key=mountPath keys=[mountPath] of struct"},
		{"args", deployment, container + "args", "list/atomic of scalar/string"},
		{"command", deployment, container + "command", "list/atomic of scalar/string"},
		{"resources limits", deployment, container + "resources.limits", "map of scalar/scalar"},
		{"resources requests", deployment, container + "resources.requests", "map of scalar/scalar"},
		{"finalizers", deployment, "metadata.finalizers", "list/set of scalar/string"},
		{"ownerReferences", deployment, "metadata.ownerReferences", "list/map key=uid keys=[uid] of struct"},
		{"labels", deployment, "metadata.labels", "map of scalar/string"},
		{"creationTimestamp", deployment, "metadata.creationTimestamp", "scalar/string"},
		{"managedFields fieldsV1", deployment, "metadata.managedFields[].fieldsV1", "untyped"},
		{"strategy", deployment, "spec.strategy", "struct retainKeys default=map[]"},
		{"maxSurge", deployment, "spec.strategy.rollingUpdate.maxSurge", "scalar/int-or-string"},
		{"selector", deployment, "spec.selector", "struct"},
		{"volumes", deployment, podSpec + "volumes", "list/map key=name keys=[name] retainKeys of struct"},
		{"tolerations", deployment, podSpec + "tolerations", "list/atomic of struct"},
		{"imagePullSecrets", deployment, podSpec + "imagePullSecrets", "list/map key=name keys=[name] of struct"},
		{"topologySpreadConstraints", deployment, podSpec + "topologySpreadConstraints", "list/map key=topologyKey keys=[topologyKey whenUnsatisfiable] of struct"},
		{"hostAliases", deployment, podSpec + "hostAliases", "list/map key=ip keys=[ip] of struct"},
		{"nodeSelector", deployment, podSpec + "nodeSelector", "map of scalar/string"},
		{"pod containers", pod, "spec.containers", "list/map key=name keys=[name] of struct"},
		{"pod volumes", pod, "spec.volumes", "list/map key=name keys=[name] retainKeys of struct"},
		{"pod conditions", pod, "status.conditions", "list/map key=type keys=[type] of struct"},
		{"pod podIPs", pod, "status.podIPs", "list/map key=ip keys=[ip] of struct"},
		{"service ports", service, "spec.ports", "list/map key=port keys=[port protocol] of struct"},
		{"service port protocol", service, "spec.ports[].protocol", "scalar/string default=TCP"},
		{"service targetPort", service, "spec.ports[].targetPort", "scalar/int-or-string"},
		{"service selector", service, "spec.selector", "map of scalar/string"},
		{"configmap data", configMap, "data", "map of scalar/string"},
		{"configmap binaryData", configMap, "binaryData", "map of scalar/string"},
		{"secret data", secret, "data", "map of scalar/string"},
		{"secret stringData", secret, "stringData", "map of scalar/string"},
		{"node podCIDRs", nodeKind, "spec.podCIDRs", "list/set of scalar/string"},
		{"volumeClaimTemplates", statefulSet, "spec.volumeClaimTemplates", "list/atomic of struct"},
		{"volumeClaimTemplates requests", statefulSet, "spec.volumeClaimTemplates[].spec.resources.requests", "map of scalar/scalar"},
		{"cronjob containers", cronJob, "spec.jobTemplate.spec.template.spec.containers", "list/map key=name keys=[name] of struct"},
		{"job conditions (merge despite list-type atomic)", job, "status.conditions", "list/map key=type keys=[type] of struct"},
		{"pdb selector", pdb, "spec.selector", "struct replace"},
		{"crd schema properties", crdKind, "spec.versions[].schema.openAPIV3Schema.properties", "map of struct"},
		{"crd schema recursion", crdKind, "spec.versions[].schema.openAPIV3Schema.properties.*.properties.*.type", "scalar/string"},
		{"crd schema default", crdKind, "spec.versions[].schema.openAPIV3Schema.default", "untyped"},
		{"unknown field", deployment, "spec.noSuchField", "untyped"},
	}
	reg := Builtin()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := reg.Lookup(tt.kind)
			if root == nil {
				t.Fatalf("Lookup(%v) = nil", tt.kind)
			}
			if got := describe(at(root, tt.path)); got != tt.want {
				t.Errorf("%v %s:\n got %s\nwant %s", tt.kind, tt.path, got, tt.want)
			}
		})
	}
}

func TestBuiltinKinds(t *testing.T) {
	reg := Builtin()
	for _, gvk := range []GVK{
		pod, service, configMap, secret, deployment, statefulSet, cronJob, job, pdb, crdKind,
		{Version: "v1", Kind: "Namespace"},
		{Version: "v1", Kind: "PodList"},
		{Group: "apps", Version: "v1", Kind: "DaemonSet"},
		{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRoleBinding"},
		{Group: "autoscaling", Version: "v2", Kind: "HorizontalPodAutoscaler"},
		{Group: "resource.k8s.io", Version: "v1beta2", Kind: "ResourceClaim"},
		{Group: "admissionregistration.k8s.io", Version: "v1alpha1", Kind: "MutatingAdmissionPolicy"},
		{Group: "apiregistration.k8s.io", Version: "v1", Kind: "APIService"},
	} {
		t.Run(gvk.String(), func(t *testing.T) {
			typ := reg.Lookup(gvk)
			if typ.KindOf() != Struct {
				t.Fatalf("Lookup(%v) = %s, want a struct", gvk, describe(typ))
			}
			for _, f := range []string{"apiVersion", "kind"} {
				if got := describe(typ.Field(f)); got != "scalar/string" {
					t.Errorf("%s: got %s", f, got)
				}
			}
		})
	}
	if got := reg.Lookup(GVK{Group: "example.com", Version: "v1", Kind: "Widget"}); got != nil {
		t.Errorf("unknown kind: got %s, want nil", describe(got))
	}
	if n := reg.Len(); n < 250 {
		t.Errorf("Builtin has %d kinds, want every kind of Kubernetes %s", n, KubernetesVersion)
	}
}

// TestBuiltinShared checks that positions of one definition share its
// Fields map and that the registries Builtin returns are independent.
func TestBuiltinShared(t *testing.T) {
	a, b := Builtin(), Builtin()
	podSpec := a.Lookup(pod).Field("spec")
	tmplSpec := at(a.Lookup(deployment), "spec.template.spec")
	jobSpec := at(a.Lookup(cronJob), "spec.jobTemplate.spec.template.spec")
	for _, other := range []*Type{tmplSpec, jobSpec} {
		if reflect.ValueOf(other.Fields).UnsafePointer() != reflect.ValueOf(podSpec.Fields).UnsafePointer() {
			t.Errorf("%s positions do not share one Fields map", other.Name)
		}
	}
	// A position with a strategy of its own is another Type on the same map.
	strategy := at(a.Lookup(deployment), "spec.strategy")
	ds := at(a.Lookup(GVK{Group: "apps", Version: "v1", Kind: "DeploymentList"}), "items[].spec.strategy")
	if strategy != ds {
		t.Error("equal positions of one definition are not one Type")
	}

	widget := GVK{Group: "example.com", Version: "v1", Kind: "Widget"}
	a.Add(widget, &Type{Kind: Struct})
	if b.Lookup(widget) != nil || Builtin().Lookup(widget) != nil {
		t.Error("Add on one Builtin registry changed another")
	}
	a.Add(pod, nil)
	if b.Lookup(pod).KindOf() != Struct {
		t.Error("replacing a kind in one Builtin registry changed another")
	}
}

// TestBuiltinCurrent regenerates the embedded table from the documents of
// k8s.io/kubernetes when they are in the module cache, and checks that the
// committed table is what go generate would write.
func TestBuiltinCurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Skipf("go env GOMODCACHE: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "k8s.io", "kubernetes@"+KubernetesVersion, "api", "openapi-spec", "v3")
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) == 0 {
		t.Skipf("k8s.io/kubernetes@%s is not in the module cache; go generate ./schema downloads it", KubernetesVersion)
	}
	var docs [][]byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, b)
	}
	reg, err := ParseOpenAPIV3Documents(docs...)
	if err != nil {
		t.Fatal(err)
	}
	want, err := reg.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(builtinData))
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the embedded table (%d bytes) differs from the documents in %s (%d bytes): run go generate ./schema", len(got), dir, len(want))
	}
}

func BenchmarkBuiltinDecode(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(builtinData)))
	for b.Loop() {
		if _, err := decodeBuiltin(); err != nil {
			b.Fatal(err)
		}
	}
}

var sink *Type

func BenchmarkField(b *testing.B) {
	root := Builtin().Lookup(deployment)
	b.ReportAllocs()
	for b.Loop() {
		c := root.Field("spec").Field("template").Field("spec").Field("containers")
		sink = c.Element().Field("ports").Element().Field("protocol")
	}
	if sink.Default != "TCP" {
		b.Fatal("wrong type")
	}
	if allocs := testing.AllocsPerRun(100, func() {
		sink = root.Field("spec").Field("template").Field("spec").Field("containers").Element().Field("name")
	}); allocs != 0 {
		b.Fatalf("Field allocates %v times per lookup", allocs)
	}
}

func TestFieldAllocs(t *testing.T) {
	root := Builtin().Lookup(deployment)
	allocs := testing.AllocsPerRun(100, func() {
		sink = root.Field("spec").Field("template").Field("spec").Field("containers").Element().Field("ports").Element().Field("protocol")
		sink = sink.Field("x").Element()
	})
	if allocs != 0 {
		t.Errorf("lookups allocate %v times", allocs)
	}
}
