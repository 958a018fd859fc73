package generate

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// SubjectOptions are the --user, --group and --serviceaccount
// (NAMESPACE:NAME) of bindings.
type SubjectOptions struct{ Users, Groups, ServiceAccounts []string }

// Subjects are the subjects of o: users, then groups, then service
// accounts.
func Subjects(o SubjectOptions) ([]rbacv1.Subject, error) {
	var out []rbacv1.Subject
	for _, u := range o.Users {
		out = append(out, rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: u})
	}
	for _, g := range o.Groups {
		out = append(out, rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: g})
	}
	for _, sa := range o.ServiceAccounts {
		t := strings.Split(sa, ":")
		if len(t) != 2 || t[0] == "" || t[1] == "" {
			return nil, errors.New("serviceaccount must be <namespace>:<name>")
		}
		out = append(out, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: t[0], Name: t[1]})
	}
	return out, nil
}

// RoleBindingOptions are create rolebinding's: exactly one of Role and
// ClusterRole.
type RoleBindingOptions struct {
	Name, Namespace   string
	Role, ClusterRole string
	Subjects          SubjectOptions
}

// RoleBinding is the RoleBinding of o.
func RoleBinding(o RoleBindingOptions) (*rbacv1.RoleBinding, error) {
	if (o.ClusterRole == "") == (o.Role == "") {
		return nil, errors.New("exactly one of clusterrole or role must be specified")
	}
	rb := &rbacv1.RoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: o.Name, Namespace: o.Namespace},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: o.Role},
	}
	if o.ClusterRole != "" {
		rb.RoleRef = rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: o.ClusterRole}
	}
	var err error
	if rb.Subjects, err = Subjects(o.Subjects); err != nil {
		return nil, err
	}
	return rb, nil
}

// ClusterRoleBinding is the ClusterRoleBinding of create
// clusterrolebinding.
func ClusterRoleBinding(name, clusterRole string, subjects SubjectOptions) (*rbacv1.ClusterRoleBinding, error) {
	crb := &rbacv1.ClusterRoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterRole},
	}
	var err error
	if crb.Subjects, err = Subjects(subjects); err != nil {
		return nil, err
	}
	return crb, nil
}

// PriorityClassOptions are create priorityclass's.
type PriorityClassOptions struct {
	Name             string
	Value            int32
	GlobalDefault    bool
	Description      string
	PreemptionPolicy string
}

// PriorityClass is the PriorityClass of o.
func PriorityClass(o PriorityClassOptions) *schedulingv1.PriorityClass {
	policy := corev1.PreemptionPolicy(o.PreemptionPolicy)
	return &schedulingv1.PriorityClass{
		TypeMeta:   metav1.TypeMeta{APIVersion: "scheduling.k8s.io/v1", Kind: "PriorityClass"},
		ObjectMeta: metav1.ObjectMeta{Name: o.Name},
		Value:      o.Value, GlobalDefault: o.GlobalDefault, Description: o.Description, PreemptionPolicy: &policy,
	}
}

// QuotaOptions are create quota's: Hard is "resource=quantity,...",
// Scopes "Scope,...".
type QuotaOptions struct {
	Name, Namespace string
	Hard, Scopes    string
}

// Quota is the ResourceQuota of o.
func Quota(o QuotaOptions) (*corev1.ResourceQuota, error) {
	q := &corev1.ResourceQuota{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ResourceQuota"},
		ObjectMeta: metav1.ObjectMeta{Name: o.Name, Namespace: o.Namespace},
	}
	if o.Hard != "" {
		q.Spec.Hard = corev1.ResourceList{}
		for _, stmt := range strings.Split(o.Hard, ",") {
			parts := strings.Split(stmt, "=")
			if len(parts) != 2 {
				//lint:ignore ST1005 kubectl's message, word for word (users and scripts match it)
				return nil, fmt.Errorf("Invalid argument syntax %v, expected <resource>=<value>", stmt)
			}
			qty, err := resource.ParseQuantity(parts[1])
			if err != nil {
				return nil, err
			}
			q.Spec.Hard[corev1.ResourceName(parts[0])] = qty
		}
	}
	if o.Scopes != "" {
		for _, s := range strings.Split(o.Scopes, ",") {
			if s == "" {
				return nil, errors.New(`invalid resource quota scope ""`)
			}
			q.Spec.Scopes = append(q.Spec.Scopes, corev1.ResourceQuotaScope(s))
		}
	}
	return q, nil
}

