package apply_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/konverge/konverge/apply"
	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/internal/golden"
	"github.com/konverge/konverge/merge"
	"github.com/konverge/konverge/schema"
)

// unbatched hides the Batch method of a store: the path Apply takes on a
// real cluster (dry-run pass, then writes).
type unbatched struct{ cluster.Interface }

// backends are the two ways Apply drives a cluster.
var backends = []struct {
	name string
	wrap func(c cluster.Interface) cluster.Interface
}{
	{"batch", func(c cluster.Interface) cluster.Interface { return c }},
	{"unbatched", func(c cluster.Interface) cluster.Interface { return unbatched{c} }},
}

// TestValidateBeforeWrite: one directory with bad objects among good ones
// writes nothing and reports every problem with its source and path.
func TestValidateBeforeWrite(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			s := openStore(t)
			_, err := apply.New(b.wrap(s), apply.Options{}).Apply(context.Background(), read(t, "invalid"))
			var errs apply.Errors
			if !errors.As(err, &errs) {
				t.Fatalf("error %T %v, want apply.Errors", err, err)
			}
			for _, name := range []string{"good", "also-good"} {
				if exists(t, s, gvkConfigMap, "default", name) {
					t.Errorf("configmap %s was written", name)
				}
			}
			if exists(t, s, gvkDeployment, "default", "good") {
				t.Errorf("deployment good was written")
			}
			msg := err.Error()
			for _, secret := range []string{"hunter2", "s3cr3t"} {
				if strings.Contains(msg, secret) {
					t.Errorf("error shows a Secret value:\n%s", msg)
				}
			}
			var fe *merge.FieldError
			if !errors.As(err, &fe) {
				t.Errorf("no *merge.FieldError in %v", err)
			}
			var se *cluster.StatusError
			if !errors.As(err, &se) || !cluster.IsInvalid(se) {
				t.Errorf("no Invalid *cluster.StatusError in %v", err)
			}
			golden.Assert(t, filepath.Join(testdata, "golden", "invalid.txt"), []byte(msg+"\n"))
		})
	}
}

func TestInputErrors(t *testing.T) {
	cases := []struct {
		name string
		opts apply.Options
		docs string
		want string
	}{{
		name: "duplicate",
		docs: `
apiVersion: v1
kind: ConfigMap
metadata: {name: twice}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: twice, namespace: default}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: twice, namespace: kube-system}
`,
		want: `apply: test.yaml#2 (line 6) configmap/twice: duplicate object: configmap/twice is also defined in test.yaml#1 (line 2)`,
	}, {
		name: "namespace mismatch",
		opts: apply.Options{Namespace: "kube-public", EnforceNamespace: true},
		docs: `
apiVersion: v1
kind: ConfigMap
metadata: {name: x, namespace: a}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: other}
`,
		want: `apply: test.yaml#1 (line 2) configmap/x: the namespace from the provided object "a" does not match the namespace "kube-public". You must pass '--namespace=a' to perform this operation.`,
	}, {
		name: "unknown kind",
		docs: `
apiVersion: example.com/v1
kind: Widget
metadata: {name: w}
`,
		want: `apply: test.yaml#1 (line 2) widget.example.com/w: resource mapping not found: no matches for kind "Widget" in version "example.com/v1"; ensure CRDs are installed first`,
	}, {
		name: "generate name",
		docs: `
apiVersion: v1
kind: ConfigMap
metadata: {generateName: gen-}
`,
		want: `apply: test.yaml#1 (line 2) configmap/: from gen-: cannot use generate name with apply`,
	}, {
		name: "applyset label in input",
		opts: apply.Options{Namespace: "default", EnforceNamespace: true, Prune: true, ApplySet: "set"},
		docs: `
apiVersion: v1
kind: ConfigMap
metadata: {name: x, labels: {applyset.kubernetes.io/part-of: mine}}
`,
		want: `apply: test.yaml#1 (line 2) configmap/x: ApplySet label "applyset.kubernetes.io/part-of" already set in input data`,
	}, {
		name: "prune without selector",
		opts: apply.Options{Prune: true},
		docs: `{apiVersion: v1, kind: ConfigMap, metadata: {name: x}}`,
		want: `apply: all resources selected for prune without explicitly passing --all. To prune all resources, pass the --all flag. If you did not mean to prune all resources, specify a label selector`,
	}, {
		name: "applyset without namespace",
		opts: apply.Options{Prune: true, ApplySet: "set"},
		docs: `{apiVersion: v1, kind: ConfigMap, metadata: {name: x}}`,
		want: `apply: namespace is required to use namespace-scoped ApplySet`,
	}, {
		name: "nothing selected",
		opts: apply.Options{Selector: "app=none"},
		docs: `{apiVersion: v1, kind: ConfigMap, metadata: {name: x}}`,
		want: `apply: no objects passed to apply`,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := openStore(t)
			_, err := apply.New(s, tc.opts).Apply(context.Background(), parse(t, tc.docs))
			if err == nil || err.Error() != tc.want {
				t.Fatalf("error:\n%v\nwant\n%s", err, tc.want)
			}
			if exists(t, s, gvkConfigMap, "default", "other") {
				t.Errorf("an object was written")
			}
		})
	}
}

