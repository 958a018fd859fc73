package sim_test

import (
	"context"
	"testing"
	"time"

	"github.com/konverge/konverge/sim"
)

// crashLoop is a Deployment of n pods whose container exits 1 after 5s.
func crashLoop(n int64) map[string]any {
	d := deployment("crash", "busybox:1.36", n)
	c := d["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
	c["command"] = []any{"sh", "-c", "sleep 5; exit 1"}
	return d
}

// BenchmarkCatchUpCrashLoop is `clock advance` over a span with 10
// crash-looping pods: the cost follows their restarts.
func BenchmarkCatchUpCrashLoop(b *testing.B) {
	for _, bc := range []struct {
		name    string
		span    time.Duration
		catchUp time.Duration
	}{{"24h-stepped", 24 * time.Hour, -1}, {"24h", 24 * time.Hour, 0}, {"2400h", 2400 * time.Hour, 0}} {
		span, catchUp := bc.span, bc.catchUp
		b.Run(bc.name, func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				ctx := context.Background()
				st, clk := open(b)
				r := sim.New(st, clk, sim.Controllers(nil)...)
				if _, err := st.Create(ctx, crashLoop(10)); err != nil {
					b.Fatal(err)
				}
				if err := r.Advance(ctx, time.Minute); err != nil {
					b.Fatal(err)
				}
				r.CatchUp = catchUp
				b.StartTimer()
				if err := r.Advance(ctx, span); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				b.ReportMetric(float64(r.Work()), "work/op")
				if r.Unsettled() != nil {
					b.Fatal(r.Unsettled())
				}
				st.Close()
			}
		})
	}
}