// PDBOptions are create poddisruptionbudget's: one of MinAvailable and
// MaxUnavailable, a number or a percentage.
type PDBOptions struct {
	Name, Namespace              string
	Selector                     string
	MinAvailable, MaxUnavailable string
}

var pdbCount = regexp.MustCompile(`^[0-9]+%?$`)

// PDB is the PodDisruptionBudget of o.
func PDB(o PDBOptions) (*policyv1.PodDisruptionBudget, error) {
	switch {
	case o.Selector == "":
		return nil, errors.New("a selector must be specified")
	case o.MaxUnavailable == "" && o.MinAvailable == "":
		return nil, errors.New("one of min-available or max-unavailable must be specified")
	case o.MaxUnavailable != "" && o.MinAvailable != "":
		return nil, errors.New("min-available and max-unavailable cannot be both specified")
	case o.MinAvailable != "" && !pdbCount.MatchString(o.MinAvailable):
		return nil, errors.New("invalid format specified for min-available")
	case o.MaxUnavailable != "" && !pdbCount.MatchString(o.MaxUnavailable):
		return nil, errors.New("invalid format specified for max-unavailable")
	}
	sel, err := metav1.ParseToLabelSelector(o.Selector)
	if err != nil {
		return nil, err
	}
	pdb := &policyv1.PodDisruptionBudget{
		TypeMeta:   metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"},
		ObjectMeta: metav1.ObjectMeta{Name: o.Name, Namespace: o.Namespace},
	}
	pdb.Spec.Selector = sel
	if o.MinAvailable != "" {
		v := intstr.Parse(o.MinAvailable)
		pdb.Spec.MinAvailable = &v
	} else {
		v := intstr.Parse(o.MaxUnavailable)
		pdb.Spec.MaxUnavailable = &v
	}
	return pdb, nil
}

// IngressOptions are create ingress's. A rule is
// host/path=service:port[,tls[=secret]]; a path ending in * is a prefix.
type IngressOptions struct {
	Name, Namespace       string
	Class, DefaultBackend string
	Rules, Annotations    []string
}

var ingressRuleRegexp = regexp.MustCompile(`^(?P<host>[\w\*\-\.]*)(?P<path>/.*)=(?P<svcname>[\w\-]+):(?P<svcport>[\w\-]+)` +
	`(,(?P<istls>tls)=?(?P<secretname>[\w\-]+)?)?`)

// Ingress is the Ingress of o: its rules grouped by host, the TLS hosts
// grouped by secret.
func Ingress(o IngressOptions) (*networkingv1.Ingress, error) {
	if o.DefaultBackend == "" && len(o.Rules) == 0 {
		return nil, errors.New("not enough information provided: every ingress has to either specify a default-backend (which catches all traffic) or a list of rules (which catch specific paths)")
	}
	for _, r := range o.Rules {
		if !ingressRuleRegexp.MatchString(r) {
			return nil, fmt.Errorf("rule %s is invalid and should be in format host/path=svcname:svcport[,tls[=secret]]", r)
		}
	}
	ann := map[string]string{}
	for _, a := range o.Annotations {
		k, v, ok := strings.Cut(a, "=")
		if !ok {
			return nil, fmt.Errorf("annotation %s is invalid and should be in format key=[value]", a)
		}
		ann[k] = v
	}
	if o.DefaultBackend != "" && len(strings.Split(o.DefaultBackend, ":")) != 2 {
		return nil, errors.New("default-backend should be in format servicename:serviceport")
	}
	ing := &networkingv1.Ingress{
		TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "Ingress"},
		ObjectMeta: metav1.ObjectMeta{Name: o.Name, Namespace: o.Namespace, Annotations: ann},
	}
	if o.Class != "" {
		class := o.Class
		ing.Spec.IngressClassName = &class
	}
	if o.DefaultBackend != "" {
		b := ingressBackend(o.DefaultBackend)
		ing.Spec.DefaultBackend = &b
	}
	ing.Spec.TLS = ingressTLS(o.Rules)
	ing.Spec.Rules = ingressRules(o.Rules)
	return ing, nil
}

