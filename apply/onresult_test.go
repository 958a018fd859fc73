package apply_test

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/konverge/konverge/apply"
	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/manifest"
	"github.com/konverge/konverge/value"
)

// onResultInput is prune/v2 with a Secret changed, a ConfigMap and a
// Namespace created: every action, a masked Secret, and an object written
// before those that come before it in the input.
func onResultInput(t *testing.T) []manifest.Object {
	return append(read(t, "prune/v2"), parse(t, `
apiVersion: v1
kind: Secret
metadata: {name: creds, labels: {app: nginx}}
stringData: {password: new-passw0rd}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: fresh, labels: {app: nginx}}
data: {k: v}
---
apiVersion: v1
kind: Namespace
metadata: {name: team}
`)...)
}

// onResultStore is a cluster with prune/v1 and a Secret applied.
func onResultStore(t *testing.T) *local.Store {
	s := openStore(t)
	mustApply(t, s, apply.Options{}, append(read(t, "prune/v1"), parse(t, `
apiVersion: v1
kind: Secret
metadata: {name: creds, labels: {app: nginx}}
stringData: {password: old-passw0rd}
`)...))
	return s
}

// TestOnResult: with Options.OnResult, Apply hands over the results it
// would return (settled: Drift, a Secret's values masked and kept for
// Unmasked), pruned objects included, and returns none; on a Batcher each
// one as soon as its write is made.
func TestOnResult(t *testing.T) {
	for _, b := range backends {
		for _, dry := range []apply.DryRun{apply.DryRunServer, apply.DryRunNone} {
			t.Run(fmt.Sprintf("%s/%q", b.name, dry), func(t *testing.T) {
				opts := apply.Options{DryRun: dry, Prune: true, Selector: "app=nginx"}
				want := mustApply(t, b.wrap(onResultStore(t)), opts, onResultInput(t))

				s := onResultStore(t)
				var got []apply.Result
				progressed, early := 0, false
				opts.Progress = func(p apply.Progress) {
					if p.Step == apply.StepApply {
						progressed++
					}
				}
				opts.OnResult = func(r apply.Result) {
					if len(got) == 0 && progressed < 3 {
						early = true
					}
					got = append(got, r)
				}
				if res := mustApply(t, b.wrap(s), opts, onResultInput(t)); res != nil {
					t.Errorf("Apply returned %d results with OnResult", len(res))
				}
				if g, w := describeResults(t, got), describeResults(t, want); g != w {
					t.Errorf("handed over:\n%s\nwant Apply's:\n%s", g, w)
				}
				if batched := b.name == "batch"; batched != early {
					t.Errorf("first result handed over early %v, want %v (batched)", early, batched)
				}
				for _, r := range got {
					if r.Ref.Kind == "Secret" && strings.Contains(toYAML(t, []any{r.Object, r.Live, r.Patch}), "passw0rd") {
						t.Errorf("Secret values not masked: %v", r.Object)
					}
				}
			})
		}
	}
}

// describeResults prints results with everything they hold, sorted, and
// without the uids and cluster IPs the store makes up.
func describeResults(t *testing.T, results []apply.Result) string {
	var out []string
	for _, r := range results {
		plain := r.Unmasked()
		var b strings.Builder
		fmt.Fprintf(&b, "%s drift=%v patchType=%q warnings=%q\n", r, r.Drift, r.PatchType, r.Warnings)
		for _, o := range []map[string]any{r.Object, r.Live, r.Patch, plain.Object, plain.Live, plain.Patch} {
			b.WriteString(toYAML(t, withoutUID(o)))
		}
		out = append(out, ips.ReplaceAllString(b.String(), "<ip>"))
	}
	slices.Sort(out)
	return strings.Join(out, "---\n")
}

var ips = regexp.MustCompile(`\b10\.\d+\.\d+\.\d+\b`)

func withoutUID(o map[string]any) map[string]any {
	if o == nil {
		return nil
	}
	c := value.DeepCopyObject(o)
	if md, ok := c["metadata"].(map[string]any); ok {
		delete(md, "uid")
	}
	return c
}
