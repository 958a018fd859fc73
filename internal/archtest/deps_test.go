// Package archtest checks that konverge's packages import in one direction:
// the merge engine stands alone, so that GitOps tools can import it without
// a CLI, a cluster or client-go behind it.
package archtest

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/konverge/konverge"

// allowed lists, for each library package, the packages of this module it
// may depend on (directly or not).
var allowed = map[string][]string{
	"apimeta":                     {"schema", "value"},
	"value":                       {},
	"schema":                      {},
	"openapi":                     {"openapi/internal/smdjson", "schema"},
	"merge":                       {"schema", "value"},
	"lastapplied":                 {"value"},
	"selector":                    {},
	"quantity":                    {},
	"clock":                       {},
	"internal/parallel":           {},
	"objref":                      {"schema"},
	"cluster":                     {"apimeta", "schema", "value"},
	"kinds":                       {"apimeta", "schema", "value"},
	"manifest":                    {"internal/parallel", "value"},
	"defaults":                    {"quantity", "value"},
	"validate":                    {"apimeta", "quantity", "schema", "value"},
	"prune":                       {"apimeta", "cluster", "lastapplied", "objref", "schema", "value"},
	"mask":                        {"lastapplied", "objref", "schema", "value"},
	"health":                      {},
	"wait":                        {"apimeta", "cluster", "health", "objref", "schema", "value"},
	"normalize":                   {"defaults", "lastapplied", "objref", "quantity", "schema", "value"},
	"apply":                       {"apimeta", "cluster", "defaults", "internal/parallel", "kinds", "lastapplied", "manifest", "mask", "merge", "normalize", "objref", "prune", "quantity", "schema", "selector", "validate", "value"},
	"diff":                        {"apimeta", "apply", "cluster", "defaults", "internal/parallel", "kinds", "lastapplied", "manifest", "mask", "merge", "normalize", "objref", "prune", "quantity", "schema", "selector", "validate", "value"},
	"cluster/local":               {"apimeta", "cluster", "cluster/local/internal/admission", "cluster/local/internal/fieldmgr", "cluster/local/internal/jsonobj", "cluster/local/internal/podres", "cluster/local/internal/strategy", "cluster/local/internal/usage", "defaults", "internal/parallel", "kinds", "merge", "openapi", "openapi/internal/smdjson", "quantity", "schema", "selector", "validate", "value"},
	"controller":                  {"apimeta", "cluster", "schema", "value"},
	"controller/deployment":       {"apimeta", "cluster", "controller", "controller/event", "controller/internal/kobj", "controller/internal/podhash", "controller/internal/reconcile", "schema", "selector", "value"},
	"controller/replicaset":       {"apimeta", "cluster", "controller", "controller/event", "controller/internal/kobj", "controller/internal/podmemo", "controller/internal/reconcile", "schema", "selector", "value"},
	"controller/replication":      {"apimeta", "cluster", "controller", "controller/event", "controller/internal/kobj", "controller/internal/podmemo", "controller/internal/reconcile", "controller/replicaset", "schema", "selector", "value"},
	"controller/gc":               {"apimeta", "cluster", "controller", "controller/event", "controller/internal/kobj", "schema", "value"},
	"controller/controlplane":     {"apimeta", "cluster", "controller", "schema", "value"},
	"controller/event":            {"apimeta", "cluster", "controller", "controller/internal/kobj", "schema", "value"},
	"controller/statefulset":      {"apimeta", "cluster", "controller", "controller/event", "controller/internal/claim", "controller/internal/history", "controller/internal/kobj", "controller/internal/podmemo", "controller/internal/reconcile", "schema", "selector", "value"},
	"controller/daemonset":        {"apimeta", "cluster", "controller", "controller/event", "controller/internal/claim", "controller/internal/history", "controller/internal/kobj", "controller/internal/podhash", "controller/internal/podmemo", "controller/internal/reconcile", "nodefit", "quantity", "schema", "selector", "value"},
	"controller/cronjob":          {"apimeta", "cluster", "controller", "controller/event", "controller/internal/kobj", "controller/internal/reconcile", "schema", "value"},
	"controller/job":              {"apimeta", "cluster", "controller", "controller/event", "controller/internal/claim", "controller/internal/kobj", "controller/internal/podmemo", "controller/internal/reconcile", "schema", "selector", "value"},
	"controller/node":             {"apimeta", "cluster", "controller", "controller/event", "controller/internal/kobj", "nodefit", "quantity", "schema", "value"},
	"controller/persistentvolume": {"apimeta", "cluster", "controller", "controller/event", "controller/internal/kobj", "quantity", "schema", "selector", "value"},
	"controller/volumeprotection": {"apimeta", "cluster", "controller", "controller/internal/kobj", "schema", "value"},
	"controller/endpoint":         {"apimeta", "cluster", "controller", "controller/event", "controller/internal/kobj", "controller/internal/reconcile", "controller/internal/svcpods", "schema", "value"},
	"controller/endpointslice":    {"apimeta", "cluster", "controller", "controller/event", "controller/internal/kobj", "controller/internal/reconcile", "controller/internal/svcpods", "schema", "value"},
	"controller/disruption":       {"apimeta", "cluster", "controller", "controller/event", "controller/internal/kobj", "schema", "selector", "value"},
	"controller/podgc":            {"apimeta", "cluster", "controller", "controller/internal/kobj", "schema", "value"},
	"controller/podautoscaler":    {"apimeta", "cluster", "controller", "controller/event", "controller/internal/kobj", "schema", "selector", "value"},
	"kubelet":                     {"apimeta", "cluster", "controller", "controller/event", "controller/internal/kobj", "nodefit", "quantity", "scheduler", "schema", "selector", "value"},
	"scheduler":                   {"nodefit", "quantity", "selector"},
	"nodefit":                     {"quantity"},
	"sim":                         {"apimeta", "clock", "cluster", "cluster/local", "cluster/local/internal/admission", "cluster/local/internal/fieldmgr", "cluster/local/internal/jsonobj", "cluster/local/internal/podres", "cluster/local/internal/strategy", "cluster/local/internal/usage", "controller", "controller/controlplane", "controller/cronjob", "controller/daemonset", "controller/deployment", "controller/disruption", "controller/endpoint", "controller/endpointslice", "controller/event", "controller/gc", "controller/internal/claim", "controller/internal/history", "controller/internal/kobj", "controller/internal/podhash", "controller/internal/podmemo", "controller/internal/reconcile", "controller/internal/svcpods", "controller/job", "controller/node", "controller/persistentvolume", "controller/podautoscaler", "controller/podgc", "controller/replicaset", "controller/replication", "controller/statefulset", "controller/volumeprotection", "defaults", "internal/parallel", "kinds", "kubelet", "merge", "nodefit", "openapi", "openapi/internal/smdjson", "quantity", "scheduler", "schema", "selector", "validate", "value"},

	// The embedded API server's units below its registry (package
	// cluster/local): admission sees the cluster only through its Store
	// interface, and none of them sees the storage (TestStorageFree).
	"cluster/local/internal/admission": {"apimeta", "cluster", "cluster/local/internal/jsonobj", "cluster/local/internal/podres", "cluster/local/internal/usage", "quantity", "schema", "value"},
	"cluster/local/internal/usage":     {"cluster/local/internal/jsonobj", "cluster/local/internal/podres", "quantity", "value"},
	"cluster/local/internal/podres":    {"cluster/local/internal/jsonobj", "quantity", "value"},
	"cluster/local/internal/jsonobj":   {},
	"cluster/local/internal/fieldmgr":  {"apimeta", "cluster", "cluster/local/internal/jsonobj", "openapi", "openapi/internal/smdjson", "schema", "value"},
	"cluster/local/internal/strategy":  {"apimeta", "cluster", "cluster/local/internal/jsonobj", "cluster/local/internal/podres", "defaults", "quantity", "schema", "validate", "value"},
}

