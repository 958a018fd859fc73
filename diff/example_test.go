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
