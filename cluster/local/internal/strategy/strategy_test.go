package strategy

import (
	"testing"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/cluster/local/internal/jsonobj"
	"github.com/konverge/konverge/schema"
)

// How metadata.generation moves, per kind.
func TestGenerationBumps(t *testing.T) {
	obj := func(replicas int64, annotation string) map[string]any {
		md := map[string]any{"name": "web"}
		if annotation != "" {
			md["annotations"] = map[string]any{"note": annotation}
		}
		return map[string]any{"metadata": md, "spec": map[string]any{"replicas": replicas}, "status": map[string]any{"replicas": replicas}}
	}
	deployment := jsonobj.GroupKind{Group: "apps", Kind: "Deployment"}
	replicaSet := jsonobj.GroupKind{Group: "apps", Kind: "ReplicaSet"}
	for _, tc := range []struct {
		name     string
		gk       jsonobj.GroupKind
		custom   bool
		status   bool
		old, obj map[string]any
		want     bool
	}{
		{"a spec change", replicaSet, false, true, obj(1, ""), obj(2, ""), true},
		{"metadata alone", replicaSet, false, true, obj(1, ""), obj(1, "x"), false},
		{"a Deployment's annotations", deployment, false, true, obj(1, ""), obj(1, "x"), true},
		{"a custom resource's status without a subresource", jsonobj.GroupKind{Group: "example.com", Kind: "Widget"}, true, false,
			obj(1, ""), map[string]any{"metadata": map[string]any{"name": "web"}, "spec": map[string]any{"replicas": int64(1)}, "status": map[string]any{"replicas": int64(3)}}, true},
		{"a PriorityClass never", jsonobj.GroupKind{Group: "scheduling.k8s.io", Kind: "PriorityClass"}, false, false, obj(1, ""), obj(2, ""), false},
	} {
		rule, ok := GenerationOf(tc.gk, tc.custom, tc.status)
		if !ok {
			t.Errorf("%s: no generation rule", tc.name)
			continue
		}
		if got := rule.Bumps(tc.obj, tc.old); got != tc.want {
			t.Errorf("%s: bumps %v, want %v", tc.name, got, tc.want)
		}
	}
	if _, ok := GenerationOf(jsonobj.GroupKind{Kind: "ConfigMap"}, false, false); ok {
		t.Error("a ConfigMap has a generation rule")
	}
}

// An update keeps what the server set and, with a status subresource,
// the stored status.
func TestPrepareForUpdate(t *testing.T) {
	res := cluster.Resource{GVK: schema.GVK{Group: "apps", Version: "v1", Kind: "Deployment"}, Plural: "deployments", Namespaced: true, Status: true}
	old := map[string]any{
		"metadata": map[string]any{"name": "web", "uid": "u-1", "creationTimestamp": "2026-01-01T00:00:00Z"},
		"status":   map[string]any{"replicas": int64(3)},
	}
	obj := map[string]any{
		"metadata": map[string]any{"name": "web", "creationTimestamp": "1999-01-01T00:00:00Z", "selfLink": "/x"},
		"status":   map[string]any{"replicas": int64(9)},
	}
	PrepareForUpdate(res, obj, old)
	md := obj["metadata"].(map[string]any)
	if md["uid"] != "u-1" || md["creationTimestamp"] != "2026-01-01T00:00:00Z" || md["selfLink"] != nil {
		t.Errorf("metadata %v", md)
	}
	if st := obj["status"].(map[string]any); st["replicas"] != int64(3) {
		t.Errorf("status %v, want the stored one", st)
	}
}
