package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/internal/cli/generate"
)

// The generators of roles, bindings, priority classes, quotas, pod
// disruption budgets and ingresses (kubectl create role|clusterrole|
// rolebinding|clusterrolebinding|priorityclass|quota|poddisruptionbudget|
// ingress).

// roleFlags registers the rule flags of create role and clusterrole.
func roleFlags(cmd *cobra.Command, r *generate.RoleOptions, cluster bool) {
	fs := cmd.Flags()
	fs.StringSliceVar(&r.Verbs, "verb", nil, "An action the rule allows on its resources (get, list, watch, ...)")
	if cluster {
		fs.StringSliceVar(&r.NonResourceURLs, "non-resource-url", nil, "A partial url that user should have access to.")
	}
	fs.StringSliceVar(&r.Resources, "resource", nil, "A resource type the rule covers (resource.group/subresource)")
	fs.StringArrayVar(&r.ResourceNames, "resource-name", nil, "Limit the rule to objects of this name (repeatable)")
	if cluster {
		r.Aggregation = map[string]string{}
		fs.Var(newMapStringString(&r.Aggregation), "aggregation-rule", "Labels of the cluster roles whose rules this one gathers (key=value,...).")
	}
}

// ruleResolver resolves rule resources with the cluster's mapper.
func ruleResolver(m cluster.Mapper) generate.Resolver {
	return func(r generate.RuleResource) (string, string, error) {
		name := r.Resource
		if r.Group != "" {
			name += "." + r.Group
		}
		res, err := m.Find(name)
		if err != nil {
			return r.Group, r.Resource, fmt.Errorf("the server doesn't have a resource type %q", r.Resource)
		}
		return res.GVK.Group, res.Plural, nil
	}
}

// roleResolver checks the shared flags (before the cluster is asked, as
// kubectl does) and returns the resolver of the cluster's resources.
func roleResolver(ctx context.Context, f *generatorFlags) (generate.Resolver, error) {
	if _, _, err := f.check(); err != nil {
		return nil, err
	}
	sess, err := f.g.openResourceSession(ctx)
	if err != nil {
		return nil, err
	}
	m := sess.Mapper()
	_ = sess.Close(ctx)
	return ruleResolver(m), nil
}

// warnVerbs prints kubectl's warning for each verb that is not a
// standard resource verb.
func warnVerbs(w io.Writer, verbs []string) {
	for _, v := range generate.NonStandardVerbs(verbs) {
		fmt.Fprintf(w, "Warning: '%s' is not a standard resource verb\n", v)
	}
}

func newCreateRoleCmd(g *Globals) *cobra.Command {
	var r generate.RoleOptions
	return newGeneratorCmd(g, generator{
		use:   "role NAME --verb=verb --resource=resource.group/subresource [--resource-name=resourcename] [--dry-run=server|client|none]",
		short: "Create a role with one rule",
		example: `  # A role that may read pods: get, list and watch them
  konverge create role pod-viewer --verb=get --verb=list --verb=watch --resource=pods`,
		flags: func(cmd *cobra.Command) { roleFlags(cmd, &r, false) },
		build: func(ctx context.Context, f *generatorFlags, name string, _ []string) (runtime.Object, error) {
			rs := r.Normalize()
			resolve, err := roleResolver(ctx, f)
			if err != nil {
				return nil, err
			}
			if len(r.Verbs) == 0 {
				return nil, errors.New("at least one verb must be specified")
			}
			warnVerbs(g.ErrOut, r.Verbs)
			if len(rs) == 0 {
				return nil, errors.New("at least one resource must be specified")
			}
			if err := generate.CheckRuleResources(resolve, r.Verbs, rs); err != nil {
				return nil, err
			}
			return generate.Role(name, f.namespace(), generate.PolicyRules(resolve, r.Verbs, rs, r.ResourceNames, nil)), nil
		},
	})
}

