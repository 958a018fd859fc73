package apply_test

import (
	"context"
	"testing"
	"time"

	"github.com/konverge/konverge/apply"
	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/manifest"
)

// BenchmarkServerSide1k compares a server-side apply of 1,000 objects (500
// ConfigMaps, 500 Deployments) into the embedded cluster with the
// client-side apply of the same objects, in the same run: the first apply
// (all created), a re-apply of the same input, and an apply that changes
// one field of every object.
func BenchmarkServerSide1k(b *testing.B) {
	const n = 1000
	for _, mode := range []struct {
		name    string
		opts    apply.Options
		created apply.Action
		same    apply.Action
		changed apply.Action
	}{
		{"client-side", apply.Options{}, apply.Created, apply.Unchanged, apply.Configured},
		{"server-side", apply.Options{ServerSide: true}, apply.ServerSideApplied, apply.ServerSideApplied, apply.ServerSideApplied},
	} {
		b.Run(mode.name+"/first", func(b *testing.B) {
			objs := benchObjects(n, 0)
			b.ReportAllocs()
			var elapsed time.Duration
			for range b.N {
				s := openBenchStore(b)
				start := time.Now()
				benchApplyWith(b, s, mode.opts, objs, mode.created)
				elapsed += time.Since(start)
				b.StopTimer()
				s.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(n*b.N)/elapsed.Seconds(), "objects/s")
		})
		b.Run(mode.name+"/again", func(b *testing.B) {
			s := openBenchStore(b)
			defer s.Close()
			objs := benchObjects(n, 0)
			benchApplyWith(b, s, mode.opts, objs, mode.created)
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for range b.N {
				benchApplyWith(b, s, mode.opts, objs, mode.same)
			}
			reportRate(b, start, n)
		})
		b.Run(mode.name+"/changed", func(b *testing.B) {
			s := openBenchStore(b)
			defer s.Close()
			inputs := [][]manifest.Object{benchObjects(n, 1), benchObjects(n, 2)}
			benchApplyWith(b, s, mode.opts, benchObjects(n, 0), mode.created)
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for i := range b.N {
				benchApplyWith(b, s, mode.opts, inputs[i%2], mode.changed)
			}
			reportRate(b, start, n)
		})
	}
}

func benchApplyWith(b *testing.B, s *local.Store, opts apply.Options, objs []manifest.Object, want apply.Action) {
	b.Helper()
	res, err := apply.New(s, opts).Apply(context.Background(), objs)
	if err != nil {
		b.Fatal(err)
	}
	if len(res) != len(objs) || res[0].Action != want || res[len(res)-1].Action != want {
		b.Fatalf("%d results, first %s, want %s", len(res), res[0], want)
	}
}
