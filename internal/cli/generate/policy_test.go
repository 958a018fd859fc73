package generate

import (
	"encoding/json"
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
)

func TestPolicyObjects(t *testing.T) {
	subjects := SubjectOptions{Users: []string{"alice"}, Groups: []string{"ops"}, ServiceAccounts: []string{"kube-system:bot"}}
	runGeneratorCases(t, []generatorCase{
		{name: "rolebinding of a cluster role", build: objErr(func() (any2, error) {
			return RoleBinding(RoleBindingOptions{Name: "ops-admin", Namespace: "ns", ClusterRole: "admin", Subjects: subjects})
		}), want: `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"ops-admin","namespace":"ns"},
			"subjects":[{"kind":"User","apiGroup":"rbac.authorization.k8s.io","name":"alice"},{"kind":"Group","apiGroup":"rbac.authorization.k8s.io","name":"ops"},
			{"kind":"ServiceAccount","name":"bot","namespace":"kube-system"}],
			"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"admin"}}`},
		{name: "rolebinding of both", build: objErr(func() (any2, error) {
			return RoleBinding(RoleBindingOptions{Name: "b", Role: "r", ClusterRole: "c"})
		}), err: "exactly one of clusterrole or role must be specified"},
		{name: "clusterrolebinding bad service account", build: objErr(func() (any2, error) {
			return ClusterRoleBinding("b", "view", SubjectOptions{ServiceAccounts: []string{"bot"}})
		}), err: "serviceaccount must be <namespace>:<name>"},
		{name: "priorityclass", build: obj(PriorityClass(PriorityClassOptions{Name: "urgent", Value: 1000, Description: "d", PreemptionPolicy: "Never"})),
			want: `{"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"urgent"},"value":1000,"description":"d","preemptionPolicy":"Never"}`},
		{name: "quota", build: objErr(func() (any2, error) {
			return Quota(QuotaOptions{Name: "team", Namespace: "ns", Hard: "cpu=4,memory=8Gi", Scopes: "BestEffort"})
		}), want: `{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"team","namespace":"ns"},
			"spec":{"hard":{"cpu":"4","memory":"8Gi"},"scopes":["BestEffort"]},"status":{}}`},
		{name: "quota bad pair", build: objErr(func() (any2, error) { return Quota(QuotaOptions{Name: "q", Hard: "cpu"}) }),
			err: "Invalid argument syntax cpu, expected <resource>=<value>"},
		{name: "quota empty scope", build: objErr(func() (any2, error) { return Quota(QuotaOptions{Name: "q", Scopes: "a,"}) }),
			err: `invalid resource quota scope ""`},
		{name: "pdb", build: objErr(func() (any2, error) {
			return PDB(PDBOptions{Name: "web", Selector: "app=web", MaxUnavailable: "25%"})
		}), want: `{"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":"web"},
			"spec":{"selector":{"matchLabels":{"app":"web"}},"maxUnavailable":"25%"},"status":{"disruptionsAllowed":0,"currentHealthy":0,"desiredHealthy":0,"expectedPods":0}}`},
		{name: "pdb both", build: objErr(func() (any2, error) {
			return PDB(PDBOptions{Name: "w", Selector: "a=b", MinAvailable: "1", MaxUnavailable: "1"})
		}), err: "min-available and max-unavailable cannot be both specified"},
		{name: "pdb bad count", build: objErr(func() (any2, error) {
			return PDB(PDBOptions{Name: "w", Selector: "a=b", MinAvailable: "1.5"})
		}), err: "invalid format specified for min-available"},
		{name: "ingress", build: objErr(func() (any2, error) {
			return Ingress(IngressOptions{Name: "api", Class: "nginx", Rules: []string{
				"example.com/api=api:8080,tls=example-tls", "example.com/docs*=docs:http", "other.com/=web:80,tls=example-tls"}})
		}), want: `{"apiVersion":"networking.k8s.io/v1","kind":"Ingress","metadata":{"name":"api"},
			"spec":{"ingressClassName":"nginx","tls":[{"hosts":["example.com","other.com"],"secretName":"example-tls"}],
			"rules":[{"host":"example.com","http":{"paths":[
				{"path":"/api","pathType":"Exact","backend":{"service":{"name":"api","port":{"number":8080}}}},
				{"path":"/docs","pathType":"Prefix","backend":{"service":{"name":"docs","port":{"name":"http"}}}}]}},
				{"host":"other.com","http":{"paths":[{"path":"/","pathType":"Exact","backend":{"service":{"name":"web","port":{"number":80}}}}]}}]},
			"status":{"loadBalancer":{}}}`},
		{name: "ingress nothing", build: objErr(func() (any2, error) { return Ingress(IngressOptions{Name: "i"}) }),
			err: "not enough information provided"},
		{name: "ingress bad rule", build: objErr(func() (any2, error) { return Ingress(IngressOptions{Name: "i", Rules: []string{"nopath"}}) }),
			err: "rule nopath is invalid"},
		{name: "ingress bad backend", build: objErr(func() (any2, error) { return Ingress(IngressOptions{Name: "i", DefaultBackend: "web"}) }),
			err: "default-backend should be in format servicename:serviceport"},
		{name: "clusterrole aggregated", build: obj(ClusterRole("metrics", nil, map[string]string{"example.com/metrics": "true"})),
			want: `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"metrics"},"rules":null,
			"aggregationRule":{"clusterRoleSelectors":[{"matchLabels":{"example.com/metrics":"true"}}]}}`},
	})
}

