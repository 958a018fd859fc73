package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/schema"
)

var configMapGVK = schema.GVK{Version: "v1", Kind: "ConfigMap"}

// built is the konverge binary that the tests running it share: the
// first to need it builds it (two parallel builds of one binary cost
// twice the CPU), the last to finish removes it.
var built struct {
	sync.Mutex
	dir   string
	users int
}

// buildKonverge returns the konverge binary, built into a temporary
// directory.
func buildKonverge(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the konverge binary; skipped with -short")
	}
	built.Lock()
	defer built.Unlock()
	if built.dir == "" {
		dir, err := os.MkdirTemp("", "konverge-bin-")
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, "konverge"), "github.com/konverge/konverge/cmd/konverge")
		if out, err := cmd.CombinedOutput(); err != nil {
			os.RemoveAll(dir)
			t.Fatalf("go build: %v\n%s", err, out)
		}
		built.dir = dir
	}
	built.users++
	t.Cleanup(func() {
		built.Lock()
		defer built.Unlock()
		if built.users--; built.users == 0 {
			os.RemoveAll(built.dir)
			built.dir = ""
		}
	})
	return filepath.Join(built.dir, "konverge")
}

func configMapYAML(name, key, value string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata:\n  %s: %q\n", name, key, value)
}

// TestConcurrentProcesses runs two konverge processes at once against one
// state, each applying its own objects many times (and, when the patch
// command exists, both patching one ConfigMap with their own keys), and
// checks that no update is lost: the store's lock makes the second process
// wait for the first.
func TestConcurrentProcesses(t *testing.T) {
	t.Parallel()
	bin := buildKonverge(t)
	state := t.TempDir()
	inputs := t.TempDir()
	const n = 8
	withPatch := hasSubcommand("patch")
	if withPatch {
		writeFile(t, filepath.Join(inputs, "shared.yaml"), []byte(configMapYAML("shared", "init", "0")))
		if out, err := exec.Command(bin, "--state", state, "apply", "-f", filepath.Join(inputs, "shared.yaml")).CombinedOutput(); err != nil {
			t.Fatalf("apply shared: %v\n%s", err, out)
		}
	} else {
		t.Log("no patch command in this build: the shared ConfigMap part is skipped")
	}

	var wg sync.WaitGroup
	errs := make(chan error, 2*n*2)
	for _, who := range []string{"a", "b"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range n {
				f := filepath.Join(inputs, fmt.Sprintf("%s-%d.yaml", who, i))
				writeFile(t, f, []byte(configMapYAML(fmt.Sprintf("%s-%d", who, i), "writer", who)))
				if out, err := exec.Command(bin, "--state", state, "apply", "-f", f).CombinedOutput(); err != nil {
					errs <- fmt.Errorf("%s: apply %d: %v\n%s", who, i, err, out)
					return
				}
				if withPatch {
					patch := fmt.Sprintf(`{"data":{"%s-%d":"x"}}`, who, i)
					if out, err := exec.Command(bin, "--state", state, "patch", "configmap", "shared", "--type=merge", "-p", patch).CombinedOutput(); err != nil {
						errs <- fmt.Errorf("%s: patch %d: %v\n%s", who, i, err, out)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	st, err := local.Open(state, local.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	for _, who := range []string{"a", "b"} {
		for i := range n {
			obj, err := st.Get(ctx, configMapGVK, "default", fmt.Sprintf("%s-%d", who, i))
			if err != nil {
				t.Errorf("%s-%d: %v", who, i, err)
				continue
			}
			if got := obj["data"].(map[string]any)["writer"]; got != who {
				t.Errorf("%s-%d: writer %v", who, i, got)
			}
		}
	}
	if withPatch {
		obj, err := st.Get(ctx, configMapGVK, "default", "shared")
		if err != nil {
			t.Fatal(err)
		}
		data := obj["data"].(map[string]any)
		for _, who := range []string{"a", "b"} {
			for i := range n {
				if _, ok := data[fmt.Sprintf("%s-%d", who, i)]; !ok {
					t.Errorf("shared: key %s-%d lost", who, i)
				}
			}
		}
	}
}