const crdWidgets = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer, minimum: 1}
              colors: {type: array, items: {type: string}}
              owner: {type: string}
`

// TestOrderNamespacesAndCRDsFirst: a custom resource and objects in a new
// namespace come before their CRD and namespace in the input.
func TestOrderNamespacesAndCRDsFirst(t *testing.T) {
	input := `
apiVersion: example.com/v1
kind: Widget
metadata: {name: w, namespace: team}
spec: {size: 3, colors: [red, blue], owner: ann}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: c, namespace: team}
` + "---" + crdWidgets + `---
apiVersion: v1
kind: Namespace
metadata: {name: team}
`
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			s := openStore(t)
			c := b.wrap(s)
			// Applied Namespaces and CRDs first, printed in input order as
			// kubectl prints.
			res := mustApply(t, c, apply.Options{}, parse(t, input))
			want := "widget.example.com/w created\n" +
				"configmap/c created\n" +
				"customresourcedefinition.apiextensions.k8s.io/widgets.example.com created\n" +
				"namespace/team created\n"
			if got := lines(res); got != want {
				t.Fatalf("results:\n%s\nwant\n%s", got, want)
			}
			w := mustGet(t, s, schema.GVK{Group: "example.com", Version: "v1", Kind: "Widget"}, "team", "w")
			if got := field(w, "spec.size"); got != int64(3) {
				t.Errorf("widget size %v", got)
			}

			// A custom resource is patched with a JSON merge patch: lists
			// replaced whole, dropped fields deleted.
			next := strings.Replace(input, "spec: {size: 3, colors: [red, blue], owner: ann}", "spec: {size: 4, colors: [green]}", 1)
			res = mustApply(t, c, apply.Options{}, parse(t, next))
			want = "widget.example.com/w configured\n" +
				"configmap/c unchanged\n" +
				"customresourcedefinition.apiextensions.k8s.io/widgets.example.com unchanged\n" +
				"namespace/team unchanged\n"
			if got := lines(res); got != want {
				t.Fatalf("results:\n%s\nwant\n%s", got, want)
			}
			if pt := res[0].PatchType; pt != cluster.MergePatchType {
				t.Errorf("patch type %s, want %s", pt, cluster.MergePatchType)
			}
			if got := string(encode(t, res[0].Patch["spec"])); got != `{"colors":["green"],"owner":null,"size":4}` {
				t.Errorf("patch spec %s", got)
			}
			w = mustGet(t, s, schema.GVK{Group: "example.com", Version: "v1", Kind: "Widget"}, "team", "w")
			if got := toYAML(t, w["spec"]); got != "colors:\n- green\nsize: 4\n" {
				t.Errorf("widget spec:\n%s", got)
			}
		})
	}
}

// TestCustomResourceValidatedAgainstInputCRD: a custom resource whose CRD
// is in the same input is checked against that CRD's schema before
// anything is written.
func TestCustomResourceValidatedAgainstInputCRD(t *testing.T) {
	input := crdWidgets + `---