// forbidden are dependencies no library package may have.
var forbidden = []string{
	"k8s.io/client-go",
	"k8s.io/kubectl",
	"k8s.io/apimachinery/pkg/util/strategicpatch",
	"k8s.io/apimachinery/pkg/util/jsonmergepatch",
	"github.com/spf13/cobra",
}

// storageFree are the packages of the embedded API server that must not
// depend on its storage (bbolt): what they read of the cluster, they read
// through an interface the registry implements.
var storageFree = []string{
	"cluster/local/internal/admission",
	"cluster/local/internal/usage",
	"cluster/local/internal/podres",
	"cluster/local/internal/jsonobj",
	"cluster/local/internal/fieldmgr",
	"cluster/local/internal/strategy",
}

func TestStorageFree(t *testing.T) {
	for _, pkg := range storageFree {
		out, err := exec.Command("go", "list", "-deps", module+"/"+pkg).Output()
		if err != nil {
			t.Fatalf("go list: %v", err)
		}
		for _, dep := range strings.Fields(string(out)) {
			if dep == "go.etcd.io/bbolt" || strings.HasPrefix(dep, "go.etcd.io/bbolt/") {
				t.Errorf("%s depends on %s", pkg, dep)
			}
		}
	}
}

// allowedExternal are packages under a forbidden path that library
// packages may use: what kubectl itself runs, which imports nothing else
// of client-go.
var allowedExternal = map[string]bool{
	"k8s.io/client-go/util/csaupgrade": true,
	"k8s.io/client-go/util/jsonpath":   true,
}

