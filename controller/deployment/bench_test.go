package deployment_test

import (
	"fmt"
	"strconv"
	"testing"
)

// BenchmarkRollout rolls N Deployments of R replicas to a new image to
// completion on a real store, the controllers and the test's kubelet
// running until nothing changes.
func BenchmarkRollout(b *testing.B) {
	for _, tc := range []struct{ deployments, replicas int }{{10, 10}, {100, 10}, {1000, 10}} {
		b.Run(fmt.Sprintf("deployments=%d/replicas=%d", tc.deployments, tc.replicas), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				e := newEnv(b)
				for j := 0; j < tc.deployments; j++ {
					e.create(deploymentObj("web-"+strconv.Itoa(j), int64(tc.replicas), "nginx:1"))
				}
				e.settle()
				for j := 0; j < tc.deployments; j++ {
					e.modify("web-"+strconv.Itoa(j), setImage("nginx:2"))
				}
				b.StartTimer()
				e.settle()
				b.StopTimer()
				for _, d := range []string{"web-0", "web-" + strconv.Itoa(tc.deployments-1)} {
					if n := num(e.getDeploy(d), "status", "updatedReplicas"); n != int64(tc.replicas) {
						b.Fatalf("%s: %d updated replicas", d, n)
					}
				}
			}
		})
	}
}