apiVersion: example.com/v1
kind: Widget
metadata: {name: w}
spec: {size: 0, colors: red}
`
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			s := openStore(t)
			_, err := apply.New(b.wrap(s), apply.Options{}).Apply(context.Background(), parse(t, input))
			want := `apply: test.yaml#2 (line 25) widget.example.com/w: spec.colors: expected list, got string`
			if err == nil || err.Error() != want {
				t.Fatalf("error:\n%v\nwant\n%s", err, want)
			}
			if exists(t, s, schema.GVK{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}, "", "widgets.example.com") {
				t.Errorf("the CRD was written")
			}
			// Types right, value out of range: the CRD's openAPIV3Schema.
			fixed := strings.Replace(input, "colors: red", "colors: [red]", 1)
			_, err = apply.New(b.wrap(s), apply.Options{}).Apply(context.Background(), parse(t, fixed))
			want = `apply: test.yaml#2 (line 25) widget.example.com/w: Widget.example.com "w" is invalid: spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1`
			if err == nil || err.Error() != want {
				t.Fatalf("error:\n%v\nwant\n%s", err, want)
			}
		})
	}
}

// conflictOnce fails the first Patch (the first conflicts ones, when set)
// with a Conflict, as an API server does when another writer got there
// first.
type conflictOnce struct {
	cluster.Interface
	patches, gets int
	conflicts     int
}

func (c *conflictOnce) Get(ctx context.Context, gvk schema.GVK, ns, name string) (cluster.Object, error) {
	c.gets++
	return c.Interface.Get(ctx, gvk, ns, name)
}

func (c *conflictOnce) Patch(ctx context.Context, gvk schema.GVK, ns, name string, pt cluster.PatchType, data []byte, opts ...cluster.PatchOption) (cluster.Object, error) {
	c.patches++
	if c.patches <= max(1, c.conflicts) {
		// Someone else scales the deployment meanwhile.
		if _, err := c.Interface.Patch(ctx, gvk, ns, name, cluster.MergePatchType, []byte(`{"spec":{"replicas":5}}`)); err != nil {
			return nil, err
		}
		return nil, cluster.NewConflict("deployments.apps", name, "the object has been modified; please apply your changes to the latest version and try again")
	}
	return c.Interface.Patch(ctx, gvk, ns, name, pt, data, opts...)
}

func TestConflictRetry(t *testing.T) {
	s := openStore(t)
	mustApply(t, s, apply.Options{}, read(t, "seed/simple_deployment.yaml"))
	c := &conflictOnce{Interface: s}
	res := mustApply(t, c, apply.Options{}, read(t, "seed/update_deployment.yaml"))
	if got := lines(res); got != "deployment.apps/nginx-deployment configured\n" {
		t.Fatalf("results %q", got)
	}
	// Dry-run patch, patch (conflict), patch again after a fresh read.
	if c.patches != 3 {
		t.Errorf("%d patches, want 3", c.patches)
	}
	if got := field(res[0].Live, "spec.replicas"); got != int64(5) {
		t.Errorf("the retry did not read the object again: live replicas %v", got)
	}
	live := mustGet(t, s, gvkDeployment, "default", "nginx-deployment")
	if field(live, "spec.replicas") != int64(5) || field(live, "spec.minReadySeconds") != nil {
		t.Errorf("live after retry: replicas %v, minReadySeconds %v", field(live, "spec.replicas"), field(live, "spec.minReadySeconds"))
	}
}

