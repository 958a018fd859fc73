package manifest_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/konverge/konverge/manifest"
)

func ExampleRead() {
	objs, err := manifest.Read(context.Background(), []string{"../testdata/manifest/valid/multi-doc.yaml"}, manifest.Options{})
	if err != nil {
		panic(err)
	}
	for _, o := range objs {
		meta := o.Obj["metadata"].(map[string]any)
		fmt.Printf("%s: %s/%s\n", o.Source, o.Obj["kind"], meta["name"])
	}
	// Output:
	// ../testdata/manifest/valid/multi-doc.yaml#1 (line 4): Namespace/shop
	// ../testdata/manifest/valid/multi-doc.yaml#2 (line 13): Service/web
	// ../testdata/manifest/valid/multi-doc.yaml#3 (line 25): Deployment/web
}

func ExampleParse() {
	const stream = `apiVersion: v1
kind: ConfigMap
metadata:
  name: flags
data:
  enabled: "yes"   # quoted: the string yes
  replicas: "3"
---
apiVersion: v1
kind: Secret
metadata:
  labels: {app: db}
stringData:
  password: hunter2
`
	objs, err := manifest.Parse(context.Background(), "app.yaml", []byte(stream))
	for _, o := range objs {
		fmt.Println(o.Source, o.Obj["data"])
	}
	var errs manifest.Errors
	if errors.As(err, &errs) {
		for _, e := range errs {
			fmt.Println(e)
			fmt.Println(e.Source.Doc, e.Object, e.Path, errors.Is(e, manifest.ErrRequired))
		}
	}
	// Output:
	// app.yaml#1 (line 1) map[enabled:yes replicas:3]
	// manifest: app.yaml#2 (line 9): Secret: metadata.name: required
	// 2 Secret metadata.name true
}