func ingressTLS(rules []string) []networkingv1.IngressTLS {
	present := map[string]bool{}
	out := []networkingv1.IngressTLS{}
	for _, rule := range rules {
		parts := strings.Split(rule, ",")
		if len(parts) != 2 {
			continue
		}
		host, _, _ := strings.Cut(rule, "/")
		secret := ""
		if s := strings.Split(parts[1], "="); len(s) > 1 {
			secret = s[1]
		}
		if present[host] {
			continue
		}
		if idx := slices.IndexFunc(out, func(t networkingv1.IngressTLS) bool { return t.SecretName == secret }); idx > -1 {
			out[idx].Hosts = append(out[idx].Hosts, host)
			present[host] = true
			continue
		}
		var t networkingv1.IngressTLS
		if host != "" {
			t.Hosts = append(t.Hosts, host)
		}
		t.SecretName = secret
		if t.SecretName != "" || len(t.Hosts) > 0 {
			out = append(out, t)
		}
		present[host] = true
	}
	return out
}

func ingressRules(rules []string) []networkingv1.IngressRule {
	out := []networkingv1.IngressRule{}
	for _, rule := range rules {
		noTLS := strings.Split(rule, ",")[0]
		host, pathSvc, _ := strings.Cut(noTLS, "/")
		p := ingressPath(pathSvc)
		if idx := slices.IndexFunc(out, func(r networkingv1.IngressRule) bool { return r.Host == host }); idx > -1 {
			out[idx].HTTP.Paths = append(out[idx].HTTP.Paths, p)
			continue
		}
		out = append(out, networkingv1.IngressRule{Host: host, IngressRuleValue: networkingv1.IngressRuleValue{
			HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{p}},
		}})
	}
	return out
}

func ingressPath(pathSvc string) networkingv1.HTTPIngressPath {
	parts := strings.Split(pathSvc, "=")
	p := "/" + parts[0]
	pt := networkingv1.PathTypeExact
	if strings.HasSuffix(p, "*") {
		pt = networkingv1.PathTypePrefix
		p = p[:len(p)-1]
	}
	return networkingv1.HTTPIngressPath{Path: p, PathType: &pt, Backend: ingressBackend(parts[1])}
}

func ingressBackend(svc string) networkingv1.IngressBackend {
	parts := strings.Split(svc, ":")
	var port networkingv1.ServiceBackendPort
	if p := intstr.Parse(parts[1]); p.Type == intstr.Int {
		port.Number = p.IntVal
	} else {
		port.Name = p.StrVal
	}
	return networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: parts[0], Port: port}}
}

// The rules of roles and cluster roles.

var (
	validResourceVerbs    = []string{"*", "get", "delete", "list", "create", "update", "patch", "watch", "proxy", "deletecollection", "use", "bind", "escalate", "impersonate"}
	validNonResourceVerbs = []string{"*", "get", "post", "put", "delete", "patch", "head", "options"}
	// specialVerbs apply to some resources only.
	specialVerbs = map[string][][2]string{
		"use":         {{"policy", "podsecuritypolicies"}, {"extensions", "podsecuritypolicies"}},
		"bind":        {{"rbac.authorization.k8s.io", "roles"}, {"rbac.authorization.k8s.io", "clusterroles"}},
		"escalate":    {{"rbac.authorization.k8s.io", "roles"}, {"rbac.authorization.k8s.io", "clusterroles"}},
		"impersonate": {{"", "users"}, {"", "serviceaccounts"}, {"", "groups"}, {"authentication.k8s.io", "userextras"}},
	}
)

// RuleResource is one --resource: resource[.group][/subresource].
type RuleResource struct{ Group, Resource, Sub string }

// Resolver maps a rule's resource to its group and plural as the cluster
// serves them (short names expanded). A resource the cluster does not
// serve is an error.
type Resolver func(RuleResource) (group, plural string, err error)

// RoleOptions are the rule flags of create role and clusterrole.
type RoleOptions struct {
	Verbs, Resources, ResourceNames, NonResourceURLs []string
	// Aggregation are a cluster role's --aggregation-rule labels.
	Aggregation map[string]string
}

