package cli

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/konverge/konverge/cluster"
)

// The generators of roles, bindings, priority classes, quotas, pod
// disruption budgets and ingresses (kubectl create role|clusterrole|
// rolebinding|clusterrolebinding|priorityclass|quota|poddisruptionbudget|
// ingress).

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

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// ruleResource is one --resource: resource[.group][/subresource].
type ruleResource struct{ group, resource, sub string }

// roleFlags are the rule flags of create role and clusterrole.
type roleFlags struct {
	verbs, resources, resourceNames, nonResourceURLs []string
	aggregation                                      map[string]string
}

func (r *roleFlags) addFlags(cmd *cobra.Command, cluster bool) {
	fs := cmd.Flags()
	fs.StringSliceVar(&r.verbs, "verb", nil, "An action the rule allows on its resources (get, list, watch, ...)")
	if cluster {
		fs.StringSliceVar(&r.nonResourceURLs, "non-resource-url", nil, "A partial url that user should have access to.")
	}
	fs.StringSliceVar(&r.resources, "resource", nil, "A resource type the rule covers (resource.group/subresource)")
	fs.StringArrayVar(&r.resourceNames, "resource-name", nil, "Limit the rule to objects of this name (repeatable)")
	if cluster {
		r.aggregation = map[string]string{}
		fs.Var(newMapStringString(&r.aggregation), "aggregation-rule", "Labels of the cluster roles whose rules this one gathers (key=value,...).")
	}
}

// normalize removes duplicates as kubectl's Complete does; it returns the
// resources.
func (r *roleFlags) normalize() []ruleResource {
	verbs := []string{}
	for _, v := range r.verbs {
		if v == "*" {
			verbs = []string{"*"}
			break
		}
		if !containsString(verbs, v) {
			verbs = append(verbs, v)
		}
	}
	r.verbs = verbs
	var out []ruleResource
	for _, s := range r.resources {
		var rr ruleResource
		main, sub, hasSub := strings.Cut(s, "/")
		if hasSub {
			rr.sub = sub
		}
		res, group, hasGroup := strings.Cut(main, ".")
		if hasGroup {
			rr.group = group
		}
		rr.resource = res
		if rr.resource == "*" && !hasGroup && !hasSub {
			out = []ruleResource{rr}
			break
		}
		out = append(out, rr)
	}
	names := []string{}
	for _, n := range r.resourceNames {
		if !containsString(names, n) {
			names = append(names, n)
		}
	}
	r.resourceNames = names
	urls := []string{}
	for _, n := range r.nonResourceURLs {
		if !containsString(urls, n) {
			urls = append(urls, n)
		}
	}
	r.nonResourceURLs = urls
	return out
}

// resolve maps a rule's resource to its plural and group as the cluster
// serves them (short names expanded); unknown ones stay as written.
func resolveRuleResource(m cluster.Mapper, r ruleResource) (group, plural string, err error) {
	name := r.resource
	if r.group != "" {
		name += "." + r.group
	}
	res, ferr := m.Find(name)
	if ferr != nil {
		return r.group, r.resource, fmt.Errorf("the server doesn't have a resource type %q", r.resource)
	}
	return res.GVK.Group, res.Plural, nil
}

