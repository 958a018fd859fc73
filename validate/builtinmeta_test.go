package validate

import (
	"strings"
	"testing"
)

// TestBuiltinObjectMetaNames checks the name rule of kinds Object does not
// know against what kube-apiserver v1.37.1 answered
// (testdata/fidelity/stories/object-names).
func TestBuiltinObjectMetaNames(t *testing.T) {
	cases := []struct {
		apiVersion, kind, name string
		spec                   map[string]any
		namespaced             bool
		want                   string // "" for valid
	}{
		{"rbac.authorization.k8s.io/v1", "ClusterRole", "system:aggregated-metrics-reader", nil, false, ""},
		{"rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "System:Foo_Bar", nil, false, ""},
		{"rbac.authorization.k8s.io/v1", "Role", "a%b", nil, true, "may not contain '%'"},
		{"rbac.authorization.k8s.io/v1", "RoleBinding", "..", nil, true, "may not be '..'"},
		{"certificates.k8s.io/v1", "CertificateSigningRequest", "Weird_Name:1", nil, false, ""},
		{"apiregistration.k8s.io/v1", "APIService", "v1beta1.metrics.k8s.io", map[string]any{"group": "metrics.k8s.io", "version": "v1beta1"}, false, ""},
		{"apiregistration.k8s.io/v1", "APIService", "v1.foo.example.com", map[string]any{"group": "bar.example.com", "version": "v1"}, false, "must be `spec.version+\".\"+spec.group`: \"v1.bar.example.com\""},
		{"v1", "Node", "system:node", nil, false, "a lowercase RFC 1123 subdomain"},
		{"storage.k8s.io/v1", "StorageClass", "Fast", nil, false, "a lowercase RFC 1123 subdomain"},
	}
	for _, c := range cases {
		obj := map[string]any{"apiVersion": c.apiVersion, "kind": c.kind, "metadata": map[string]any{"name": c.name}}
		if c.namespaced {
			obj["metadata"].(map[string]any)["namespace"] = "default"
		}
		if c.spec != nil {
			obj["spec"] = c.spec
		}
		errs := BuiltinObjectMeta(obj, nil, c.namespaced)
		switch {
		case c.want == "" && len(errs) > 0:
			t.Errorf("%s %q: unexpected errors %v", c.kind, c.name, errs)
		case c.want != "" && (len(errs) != 1 || !strings.Contains(errs[0].Error(), c.want)):
			t.Errorf("%s %q: got %v, want one error containing %q", c.kind, c.name, errs, c.want)
		}
	}
}
