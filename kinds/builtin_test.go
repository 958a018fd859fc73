package kinds

import (
	"cmp"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/konverge/konverge/cluster"
)

// The tests of this file check the hand-written tables of builtin.go
// against the sources of Kubernetes v1.37.1 in the module cache. They skip
// when the modules are not there: `go mod download k8s.io/kubernetes@v1.37.1`
// (in any module) fetches them.

// sourceModules are the modules whose sources the tests read.
var sourceModules = map[string]string{
	"k8s.io/kubernetes":              KubernetesVersion,
	"k8s.io/api":                     "v0.37.1",
	"k8s.io/apiextensions-apiserver": "v0.37.1",
	"k8s.io/kube-aggregator":         "v0.37.1",
}

var modCache = sync.OnceValue(func() string {
	if d := os.Getenv("GOMODCACHE"); d != "" {
		return d
	}
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
})

// sourceDir returns the directory of an import path in the module cache,
// or skips the test.
func sourceDir(t *testing.T, importPath string) string {
	t.Helper()
	best := ""
	for m := range sourceModules {
		if (importPath == m || strings.HasPrefix(importPath, m+"/")) && len(m) > len(best) {
			best = m
		}
	}
	if best == "" {
		t.Fatalf("no module for %s", importPath)
	}
	root := filepath.Join(modCache(), best+"@"+sourceModules[best])
	if _, err := os.Stat(root); err != nil {
		t.Skipf("%s@%s is not in the module cache: %v", best, sourceModules[best], err)
	}
	return filepath.Join(root, strings.TrimPrefix(importPath, best))
}

func parseSource(t *testing.T, path string) *ast.File {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// imports maps the names a file imports packages under to their paths.
func imports(f *ast.File) map[string]string {
	m := map[string]string{}
	for _, spec := range f.Imports {
		p, _ := strconv.Unquote(spec.Path.Value)
		name := p[strings.LastIndex(p, "/")+1:]
		if spec.Name != nil {
			name = spec.Name.Name
		}
		m[name] = p
	}
	return m
}

var groupNameRE = regexp.MustCompile(`(?m)^const GroupName = "([^"]*)"`)

// groupOf returns the GroupName of an API package.
func groupOf(t *testing.T, importPath string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(sourceDir(t, importPath), "register.go"))
	if err != nil {
		t.Fatal(err)
	}
	m := groupNameRE.FindSubmatch(data)
	if m == nil {
		t.Fatalf("%s/register.go: no GroupName", importPath)
	}
	return string(m[1])
}

// gvOf returns "group/version" of a versioned API package such as
// k8s.io/api/apps/v1.
func gvOf(t *testing.T, importPath string) string {
	t.Helper()
	return groupOf(t, importPath) + "/" + importPath[strings.LastIndex(importPath, "/")+1:]
}

// gvList reads a var of instance.go that lists X.SchemeGroupVersion.
func gvList(t *testing.T, f *ast.File, name string) []string {
	t.Helper()
	imp := imports(f)
	var out []string
	found := false
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || len(vs.Names) != 1 || vs.Names[0].Name != name {
			return true
		}
		found = true
		for _, e := range vs.Values[0].(*ast.CompositeLit).Elts {
			sel := e.(*ast.SelectorExpr)
			out = append(out, gvOf(t, imp[sel.X.(*ast.Ident).Name]))
		}
		return false
	})
	if !found {
		t.Fatalf("no %s", name)
	}
	return out
}

func ourServedGVs() []string {
	var out []string
	for _, g := range servedByDefault {
		for _, v := range g.versions {
			out = append(out, g.group+"/"+v)
		}
	}
	return out
}

