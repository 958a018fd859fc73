package explain_test

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/konverge/konverge/internal/explain"
)

// The documentation of a Deployment's replicas, as kubectl explain
// deployments.spec.replicas prints it.
func ExampleRender() {
	gvr := explain.GVR{Group: "apps", Version: "v1", Resource: "deployments"}
	doc, ok, err := explain.Builtin(gvr, "Deployment")
	if err != nil || !ok {
		fmt.Println(ok, err)
		return
	}
	var out bytes.Buffer
	err = explain.Render(&out, doc, explain.Request{GVR: gvr, FieldPath: []string{"spec", "replicas"}})
	// Each line between bars, to show the blank ones.
	for _, line := range strings.Split(strings.TrimRight(out.String(), " \n"), "\n") {
		fmt.Printf("|%s|\n", line)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	// Output:
	// |GROUP:      apps|
	// |KIND:       Deployment|
	// |VERSION:    v1|
	// ||
	// |FIELD: replicas <integer>|
	// ||
	// ||
	// |DESCRIPTION:|
	// |    Number of desired pods. This is a pointer to distinguish between explicit|
	// |    zero and not specified. Defaults to 1.|
}
