package apply_test

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/konverge/konverge/apply"
	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/kinds"
	"github.com/konverge/konverge/manifest"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

const planApp = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        resources:
          requests: {cpu: "0.5", memory: 1024Mi}
---
apiVersion: v1
kind: Secret
metadata: {name: creds}
stringData: {password: s3cr3t-value}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {color: blue}
`

// changesLine prints a plan as "ref action drift" lines.
func changesLine(p *apply.Plan) string {
	var b strings.Builder
	for _, c := range p.Changes {
		fmt.Fprintf(&b, "%s drift=%v", c, c.Drift)
		for _, path := range c.Paths {
			fmt.Fprintf(&b, " %s", path)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func mustPlan(t *testing.T, c cluster.Interface, opts apply.Options, objs []manifest.Object) *apply.Plan {
	t.Helper()
	p, err := apply.New(c, opts).Plan(context.Background(), objs)
	if err != nil {
		t.Fatalf("Plan: %v", err)
	}
	return p
}

// TestPlanNoDriftNoise: after an apply, the plan of the same input has no
// drift, although kubectl would print "configured" for the Secret
// written with stringData and the Deployment whose quantities the server
// rewrote.
func TestPlanNoDriftNoise(t *testing.T) {
	s := openStore(t)
	objs := parse(t, planApp)
	p := mustPlan(t, s, apply.Options{}, objs)
	if got, want := changesLine(p), "deployment.apps/web created drift=true\nsecret/creds created drift=true\nconfigmap/settings created drift=true\n"; got != want {
		t.Fatalf("first plan:\n%s\nwant:\n%s", got, want)
	}
	mustApply(t, s, apply.Options{}, objs)
	p = mustPlan(t, s, apply.Options{}, objs)
	want := "deployment.apps/web configured drift=false\nsecret/creds configured drift=false\nconfigmap/settings unchanged drift=false\n"
	if got := changesLine(p); got != want {
		t.Fatalf("re-plan:\n%s\nwant:\n%s", got, want)
	}
	if p.HasDrift() {
		t.Fatal("HasDrift after apply")
	}
	// kubectl's verb is what apply prints.
	res := mustApply(t, s, apply.Options{}, objs)
	for i, r := range res {
		if r.Action != p.Changes[i].Action {
			t.Errorf("%s: apply %s, plan %s", r.Ref, r.Action, p.Changes[i].Action)
		}
	}
}

// TestPlanOutOfBand: a change made behind apply's back is drift, named by
// its path, and the plan's merged object is what applying leaves.
func TestPlanOutOfBand(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	objs := parse(t, planApp)
	mustApply(t, s, apply.Options{}, objs)
	if _, err := s.Patch(ctx, gvkDeployment, "default", "web", cluster.StrategicMergePatchType,
		[]byte(`{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:edited"}]}}}}`)); err != nil {
		t.Fatal(err)
	}
	p := mustPlan(t, s, apply.Options{}, objs)
	c := p.Changes[0]
	if !c.Drift || c.Action != apply.Configured {
		t.Fatalf("change %s drift=%v", c, c.Drift)
	}
	if got := fmt.Sprint(c.Paths); got != `[spec.template.spec.containers[name="web"].image]` {
		t.Fatalf("paths = %s", got)
	}
	res, err := apply.New(s, apply.Options{}).ApplyPlan(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	live, err := s.Get(ctx, gvkDeployment, "default", "web")
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Action != apply.Configured {
		t.Fatalf("ApplyPlan: %s", res[0])
	}
	if !equalSpec(live, c.Merged) {
		t.Fatalf("live after ApplyPlan differs from the plan's merged object:\n%v\n%v", live["spec"], c.Merged["spec"])
	}
	if p := mustPlan(t, s, apply.Options{}, objs); p.HasDrift() {
		t.Fatalf("drift after ApplyPlan:\n%s", changesLine(p))
	}
}

func equalSpec(a, b map[string]any) bool { return value.Equal(a["spec"], b["spec"]) }