func newCreateClusterRoleCmd(g *Globals) *cobra.Command {
	var r generate.RoleOptions
	return newGeneratorCmd(g, generator{
		use:   "clusterrole NAME --verb=verb --resource=resource.group [--resource-name=resourcename] [--dry-run=server|client|none]",
		short: "Create a cluster-wide role",
		example: `  # Reading pods in every namespace
  konverge create clusterrole pod-viewer --verb=get,list,watch --resource=pods

  # A role made of the rules of the cluster roles labelled example.com/metrics=true
  konverge create clusterrole metrics --aggregation-rule="example.com/metrics=true"`,
		flags: func(cmd *cobra.Command) { roleFlags(cmd, &r, true) },
		build: func(ctx context.Context, f *generatorFlags, name string, _ []string) (runtime.Object, error) {
			rs := r.Normalize()
			resolve, err := roleResolver(ctx, f)
			if err != nil {
				return nil, err
			}
			if len(r.Aggregation) > 0 {
				if len(r.NonResourceURLs) > 0 || len(r.Verbs) > 0 || len(rs) > 0 || len(r.ResourceNames) > 0 {
					return nil, errors.New("aggregation rule must be specified without nonResourceURLs, verbs, resources or resourceNames")
				}
				return generate.ClusterRole(name, nil, r.Aggregation), nil
			}
			if len(r.Verbs) == 0 {
				return nil, errors.New("at least one verb must be specified")
			}
			if len(rs) == 0 && len(r.NonResourceURLs) == 0 {
				return nil, errors.New("one of resource or nonResourceURL must be specified")
			}
			if len(rs) > 0 {
				warnVerbs(g.ErrOut, r.Verbs)
				if err := generate.CheckRuleResources(resolve, r.Verbs, rs); err != nil {
					return nil, err
				}
			}
			if len(r.NonResourceURLs) > 0 {
				if err := generate.CheckNonResourceURLs(r.Verbs, r.NonResourceURLs); err != nil {
					return nil, err
				}
			}
			return generate.ClusterRole(name, generate.PolicyRules(resolve, r.Verbs, rs, r.ResourceNames, r.NonResourceURLs), nil), nil
		},
	})
}

// subjectFlags registers --user, --group and --serviceaccount of
// bindings.
func subjectFlags(cmd *cobra.Command, s *generate.SubjectOptions, what string) {
	fs := cmd.Flags()
	fs.StringArrayVar(&s.Users, "user", nil, "Usernames to bind to the "+what+". The flag can be repeated to add multiple users.")
	fs.StringArrayVar(&s.Groups, "group", nil, "Groups to bind to the "+what+". The flag can be repeated to add multiple groups.")
	fs.StringArrayVar(&s.ServiceAccounts, "serviceaccount", nil, "Service accounts to bind to the "+what+", in the format <namespace>:<name>. The flag can be repeated to add multiple service accounts.")
}

func newCreateRoleBindingCmd(g *Globals) *cobra.Command {
	var o generate.RoleBindingOptions
	return newGeneratorCmd(g, generator{
		use:   "rolebinding NAME --clusterrole=NAME|--role=NAME [--user=username] [--group=groupname] [--serviceaccount=namespace:serviceaccountname] [--dry-run=server|client|none]",
		short: "Grant a role or cluster role within a namespace",
		example: `  # Let alice and the group ops administer the current namespace
  konverge create rolebinding ops-admin --clusterrole=admin --user=alice --group=ops`,
		failure: "failed to create rolebinding: %v",
		flags: func(cmd *cobra.Command) {
			cmd.Flags().StringVar(&o.ClusterRole, "clusterrole", "", "The cluster role the binding grants")
			cmd.Flags().StringVar(&o.Role, "role", "", "The role the binding grants")
			subjectFlags(cmd, &o.Subjects, "role")
		},
		build: func(_ context.Context, f *generatorFlags, name string, _ []string) (runtime.Object, error) {
			o.Name, o.Namespace = name, f.namespace()
			return generate.RoleBinding(o)
		},
	})
}

func newCreateClusterRoleBindingCmd(g *Globals) *cobra.Command {
	var clusterRole string
	var subjects generate.SubjectOptions
	return newGeneratorCmd(g, generator{
		use:   "clusterrolebinding NAME --clusterrole=NAME [--user=username] [--group=groupname] [--serviceaccount=namespace:serviceaccountname] [--dry-run=server|client|none]",
		short: "Grant a cluster role in every namespace",
		example: `  # Make alice and the group ops administrators of the whole cluster
  konverge create clusterrolebinding ops-root --clusterrole=cluster-admin --user=alice --group=ops`,
		failure: "failed to create clusterrolebinding: %v",
		flags: func(cmd *cobra.Command) {
			cmd.Flags().StringVar(&clusterRole, "clusterrole", "", "The cluster role the binding grants")
			_ = cmd.MarkFlagRequired("clusterrole")
			subjectFlags(cmd, &subjects, "clusterrole")
		},
		build: func(_ context.Context, _ *generatorFlags, name string, _ []string) (runtime.Object, error) {
			return generate.ClusterRoleBinding(name, clusterRole, subjects)
		},
	})
}