// Normalize drops duplicates as kubectl's Complete does (a "*" verb or
// resource stands for all) and returns the resources parsed.
func (r *RoleOptions) Normalize() []RuleResource {
	verbs := []string{}
	for _, v := range r.Verbs {
		if v == "*" {
			verbs = []string{"*"}
			break
		}
		if !slices.Contains(verbs, v) {
			verbs = append(verbs, v)
		}
	}
	r.Verbs = verbs
	var out []RuleResource
	for _, s := range r.Resources {
		var rr RuleResource
		main, sub, hasSub := strings.Cut(s, "/")
		if hasSub {
			rr.Sub = sub
		}
		res, group, hasGroup := strings.Cut(main, ".")
		if hasGroup {
			rr.Group = group
		}
		rr.Resource = res
		if rr.Resource == "*" && !hasGroup && !hasSub {
			out = []RuleResource{rr}
			break
		}
		out = append(out, rr)
	}
	r.ResourceNames = unique(r.ResourceNames)
	r.NonResourceURLs = unique(r.NonResourceURLs)
	return out
}

func unique(list []string) []string {
	out := []string{}
	for _, n := range list {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// NonStandardVerbs are the verbs of a rule on resources that kubectl
// warns about.
func NonStandardVerbs(verbs []string) []string {
	var out []string
	for _, v := range verbs {
		if !slices.Contains(validResourceVerbs, v) {
			out = append(out, v)
		}
	}
	return out
}

// CheckRuleResources checks the rule's resources against the cluster
// (through resolve) and the verbs that apply to some resources only.
func CheckRuleResources(resolve Resolver, verbs []string, rs []RuleResource) error {
	for _, r := range rs {
		if r.Resource == "" {
			return errors.New("resource must be specified if apiGroup/subresource specified")
		}
		if r.Resource == "*" {
			return nil
		}
		group, plural, err := resolve(r)
		for _, v := range verbs {
			grs, ok := specialVerbs[v]
			if !ok {
				continue
			}
			if !slices.Contains(grs, [2]string{group, plural}) {
				return fmt.Errorf("can not perform '%s' on '%s' in group '%s'", v, plural, group)
			}
			err = nil
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// CheckNonResourceURLs checks a cluster role's --non-resource-url and the
// verbs that apply to them.
func CheckNonResourceURLs(verbs, urls []string) error {
	for _, v := range verbs {
		if !slices.Contains(validNonResourceVerbs, v) {
			return fmt.Errorf("invalid verb: '%s' for nonResourceURL", v)
		}
	}
	for _, u := range urls {
		if u == "*" {
			continue
		}
		if u == "" || !strings.HasPrefix(u, "/") {
			return errors.New("nonResourceURL should start with /")
		}
		if strings.ContainsRune(u[:len(u)-1], '*') {
			return errors.New("nonResourceURL only supports wildcard matches when '*' is at the end")
		}
	}
	return nil
}

// PolicyRules are the rules of a role: one per API group, in the groups'
// order, then one for the non-resource URLs. A resource resolve does not
// know stays as written.
func PolicyRules(resolve Resolver, verbs []string, rs []RuleResource, names, urls []string) []rbacv1.PolicyRule {
	byGroup := map[string][]string{}
	for _, r := range rs {
		group, plural, err := resolve(r)
		if err != nil {
			group, plural = r.Group, r.Resource
		}
		if r.Sub != "" {
			plural += "/" + r.Sub
		}
		if !slices.Contains(byGroup[group], plural) {
			byGroup[group] = append(byGroup[group], plural)
		}
	}
	groups := make([]string, 0, len(byGroup))
	for g := range byGroup {
		groups = append(groups, g)
	}
	sort.Strings(groups)
	rules := []rbacv1.PolicyRule{}
	for _, g := range groups {
		rules = append(rules, rbacv1.PolicyRule{Verbs: verbs, Resources: byGroup[g], APIGroups: []string{g}, ResourceNames: names})
	}
	if len(urls) > 0 {
		rules = append(rules, rbacv1.PolicyRule{Verbs: verbs, NonResourceURLs: urls})
	}
	return rules
}

// Role is a Role of rules.
func Role(name, namespace string, rules []rbacv1.PolicyRule) *rbacv1.Role {
	return &rbacv1.Role{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Rules:      rules,
	}
}

// ClusterRole is a ClusterRole of rules, or with an aggregation rule
// when aggregation is not empty.
func ClusterRole(name string, rules []rbacv1.PolicyRule, aggregation map[string]string) *rbacv1.ClusterRole {
	role := &rbacv1.ClusterRole{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules:      rules,
	}
	if len(aggregation) > 0 {
		role.AggregationRule = &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: aggregation}}}
	}
	return role
}
