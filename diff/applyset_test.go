package diff_test

import (
	"context"
	"testing"

	"github.com/konverge/konverge/apply"
	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/diff"
	"github.com/konverge/konverge/schema"
)

var schemaConfigMap = schema.GVK{Version: "v1", Kind: "ConfigMap"}

const setInput = `apiVersion: v1
kind: ConfigMap
metadata: {name: a}
data: {k: v}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: b}
data: {k: v}
`

// TestApplySetDiff: objects applied as members of an ApplySet show no
// differences when diffed with the set (without it, the label apply added
// shows as removed from each), and with Prune the members the input
// dropped show as deletions.
func TestApplySetDiff(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	objs := parse(t, setInput)
	if _, err := apply.New(s, apply.Options{Prune: true, ApplySet: "set", Namespace: "default", EnforceNamespace: true}).Apply(ctx, objs); err != nil {
		t.Fatal(err)
	}
	plain, err := diff.New(s, diff.Options{}).Run(ctx, objs)
	if err != nil {
		t.Fatal(err)
	}
	if !plain.HasDifferences() {
		t.Fatal("a diff without the ApplySet shows no differences: the set's label should show as removed")
	}
	with, err := diff.New(s, diff.Options{ApplySet: "set", Namespace: "default", EnforceNamespace: true}).Run(ctx, objs)
	if err != nil {
		t.Fatal(err)
	}
	if with.HasDifferences() {
		t.Fatalf("diff with the ApplySet:\n%s", unifiedText(t, with))
	}
	// Without Prune the dropped member is not shown.
	with, err = diff.New(s, diff.Options{ApplySet: "set", Namespace: "default", EnforceNamespace: true}).Run(ctx, objs[:1])
	if err != nil {
		t.Fatal(err)
	}
	if with.HasDifferences() || len(with.Entries) != 1 {
		t.Fatalf("diff of one member without Prune: %v", with.Entries)
	}
	pr, err := diff.New(s, diff.Options{ApplySet: "set", Prune: true, Namespace: "default", EnforceNamespace: true}).Run(ctx, objs[:1])
	if err != nil {
		t.Fatal(err)
	}
	if len(pr.Entries) != 2 || pr.Entries[1].String() != "configmap/b delete" {
		t.Fatalf("prune preview: %v", pr.Entries)
	}
	// Nothing was written: b is still there, a member.
	if _, err := s.Get(ctx, schemaConfigMap, "default", "b"); err != nil {
		t.Fatal(err)
	}
}

// TestDiffIgnore: an ignored field that someone else changed is no
// difference.
func TestDiffIgnore(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	objs := parse(t, setInput)
	mustApply(t, s, objs)
	if _, err := s.Patch(ctx, schemaConfigMap, "default", "a", cluster.MergePatchType, []byte(`{"data":{"k":"changed"}}`)); err != nil {
		t.Fatal(err)
	}
	r, err := diff.New(s, diff.Options{}).Run(ctx, objs)
	if err != nil {
		t.Fatal(err)
	}
	if !r.HasDifferences() {
		t.Fatal("no differences without the rule")
	}
	r, err = diff.New(s, diff.Options{Ignore: []apply.IgnoreRule{{Kind: "ConfigMap", Name: "a", Paths: []string{"data.k"}}}}).Run(ctx, objs)
	if err != nil {
		t.Fatal(err)
	}
	if r.HasDifferences() {
		t.Fatalf("differences with the rule:\n%s", unifiedText(t, r))
	}
}
