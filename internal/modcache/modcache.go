// Package modcache finds the source of a Go module in the module cache,
// fetching it there first when it is missing. The code generators (the
// commands under */internal/gen) read upstream Kubernetes files with it:
// k8s.io/kubernetes is far too large a dependency for konverge's go.mod,
// so it is fetched from a throwaway module that nothing imports.
//
// With GOFLAGS=-mod=mod and GOPROXY=off (CI's generate check) it answers
// from the module cache alone and fails, naming the module, when the
// cache lacks it.
package modcache

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// Env is the environment for go commands run in a throwaway module: the
// caller's, with -mod=mod (the throwaway go.mod may be rewritten) and no
// workspace (a go.work around the caller must not reach in).
func Env() []string {
	return append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
}

// Dir returns the directory of module@version in the module cache,
// running `go mod download` in a temporary module so that the caller's
// go.mod is left alone.
func Dir(module, version string) (string, error) {
	tmp, err := os.MkdirTemp("", "konverge-modcache-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	if err := os.WriteFile(filepath.Join(tmp, "go.mod"), []byte("module modcache\n"), 0o644); err != nil {
		return "", err
	}
	cmd := exec.Command("go", "mod", "download", "-json", module+"@"+version)
	cmd.Dir, cmd.Env = tmp, Env()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	// go mod download -json reports a module it cannot fetch in its
	// output's Error, with a non-zero exit status.
	var info struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &info); jerr == nil && info.Error != "" {
		return "", fmt.Errorf("go mod download %s@%s: %s", module, version, info.Error)
	}
	if err != nil {
		return "", fmt.Errorf("go mod download %s@%s: %w: %s", module, version, err, strings.TrimSpace(stderr.String()))
	}
	if info.Dir == "" {
		return "", errors.New("go mod download " + module + "@" + version + ": no directory in its output")
	}
	return info.Dir, nil
}

// OpenAPIv3Files lists, sorted, the OpenAPI v3 documents the generators
// read: every *.json of specDir, or when specDir is empty, of
// k8s.io/kubernetes@version's api/openapi-spec/v3 in the module cache.
// An empty directory is an error.
func OpenAPIv3Files(version, specDir string) ([]string, error) {
	if specDir == "" {
		dir, err := Dir("k8s.io/kubernetes", version)
		if err != nil {
			return nil, err
		}
		specDir = filepath.Join(dir, "api", "openapi-spec", "v3")
	}
	files, err := filepath.Glob(filepath.Join(specDir, "*.json"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no OpenAPI documents in %s", specDir)
	}
	slices.Sort(files)
	return files, nil
}
