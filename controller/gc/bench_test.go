package gc_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/controller/gc"
	"github.com/konverge/konverge/controller/internal/ctrltest"
	"github.com/konverge/konverge/controller/internal/kobj"
)

// plain hides the store's index of owners: a full sync then lists every
// served kind, the reference the index is measured against.
type plain struct{ cluster.Interface }

// BenchmarkFullSync: a full sync of a store of 2,000 ConfigMaps without
// owners and 200 with a live one, through the store's index of owners
// (index) and by listing every kind (lists).
func BenchmarkFullSync(b *testing.B) {
	ctx := context.Background()
	clk := &ctrltest.Clock{T: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	s := ctrltest.Open(b, clk)
	owner, err := s.Create(ctx, configMap("default", "owner"))
	if err != nil {
		b.Fatal(err)
	}
	ref := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": kobj.UID(owner)}
	for i := 0; i < 2000; i++ {
		if _, err := s.Create(ctx, configMap("default", fmt.Sprintf("plain-%d", i))); err != nil {
			b.Fatal(err)
		}
	}
	for i := 0; i < 200; i++ {
		if _, err := s.Create(ctx, configMap("default", fmt.Sprintf("owned-%d", i), ref)); err != nil {
			b.Fatal(err)
		}
	}
	for _, c := range []struct {
		name string
		c    cluster.Interface
	}{{"index", s}, {"lists", plain{s}}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if r, err := (gc.Controller{}).Sync(ctx, c.c, clk.T); err != nil || r.Changed {
					b.Fatalf("changed %v, %v", r.Changed, err)
				}
			}
		})
	}
}
