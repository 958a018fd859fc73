package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestResourceOf(t *testing.T) {
	tests := []struct {
		name, path string
		group      string
		plural     string
		sub        string
		namespaced bool
		ok         bool
	}{
		{name: "namespaced collection", path: "/apis/apps/v1/namespaces/{namespace}/deployments", group: "apps", plural: "deployments", namespaced: true, ok: true},
		{name: "namespaced item", path: "/apis/apps/v1/namespaces/{namespace}/deployments/{name}", group: "apps", plural: "deployments", namespaced: true, ok: true},
		{name: "status", path: "/apis/apps/v1/namespaces/{namespace}/deployments/{name}/status", group: "apps", plural: "deployments", sub: "status", namespaced: true, ok: true},
		{name: "all namespaces list", path: "/apis/apps/v1/deployments", group: "apps", plural: "deployments", ok: true},
		{name: "core cluster-scoped", path: "/api/v1/nodes/{name}", plural: "nodes", ok: true},
		{name: "namespaces itself", path: "/api/v1/namespaces/{name}", plural: "namespaces", ok: true},
		{name: "namespace status", path: "/api/v1/namespaces/{name}/status", plural: "namespaces", sub: "status", ok: true},
		{name: "proxy with path", path: "/api/v1/nodes/{name}/proxy/{path}", plural: "nodes", sub: "proxy", ok: true},
		{name: "group root", path: "/apis/apps/v1/", ok: false},
		{name: "discovery", path: "/apis/apps/", ok: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			group, _, rest, ok := splitPath(tt.path)
			if ok && len(rest) > 0 && rest[0] != "" {
				var plural, sub string
				var namespaced bool
				plural, sub, namespaced, ok = resourceOf(rest)
				if ok && (group != tt.group || plural != tt.plural || sub != tt.sub || namespaced != tt.namespaced) {
					t.Errorf("%s: got %q %q %q %v", tt.path, group, plural, sub, namespaced)
				}
			} else {
				ok = false
			}
			if ok != tt.ok {
				t.Errorf("%s: ok = %v, want %v", tt.path, ok, tt.ok)
			}
		})
	}
}

// TestGeneratedIsCurrent regenerates the table from the OpenAPI documents
// in the module cache and compares it with the committed one.
func TestGeneratedIsCurrent(t *testing.T) {
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Skip(err)
	}
	spec := filepath.Join(strings.TrimSpace(string(out)), "k8s.io", "kubernetes@v1.37.1", "api", "openapi-spec", "v3")
	if _, err := os.Stat(spec); err != nil {
		t.Skipf("k8s.io/kubernetes@v1.37.1 is not in the module cache: %v", err)
	}
	dir := t.TempDir()
	if err := run("v1.37.1", spec, dir); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "zz_generated.go"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("..", "..", "zz_generated.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("kinds/zz_generated.go is out of date: run go generate ./kinds")
	}
}