func TestServedByDefault(t *testing.T) {
	dir := sourceDir(t, "k8s.io/kubernetes/pkg/controlplane")
	f := parseSource(t, filepath.Join(dir, "instance.go"))
	want := map[string]bool{
		// Served by apiextensions-apiserver and kube-aggregator.
		"apiextensions.k8s.io/v1":   true,
		"apiregistration.k8s.io/v1": true,
	}
	for _, list := range []string{"genericStableAPIGroupVersionsEnabledByDefault", "stableAPIGroupVersionsEnabledByDefault"} {
		for _, gv := range gvList(t, f, list) {
			want[gv] = true
		}
	}
	disabled := map[string]bool{}
	for _, list := range []string{"genericBetaAPIGroupVersionsDisabledByDefault", "betaAPIGroupVersionsDisabledByDefault",
		"genericAlphaAPIGroupVersionsDisabledByDefault", "alphaAPIGroupVersionsDisabledByDefault"} {
		for _, gv := range gvList(t, f, list) {
			disabled[gv] = true
		}
	}
	got := map[string]bool{}
	for _, gv := range ourServedGVs() {
		if got[gv] {
			t.Errorf("%s is listed twice", gv)
		}
		got[gv] = true
		if !want[gv] {
			t.Errorf("%s is served in the table but not enabled by default in instance.go", gv)
		}
		if disabled[gv] {
			t.Errorf("%s is served in the table but disabled by default in instance.go", gv)
		}
	}
	for gv := range want {
		if !got[gv] {
			t.Errorf("%s is enabled by default in instance.go but not in the table", gv)
		}
	}
	// The OpenAPI documents hold every group version, served or not.
	inOpenAPI := map[string]bool{}
	for _, r := range openAPIResources {
		inOpenAPI[r.group+"/"+r.version] = true
	}
	for gv := range got {
		if !inOpenAPI[gv] {
			t.Errorf("%s has no resources in the OpenAPI documents", gv)
		}
	}
}

// priorityRE matches the entries of the APIService priority maps:
// {Group: "apps", Version: "v1"}: {Group: 17800, Version: 15},
var priorityRE = regexp.MustCompile(`\{Group: "([^"]*)", Version: "([^"]*)"\}:\s*\{Group: (\d+), Version: (\d+)\}`)

func TestDiscoveryOrder(t *testing.T) {
	type prio struct{ group, version int }
	prios := map[string]prio{}
	// The generic priorities first, then kube-apiserver's, which win.
	for _, path := range []string{"pkg/controlplane/apiserver/aggregator.go", "cmd/kube-apiserver/app/aggregator.go"} {
		data, err := os.ReadFile(filepath.Join(sourceDir(t, "k8s.io/kubernetes"), path))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range priorityRE.FindAllStringSubmatch(string(data), -1) {
			g, _ := strconv.Atoi(m[3])
			v, _ := strconv.Atoi(m[4])
			prios[m[1]+"/"+m[2]] = prio{g, v}
		}
	}
	data, err := os.ReadFile(filepath.Join(sourceDir(t, "k8s.io/kube-aggregator/pkg/apiserver"), "handler_discovery.go"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`var APIRegistrationGroupPriority int = (\d+)`).FindSubmatch(data)
	if m == nil {
		t.Fatal("no APIRegistrationGroupPriority in kube-aggregator")
	}
	regPrio, _ := strconv.Atoi(string(m[1]))
	prios["apiregistration.k8s.io/v1"] = prio{regPrio, 0}

	// Group priority is the highest of its versions'; groups sort by it,
	// then by name; versions by their priority, then kube-aware. The core
	// group comes first: kubectl reads /api before /apis.
	groupPrio := map[string]int{}
	versions := map[string][]string{}
	for _, gv := range ourServedGVs() {
		p, ok := prios[gv]
		if !ok {
			t.Fatalf("no APIService priority for %s", gv)
		}
		g, v, _ := strings.Cut(gv, "/")
		groupPrio[g] = max(groupPrio[g], p.group)
		versions[g] = append(versions[g], v)
	}
	var groups []string
	for g := range groupPrio {
		if g != "" {
			groups = append(groups, g)
		}
	}
	slices.SortFunc(groups, func(a, b string) int {
		return cmp.Or(cmp.Compare(groupPrio[b], groupPrio[a]), strings.Compare(a, b))
	})
	groups = append([]string{""}, groups...)
	var want []string
	for _, g := range groups {
		vs := versions[g]
		slices.SortFunc(vs, func(a, b string) int {
			return cmp.Or(cmp.Compare(prios[g+"/"+b].version, prios[g+"/"+a].version), -compareKubeAwareVersions(a, b))
		})
		for _, v := range vs {
			want = append(want, g+"/"+v)
		}
	}
	if got := ourServedGVs(); !slices.Equal(got, want) {
		t.Errorf("discovery order\n got: %v\nwant: %v", got, want)
	}
}

// registered is what a storage provider registers for a resource.
type registered struct {
	gv, resource string
	status       bool
	gate         string // the feature gate the storage depends on, if any
}

// storageRegistrations reads `if resource := "x"; ...ResourceEnabled(gv.WithResource(resource)) {...}`
// blocks of a REST storage provider.
func storageRegistrations(t *testing.T, path string) []registered {
	t.Helper()
	f := parseSource(t, path)
	imp := imports(f)
	// GVs passed to functions that take the group version as a parameter
	// (flowcontrol's storage(..., groupVersion)).
	var passedGVs []string
	ast.Inspect(f, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok {
			for _, a := range call.Args {
				if sel, ok := a.(*ast.SelectorExpr); ok && sel.Sel.Name == "SchemeGroupVersion" {
					if id, ok := sel.X.(*ast.Ident); ok && imp[id.Name] != "" {
						passedGVs = append(passedGVs, gvOf(t, imp[id.Name]))
					}
				}
			}
		}
		return true
	})
	var out []registered
	ast.Inspect(f, func(n ast.Node) bool {
		ifs, ok := n.(*ast.IfStmt)
		if !ok {
			return true
		}
		as, ok := ifs.Init.(*ast.AssignStmt)
		if !ok || len(as.Lhs) != 1 || as.Lhs[0].(*ast.Ident).Name != "resource" {
			return true
		}
		lit, ok := as.Rhs[0].(*ast.BasicLit)
		if !ok {
			return true
		}
		resource, _ := strconv.Unquote(lit.Value)
		var gvs []string
		ast.Inspect(ifs.Cond, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "WithResource" {
				return true
			}
			switch x := sel.X.(type) {
			case *ast.SelectorExpr: // alias.SchemeGroupVersion
				gvs = append(gvs, gvOf(t, imp[x.X.(*ast.Ident).Name]))
			case *ast.Ident: // a group version parameter
				gvs = append(gvs, passedGVs...)
			}
			return false
		})
		if len(gvs) == 0 {
			t.Fatalf("%s: resource %q: no group version", path, resource)
		}
		r := registered{resource: resource}
		ast.Inspect(ifs.Body, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.IndexExpr: // storage[resource+"/status"]
				if b, ok := x.Index.(*ast.BinaryExpr); ok {
					if l, ok := b.Y.(*ast.BasicLit); ok && l.Value == `"/status"` {
						r.status = true
					}
				}
			case *ast.CallExpr: // utilfeature.DefaultFeatureGate.Enabled(features.X)
				if sel, ok := x.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Enabled" {
					if inner, ok := sel.X.(*ast.SelectorExpr); ok && inner.Sel.Name == "DefaultFeatureGate" {
						arg := x.Args[0].(*ast.SelectorExpr)
						if p := imp[arg.X.(*ast.Ident).Name]; p != "k8s.io/kubernetes/pkg/features" {
							t.Fatalf("%s: feature gate %s from %s", path, arg.Sel.Name, p)
						}
						r.gate = arg.Sel.Name
					}
				}
			}
			return true
		})
		for _, gv := range gvs {
			r.gv = gv
			out = append(out, r)
		}
		return false
	})
	return out
}

