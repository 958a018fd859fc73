package diff_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/konverge/konverge/apply"
	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/diff"
	"github.com/konverge/konverge/manifest"
)

// TestRunUnifiedMatchesRun: RunUnified writes byte for byte what Run's
// report writes with WriteUnified, with the same warnings and exit
// status, on creates, updates, unchanged objects, prunes, Secrets and
// many objects rendered on several goroutines.
func TestRunUnifiedMatchesRun(t *testing.T) {
	cases := []struct {
		name   string
		seed   []manifest.Object
		input  []manifest.Object
		opts   diff.Options
		render diff.RenderOptions
	}{{
		name:  "update",
		seed:  read(t, "seed/simple_deployment.yaml"),
		input: read(t, "seed/update_deployment.yaml"),
	}, {
		name:  "unchanged deployment",
		seed:  read(t, "seed/simple_deployment.yaml"),
		input: read(t, "seed/simple_deployment.yaml"),
	}, {
		name:   "prune, colored",
		seed:   read(t, "prune/v1"),
		input:  read(t, "prune/v2"),
		opts:   diff.Options{Prune: true, Selector: "app=nginx"},
		render: diff.RenderOptions{Color: true, Context: 1},
	}, {
		name: "secret and creates",
		seed: parse(t, `
apiVersion: v1
kind: Secret
metadata: {name: creds}
stringData: {user: admin-user, password: old-passw0rd}
`),
		input: parse(t, `
apiVersion: v1
kind: Secret
metadata: {name: creds}
stringData: {user: admin-user, password: new-passw0rd}
---
apiVersion: v1
kind: Namespace
metadata: {name: team}
---
apiVersion: v1
kind: Secret
metadata: {name: fresh}
stringData: {token: fresh-t0ken}
`),
	}, {
		name:  "server-side",
		seed:  read(t, "seed/simple_deployment.yaml"),
		input: read(t, "seed/update_deployment.yaml"),
		opts:  diff.Options{Options: apply.Options{ServerSide: true, FieldManager: "kubectl", ForceConflicts: true}},
	}, {
		name:  "many",
		seed:  benchObjects(300, 0),
		input: benchObjects(300, 1),
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := openStore(t)
			// An object without the last-applied annotation gets a warning.
			if _, err := s.Create(context.Background(), map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"name": "unannotated", "labels": map[string]any{"app": "nginx"}},
				"data":     map[string]any{"k": "old"}}); err != nil {
				t.Fatal(err)
			}
			mustApply(t, s, tc.seed)
			input := append(slices.Clone(tc.input), parse(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: unannotated, labels: {app: nginx}}, data: {k: new}}`)...)

			r, err := diff.New(s, tc.opts).Run(context.Background(), input)
			if err != nil {
				t.Fatal(err)
			}
			var want bytes.Buffer
			if err := r.WriteUnified(&want, tc.render); err != nil {
				t.Fatal(err)
			}
			var wantWarnings []string
			for _, e := range r.Entries {
				wantWarnings = append(wantWarnings, e.Warnings...)
			}

			u, err := diff.New(s, tc.opts).RunUnified(context.Background(), input, tc.render)
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			n, err := u.WriteTo(&got)
			if err != nil || n != int64(got.Len()) {
				t.Fatalf("WriteTo: %d, %v (wrote %d)", n, err, got.Len())
			}
			// The uids of created objects are made up by each dry run.
			if g, w := stable(got.Bytes()), stable(want.Bytes()); !bytes.Equal(g, w) {
				t.Errorf("RunUnified wrote:\n%s\nRun's report:\n%s", g, w)
			}
			if want.Len() == 0 {
				t.Errorf("no differences to compare")
			}
			if g, w := u.Warnings(), wantWarnings; !slices.Equal(g, w) {
				t.Errorf("warnings %q, want %q", g, w)
			}
			if g, w := u.ExitCode(), diff.ExitCode(r, nil); g != w || u.HasDifferences() != r.HasDifferences() {
				t.Errorf("exit code %d, want %d", g, w)
			}
			for _, v := range []string{"passw0rd", "fresh-t0ken", "admin-user"} {
				if strings.Contains(got.String(), v) {
					t.Errorf("a Secret value shows: %q", v)
				}
			}
		})
	}
}

// TestRunUnifiedErrors: an apply error is Run's, with no Unified.
func TestRunUnifiedErrors(t *testing.T) {
	s := openStore(t)
	_, runErr := diff.New(s, diff.Options{}).Run(context.Background(), read(t, "invalid"))
	u, err := diff.New(s, diff.Options{}).RunUnified(context.Background(), read(t, "invalid"), diff.RenderOptions{})
	if err == nil || u != nil {
		t.Fatalf("RunUnified: %v, %v", u, err)
	}
	if err.Error() != runErr.Error() {
		t.Errorf("error %v, want Run's %v", err, runErr)
	}
	var se *cluster.StatusError
	if !errors.As(err, &se) {
		t.Errorf("error %T, want apply's", err)
	}
}
