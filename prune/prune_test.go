package prune_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/kinds"
	"github.com/konverge/konverge/lastapplied"
	"github.com/konverge/konverge/prune"
	"github.com/konverge/konverge/schema"
)

func mapper() cluster.Mapper { return kinds.NewMapper(kinds.Builtin(), schema.Builtin()) }

type clock struct{}

func (clock) Now() time.Time { return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC) }

func openStore(t *testing.T) *local.Store {
	t.Helper()
	s, err := local.Open(t.TempDir(), local.Options{Clock: clock{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestParseParent(t *testing.T) {
	cases := []struct {
		ref, want, err string
	}{
		{ref: "prod", want: "secrets./prod"},
		{ref: "secrets/prod", want: "secrets./prod"},
		{ref: "configmaps/prod", want: "configmaps./prod"},
		{ref: "cm/prod", want: "configmaps./prod"},
		{ref: "secrets/", err: `invalid parent reference "secrets/": name cannot be blank`},
		{ref: "nosuchthings/x", err: `invalid parent reference "nosuchthings/x": the server doesn't have a resource type "nosuchthings"`},
	}
	for _, tc := range cases {
		t.Run(tc.ref, func(t *testing.T) {
			p, err := prune.ParseParent(tc.ref, mapper())
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("error %v, want %s", err, tc.err)
				}
				return
			}
			if err != nil || p.String() != tc.want {
				t.Fatalf("%v %v, want %s", p, err, tc.want)
			}
		})
	}
}

// TestApplySetID pins the ID kubectl computes:
// base64url(sha256("<name>.<namespace>.<Kind>.<group>")).
func TestApplySetID(t *testing.T) {
	cases := []struct {
		ref, ns, want string
	}{
		{"myset", "default", "applyset-51uXdjs_k8zt9KVdAtPaWnW_O9B-EVzd2Bkztfa9DSA-v1"},
		{"kset", "default", "applyset-GjgIXczw14vNr48YfmbBYd6MxZmk2FHdIUuEQkPpkWk-v1"},
	}
	for _, tc := range cases {
		p, err := prune.ParseParent(tc.ref, mapper())
		if err != nil {
			t.Fatal(err)
		}
		p.Namespace = tc.ns
		if got := prune.NewApplySet(p, prune.DefaultTooling()).ID(); got != tc.want {
			t.Errorf("%s/%s: %s, want %s", tc.ns, tc.ref, got, tc.want)
		}
	}
}

func TestParseAllowlist(t *testing.T) {
	got, err := prune.ParseAllowlist(mapper(), []string{"core/v1/ConfigMap", "apps/v1/Deployment"})
	if err != nil || len(got) != 2 || got[0] != (schema.GVK{Version: "v1", Kind: "ConfigMap"}) || got[1].Group != "apps" {
		t.Fatalf("%v %v", got, err)
	}
	if _, err := prune.ParseAllowlist(mapper(), []string{"v1/ConfigMap"}); err == nil || err.Error() != "invalid GroupVersionKind format: v1/ConfigMap, please follow <group/version/kind>" {
		t.Errorf("error %v", err)
	}
	if _, err := prune.ParseAllowlist(mapper(), []string{"example.com/v1/Widget"}); !cluster.IsNotFound(err) {
		t.Errorf("error %v", err)
	}
	if n := len(prune.DefaultAllowlist()); n != 16 {
		t.Errorf("default allowlist has %d kinds", n)
	}
}

func TestAddLabels(t *testing.T) {
	p, _ := prune.ParseParent("set", mapper())
	p.Namespace = "default"
	set := prune.NewApplySet(p, prune.DefaultTooling())
	in := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "x", "labels": map[string]any{"app": "web"}}}
	out, err := set.AddLabels(in)
	if err != nil {
		t.Fatal(err)
	}
	labels := out["metadata"].(map[string]any)["labels"].(map[string]any)
	if labels[prune.PartOfLabel] != set.ID() || labels["app"] != "web" {
		t.Errorf("labels %v", labels)
	}
	if _, ok := in["metadata"].(map[string]any)["labels"].(map[string]any)[prune.PartOfLabel]; ok {
		t.Errorf("input modified")
	}
	if _, err := set.AddLabels(out); err == nil {
		t.Errorf("labelled twice")
	}
}

