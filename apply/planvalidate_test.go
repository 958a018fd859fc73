package apply_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/konverge/konverge/apply"
	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/manifest"
)

// uids are the uids in messages: the server's are random, a plan's a
// stand-in.
var uids = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// TestPlanValidatesAsApply: Plan reports what Apply refuses, in the same
// words and types, on every case of the validation corpus
// (testdata/validate, recorded from kube-apiserver) and of the bad inputs:
// for each, an embedded cluster holds the case's old object, and the plan
// of the new one fails exactly when applying it does, with the same
// errors.
func TestPlanValidatesAsApply(t *testing.T) {
	files, err := filepath.Glob("../testdata/validate/*/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	bad, _ := filepath.Glob("../testdata/apply/invalid/*.yaml")
	files = append(files, bad...)
	ctx := context.Background()
	refused := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var tc struct {
			Old    map[string]any `json:"old"`
			Object map[string]any `json:"object"`
		}
		var objs []manifest.Object
		if filepath.Base(filepath.Dir(f)) == "invalid" {
			if objs, err = manifest.Parse(ctx, filepath.Base(f), data); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
		} else {
			if err := yaml.Unmarshal(data, &tc); err != nil || tc.Object == nil {
				continue // not a case
			}
			objs = apply.Objects(tc.Object)
		}
		t.Run(f, func(t *testing.T) {
			c, err := local.Open(t.TempDir(), local.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			a := apply.New(c, apply.Options{})
			if tc.Old != nil {
				if _, err := a.Apply(ctx, apply.Objects(tc.Old)); err != nil {
					t.Skipf("the old object is refused: %v", err)
				}
			}
			_, planErr := a.Plan(ctx, objs)
			_, applyErr := a.Apply(ctx, objs)
			switch {
			case applyErr == nil && planErr != nil:
				t.Errorf("Plan refuses what Apply accepts:\n%v", planErr)
			case applyErr != nil && planErr == nil:
				t.Errorf("Plan accepts what Apply refuses:\n%v", applyErr)
			case applyErr != nil && uids.ReplaceAllString(planErr.Error(), "UID") != uids.ReplaceAllString(applyErr.Error(), "UID"):
				t.Errorf("Plan and Apply differ:\nplan:  %v\napply: %v", planErr, applyErr)
			case applyErr != nil:
				refused++
			}
		})
	}
	if refused < 50 {
		t.Errorf("only %d cases refused: the corpus is not read", refused)
	}
}