// featureDefaults returns the default of every feature gate of
// pkg/features/kube_features.go at the given minor version.
func featureDefaults(t *testing.T, minor int) map[string]bool {
	t.Helper()
	f := parseSource(t, filepath.Join(sourceDir(t, "k8s.io/kubernetes/pkg/features"), "kube_features.go"))
	out := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		kv, ok := n.(*ast.KeyValueExpr)
		if !ok {
			return true
		}
		name, ok := kv.Key.(*ast.Ident)
		specs, ok2 := kv.Value.(*ast.CompositeLit)
		if !ok || !ok2 {
			return true
		}
		best := -1
		for _, e := range specs.Elts {
			spec, ok := e.(*ast.CompositeLit)
			if !ok {
				return true
			}
			var at int
			var def bool
			for _, field := range spec.Elts {
				fkv := field.(*ast.KeyValueExpr)
				switch fkv.Key.(*ast.Ident).Name {
				case "Version":
					v, _ := strconv.Unquote(fkv.Value.(*ast.CallExpr).Args[0].(*ast.BasicLit).Value)
					_, m, _ := strings.Cut(v, ".")
					at, _ = strconv.Atoi(m)
				case "Default":
					def = fkv.Value.(*ast.Ident).Name == "true"
				}
			}
			if at <= minor && at > best {
				best = at
				out[name.Name] = def
			}
		}
		return false
	})
	return out
}

