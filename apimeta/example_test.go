package apimeta_test

import (
	"fmt"

	"github.com/konverge/konverge/apimeta"
)

func ExampleNewInvalid() {
	err := apimeta.NewInvalid("Deployment.apps", "web", []apimeta.Cause{
		{Type: "FieldValueInvalid", Field: "spec.replicas", Message: "Invalid value: -1: must be greater than or equal to 0"},
	})
	fmt.Println(err)
	fmt.Println(apimeta.IsInvalid(err), apimeta.ReasonOf(err))
	// Output:
	// Deployment.apps "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0
	// true Invalid
}

func ExampleResource_GroupResource() {
	r := apimeta.Resource{Plural: "deployments"}
	r.GVK.Group = "apps"
	fmt.Println(r.GroupResource())
	// Output: deployments.apps
}
