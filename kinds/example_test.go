package kinds_test

import (
	"fmt"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/kinds"
	"github.com/konverge/konverge/schema"
)

func ExampleBuiltin() {
	for _, r := range kinds.Builtin() {
		if r.GVK.Group == "apps" {
			fmt.Println(r.GroupResource(), r.GVK.Kind, r.ShortNames, r.Namespaced, r.Status)
		}
	}
	// Output:
	// controllerrevisions.apps ControllerRevision [] true false
	// daemonsets.apps DaemonSet [ds] true true
	// deployments.apps Deployment [deploy] true true
	// replicasets.apps ReplicaSet [rs] true true
	// statefulsets.apps StatefulSet [sts] true true
}

func ExampleMapper_Find() {
	m := kinds.NewMapper(kinds.Builtin(), nil)
	for _, name := range []string{"po", "deploy", "deployments.v1.apps", "Ingress", "ev", "hpa", "foo"} {
		r, err := m.Find(name)
		if err != nil {
			fmt.Printf("%s: %v\n", name, err)
			continue
		}
		fmt.Printf("%s: %s\n", name, r.GVK)
	}
	// Output:
	// po: v1, Kind=Pod
	// deploy: apps/v1, Kind=Deployment
	// deployments.v1.apps: apps/v1, Kind=Deployment
	// Ingress: networking.k8s.io/v1, Kind=Ingress
	// ev: v1, Kind=Event
	// hpa: autoscaling/v2, Kind=HorizontalPodAutoscaler
	// foo: the server doesn't have a resource type "foo"
}

func ExampleMapper_ResourceFor() {
	m := kinds.NewMapper(kinds.Builtin(), nil)
	r, err := m.ResourceFor(schema.GVK{Group: "apps", Version: "v1", Kind: "Deployment"})
	fmt.Println(r.GroupResource(), r.Namespaced, err)

	_, err = m.ResourceFor(schema.GVK{Group: "example.com", Version: "v1", Kind: "Foo"})
	fmt.Println(err, cluster.IsNotFound(err))
	// Output:
	// deployments.apps true <nil>
	// no matches for kind "Foo" in version "example.com/v1" true
}

func ExampleMapper_With() {
	m := kinds.NewMapper(kinds.Builtin(), nil).With(cluster.Resource{
		GVK:        schema.GVK{Group: "stable.example.com", Version: "v1", Kind: "CronTab"},
		Plural:     "crontabs",
		Singular:   "crontab",
		ShortNames: []string{"ct"},
		Namespaced: true,
	})
	r, err := m.Find("ct")
	fmt.Println(r.GroupResource(), r.Strategic, err)
	// Output: crontabs.stable.example.com false <nil>
}

func ExampleMapper_Schema() {
	m := kinds.NewMapper(kinds.Builtin(), schema.Builtin())
	t := m.Schema(schema.GVK{Group: "apps", Version: "v1", Kind: "Deployment"})
	fmt.Println(t != nil)
	// Output: true
}