// TestPlanIgnoreReplicas: an ignore rule leaves spec.replicas, which an
// autoscaler changed, alone: no drift, no patch of it, and removing it
// from the configuration does not delete it either.
func TestPlanIgnoreReplicas(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	objs := parse(t, planApp)
	mustApply(t, s, apply.Options{}, objs)
	if _, err := s.Patch(ctx, gvkDeployment, "default", "web", cluster.MergePatchType, []byte(`{"spec":{"replicas":7}}`)); err != nil {
		t.Fatal(err)
	}
	plain := mustPlan(t, s, apply.Options{}, objs)
	if c := plain.Changes[0]; !c.Drift || fmt.Sprint(c.Paths) != "[spec.replicas]" {
		t.Fatalf("without the rule: %s drift=%v %v", c, c.Drift, c.Paths)
	}
	for _, rule := range []apply.IgnoreRule{
		{Group: "apps", Kind: "Deployment", Paths: []string{"spec.replicas"}},
		{Kind: "Deployment", Group: "apps", Name: "web", Paths: []string{"/spec/replicas"}},
	} {
		opts := apply.Options{Ignore: []apply.IgnoreRule{rule}}
		p := mustPlan(t, s, opts, objs)
		for _, path := range p.Changes[0].Paths {
			if path.String() != "metadata.annotations[kubectl.kubernetes.io/last-applied-configuration]" {
				t.Fatalf("rule %v: drift %v", rule, p.Changes[0].Paths)
			}
		}
		// Without replicas in the configuration (the last-applied
		// annotation has it), the rule still keeps it.
		noReplicas := parse(t, strings.Replace(planApp, "  replicas: 2\n", "", 1))
		p = mustPlan(t, s, opts, noReplicas)
		c := p.Changes[0]
		for _, path := range c.Paths {
			if path.String() != "metadata.annotations[kubectl.kubernetes.io/last-applied-configuration]" {
				t.Fatalf("rule %v, replicas removed: drift %v", rule, c.Paths)
			}
		}
		if spec, _ := c.Patch["spec"].(map[string]any); spec != nil {
			if _, ok := spec["replicas"]; ok {
				t.Fatalf("patch touches replicas: %v", c.Patch)
			}
		}
		mustApply(t, s, opts, noReplicas)
		live, _ := s.Get(ctx, gvkDeployment, "default", "web")
		if r := live["spec"].(map[string]any)["replicas"]; r != int64(7) {
			t.Fatalf("replicas after apply = %v, want 7", r)
		}
	}
	// Unselected objects are not affected.
	other := apply.IgnoreRule{Kind: "Deployment", Group: "apps", Name: "other", Paths: []string{"spec.replicas"}}
	p := mustPlan(t, s, apply.Options{Ignore: []apply.IgnoreRule{other}}, objs)
	if !p.Changes[0].Drift {
		t.Fatal("rule for another object suppressed the drift")
	}
}