func TestServedResources(t *testing.T) {
	k8s := sourceDir(t, "k8s.io/kubernetes")
	files, err := filepath.Glob(filepath.Join(k8s, "pkg/registry/*/rest/*.go"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files,
		filepath.Join(sourceDir(t, "k8s.io/apiextensions-apiserver/pkg/apiserver"), "apiserver.go"),
		filepath.Join(sourceDir(t, "k8s.io/kube-aggregator/pkg/registry/apiservice/rest"), "storage_apiservice.go"))
	minor, _ := strconv.Atoi(strings.Split(KubernetesVersion, ".")[1])
	gates := featureDefaults(t, minor)

	served := map[string]bool{}
	for _, gv := range ourServedGVs() {
		served[gv] = true
	}
	want := map[string]registered{} // by group/version/resource
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") || strings.Contains(path, "testapigroup") {
			continue
		}
		for _, r := range storageRegistrations(t, path) {
			if !served[r.gv] {
				continue
			}
			if r.gate != "" {
				on, ok := gates[r.gate]
				if !ok {
					t.Fatalf("%s: unknown feature gate %s", path, r.gate)
				}
				if !on {
					continue
				}
			}
			want[r.gv+"/"+r.resource] = r
		}
	}
	got := map[string]cluster.Resource{}
	for _, r := range Builtin() {
		got[r.GVK.APIVersion()+"/"+r.Plural] = r
		if r.GVK.Group == "" {
			got["/"+r.GVK.APIVersion()+"/"+r.Plural] = r
		}
	}
	for key, w := range want {
		g, ok := got[key]
		if !ok {
			t.Errorf("%s is served by default but not in Builtin", key)
			continue
		}
		if g.Status != w.status {
			t.Errorf("%s: Status = %v, the storage registers status: %v", key, g.Status, w.status)
		}
	}
	for _, r := range Builtin() {
		key := r.GVK.Group + "/" + r.GVK.Version + "/" + r.Plural
		if _, ok := want[key]; !ok {
			t.Errorf("%s is in Builtin but no storage serves it by default", key)
		}
	}
	if len(want) < 60 {
		t.Errorf("only %d resources found in the storage providers", len(want))
	}
}

// storageNames reads a REST storage file: the group resource of its
// DefaultQualifiedResource, its singular and its ShortNames.
func storageNames(t *testing.T, path string) (groupResource, singular string, short []string, ok bool) {
	t.Helper()
	f := parseSource(t, path)
	imp := imports(f)
	vars := map[string]ast.Expr{}
	for _, d := range f.Decls {
		if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.VAR {
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if i < len(vs.Values) {
						vars[name.Name] = vs.Values[i]
					}
				}
			}
		}
	}
	resourceArg := func(e ast.Expr) (string, string) {
		if id, ok := e.(*ast.Ident); ok {
			e = vars[id.Name]
		}
		call, ok := e.(*ast.CallExpr)
		if !ok {
			t.Fatalf("%s: a qualified resource that is not X.Resource(\"...\")", path)
		}
		sel := call.Fun.(*ast.SelectorExpr)
		name, _ := strconv.Unquote(call.Args[0].(*ast.BasicLit).Value)
		return groupOf(t, imp[sel.X.(*ast.Ident).Name]), name
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.KeyValueExpr:
			key, isIdent := x.Key.(*ast.Ident)
			if !isIdent {
				return true
			}
			switch key.Name {
			case "DefaultQualifiedResource":
				g, r := resourceArg(x.Value)
				groupResource = r
				if g != "" {
					groupResource += "." + g
				}
			case "SingularQualifiedResource":
				_, singular = resourceArg(x.Value)
			}
		case *ast.FuncDecl:
			if x.Name.Name == "ShortNames" {
				ret := x.Body.List[0].(*ast.ReturnStmt).Results[0].(*ast.CompositeLit)
				for _, e := range ret.Elts {
					s, _ := strconv.Unquote(e.(*ast.BasicLit).Value)
					short = append(short, s)
				}
				ok = true
			}
		}
		return true
	})
	return groupResource, singular, short, groupResource != ""
}

