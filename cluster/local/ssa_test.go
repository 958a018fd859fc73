package local

import (
	"context"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/schema"
)

var cmGVK = schema.GVK{Version: "v1", Kind: "ConfigMap"}

func TestServerSideApplyStory(t *testing.T) {
	s, clock := openStore(t)
	ctx := context.Background()
	apply := func(manager string, force bool, doc string) (cluster.Object, error) {
		opts := []cluster.PatchOption{cluster.FieldOwner(manager)}
		if force {
			opts = append(opts, cluster.ForceOwnership)
		}
		return s.Patch(ctx, cmGVK, "default", "c1", cluster.ApplyPatchType, []byte(doc), opts...)
	}
	out, err := apply("kubectl", false, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c1}\ndata: {a: '1', b: '2'}\n")
	if err != nil {
		t.Fatal(err)
	}
	y, _ := yaml.Marshal(out)
	t.Logf("%s", y)
	clock.Advance(time.Minute)
	_, err = apply("other", false, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c1}\ndata: {a: '2'}\n")
	t.Logf("conflict: %v %#v", err, err)
	out, err = apply("other", true, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c1}\ndata: {a: '2'}\n")
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Minute)
	out, err = apply("kubectl", false, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c1}\ndata: {c: '3'}\n")
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Minute)
	out, err = s.Patch(ctx, cmGVK, "default", "c1", cluster.MergePatchType, []byte(`{"metadata":{"labels":{"x":"y"}}}`), cluster.FieldOwner("kubectl-label"))
	if err != nil {
		t.Fatal(err)
	}
	y, _ = yaml.Marshal(out)
	t.Logf("%s", y)
}