// TestPlanIgnoreByManager: the fields another field manager wrote are
// ignored.
func TestPlanIgnoreByManager(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	objs := parse(t, planApp)
	mustApply(t, s, apply.Options{}, objs)
	if _, err := s.Patch(ctx, gvkDeployment, "default", "web", cluster.MergePatchType, []byte(`{"spec":{"replicas":5}}`), cluster.FieldOwner("autoscaler")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Patch(ctx, gvkConfigMap, "default", "settings", cluster.MergePatchType, []byte(`{"data":{"color":"red"}}`), cluster.FieldOwner("someone")); err != nil {
		t.Fatal(err)
	}
	p := mustPlan(t, s, apply.Options{Ignore: []apply.IgnoreRule{{Managers: []string{"autoscaler"}}}}, objs)
	got := changesLine(p)
	want := "deployment.apps/web configured drift=false\nsecret/creds configured drift=false\nconfigmap/settings configured drift=true data.color\n"
	if got != want {
		t.Fatalf("plan:\n%s\nwant:\n%s", got, want)
	}
}

// TestPlanIgnoreListElements: paths through lists, by key, by index, with
// a wildcard, and as JSON pointers.
func TestPlanIgnoreListElements(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	webhook := `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: hook}
webhooks:
- name: a.example.com
  admissionReviewVersions: [v1]
  sideEffects: None
  clientConfig:
    caBundle: cGxhY2Vob2xkZXI=
    service: {name: svc, namespace: default, path: /a}
- name: b.example.com
  admissionReviewVersions: [v1]
  sideEffects: None
  clientConfig:
    caBundle: cGxhY2Vob2xkZXI=
    service: {name: svc, namespace: default, path: /b}
`
	objs := parse(t, webhook)
	mustApply(t, s, apply.Options{}, objs)
	gvk := schema.GVK{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "MutatingWebhookConfiguration"}
	if _, err := s.Patch(ctx, gvk, "", "hook", cluster.StrategicMergePatchType,
		[]byte(`{"webhooks":[{"name":"a.example.com","clientConfig":{"caBundle":"Y2E="}},{"name":"b.example.com","clientConfig":{"caBundle":"Y2E="}}]}`)); err != nil {
		t.Fatal(err)
	}
	plain := mustPlan(t, s, apply.Options{}, objs)
	if c := plain.Changes[0]; !c.Drift || len(c.Paths) != 2 {
		t.Fatalf("without rules: drift=%v %v", c.Drift, c.Paths)
	}
	for _, paths := range [][]string{
		{"webhooks[*].clientConfig.caBundle"},
		{"/webhooks/*/clientConfig/caBundle"},
		{`webhooks[name="a.example.com"].clientConfig.caBundle`, "webhooks[1].clientConfig.caBundle"},
		{"/webhooks/0/clientConfig/caBundle", "/webhooks/1/clientConfig/caBundle"},
	} {
		p := mustPlan(t, s, apply.Options{Ignore: []apply.IgnoreRule{{Kind: "MutatingWebhookConfiguration", Group: "admissionregistration.k8s.io", Paths: paths}}}, objs)
		if c := p.Changes[0]; c.Drift {
			t.Errorf("paths %v: drift %v", paths, c.Paths)
		}
	}
	p := mustPlan(t, s, apply.Options{Ignore: []apply.IgnoreRule{{Paths: []string{`webhooks[name="a.example.com"].clientConfig.caBundle`}}}}, objs)
	if c := p.Changes[0]; fmt.Sprint(c.Paths) != `[webhooks[name="b.example.com"].clientConfig.caBundle]` {
		t.Errorf("one element ignored: paths %v", c.Paths)
	}
}

// TestParseFieldPathErrors: bad paths are errors that say what is wrong.
func TestParseFieldPathErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", `path "": empty path`},
		{"spec..replicas", `path "spec..replicas": empty field name at offset 4`},
		{"spec.containers[name=", `path "spec.containers[name=": unclosed [ at offset 15`},
		{"[0]", `path "[0]": a list selector must follow a field name`},
		{"a[x=]", `path "a[x=]": [x=]: value : want a quoted string, a number or a boolean`},
		{"a[k=v]", `path "a[k=v]": [k=v]: value v: want a quoted string, a number or a boolean`},
		{"//a", `path "//a": empty segment`},
	} {
		_, err := apply.ParseFieldPath(tc.in)
		if err == nil || err.Error() != tc.want {
			t.Errorf("ParseFieldPath(%q) = %v, want %s", tc.in, err, tc.want)
		}
	}
	_, err := apply.New(openStore(t), apply.Options{Ignore: []apply.IgnoreRule{{Group: "apps", Paths: []string{"spec"}}}}).Plan(context.Background(), parse(t, planApp))
	if err == nil || !strings.Contains(err.Error(), `ignore rule 1: group "apps" without a kind`) {
		t.Fatalf("group without kind: %v", err)
	}
}

// TestPlanAgainstSnapshot: a plan against a snapshot of the live objects
// (no cluster) is the plan against the cluster.
func TestPlanAgainstSnapshot(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	objs := parse(t, planApp)
	mustApply(t, s, apply.Options{}, objs)
	if _, err := s.Patch(ctx, gvkConfigMap, "default", "settings", cluster.MergePatchType, []byte(`{"data":{"color":"red"}}`)); err != nil {
		t.Fatal(err)
	}
	var live []map[string]any
	for _, gvk := range []schema.GVK{gvkDeployment, gvkSecret, gvkConfigMap} {
		l, err := s.List(ctx, gvk)
		if err != nil {
			t.Fatal(err)
		}
		live = append(live, l.Items...)
	}
	snap := apply.NewSnapshot(live...)
	mapper := kinds.NewMapper(kinds.Builtin(), schema.Builtin())
	fromSnap, err := apply.NewPlanner(snap, mapper, apply.Options{}).Plan(ctx, objs)
	if err != nil {
		t.Fatal(err)
	}
	fromCluster := mustPlan(t, s, apply.Options{}, objs)
	if a, b := changesLine(fromSnap), changesLine(fromCluster); a != b {
		t.Fatalf("snapshot plan:\n%s\ncluster plan:\n%s", a, b)
	}
	for i := range fromSnap.Changes {
		if !value.Equal(fromSnap.Changes[i].Merged, fromCluster.Changes[i].Merged) {
			t.Errorf("%s: merged objects differ", fromSnap.Changes[i].Ref)
		}
	}
	// The snapshot plan applies to the cluster.
	if _, err := apply.New(s, apply.Options{}).ApplyPlan(ctx, fromSnap); err != nil {
		t.Fatal(err)
	}
	cm, _ := s.Get(ctx, gvkConfigMap, "default", "settings")
	if got := cm["data"].(map[string]any)["color"]; got != "blue" {
		t.Fatalf("color after ApplyPlan = %v", got)
	}
}

