package objref_test

import (
	"fmt"

	"github.com/konverge/konverge/objref"
	"github.com/konverge/konverge/schema"
)

// KindGroup is how kubectl names a kind in its result lines.
func ExampleKindGroup() {
	fmt.Println(objref.KindGroup(schema.GVK{Group: "apps", Version: "v1", Kind: "Deployment"}) + "/nginx")
	fmt.Println(objref.KindGroup(schema.GVK{Version: "v1", Kind: "ConfigMap"}) + "/settings")
	// Output:
	// deployment.apps/nginx
	// configmap/settings
}