// validateResources checks the rule's resources against the cluster and
// the special verbs.
func validateRuleResources(m cluster.Mapper, verbs []string, rs []ruleResource) error {
	for _, r := range rs {
		if r.resource == "" {
			return errors.New("resource must be specified if apiGroup/subresource specified")
		}
		if r.resource == "*" {
			return nil
		}
		group, plural, err := resolveRuleResource(m, r)
		for _, v := range verbs {
			if grs, ok := specialVerbs[v]; ok {
				match := false
				for _, gr := range grs {
					if plural == gr[1] && group == gr[0] {
						match, err = true, nil
						break
					}
				}
				if !match {
					return fmt.Errorf("can not perform '%s' on '%s' in group '%s'", v, plural, group)
				}
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// policyRules builds the rules of a role: one per API group, in the
// groups' order.
func policyRules(m cluster.Mapper, verbs []string, rs []ruleResource, names, urls []string) []rbacv1.PolicyRule {
	byGroup := map[string][]string{}
	for _, r := range rs {
		group, plural, err := resolveRuleResource(m, r)
		if err != nil {
			group, plural = r.group, r.resource
		}
		if r.sub != "" {
			plural += "/" + r.sub
		}
		if !containsString(byGroup[group], plural) {
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

func newCreateRoleCmd(g *Globals) *cobra.Command {
	f := &generatorFlags{g: g}
	var r roleFlags
	cmd := &cobra.Command{
		Use:   "role NAME --verb=verb --resource=resource.group/subresource [--resource-name=resourcename] [--dry-run=server|client|none]",
		Short: "Create a role with one rule",
		Example: `  # A role that may read pods: get, list and watch them
  konverge create role pod-viewer --verb=get --verb=list --verb=watch --resource=pods`,
		RunE: func(cmd *cobra.Command, args []string) error {
			g.complete(cmd)
			name, err := f.oneName(args)
			if err != nil {
				return failOne(g.ErrOut, err)
			}
			rs := r.normalize()
			if _, _, err := f.check(); err != nil {
				return failOne(g.ErrOut, err)
			}
			ctx := cmd.Context()
			sess, err := g.openResourceSession(ctx)
			if err != nil {
				return failOne(g.ErrOut, err)
			}
			m := sess.Mapper()
			_ = sess.Close(ctx)
			if len(r.verbs) == 0 {
				return failOne(g.ErrOut, errors.New("at least one verb must be specified"))
			}
			for _, v := range r.verbs {
				if !containsString(validResourceVerbs, v) {
					fmt.Fprintf(g.ErrOut, "Warning: '%s' is not a standard resource verb\n", v)
				}
			}
			if len(rs) == 0 {
				return failOne(g.ErrOut, errors.New("at least one resource must be specified"))
			}
			if err := validateRuleResources(m, r.verbs, rs); err != nil {
				return failOne(g.ErrOut, err)
			}
			role := &rbacv1.Role{
				TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.namespace()},
				Rules:      policyRules(m, r.verbs, rs, r.resourceNames, nil),
			}
			return f.create(ctx, role, nil)
		},
	}
	f.addFlags(cmd, managerCreate)
	r.addFlags(cmd, false)
	return cmd
}

func newCreateClusterRoleCmd(g *Globals) *cobra.Command {
	f := &generatorFlags{g: g}
	var r roleFlags
	cmd := &cobra.Command{
		Use:   "clusterrole NAME --verb=verb --resource=resource.group [--resource-name=resourcename] [--dry-run=server|client|none]",
		Short: "Create a cluster-wide role",
		Example: `  # Reading pods in every namespace
  konverge create clusterrole pod-viewer --verb=get,list,watch --resource=pods

  # A role made of the rules of the cluster roles labelled example.com/metrics=true
  konverge create clusterrole metrics --aggregation-rule="example.com/metrics=true"`,
		RunE: func(cmd *cobra.Command, args []string) error {
			g.complete(cmd)
			name, err := f.oneName(args)
			if err != nil {
				return failOne(g.ErrOut, err)
			}
			rs := r.normalize()
			if _, _, err := f.check(); err != nil {
				return failOne(g.ErrOut, err)
			}
			ctx := cmd.Context()
			sess, err := g.openResourceSession(ctx)
			if err != nil {
				return failOne(g.ErrOut, err)
			}
			m := sess.Mapper()
			_ = sess.Close(ctx)
			role := &rbacv1.ClusterRole{
				TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
				ObjectMeta: metav1.ObjectMeta{Name: name},
			}
			if len(r.aggregation) > 0 {
				if len(r.nonResourceURLs) > 0 || len(r.verbs) > 0 || len(rs) > 0 || len(r.resourceNames) > 0 {
					return failOne(g.ErrOut, errors.New("aggregation rule must be specified without nonResourceURLs, verbs, resources or resourceNames"))
				}
				role.AggregationRule = &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: r.aggregation}}}
				return f.create(ctx, role, nil)
			}
			if len(r.verbs) == 0 {
				return failOne(g.ErrOut, errors.New("at least one verb must be specified"))
			}
			if len(rs) == 0 && len(r.nonResourceURLs) == 0 {
				return failOne(g.ErrOut, errors.New("one of resource or nonResourceURL must be specified"))
			}
			if len(rs) > 0 {
				for _, v := range r.verbs {
					if !containsString(validResourceVerbs, v) {
						fmt.Fprintf(g.ErrOut, "Warning: '%s' is not a standard resource verb\n", v)
					}
				}
				if err := validateRuleResources(m, r.verbs, rs); err != nil {
					return failOne(g.ErrOut, err)
				}
			}
			if len(r.nonResourceURLs) > 0 {
				for _, v := range r.verbs {
					if !containsString(validNonResourceVerbs, v) {
						return failOne(g.ErrOut, fmt.Errorf("invalid verb: '%s' for nonResourceURL", v))
					}
				}
				for _, u := range r.nonResourceURLs {
					if u == "*" {
						continue
					}
					if u == "" || !strings.HasPrefix(u, "/") {
						return failOne(g.ErrOut, errors.New("nonResourceURL should start with /"))
					}
					if strings.ContainsRune(u[:len(u)-1], '*') {
						return failOne(g.ErrOut, errors.New("nonResourceURL only supports wildcard matches when '*' is at the end"))
					}
				}
			}
			role.Rules = policyRules(m, r.verbs, rs, r.resourceNames, r.nonResourceURLs)
			return f.create(ctx, role, nil)
		},
	}
	f.addFlags(cmd, managerCreate)
	r.addFlags(cmd, true)
	return cmd
}

// subjectFlags are --user, --group and --serviceaccount of bindings.
type subjectFlags struct{ users, groups, serviceAccounts []string }

func (s *subjectFlags) addFlags(cmd *cobra.Command, what string) {
	fs := cmd.Flags()
	fs.StringArrayVar(&s.users, "user", nil, "Usernames to bind to the "+what+". The flag can be repeated to add multiple users.")
	fs.StringArrayVar(&s.groups, "group", nil, "Groups to bind to the "+what+". The flag can be repeated to add multiple groups.")
	fs.StringArrayVar(&s.serviceAccounts, "serviceaccount", nil, "Service accounts to bind to the "+what+", in the format <namespace>:<name>. The flag can be repeated to add multiple service accounts.")
}

func (s *subjectFlags) subjects() ([]rbacv1.Subject, error) {
	var out []rbacv1.Subject
	for _, u := range s.users {
		out = append(out, rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: u})
	}
	for _, g := range s.groups {
		out = append(out, rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: g})
	}
	for _, sa := range s.serviceAccounts {
		t := strings.Split(sa, ":")
		if len(t) != 2 || t[0] == "" || t[1] == "" {
			return nil, errors.New("serviceaccount must be <namespace>:<name>")
		}
		out = append(out, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: t[0], Name: t[1]})
	}
	return out, nil
}

