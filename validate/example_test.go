package validate_test

import (
	"fmt"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/defaults"
	"github.com/konverge/konverge/validate"
	"github.com/konverge/konverge/value"
)

func ExampleObject() {
	obj, _ := value.DecodeObject([]byte(`{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": {"name": "web", "namespace": "default"},
		"spec": {
			"replicas": -1,
			"selector": {"matchLabels": {"app": "web"}},
			"template": {
				"metadata": {"labels": {"app": "x"}},
				"spec": {"containers": [{"name": "web", "image": "nginx"}]}}}}`))
	_ = defaults.Apply(obj)
	errs := validate.Object(obj, nil)
	for _, e := range errs {
		fmt.Println(e)
	}
	fmt.Println(cluster.NewInvalid("Deployment.apps", "web", validate.ToCauses(errs)).Message)
	// Output:
	// spec.replicas: Invalid value: -1: must be greater than or equal to 0
	// spec.template.metadata.labels: Invalid value: {"app":"x"}: `selector` does not match template `labels`
	// Deployment.apps "web" is invalid: [spec.replicas: Invalid value: -1: must be greater than or equal to 0, spec.template.metadata.labels: Invalid value: {"app":"x"}: `selector` does not match template `labels`]
}
