package sim_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/konverge/konverge/kubelet"
	"github.com/konverge/konverge/sim"
)

// BenchmarkRolloutPods is a Deployment of 2,000 replicas rolled out from
// its apply to every pod Ready
// (KONVERGE_BENCH_REPLICAS sets another number): the embedded cluster's cost per pod
// (creates, binding, the kubelet's status updates, managed fields,
// Events). ns/pod and work/pod are per replica. The scheduler holds a
// node to its pods capacity (110 unless the profile says otherwise), so
// the one node here has room for every replica.
func BenchmarkRolloutPods(b *testing.B) {
	n := int64(2000)
	if v, err := strconv.ParseInt(os.Getenv("KONVERGE_BENCH_REPLICAS"), 10, 64); err == nil && v > 0 {
		n = v
	}
	prof := kubelet.DefaultProfile()
	prof.Nodes = []kubelet.NodeSpec{{Name: "konverge-node", Capacity: map[string]string{"pods": strconv.FormatInt(n, 10)}}}
	ctx := context.Background()
	for range b.N {
		b.StopTimer()
		st, clk := open(b)
		r := sim.New(st, clk, sim.Controllers(prof)...)
		r.MaxWork = 1 << 30
		if _, err := st.Create(ctx, deployment("big", "nginx:1.25", n)); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		met, err := r.RunUntil(ctx, func() (bool, error) {
			d, err := st.Get(ctx, deployGVK, "default", "big")
			if err != nil {
				return false, err
			}
			s, _ := d["status"].(map[string]any)
			ready, _ := s["readyReplicas"].(int64)
			return ready == n, nil
		}, time.Hour)
		b.StopTimer()
		if err != nil || !met {
			b.Fatalf("met %v, err %v", met, err)
		}
		b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(n), "ns/pod")
		b.ReportMetric(float64(r.Work())/float64(n), "work/pod")
		st.Close()
	}
}