func TestImportDirection(t *testing.T) {
	for pkg, ok := range allowed {
		t.Run(pkg, func(t *testing.T) {
			out, err := exec.Command("go", "list", "-deps", module+"/"+pkg).Output()
			if err != nil {
				t.Fatalf("go list: %v", err)
			}
			allowedSet := map[string]bool{module + "/" + pkg: true}
			for _, a := range ok {
				allowedSet[module+"/"+a] = true
			}
			for _, dep := range strings.Fields(string(out)) {
				if strings.HasPrefix(dep, module+"/") && !allowedSet[dep] {
					t.Errorf("%s depends on %s", pkg, dep)
				}
				if allowedExternal[dep] {
					continue
				}
				for _, f := range forbidden {
					if dep == f || strings.HasPrefix(dep, f+"/") {
						t.Errorf("%s depends on %s", pkg, dep)
					}
				}
			}
		})
	}
}

// TestNoReferenceInProduct fails when code outside tests imports the
// reference merge implementations that konverge is compared against, or
// when a package outside the CLI (internal/..., cmd/...) imports kubectl:
// the CLI may use kubectl's packages for CLI-only features (explain).
func TestNoReferenceInProduct(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}: {{join .Imports " "}}`, module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, _, _ := strings.Cut(line, ":")
		cli := strings.HasPrefix(pkg, module+"/internal/") || strings.HasPrefix(pkg, module+"/cmd/")
		for _, f := range []string{"k8s.io/apimachinery/pkg/util/strategicpatch", "k8s.io/apimachinery/pkg/util/jsonmergepatch", "k8s.io/kubectl"} {
			if f == "k8s.io/kubectl" && cli {
				continue
			}
			if strings.Contains(line, " "+f) || strings.Contains(line, ": "+f) {
				t.Errorf("product code imports %s: %s", f, line)
			}
		}
	}
}

// TestCLIHelpers checks the arrows inside the CLI: internal/cli imports
// its helper packages, never the other way. The generators of the create
// commands (internal/cli/generate) are functions from options to objects:
// they import no package of this module and no flag library. The shared
// flags (internal/cli/flags) import no command.
func TestCLIHelpers(t *testing.T) {
	cli := module + "/internal/cli"
	for _, c := range []struct {
		pkg    string
		refuse func(dep string) bool
	}{
		{cli + "/generate", func(dep string) bool {
			return strings.HasPrefix(dep, module+"/") || strings.HasPrefix(dep, "github.com/spf13/")
		}},
		{cli + "/flags", func(dep string) bool { return dep == cli || strings.HasPrefix(dep, cli+"/") }},
	} {
		out, err := exec.Command("go", "list", "-deps", c.pkg).Output()
		if err != nil {
			t.Fatalf("go list: %v", err)
		}
		for _, dep := range strings.Fields(string(out)) {
			if dep != c.pkg && c.refuse(dep) {
				t.Errorf("%s depends on %s", strings.TrimPrefix(c.pkg, module+"/"), dep)
			}
		}
	}
}
