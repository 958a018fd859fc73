package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/konverge/konverge/internal/golden"
)

// mergeCase is testdata/merge/<name>/case.yaml: what a case expects beyond
// its golden files.
type mergeCase struct {
	Description string `json:"description"`
	// Overwrite false runs with --overwrite=false.
	Overwrite *bool `json:"overwrite"`
	// Error, when set, is a substring of the error the merge must fail with.
	Error string `json:"error"`
	// Deviation marks cases where konverge deliberately differs from kubectl.
	Deviation bool `json:"deviation"`
}

func loadMergeCase(t *testing.T, dir string) mergeCase {
	t.Helper()
	var c mergeCase
	b, err := os.ReadFile(filepath.Join(dir, "case.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(b, &c); err != nil {
		t.Fatalf("case.yaml: %v", err)
	}
	return c
}

// TestMergeCases runs konverge merge on every case of testdata/merge and
// compares its output with result.yaml and patch.json.
func TestMergeCases(t *testing.T) {
	dirs, err := filepath.Glob("../../testdata/merge/*")
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Fatal("no cases under testdata/merge")
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			c := loadMergeCase(t, dir)
			o := &MergeOptions{
				Config:    filepath.Join(dir, "config.yaml"),
				Live:      filepath.Join(dir, "live.yaml"),
				Overwrite: c.Overwrite == nil || *c.Overwrite,
			}
			if _, err := os.Stat(filepath.Join(dir, "last-applied.yaml")); err == nil {
				o.LastApplied = filepath.Join(dir, "last-applied.yaml")
			}
			var out bytes.Buffer
			err := o.Run(context.Background(), &out)
			if c.Error != "" {
				if err == nil {
					t.Fatalf("want an error containing %q, got none; output:\n%s", c.Error, out.String())
				}
				if !strings.Contains(err.Error(), c.Error) {
					t.Fatalf("want an error containing %q, got: %v", c.Error, err)
				}
				golden.Assert(t, filepath.Join(dir, "error.txt"), []byte(err.Error()+"\n"))
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, filepath.Join(dir, "result.yaml"), out.Bytes())

			out.Reset()
			o.Patch = true
			if err := o.Run(context.Background(), &out); err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, filepath.Join(dir, "patch.json"), out.Bytes())
		})
	}
}
