package validate

import (
	"testing"

	"github.com/konverge/konverge/defaults"
)

// BenchmarkObject validates a defaulted Deployment.
func BenchmarkObject(b *testing.B) {
	c := loadCase(b, "../testdata/validate/deployment/valid.yaml")
	obj := decode(b, c.Object)
	if err := defaults.Apply(obj); err != nil {
		b.Fatal(err)
	}
	obj["metadata"].(map[string]any)["namespace"] = "default"
	b.ReportAllocs()
	for b.Loop() {
		if errs := Object(obj, nil); len(errs) != 0 {
			b.Fatal(errs)
		}
	}
}