func newCreatePriorityClassCmd(g *Globals) *cobra.Command {
	var o generate.PriorityClassOptions
	return newGeneratorCmd(g, generator{
		use:     "priorityclass NAME --value=VALUE --global-default=BOOL [--dry-run=server|client|none]",
		aliases: []string{"pc"},
		short:   "Create a priority class",
		example: `  # Pods of class urgent are scheduled before those of lower values
  konverge create priorityclass urgent --value=1000 --description="user-facing services"`,
		failure: "failed to create priorityclass: %v",
		flags: func(cmd *cobra.Command) {
			fs := cmd.Flags()
			fs.Int32Var(&o.Value, "value", 0, "The priority pods of this class get.")
			fs.BoolVar(&o.GlobalDefault, "global-default", false, "global-default specifies whether this PriorityClass should be considered as the default priority.")
			fs.StringVar(&o.Description, "description", "", "description is an arbitrary string that usually provides guidelines on when this priority class should be used.")
			fs.StringVar(&o.PreemptionPolicy, "preemption-policy", "PreemptLowerPriority", "preemption-policy is the policy for preempting pods with lower priority.")
		},
		build: func(_ context.Context, _ *generatorFlags, name string, _ []string) (runtime.Object, error) {
			o.Name = name
			return generate.PriorityClass(o), nil
		},
	})
}

func newCreateQuotaCmd(g *Globals) *cobra.Command {
	var o generate.QuotaOptions
	return newGeneratorCmd(g, generator{
		use:     "quota NAME [--hard=key1=value1,key2=value2] [--scopes=Scope1,Scope2] [--dry-run=server|client|none]",
		aliases: []string{"resourcequota"},
		short:   "Create a resource quota",
		example: `  # At most 4 CPUs, 8Gi of memory and 20 pods in the namespace
  konverge create quota team --hard=cpu=4,memory=8Gi,pods=20`,
		failure: "failed to create quota: %v",
		flags: func(cmd *cobra.Command) {
			cmd.Flags().StringVar(&o.Hard, "hard", "", "The limits, as resource=quantity pairs separated by commas.")
			cmd.Flags().StringVar(&o.Scopes, "scopes", "", "Scopes (comma-separated) an object must match, all of them, to count against the quota.")
		},
		build: func(_ context.Context, f *generatorFlags, name string, _ []string) (runtime.Object, error) {
			o.Name, o.Namespace = name, f.namespace()
			return generate.Quota(o)
		},
	})
}

func newCreatePDBCmd(g *Globals) *cobra.Command {
	var o generate.PDBOptions
	return newGeneratorCmd(g, generator{
		use:     "poddisruptionbudget NAME --selector=SELECTOR --min-available=N [--dry-run=server|client|none]",
		aliases: []string{"pdb"},
		short:   "Create a pod disruption budget",
		example: `  # Keep at least two of the pods labelled app=web running through voluntary disruptions
  konverge create poddisruptionbudget web --selector=app=web --min-available=2`,
		failure: "failed to create poddisruptionbudgets: %v",
		flags: func(cmd *cobra.Command) {
			fs := cmd.Flags()
			fs.StringVar(&o.MinAvailable, "min-available", "", "The minimum number or percentage of available pods this budget requires.")
			fs.StringVar(&o.MaxUnavailable, "max-unavailable", "", "The maximum number or percentage of unavailable pods this budget requires.")
			fs.StringVar(&o.Selector, "selector", "", "A label selector to use for this budget. Only equality-based selector requirements are supported.")
		},
		build: func(_ context.Context, f *generatorFlags, name string, _ []string) (runtime.Object, error) {
			o.Name, o.Namespace = name, f.namespace()
			return generate.PDB(o)
		},
	})
}

func newCreateIngressCmd(g *Globals) *cobra.Command {
	var o generate.IngressOptions
	return newGeneratorCmd(g, generator{
		use:     "ingress NAME --rule=host/path=service:port[,tls[=secret]] ",
		aliases: []string{"ing"},
		short:   "Create an ingress",
		example: `  # Send example.com/api to port 8080 of service api, over TLS with secret example-tls
  konverge create ingress api --rule="example.com/api=api:8080,tls=example-tls"`,
		failure: "failed to create ingress: %v",
		flags: func(cmd *cobra.Command) {
			fs := cmd.Flags()
			fs.StringVar(&o.Class, "class", "", "The ingress class that serves the ingress")
			fs.StringArrayVar(&o.Rules, "rule", nil, "A rule host/path=service:port, optionally followed by ,tls or ,tls=SECRET; a path ending in * is a Prefix path.")
			fs.StringVar(&o.DefaultBackend, "default-backend", "", "Default service for backend, in format of svcname:port")
			fs.StringArrayVar(&o.Annotations, "annotation", nil, "An annotation of the ingress, as key=value (repeatable)")
		},
		build: func(_ context.Context, f *generatorFlags, name string, _ []string) (runtime.Object, error) {
			o.Name, o.Namespace = name, f.namespace()
			return generate.Ingress(o)
		},
	})
}