// served is a Resolver of a few resources, as a cluster's discovery
// would answer.
func served(r RuleResource) (string, string, error) {
	m := map[string][2]string{
		"pods": {"", "pods"}, "po": {"", "pods"}, "deployments": {"apps", "deployments"}, "deployments.apps": {"apps", "deployments"},
		"roles": {"rbac.authorization.k8s.io", "roles"}, "users": {"", "users"},
	}
	name := r.Resource
	if r.Group != "" {
		name += "." + r.Group
	}
	if gr, ok := m[name]; ok {
		return gr[0], gr[1], nil
	}
	return r.Group, r.Resource, errors.New(`the server doesn't have a resource type "` + r.Resource + `"`)
}

func TestRoleRules(t *testing.T) {
	o := RoleOptions{Verbs: []string{"get", "list", "get"}, Resources: []string{"po", "deployments.apps/scale", "pods", "widgets.example.com"},
		ResourceNames: []string{"a", "a", "b"}}
	rs := o.Normalize()
	rules := PolicyRules(served, o.Verbs, rs, o.ResourceNames, nil)
	got, _ := json.Marshal(rules)
	want := `[{"verbs":["get","list"],"apiGroups":[""],"resources":["pods"],"resourceNames":["a","b"]},` +
		`{"verbs":["get","list"],"apiGroups":["apps"],"resources":["deployments/scale"],"resourceNames":["a","b"]},` +
		`{"verbs":["get","list"],"apiGroups":["example.com"],"resources":["widgets"],"resourceNames":["a","b"]}]`
	if string(got) != want {
		t.Errorf("rules\n got %s\nwant %s", got, want)
	}
	star := RoleOptions{Verbs: []string{"get", "*"}, Resources: []string{"pods", "*"}}
	if rs := star.Normalize(); len(star.Verbs) != 1 || star.Verbs[0] != "*" || len(rs) != 1 || rs[0].Resource != "*" {
		t.Errorf("Normalize of * = %v %v, want * alone", star.Verbs, rs)
	}

	for _, c := range []struct {
		verbs []string
		res   []RuleResource
		err   string
	}{
		{[]string{"get"}, []RuleResource{{Resource: "pods"}}, ""},
		{[]string{"get"}, []RuleResource{{Resource: "widgets"}}, `the server doesn't have a resource type "widgets"`},
		{[]string{"bind"}, []RuleResource{{Resource: "roles", Group: "rbac.authorization.k8s.io"}}, ""},
		{[]string{"bind"}, []RuleResource{{Resource: "pods"}}, "can not perform 'bind' on 'pods' in group ''"},
		{[]string{"impersonate"}, []RuleResource{{Resource: "users"}}, ""},
		{[]string{"get"}, []RuleResource{{Group: "apps"}}, "resource must be specified if apiGroup/subresource specified"},
	} {
		err := CheckRuleResources(served, c.verbs, c.res)
		if (err == nil) != (c.err == "") || (err != nil && err.Error() != c.err) {
			t.Errorf("CheckRuleResources(%v, %v) = %v, want %q", c.verbs, c.res, err, c.err)
		}
	}
	if got := NonStandardVerbs([]string{"get", "frobnicate", "watch"}); len(got) != 1 || got[0] != "frobnicate" {
		t.Errorf("NonStandardVerbs = %v", got)
	}
	for urls, want := range map[string]string{"/healthz": "", "/logs/*": "", "*": "", "healthz": "nonResourceURL should start with /", "/a*/b": "nonResourceURL only supports wildcard matches when '*' is at the end"} {
		err := CheckNonResourceURLs([]string{"get"}, []string{urls})
		if (err == nil) != (want == "") || (err != nil && err.Error() != want) {
			t.Errorf("CheckNonResourceURLs(%q) = %v, want %q", urls, err, want)
		}
	}
	if err := CheckNonResourceURLs([]string{"list"}, []string{"/x"}); err == nil {
		t.Error("list on a non-resource URL passed")
	}
}

var _ runtime.Object = ClusterRole("x", nil, nil)