func newCreateRoleBindingCmd(g *Globals) *cobra.Command {
	f := &generatorFlags{g: g}
	var s subjectFlags
	var role, clusterRole string
	cmd := &cobra.Command{
		Use:   "rolebinding NAME --clusterrole=NAME|--role=NAME [--user=username] [--group=groupname] [--serviceaccount=namespace:serviceaccountname] [--dry-run=server|client|none]",
		Short: "Grant a role or cluster role within a namespace",
		Example: `  # Let alice and the group ops administer the current namespace
  konverge create rolebinding ops-admin --clusterrole=admin --user=alice --group=ops`,
		RunE: func(cmd *cobra.Command, args []string) error {
			g.complete(cmd)
			name, err := f.oneName(args)
			if err != nil {
				return failOne(g.ErrOut, err)
			}
			if (clusterRole == "") == (role == "") {
				return failOne(g.ErrOut, errors.New("exactly one of clusterrole or role must be specified"))
			}
			rb := &rbacv1.RoleBinding{
				TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.namespace()},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role},
			}
			if clusterRole != "" {
				rb.RoleRef = rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterRole}
			}
			if rb.Subjects, err = s.subjects(); err != nil {
				return failOne(g.ErrOut, err)
			}
			return f.create(cmd.Context(), rb, wrapError("failed to create rolebinding: %v"))
		},
	}
	f.addFlags(cmd, managerCreate)
	cmd.Flags().StringVar(&clusterRole, "clusterrole", "", "The cluster role the binding grants")
	cmd.Flags().StringVar(&role, "role", "", "The role the binding grants")
	s.addFlags(cmd, "role")
	return cmd
}

