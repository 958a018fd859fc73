// Command plan plans manifests against a snapshot of live objects, as a
// GitOps tool that keeps its own cache of the cluster would: no cluster is
// needed, only the objects and the kinds of the API server.
package main

import (
	"context"
	"fmt"
	"log"

	"sigs.k8s.io/yaml"

	"github.com/konverge/konverge/apply"
	"github.com/konverge/konverge/kinds"
	"github.com/konverge/konverge/manifest"
	"github.com/konverge/konverge/schema"
)

// desired is what the repository holds.
const desired = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        resources: {requests: {cpu: "0.5"}}
`

// live is the Deployment as the tool's cache holds it: applied from the
// same manifest, then scaled to 5 by an autoscaler and its image edited.
const live = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
  uid: 0d7c2a6e-0000-4000-8000-000000000001
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: |
      {"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{},"name":"web","namespace":"shop"},"spec":{"replicas":2,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"image":"nginx:1.27","name":"web","resources":{"requests":{"cpu":"0.5"}}}]}}}}
spec:
  replicas: 5
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.26
        imagePullPolicy: IfNotPresent
        resources: {requests: {cpu: 500m}}
`

func main() {
	ctx := context.Background()
	objs, err := manifest.Parse(ctx, "web.yaml", []byte(desired))
	if err != nil {
		log.Fatal(err)
	}
	var cached map[string]any
	if err := yaml.Unmarshal([]byte(live), &cached); err != nil {
		log.Fatal(err)
	}
	snapshot := apply.NewSnapshot(cached)
	mapper := kinds.NewMapper(kinds.Builtin(), schema.Builtin())

	for _, opts := range []apply.Options{
		{},
		{Ignore: []apply.IgnoreRule{{Group: "apps", Kind: "Deployment", Paths: []string{"spec.replicas"}}}},
	} {
		plan, err := apply.NewPlanner(snapshot, mapper, opts).Plan(ctx, objs)
		if err != nil {
			log.Fatal(err)
		}
		for _, c := range plan.Changes {
			fmt.Printf("%s (drift: %v)\n", c, c.Drift)
			for _, p := range c.Paths {
				fmt.Println("  ", p)
			}
		}
	}
}