func TestNamesMatchStorage(t *testing.T) {
	k8s := sourceDir(t, "k8s.io/kubernetes")
	var files []string
	err := filepath.WalkDir(filepath.Join(k8s, "pkg/registry"), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") && !strings.Contains(path, "testapigroup") {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join(sourceDir(t, "k8s.io/apiextensions-apiserver/pkg/registry/customresourcedefinition"), "etcd.go"))

	wantShort := map[string][]string{}
	wantSingular := map[string]string{}
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), "DefaultQualifiedResource:") && !strings.Contains(string(data), "ShortNames()") {
			continue
		}
		gr, singular, short, ok := storageNames(t, path)
		switch {
		case ok:
			wantSingular[gr] = singular
			if len(short) > 0 {
				wantShort[gr] = short
			}
		case strings.HasSuffix(path, "core/componentstatus/rest.go"):
			// componentstatuses has a REST of its own, without a
			// generic store.
			wantShort["componentstatuses"] = short
		case len(short) > 0:
			t.Fatalf("%s: short names %v without DefaultQualifiedResource", path, short)
		}
	}
	// events.k8s.io serves events from the core event storage.
	events, err := os.ReadFile(filepath.Join(k8s, "pkg/registry/events/rest/storage_events.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(events), `"k8s.io/kubernetes/pkg/registry/core/event/storage"`) {
		t.Fatal("events.k8s.io no longer uses the core event storage")
	}
	wantShort["events.events.k8s.io"] = wantShort["events"]
	wantSingular["events.events.k8s.io"] = wantSingular["events"]

	builtin := map[string]cluster.Resource{}
	for _, r := range Builtin() {
		builtin[r.GroupResource()] = r
	}
	for gr, r := range builtin {
		if got, want := r.ShortNames, wantShort[gr]; !slices.Equal(got, want) {
			t.Errorf("%s: ShortNames = %v, storage has %v", gr, got, want)
		}
		if want, ok := wantSingular[gr]; ok && r.Singular != want {
			t.Errorf("%s: Singular = %q, storage has %q", gr, r.Singular, want)
		}
	}
	for gr := range shortNames {
		if _, ok := builtin[gr]; !ok {
			t.Errorf("short names for %s, which Builtin does not serve", gr)
		}
	}
	t.Logf("%d resources with short names, %d singulars checked", len(shortNames), len(wantSingular))
}

func TestBuiltin(t *testing.T) {
	rs := Builtin()
	seen := map[string]bool{}
	for _, r := range rs {
		key := r.GVK.String()
		if seen[key] {
			t.Errorf("%s twice", key)
		}
		seen[key] = true
		if !r.Strategic || r.Plural == "" || r.Singular != strings.ToLower(r.GVK.Kind) {
			t.Errorf("%s: %+v", key, r)
		}
	}
	// Spot checks of the generated table.
	tests := []struct {
		gr         string
		namespaced bool
		status     bool
		short      []string
	}{
		{gr: "pods", namespaced: true, status: true, short: []string{"po"}},
		{gr: "namespaces", namespaced: false, status: true, short: []string{"ns"}},
		{gr: "configmaps", namespaced: true, status: false, short: []string{"cm"}},
		{gr: "deployments.apps", namespaced: true, status: true, short: []string{"deploy"}},
		{gr: "customresourcedefinitions.apiextensions.k8s.io", namespaced: false, status: true, short: []string{"crd", "crds"}},
		{gr: "clusterroles.rbac.authorization.k8s.io", namespaced: false, status: false},
		{gr: "localsubjectaccessreviews.authorization.k8s.io", namespaced: true, status: false},
	}
	for _, tt := range tests {
		t.Run(tt.gr, func(t *testing.T) {
			i := slices.IndexFunc(rs, func(r cluster.Resource) bool { return r.GroupResource() == tt.gr })
			if i < 0 {
				t.Fatalf("%s not served", tt.gr)
			}
			r := rs[i]
			if r.Namespaced != tt.namespaced || r.Status != tt.status || !slices.Equal(r.ShortNames, tt.short) {
				t.Errorf("%+v", r)
			}
		})
	}
	if rs[0].GVK.Group != "" || rs[len(rs)-1].GVK.Group != "storagemigration.k8s.io" {
		t.Errorf("order: first %v, last %v", rs[0].GVK, rs[len(rs)-1].GVK)
	}
	t.Logf("%d resources", len(rs))
}

func TestCompareKubeAwareVersions(t *testing.T) {
	ordered := []string{"v10", "v2", "v1", "v11beta2", "v10beta3", "v3beta1", "v12alpha1", "v11alpha2", "foo1", "foo10", "v", "v1.0"}
	for i, a := range ordered {
		for j, b := range ordered {
			t.Run(fmt.Sprintf("%s_%s", a, b), func(t *testing.T) {
				got := compareKubeAwareVersions(a, b)
				if (got > 0) != (i < j) || (got == 0) != (i == j) {
					t.Errorf("compareKubeAwareVersions(%q, %q) = %d", a, b, got)
				}
			})
		}
	}
}