func newCreateClusterRoleBindingCmd(g *Globals) *cobra.Command {
	f := &generatorFlags{g: g}
	var s subjectFlags
	var clusterRole string
	cmd := &cobra.Command{
		Use:   "clusterrolebinding NAME --clusterrole=NAME [--user=username] [--group=groupname] [--serviceaccount=namespace:serviceaccountname] [--dry-run=server|client|none]",
		Short: "Grant a cluster role in every namespace",
		Example: `  # Make alice and the group ops administrators of the whole cluster
  konverge create clusterrolebinding ops-root --clusterrole=cluster-admin --user=alice --group=ops`,
		RunE: func(cmd *cobra.Command, args []string) error {
			g.complete(cmd)
			name, err := f.oneName(args)
			if err != nil {
				return failOne(g.ErrOut, err)
			}
			crb := &rbacv1.ClusterRoleBinding{
				TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"},
				ObjectMeta: metav1.ObjectMeta{Name: name},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterRole},
			}
			if crb.Subjects, err = s.subjects(); err != nil {
				return failOne(g.ErrOut, err)
			}
			return f.create(cmd.Context(), crb, wrapError("failed to create clusterrolebinding: %v"))
		},
	}
	f.addFlags(cmd, managerCreate)
	cmd.Flags().StringVar(&clusterRole, "clusterrole", "", "The cluster role the binding grants")
	_ = cmd.MarkFlagRequired("clusterrole")
	s.addFlags(cmd, "clusterrole")
	return cmd
}

func newCreatePriorityClassCmd(g *Globals) *cobra.Command {
	f := &generatorFlags{g: g}
	var val int32
	var globalDefault bool
	var description, preemption string
	cmd := &cobra.Command{
		Use:     "priorityclass NAME --value=VALUE --global-default=BOOL [--dry-run=server|client|none]",
		Aliases: []string{"pc"},
		Short:   "Create a priority class",
		Example: `  # Pods of class urgent are scheduled before those of lower values
  konverge create priorityclass urgent --value=1000 --description="user-facing services"`,
		RunE: func(cmd *cobra.Command, args []string) error {
			g.complete(cmd)
			name, err := f.oneName(args)
			if err != nil {
				return failOne(g.ErrOut, err)
			}
			policy := corev1.PreemptionPolicy(preemption)
			pc := &schedulingv1.PriorityClass{
				TypeMeta:   metav1.TypeMeta{APIVersion: "scheduling.k8s.io/v1", Kind: "PriorityClass"},
				ObjectMeta: metav1.ObjectMeta{Name: name},
				Value:      val, GlobalDefault: globalDefault, Description: description, PreemptionPolicy: &policy,
			}
			return f.create(cmd.Context(), pc, wrapError("failed to create priorityclass: %v"))
		},
	}
	f.addFlags(cmd, managerCreate)
	fs := cmd.Flags()
	fs.Int32Var(&val, "value", 0, "The priority pods of this class get.")
	fs.BoolVar(&globalDefault, "global-default", false, "global-default specifies whether this PriorityClass should be considered as the default priority.")
	fs.StringVar(&description, "description", "", "description is an arbitrary string that usually provides guidelines on when this priority class should be used.")
	fs.StringVar(&preemption, "preemption-policy", "PreemptLowerPriority", "preemption-policy is the policy for preempting pods with lower priority.")
	return cmd
}

