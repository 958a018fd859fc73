package defaults

import (
	"testing"

	"github.com/konverge/konverge/value"
)

// BenchmarkApply defaults the seed's Deployment, as the store does on
// every write.
func BenchmarkApply(b *testing.B) {
	var c defaultsCase
	loadYAML(b, "../testdata/defaults/deployment/probes-volumes.yaml", &c)
	in := decodeValue(b, c.In)
	b.ReportAllocs()
	for b.Loop() {
		obj := value.DeepCopyObject(in)
		if err := Apply(obj); err != nil {
			b.Fatal(err)
		}
	}
}
