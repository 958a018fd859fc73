package diff_test

import (
	"context"
	"fmt"
	"os"

	"github.com/konverge/konverge/apply"
	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/diff"
)

// Diff shows what applying would change, as kubectl diff does, and maps
// the outcome to kubectl diff's exit status.
func ExampleDiffer_Run() {
	dir, _ := os.MkdirTemp("", "konverge-example")
	defer os.RemoveAll(dir)
	c, err := local.Open(dir, local.Options{})
	if err != nil {
		panic(err)
	}
	defer c.Close()

	cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "settings"},
		"data": map[string]any{"color": "blue"}}
	if _, err := apply.New(c, apply.Options{}).Apply(context.Background(), apply.Objects(cm)); err != nil {
		panic(err)
	}
	cm["data"] = map[string]any{"color": "green"}
	report, err := diff.New(c, diff.Options{}).Run(context.Background(), apply.Objects(cm))
	for _, e := range report.Entries {
		fmt.Println(e.Name(), e.Action)
	}
	fmt.Println("exit status", diff.ExitCode(report, err))
	// Output:
	// v1.ConfigMap.default.settings update
	// exit status 1
}

// RunUnified renders the unified diff while the dry run goes, keeping the
// text of each object rather than the objects: what a command that only
// prints the diff needs, in a fraction of the memory.
func ExampleDiffer_RunUnified() {
	dir, _ := os.MkdirTemp("", "konverge-example")
	defer os.RemoveAll(dir)
	c, err := local.Open(dir, local.Options{})
	if err != nil {
		panic(err)
	}
	defer c.Close()

	cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "settings"},
		"data": map[string]any{"color": "blue"}}
	if _, err := apply.New(c, apply.Options{}).Apply(context.Background(), apply.Objects(cm)); err != nil {
		panic(err)
	}
	cm["data"] = map[string]any{"color": "green"}
	u, err := diff.New(c, diff.Options{}).RunUnified(context.Background(), apply.Objects(cm), diff.RenderOptions{Context: -1})
	if err != nil {
		panic(err)
	}
	if _, err := u.WriteTo(os.Stdout); err != nil {
		panic(err)
	}
	fmt.Println("exit status", u.ExitCode())
	// Output:
	// diff -u -N live/v1.ConfigMap.default.settings merged/v1.ConfigMap.default.settings
	// --- live/v1.ConfigMap.default.settings
	// +++ merged/v1.ConfigMap.default.settings
	// @@ -3 +3 @@
	// -  color: blue
	// +  color: green
	// exit status 1
}