// TestLabelsFind: only objects with the annotation, matching, of the
// allowlist, in visited namespaces and not visited are candidates.
func TestLabelsFind(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	create := func(kind, ns, name string, labels map[string]any, annotated bool) string {
		md := map[string]any{"name": name, "namespace": ns, "labels": labels}
		if annotated {
			md["annotations"] = map[string]any{lastapplied.Annotation: "{}"}
		}
		obj, err := s.Create(ctx, map[string]any{"apiVersion": "v1", "kind": kind, "metadata": md})
		if err != nil {
			t.Fatal(err)
		}
		return obj["metadata"].(map[string]any)["uid"].(string)
	}
	web := map[string]any{"app": "web"}
	create("ConfigMap", "default", "stale", web, true)
	kept := create("ConfigMap", "default", "applied", web, true)
	create("ConfigMap", "default", "imperative", web, false)
	create("ConfigMap", "default", "other", map[string]any{"app": "db"}, true)
	create("ConfigMap", "kube-system", "elsewhere", web, true)
	create("ServiceAccount", "default", "sa", web, true)

	visited := prune.NewVisited()
	visited.UIDs[kept] = true
	visited.Namespaces["default"] = true
	cands, err := prune.Labels{Selector: "app=web"}.Find(ctx, s, s.Mapper(), visited)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cands {
		got = append(got, c.Ref.Namespace+"/"+c.Ref.String())
	}
	if fmt.Sprint(got) != "[default/configmap/stale]" {
		t.Errorf("candidates %v", got)
	}
}

func ExampleApplySet_ID() {
	parent, _ := prune.ParseParent("prod", kinds.NewMapper(kinds.Builtin(), nil))
	parent.Namespace = "default"
	set := prune.NewApplySet(parent, prune.Tooling{Name: "konverge", Version: "v0.1.0"})
	fmt.Println(parent)
	fmt.Println(set.ID())
	fmt.Println(set.MemberLabels())
	// Output:
	// secrets./prod
	// applyset-zRPdOdiFwnia1JIbrVPutd6ObN79Itf7d-qpVsRbs48-v1
	// map[applyset.kubernetes.io/part-of:applyset-zRPdOdiFwnia1JIbrVPutd6ObN79Itf7d-qpVsRbs48-v1]
}

// TestApplySetParent: the parent records the kinds and the namespaces
// other than its own, sorted, as kubectl writes them; the update drops the
// deprecated annotation, and FindPrunable reads the set back.
func TestApplySetParent(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	m := s.Mapper()
	if _, err := s.Create(ctx, map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "other"}}); err != nil {
		t.Fatal(err)
	}
	p, _ := prune.ParseParent("configmaps/set", m)
	p.Namespace = "default"
	set := prune.NewApplySet(p, prune.Tooling{Name: "konverge", Version: "v0.1.0"})
	if err := set.FetchParent(ctx, s, m); err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct {
		gvk schema.GVK
		ns  string
	}{
		{schema.GVK{Group: "apps", Version: "v1", Kind: "Deployment"}, "other"},
		{schema.GVK{Version: "v1", Kind: "ConfigMap"}, "default"},
		{schema.GVK{Version: "v1", Kind: "Namespace"}, ""},
	} {
		res, err := m.ResourceFor(r.gvk)
		if err != nil {
			t.Fatal(err)
		}
		set.AddMember(res, r.ns)
	}
	if err := set.BeforeApply(ctx, s, false); err != nil {
		t.Fatal(err)
	}
	parent, err := s.Get(ctx, schema.GVK{Version: "v1", Kind: "ConfigMap"}, "default", "set")
	if err != nil {
		t.Fatal(err)
	}
	md := parent["metadata"].(map[string]any)
	want := map[string]any{
		prune.ToolingAnnotation:              "konverge/v0.1.0",
		prune.GroupKindsAnnotation:           "ConfigMap,Deployment.apps,Namespace",
		prune.AdditionalNamespacesAnnotation: "other",
	}
	if fmt.Sprint(md["annotations"]) != fmt.Sprint(want) {
		t.Errorf("annotations %v, want %v", md["annotations"], want)
	}
	if got := md["labels"].(map[string]any)[prune.ParentIDLabel]; got != set.ID() {
		t.Errorf("id label %v", got)
	}

	// A member in the other namespace, not applied this time: prunable.
	if _, err := s.Create(ctx, map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{
		"name": "gone", "namespace": "default", "labels": map[string]any{prune.PartOfLabel: set.ID()}}}); err != nil {
		t.Fatal(err)
	}
	again := prune.NewApplySet(p, prune.Tooling{Name: "konverge", Version: "v0.1.0"})
	if err := again.FetchParent(ctx, s, m); err != nil {
		t.Fatal(err)
	}
	cands, err := again.FindPrunable(ctx, s, prune.NewVisited())
	if err != nil {
		t.Fatal(err)
	}
	if len(cands) != 1 || cands[0].Ref.Name != "gone" {
		t.Errorf("candidates %v", cands)
	}
	if err := again.AfterPrune(ctx, s, false); err != nil {
		t.Fatal(err)
	}
	parent, _ = s.Get(ctx, schema.GVK{Version: "v1", Kind: "ConfigMap"}, "default", "set")
	if got := parent["metadata"].(map[string]any)["annotations"].(map[string]any)[prune.GroupKindsAnnotation]; got != "" {
		t.Errorf("kinds after an empty apply: %q", got)
	}
}