// TestConflictGivesUp: kubectl retries five times, pausing before the
// second and later tries, and then reports the Conflict.
func TestConflictGivesUp(t *testing.T) {
	for _, tc := range []struct {
		conflicts int
		ok        bool
	}{{4, true}, {7, false}} {
		s := openStore(t)
		mustApply(t, s, apply.Options{}, read(t, "seed/simple_deployment.yaml"))
		// The dry-run patch of the trial counts as the first conflict.
		c := &conflictOnce{Interface: s, conflicts: tc.conflicts}
		start := time.Now()
		_, err := apply.New(c, apply.Options{RetryBackoff: 5 * time.Millisecond}).Apply(context.Background(), read(t, "seed/update_deployment.yaml"))
		if tc.ok != (err == nil) {
			t.Fatalf("%d conflicts: error %v", tc.conflicts, err)
		}
		if !tc.ok && !cluster.IsConflict(err) {
			t.Errorf("error %v, want a Conflict", err)
		}
		if time.Since(start) < 5*time.Millisecond {
			t.Errorf("no pause between retries")
		}
	}
}

// TestNoOverwrite: with --overwrite=false, a field the config changes that
// someone else changed since the last apply is a conflict.
func TestNoOverwrite(t *testing.T) {
	const v1 = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx:1.27}]}
`
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			s := openStore(t)
			c := b.wrap(s)
			mustApply(t, c, apply.Options{}, parse(t, v1))
			if _, err := s.Patch(context.Background(), gvkDeployment, "default", "web", cluster.MergePatchType, []byte(`{"spec":{"replicas":3}}`)); err != nil {
				t.Fatal(err)
			}
			v2 := strings.Replace(v1, "replicas: 1", "replicas: 2", 1)
			_, err := apply.New(c, apply.Options{NoOverwrite: true}).Apply(context.Background(), parse(t, v2))
			var ce *merge.ConflictError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v, want a *merge.ConflictError", err)
			}
			if !strings.HasPrefix(err.Error(), "apply: test.yaml#1 (line 2) deployment.apps/web: ") || !strings.Contains(err.Error(), "spec.replicas") {
				t.Errorf("error %q", err)
			}
			if got := field(mustGet(t, s, gvkDeployment, "default", "web"), "spec.replicas"); got != int64(3) {
				t.Errorf("replicas %v, want 3 kept", got)
			}
			// With overwrite (the default) the config wins.
			mustApply(t, c, apply.Options{}, parse(t, v2))
			if got := field(mustGet(t, s, gvkDeployment, "default", "web"), "spec.replicas"); got != int64(2) {
				t.Errorf("replicas %v, want 2", got)
			}
		})
	}
}

// TestDryRun: client and server dry runs write nothing, and say so.
func TestDryRun(t *testing.T) {
	input := `
apiVersion: v1
kind: Namespace
metadata: {name: team}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: team}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx:1.27}]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: existing}
data: {k: new}
`
	cases := []struct {
		dryRun apply.DryRun
		want   string
	}{
		{apply.DryRunClient, "namespace/team created (dry run)\ndeployment.apps/web created (dry run)\nconfigmap/existing configured (dry run)\n"},
		{apply.DryRunServer, "namespace/team created (server dry run)\ndeployment.apps/web created (server dry run)\nconfigmap/existing configured (server dry run)\n"},
	}
	for _, tc := range cases {
		t.Run(string(tc.dryRun), func(t *testing.T) {
			s := openStore(t)
			mustApply(t, s, apply.Options{}, parse(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: existing}, data: {k: old}}`))
			before := mustGet(t, s, gvkConfigMap, "default", "existing")
			res := mustApply(t, s, apply.Options{DryRun: tc.dryRun}, parse(t, input))
			if got := lines(res); got != tc.want {
				t.Fatalf("results:\n%s\nwant\n%s", got, tc.want)
			}
			if exists(t, s, gvkNamespace, "", "team") || exists(t, s, gvkDeployment, "team", "web") {
				t.Errorf("dry run created objects")
			}
			after := mustGet(t, s, gvkConfigMap, "default", "existing")
			if field(after, "data.k") != "old" || field(after, "metadata.resourceVersion") != field(before, "metadata.resourceVersion") {
				t.Errorf("dry run changed the configmap: %v", after)
			}
			if got := field(res[2].Object, "data.k"); got != "new" {
				t.Errorf("result object data.k = %v", got)
			}
			if tc.dryRun == apply.DryRunServer {
				// The server defaulted the deployment.
				if got := field(res[1].Object, "spec.replicas"); got != int64(1) {
					t.Errorf("server dry run result replicas %v", got)
				}
				if rv := field(res[1].Object, "metadata.resourceVersion"); rv != nil {
					t.Errorf("server dry run create has resourceVersion %v", rv)
				}
				if rv := field(res[2].Object, "metadata.resourceVersion"); rv != field(before, "metadata.resourceVersion") {
					t.Errorf("server dry run patch has resourceVersion %v", rv)
				}
			}
		})
	}
}