// TestPlanPrunePreview: with an ApplySet, the plan lists the members the
// input dropped, and ApplyPlan prunes exactly those.
func TestPlanPrunePreview(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	opts := apply.Options{Prune: true, ApplySet: "app", Namespace: "default", EnforceNamespace: true}
	objs := parse(t, planApp)
	mustApply(t, s, opts, objs)
	p := mustPlan(t, s, opts, objs)
	if p.HasDrift() {
		t.Fatalf("drift with ApplySet labels:\n%s", changesLine(p))
	}
	p = mustPlan(t, s, opts, objs[:2])
	if got, want := changesLine(p), "deployment.apps/web configured drift=false\nsecret/creds configured drift=false\nconfigmap/settings pruned drift=true\n"; got != want {
		t.Fatalf("plan:\n%s\nwant:\n%s", got, want)
	}
	res, err := apply.New(s, apply.Options{}).ApplyPlan(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if last := res[len(res)-1]; last.String() != "configmap/settings pruned" {
		t.Fatalf("last result %s", last)
	}
	if _, err := s.Get(ctx, gvkConfigMap, "default", "settings"); !cluster.IsNotFound(err) {
		t.Fatalf("settings not pruned: %v", err)
	}
}

// TestPlanMasked: masked changes hold no Secret value.
func TestPlanMasked(t *testing.T) {
	s := openStore(t)
	objs := parse(t, planApp)
	mustApply(t, s, apply.Options{}, objs)
	p := mustPlan(t, s, apply.Options{}, parse(t, strings.Replace(planApp, "s3cr3t-value", "n3w-s3cr3t", 1))).Masked()
	c := p.Changes[1]
	if !c.Drift {
		t.Fatal("changed Secret without drift")
	}
	for _, v := range []any{c.Live, c.Merged, c.Patch} {
		b, _ := value.Encode(v)
		for _, leak := range []string{"s3cr3t", "czNjcjN0", "bjN3LXMzY3IzdA"} {
			if strings.Contains(string(b), leak) {
				t.Fatalf("masked change holds %q: %s", leak, b)
			}
		}
	}
}

const planCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
              tags:
                type: array
                x-kubernetes-list-type: set
                items: {type: string}
`

// TestPlanSnapshotCustomResources: a Planner without a Mapper knows the
// custom resources of the CRDs its snapshot holds.
func TestPlanSnapshotCustomResources(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	mustApply(t, s, apply.Options{}, parse(t, planCRD))
	widget := "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {size: 3, tags: [a]}\n"
	mustApply(t, s, apply.Options{}, parse(t, widget))
	gvkWidget := schema.GVK{Group: "example.com", Version: "v1", Kind: "Widget"}
	if _, err := s.Patch(ctx, gvkWidget, "default", "w", cluster.MergePatchType, []byte(`{"spec":{"size":5}}`)); err != nil {
		t.Fatal(err)
	}
	crd, _ := s.Get(ctx, schema.GVK{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}, "", "widgets.example.com")
	w, _ := s.Get(ctx, gvkWidget, "default", "w")
	p, err := apply.NewPlanner(apply.NewSnapshot(crd, w), nil, apply.Options{}).Plan(ctx, parse(t, widget))
	if err != nil {
		t.Fatal(err)
	}
	c := p.Changes[0]
	if c.PatchType != cluster.MergePatchType || fmt.Sprint(c.Paths) != "[spec.size]" {
		t.Fatalf("%s %s %v", c, c.PatchType, c.Paths)
	}
	// Without the CRD the kind is unknown.
	_, err = apply.NewPlanner(apply.NewSnapshot(w), nil, apply.Options{}).Plan(ctx, parse(t, widget))
	if err == nil || !strings.Contains(err.Error(), "resource mapping not found") {
		t.Fatalf("without the CRD: %v", err)
	}
}

// TestResultMasked: apply's results of a Secret, masked, hold no value.
func TestResultMasked(t *testing.T) {
	s := openStore(t)
	mustApply(t, s, apply.Options{}, parse(t, planApp))
	res := mustApply(t, s, apply.Options{}, parse(t, strings.Replace(planApp, "s3cr3t-value", "n3w-s3cr3t", 1)))
	r := res[1].Masked()
	if r.Ref.Kind != "Secret" || r.Patch == nil {
		t.Fatalf("result %s patch %v", r, r.Patch)
	}
	for _, v := range []any{r.Live, r.Object, r.Patch} {
		b, _ := value.Encode(v)
		for _, leak := range []string{"s3cr3t", "czNjcjN0", "bjN3LXMzY3IzdA"} {
			if strings.Contains(string(b), leak) {
				t.Fatalf("masked result holds %q: %s", leak, b)
			}
		}
	}
	if res[0].Masked().Object == nil {
		t.Fatal("Deployment result lost its object")
	}
}

// liveWithoutNamespace is a LiveSource that returns its objects without
// metadata.namespace, as a cache that keeps objects by namespace might.
type liveWithoutNamespace struct{ apply.LiveSource }

func (l liveWithoutNamespace) strip(o map[string]any) map[string]any {
	md := maps.Clone(o["metadata"].(map[string]any))
	delete(md, "namespace")
	o = maps.Clone(o)
	o["metadata"] = md
	return o
}

func (l liveWithoutNamespace) Get(ctx context.Context, gvk schema.GVK, ns, name string) (map[string]any, error) {
	o, err := l.LiveSource.Get(ctx, gvk, ns, name)
	if err != nil {
		return nil, err
	}
	return l.strip(o), nil
}

func (l liveWithoutNamespace) List(ctx context.Context, gvk schema.GVK, opts ...cluster.ListOption) (*cluster.List, error) {
	list, err := l.LiveSource.List(ctx, gvk, opts...)
	if err != nil {
		return nil, err
	}
	out := *list
	out.Items = nil
	for _, o := range list.Items {
		out.Items = append(out.Items, l.strip(o))
	}
	return &out, nil
}

// TestPlanNamespaceSettledLate: an input without a namespace plans as
// the same input with the namespace written out, whether the live
// objects carry their namespace or not (the plan settles the namespace
// of a config only when it needs the config with it), unchanged and
// drifted alike; and ApplyPlan applies the patch in that namespace.
func TestPlanNamespaceSettledLate(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	bare := parse(t, planApp)
	mustApply(t, s, apply.Options{}, bare)
	if _, err := s.Patch(ctx, gvkDeployment, "default", "web", cluster.MergePatchType, []byte(`{"spec":{"replicas":5}}`)); err != nil {
		t.Fatal(err)
	}
	explicit := parse(t, planApp)
	for _, o := range explicit {
		o.Obj["metadata"].(map[string]any)["namespace"] = "default"
	}
	mapper := kinds.NewMapper(kinds.Builtin(), schema.Builtin())
	for _, src := range []apply.LiveSource{s, liveWithoutNamespace{s}} {
		var plans []*apply.Plan
		var errs []string
		for _, objs := range [][]manifest.Object{bare, explicit} {
			p, err := apply.NewPlanner(src, mapper, apply.Options{}).Plan(ctx, objs)
			plans = append(plans, p)
			errs = append(errs, fmt.Sprint(err))
		}
		if errs[0] != errs[1] {
			t.Fatalf("%T: error without the namespace: %s\nwith it: %s", src, errs[0], errs[1])
		}
		if plans[1] == nil {
			// Live without its namespace: the namespace written is a
			// change of an immutable field, for both.
			if _, stripped := src.(liveWithoutNamespace); !stripped {
				t.Fatalf("%T: %s", src, errs[1])
			}
			continue
		}
		got, want := plans[0], plans[1]
		if a, b := changesLine(got), changesLine(want); a != b {
			t.Fatalf("%T: plan without the namespace:\n%s\nwith it:\n%s", src, a, b)
		}
		if c := got.Changes[0]; !c.Drift || fmt.Sprint(c.Paths) != "[spec.replicas]" {
			t.Fatalf("%T: %s drift=%v %v", src, c, c.Drift, c.Paths)
		}
		for i := range got.Changes {
			g, w := got.Changes[i].Unmasked(), want.Changes[i].Unmasked()
			if !value.Equal(g.Merged, w.Merged) || !value.Equal(g.Patch, w.Patch) {
				t.Errorf("%T: %s: merged or patch differ:\n%v %v\n%v %v", src, g.Ref, g.Merged, g.Patch, w.Merged, w.Patch)
			}
		}
	}
	p := mustPlan(t, s, apply.Options{}, bare)
	if _, err := apply.New(s, apply.Options{}).ApplyPlan(ctx, p); err != nil {
		t.Fatal(err)
	}
	if got := field(mustGet(t, s, gvkDeployment, "default", "web"), "spec.replicas"); got != int64(2) {
		t.Fatalf("replicas after ApplyPlan = %v", got)
	}
}