func newCreateQuotaCmd(g *Globals) *cobra.Command {
	f := &generatorFlags{g: g}
	var hard, scopes string
	cmd := &cobra.Command{
		Use:     "quota NAME [--hard=key1=value1,key2=value2] [--scopes=Scope1,Scope2] [--dry-run=server|client|none]",
		Aliases: []string{"resourcequota"},
		Short:   "Create a resource quota",
		Example: `  # At most 4 CPUs, 8Gi of memory and 20 pods in the namespace
  konverge create quota team --hard=cpu=4,memory=8Gi,pods=20`,
		RunE: func(cmd *cobra.Command, args []string) error {
			g.complete(cmd)
			name, err := f.oneName(args)
			if err != nil {
				return failOne(g.ErrOut, err)
			}
			q := &corev1.ResourceQuota{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ResourceQuota"},
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.namespace()},
			}
			if hard != "" {
				q.Spec.Hard = corev1.ResourceList{}
				for _, stmt := range strings.Split(hard, ",") {
					parts := strings.Split(stmt, "=")
					if len(parts) != 2 {
						//lint:ignore ST1005 kubectl's message, word for word (users and scripts match it)
						return failOne(g.ErrOut, fmt.Errorf("Invalid argument syntax %v, expected <resource>=<value>", stmt))
					}
					qty, err := resource.ParseQuantity(parts[1])
					if err != nil {
						return failOne(g.ErrOut, err)
					}
					q.Spec.Hard[corev1.ResourceName(parts[0])] = qty
				}
			}
			if scopes != "" {
				for _, s := range strings.Split(scopes, ",") {
					if s == "" {
						return failOne(g.ErrOut, errors.New(`invalid resource quota scope ""`))
					}
					q.Spec.Scopes = append(q.Spec.Scopes, corev1.ResourceQuotaScope(s))
				}
			}
			return f.create(cmd.Context(), q, wrapError("failed to create quota: %v"))
		},
	}
	f.addFlags(cmd, managerCreate)
	cmd.Flags().StringVar(&hard, "hard", "", "The limits, as resource=quantity pairs separated by commas.")
	cmd.Flags().StringVar(&scopes, "scopes", "", "Scopes (comma-separated) an object must match, all of them, to count against the quota.")
	return cmd
}

func newCreatePDBCmd(g *Globals) *cobra.Command {
	f := &generatorFlags{g: g}
	var minAvailable, maxUnavailable, selector string
	cmd := &cobra.Command{
		Use:     "poddisruptionbudget NAME --selector=SELECTOR --min-available=N [--dry-run=server|client|none]",
		Aliases: []string{"pdb"},
		Short:   "Create a pod disruption budget",
		Example: `  # Keep at least two of the pods labelled app=web running through voluntary disruptions
  konverge create poddisruptionbudget web --selector=app=web --min-available=2`,
		RunE: func(cmd *cobra.Command, args []string) error {
			g.complete(cmd)
			name, err := f.oneName(args)
			if err != nil {
				return failOne(g.ErrOut, err)
			}
			re := regexp.MustCompile(`^[0-9]+%?$`)
			switch {
			case selector == "":
				return failOne(g.ErrOut, errors.New("a selector must be specified"))
			case maxUnavailable == "" && minAvailable == "":
				return failOne(g.ErrOut, errors.New("one of min-available or max-unavailable must be specified"))
			case maxUnavailable != "" && minAvailable != "":
				return failOne(g.ErrOut, errors.New("min-available and max-unavailable cannot be both specified"))
			case minAvailable != "" && !re.MatchString(minAvailable):
				return failOne(g.ErrOut, errors.New("invalid format specified for min-available"))
			case maxUnavailable != "" && !re.MatchString(maxUnavailable):
				return failOne(g.ErrOut, errors.New("invalid format specified for max-unavailable"))
			}
			sel, err := metav1.ParseToLabelSelector(selector)
			if err != nil {
				return failOne(g.ErrOut, err)
			}
			pdb := &policyv1.PodDisruptionBudget{
				TypeMeta:   metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"},
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.namespace()},
			}
			pdb.Spec.Selector = sel
			if minAvailable != "" {
				v := intstr.Parse(minAvailable)
				pdb.Spec.MinAvailable = &v
			} else {
				v := intstr.Parse(maxUnavailable)
				pdb.Spec.MaxUnavailable = &v
			}
			return f.create(cmd.Context(), pdb, wrapError("failed to create poddisruptionbudgets: %v"))
		},
	}
	f.addFlags(cmd, managerCreate)
	fs := cmd.Flags()
	fs.StringVar(&minAvailable, "min-available", "", "The minimum number or percentage of available pods this budget requires.")
	fs.StringVar(&maxUnavailable, "max-unavailable", "", "The maximum number or percentage of unavailable pods this budget requires.")
	fs.StringVar(&selector, "selector", "", "A label selector to use for this budget. Only equality-based selector requirements are supported.")
	return cmd
}