// TestMissingAnnotationWarning: an object created without apply is patched
// and gets its annotation, with kubectl's warning.
func TestMissingAnnotationWarning(t *testing.T) {
	s := openStore(t)
	if _, err := s.Create(context.Background(), obj(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: imperative}, data: {a: "1"}}`)); err != nil {
		t.Fatal(err)
	}
	res := mustApply(t, s, apply.Options{}, parse(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: imperative}, data: {a: "1"}}`))
	if got := lines(res); got != "configmap/imperative configured\n" {
		t.Fatalf("results %q", got)
	}
	want := []string{"Warning: resource configmaps/imperative is missing the kubectl.kubernetes.io/last-applied-configuration annotation which is required by kubectl apply. kubectl apply should only be used on resources created declaratively by either kubectl create --save-config or kubectl apply. The missing annotation will be patched automatically."}
	if got := res[0].Warnings; len(got) != 1 || got[0] != want[0] {
		t.Errorf("warnings %q", got)
	}
	if annotation(mustGet(t, s, gvkConfigMap, "default", "imperative")) == nil {
		t.Errorf("annotation not patched")
	}
	res = mustApply(t, s, apply.Options{}, parse(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: imperative}, data: {a: "1"}}`))
	if got := lines(res); got != "configmap/imperative unchanged\n" || len(res[0].Warnings) != 0 {
		t.Errorf("second apply: %q %q", got, res[0].Warnings)
	}
}

// TestLabelPrune: pruning deletes only objects that match, carry the
// annotation, are of an allowlisted kind and are not in the input.
func TestLabelPrune(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			s := openStore(t)
			c := b.wrap(s)
			ctx := context.Background()
			mustApply(t, c, apply.Options{}, parse(t, `
apiVersion: v1
kind: ConfigMap
metadata: {name: old, labels: {app: web}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: other-app, labels: {app: db}}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: not-allowlisted, labels: {app: web}}
`))
			// Created without apply: no annotation, never pruned.
			if _, err := s.Create(ctx, obj(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: imperative, labels: {app: web}}}`)); err != nil {
				t.Fatal(err)
			}
			var warnings []string
			opts := apply.Options{Prune: true, Selector: "app=web", Warn: func(m string) { warnings = append(warnings, m) }}
			res := mustApply(t, c, opts, parse(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: new, labels: {app: web}}}`))
			if got, want := lines(res), "configmap/new created\nconfigmap/old pruned\n"; got != want {
				t.Fatalf("results:\n%s\nwant\n%s", got, want)
			}
			for _, name := range []string{"other-app", "imperative", "new"} {
				if !exists(t, s, gvkConfigMap, "default", name) {
					t.Errorf("configmap %s was deleted", name)
				}
			}
			if !exists(t, s, schema.GVK{Version: "v1", Kind: "ServiceAccount"}, "default", "not-allowlisted") {
				t.Errorf("a kind outside the allowlist was pruned")
			}
			if len(warnings) != 1 || !strings.HasPrefix(warnings[0], "Deprecated: kubectl apply will no longer prune non-namespaced resources") {
				t.Errorf("warnings %q", warnings)
			}

			// A dry run shows what would go and deletes nothing.
			res = mustApply(t, c, apply.Options{Prune: true, PruneAll: true, DryRun: apply.DryRunServer,
				PruneAllowlist: []schema.GVK{gvkConfigMap}}, parse(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: new, labels: {app: web}}}`))
			if got, want := lines(res), "configmap/new unchanged (server dry run)\nconfigmap/other-app pruned (server dry run)\n"; got != want {
				t.Fatalf("results:\n%s\nwant\n%s", got, want)
			}
			if !exists(t, s, gvkConfigMap, "default", "other-app") {
				t.Errorf("dry run pruned")
			}
		})
	}
}

// TestPruneClusterScopedWarns: pruning a Namespace or another
// cluster-scoped object comes with a warning naming it.
func TestPruneClusterScopedWarns(t *testing.T) {
	s := openStore(t)
	mustApply(t, s, apply.Options{}, parse(t, `
apiVersion: v1
kind: Namespace
metadata: {name: scratch, labels: {team: a}}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: reader, labels: {team: a}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: keep, labels: {team: a}}
`))
	var warnings []string
	opts := apply.Options{Prune: true, Selector: "team=a", Warn: func(m string) { warnings = append(warnings, m) },
		PruneAllowlist: []schema.GVK{{Version: "v1", Kind: "Namespace"}, {Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}, gvkConfigMap}}
	res := mustApply(t, s, opts, parse(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: keep, labels: {team: a}}}`))
	if got, want := lines(res), "configmap/keep unchanged\nnamespace/scratch pruned\nclusterrole.rbac.authorization.k8s.io/reader pruned\n"; got != want {
		t.Fatalf("results:\n%s\nwant\n%s", got, want)
	}
	want := []string{
		"pruning namespace/scratch: deleting a namespace deletes every object in it",
		"pruning clusterrole.rbac.authorization.k8s.io/reader: it is cluster-scoped, shared by every namespace",
	}
	if strings.Join(warnings, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(warnings, "\n"), strings.Join(want, "\n"))
	}
}

// TestForce: a change the server refuses as Invalid (an immutable
// selector) goes through with Force as a delete and a create.
func TestForce(t *testing.T) {
	const v1 = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx:1.27}]}
`
	v2 := strings.ReplaceAll(v1, "app: web", "app: web2")
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			s := openStore(t)
			c := b.wrap(s)
			mustApply(t, c, apply.Options{}, parse(t, v1))
			uid := field(mustGet(t, s, gvkDeployment, "default", "web"), "metadata.uid")
			_, err := apply.New(c, apply.Options{}).Apply(context.Background(), parse(t, v2))
			if !cluster.IsInvalid(err) || !strings.Contains(err.Error(), "field is immutable") {
				t.Fatalf("error %v, want Invalid: field is immutable", err)
			}
			res := mustApply(t, c, apply.Options{Force: true}, parse(t, v2))
			if got := lines(res); got != "deployment.apps/web configured\n" {
				t.Fatalf("results %q", got)
			}
			live := mustGet(t, s, gvkDeployment, "default", "web")
			if field(live, "metadata.uid") == uid {
				t.Errorf("not re-created")
			}
			if got := field(live, "spec.selector.matchLabels.app"); got != "web2" {
				t.Errorf("selector %v", got)
			}
			if annotation(live) == nil {
				t.Errorf("re-created without the annotation")
			}
		})
	}
}

// TestServerSideUnsupported: the embedded cluster refuses server-side
// apply with kubectl's message.
func TestServerSideEmbedded(t *testing.T) {
	s := openStore(t)
	res, err := apply.New(s, apply.Options{ServerSide: true}).Apply(context.Background(), parse(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: x}, data: {a: "1"}}`))
	if err != nil {
		t.Fatalf("error %v", err)
	}
	if len(res) != 1 || res[0].Action != apply.ServerSideApplied {
		t.Fatalf("results %v", res)
	}
	if !exists(t, s, gvkConfigMap, "default", "x") {
		t.Errorf("not written")
	}
	_, err = apply.New(s, apply.Options{ServerSide: true, DryRun: apply.DryRunClient}).Apply(context.Background(), parse(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: x}}`))
	if err == nil || err.Error() != "apply: --dry-run=client doesn't work with --server-side (did you mean --dry-run=server instead?)" {
		t.Errorf("error %v", err)
	}
}