var ingressRuleRegexp = regexp.MustCompile(`^(?P<host>[\w\*\-\.]*)(?P<path>/.*)=(?P<svcname>[\w\-]+):(?P<svcport>[\w\-]+)` +
	`(,(?P<istls>tls)=?(?P<secretname>[\w\-]+)?)?`)

func newCreateIngressCmd(g *Globals) *cobra.Command {
	f := &generatorFlags{g: g}
	var class, defaultBackend string
	var rules, annotations []string
	cmd := &cobra.Command{
		Use:     "ingress NAME --rule=host/path=service:port[,tls[=secret]] ",
		Aliases: []string{"ing"},
		Short:   "Create an ingress",
		Example: `  # Send example.com/api to port 8080 of service api, over TLS with secret example-tls
  konverge create ingress api --rule="example.com/api=api:8080,tls=example-tls"`,
		RunE: func(cmd *cobra.Command, args []string) error {
			g.complete(cmd)
			name, err := f.oneName(args)
			if err != nil {
				return failOne(g.ErrOut, err)
			}
			if defaultBackend == "" && len(rules) == 0 {
				return failOne(g.ErrOut, errors.New("not enough information provided: every ingress has to either specify a default-backend (which catches all traffic) or a list of rules (which catch specific paths)"))
			}
			for _, r := range rules {
				if !ingressRuleRegexp.MatchString(r) {
					return failOne(g.ErrOut, fmt.Errorf("rule %s is invalid and should be in format host/path=svcname:svcport[,tls[=secret]]", r))
				}
			}
			ann := map[string]string{}
			for _, a := range annotations {
				k, v, ok := strings.Cut(a, "=")
				if !ok {
					return failOne(g.ErrOut, fmt.Errorf("annotation %s is invalid and should be in format key=[value]", a))
				}
				ann[k] = v
			}
			if defaultBackend != "" && len(strings.Split(defaultBackend, ":")) != 2 {
				return failOne(g.ErrOut, errors.New("default-backend should be in format servicename:serviceport"))
			}
			ing := &networkingv1.Ingress{
				TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "Ingress"},
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.namespace(), Annotations: ann},
			}
			if class != "" {
				ing.Spec.IngressClassName = &class
			}
			if defaultBackend != "" {
				b := ingressBackend(defaultBackend)
				ing.Spec.DefaultBackend = &b
			}
			ing.Spec.TLS = ingressTLS(rules)
			ing.Spec.Rules = ingressRules(rules)
			return f.create(cmd.Context(), ing, wrapError("failed to create ingress: %v"))
		},
	}
	f.addFlags(cmd, managerCreate)
	fs := cmd.Flags()
	fs.StringVar(&class, "class", "", "The ingress class that serves the ingress")
	fs.StringArrayVar(&rules, "rule", nil, "A rule host/path=service:port, optionally followed by ,tls or ,tls=SECRET; a path ending in * is a Prefix path.")
	fs.StringVar(&defaultBackend, "default-backend", "", "Default service for backend, in format of svcname:port")
	fs.StringArrayVar(&annotations, "annotation", nil, "An annotation of the ingress, as key=value (repeatable)")
	return cmd
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
		idx := -1
		for i, t := range out {
			if t.SecretName == secret {
				idx = i
				break
			}
		}
		if present[host] {
			continue
		}
		if idx > -1 {
			out[idx].Hosts = append(out[idx].Hosts, host)
			present[host] = true
			continue
		}
		var t networkingv1.IngressTLS
		if host != "" {
			t.Hosts = append(t.Hosts, host)
		}
		if secret != "" {
			t.SecretName = secret
		}
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
		idx := -1
		for i, r := range out {
			if r.Host == host {
				idx = i
				break
			}
		}
		if idx > -1 {
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