// TestSelectorFiltersInput: with -l, only matching objects are applied,
// and a client dry run of a prune deletes nothing.
func TestSelectorFiltersInput(t *testing.T) {
	s := openStore(t)
	input := `
apiVersion: v1
kind: ConfigMap
metadata: {name: web, labels: {app: web}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: db, labels: {app: db}}
`
	res := mustApply(t, s, apply.Options{Selector: "app=web"}, parse(t, input))
	if got := lines(res); got != "configmap/web created\n" {
		t.Fatalf("results %q", got)
	}
	if exists(t, s, gvkConfigMap, "default", "db") {
		t.Errorf("db applied")
	}
	res = mustApply(t, s, apply.Options{Prune: true, Selector: "app=web", DryRun: apply.DryRunClient},
		parse(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: web2, labels: {app: web}}}`))
	if got, want := lines(res), "configmap/web2 created (dry run)\nconfigmap/web pruned (dry run)\n"; got != want {
		t.Fatalf("results:\n%s\nwant\n%s", got, want)
	}
	if !exists(t, s, gvkConfigMap, "default", "web") {
		t.Errorf("client dry run pruned")
	}
}

// slowCRD reports CustomResourceDefinitions as not yet Established for
// their first reads, as a real API server does for a moment.
type slowCRD struct {
	cluster.Interface
	reads int
}

func (c *slowCRD) Get(ctx context.Context, gvk schema.GVK, ns, name string) (cluster.Object, error) {
	obj, err := c.Interface.Get(ctx, gvk, ns, name)
	if err == nil && gvk.Kind == "CustomResourceDefinition" {
		c.reads++
		if c.reads <= 3 {
			delete(obj, "status")
		}
	}
	return obj, err
}

// TestWaitForCRD: what follows a CRD waits until it is Established.
func TestWaitForCRD(t *testing.T) {
	s := openStore(t)
	c := &slowCRD{Interface: s}
	input := crdWidgets + `---
apiVersion: example.com/v1
kind: Widget
metadata: {name: w}
spec: {size: 1}
`
	res := mustApply(t, c, apply.Options{}, parse(t, input))
	if got := lines(res); got != "customresourcedefinition.apiextensions.k8s.io/widgets.example.com created\nwidget.example.com/w created\n" {
		t.Fatalf("results %q", got)
	}
	if c.reads < 4 {
		t.Errorf("%d reads of the CRD, want it polled until Established", c.reads)
	}
	_, err := apply.New(&slowCRD{Interface: s, reads: -1000}, apply.Options{CRDTimeout: 50 * time.Millisecond}).Apply(context.Background(),
		parse(t, strings.NewReplacer("widget", "gadget", "Widget", "Gadget").Replace(crdWidgets)))
	if err == nil || !strings.Contains(err.Error(), "timed out after 50ms waiting for CustomResourceDefinition") {
		t.Errorf("error %v", err)
	}
}

// leaky is a server whose errors quote the object's values.
type leaky struct{ cluster.Interface }

func (c leaky) Create(ctx context.Context, obj cluster.Object, opts ...cluster.CreateOption) (cluster.Object, error) {
	data, _ := obj["stringData"].(map[string]any)
	return nil, cluster.NewInvalid("Secret", "creds", []cluster.Cause{{Field: "stringData[token]", Message: fmt.Sprintf("Invalid value: %q", data["token"])}})
}

// TestErrorsMaskSecretValues: a server that quotes a Secret's value in an
// error does not get it printed.
func TestErrorsMaskSecretValues(t *testing.T) {
	s := openStore(t)
	_, err := apply.New(leaky{s}, apply.Options{}).Apply(context.Background(), parse(t, `
apiVersion: v1
kind: Secret
metadata: {name: creds}
stringData: {token: s3cr3t-t0ken}
`))
	const want = `apply: test.yaml#1 (line 2) secret/creds: Secret "creds" is invalid: stringData[token]: Invalid value: "***"`
	if err == nil || err.Error() != want {
		t.Fatalf("error:\n%v\nwant\n%s", err, want)
	}
}
