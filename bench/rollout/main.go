// Command rollout is the rollout benchmark of the embedded cluster: N
// Deployments of R replicas each are created and brought up, then all
// are updated to a new image in one transaction and the controllers (the
// Deployment and ReplicaSet controllers and the simulated kubelet, run by
// sim.Runner on a manual clock) roll them out to completion in cluster
// time. It reports the wall time of the rollout, the cluster time it
// took, and the peak memory (Go heap in use, sampled, and the process's
// maximum resident set size) for each N, each in its own process so that
// the peaks do not mix.
//
//	go run ./bench/rollout                     # -n 100,1000,5000
//	go run ./bench/rollout -n 1000 -replicas 10
//
// It is the library-level counterpart of sim's BenchmarkRollout (same
// objects, same steps), with larger N and memory figures.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/konverge/konverge/clock"
	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/kubelet"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/sim"
)

var deployGVK = schema.GVK{Group: "apps", Version: "v1", Kind: "Deployment"}

// result is what one run reports (one JSON line from the child process).
type result struct {
	N, Replicas    int
	CreateWall     float64 // s: the first rollout (creation), wall time
	RolloutWall    float64 // s: the image update rolled out, wall time
	ClusterSeconds float64 // s of cluster time the update took
	PeakHeapMiB    float64
	MaxRSSMiB      float64
	StoreMiB       float64
}

func main() {
	ns := flag.String("n", "100,1000,5000", "comma-separated numbers of Deployments, one run each")
	replicas := flag.Int("replicas", 10, "spec.replicas of every Deployment")
	child := flag.Int("child", 0, "internal: run one size in this process and print its result as JSON")
	flag.Parse()
	log.SetFlags(0)
	if *child > 0 {
		r, err := run(*child, *replicas)
		if err != nil {
			log.Fatal(err)
		}
		_ = json.NewEncoder(os.Stdout).Encode(r)
		return
	}
	self, err := os.Executable()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("rollout of N Deployments x %d replicas to a new image (GOMAXPROCS=%d, %s)\n", *replicas, runtime.GOMAXPROCS(0), runtime.Version())
	fmt.Printf("%8s %12s %12s %10s %12s %12s %10s %14s\n", "N", "create (s)", "rollout (s)", "cluster", "peak heap", "max RSS", "store", "rollout/deploy")
	var prev *result
	for _, s := range strings.Split(*ns, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			log.Fatalf("-n: %q is not a positive number", s)
		}
		cmd := exec.Command(self, "-child", strconv.Itoa(n), "-replicas", strconv.Itoa(*replicas))
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			log.Fatalf("N=%d: %v", n, err)
		}
		var r result
		if err := json.Unmarshal(out, &r); err != nil {
			log.Fatalf("N=%d: %v (%s)", n, err, out)
		}
		growth := ""
		if prev != nil {
			growth = fmt.Sprintf("  (x%.1f N: x%.1f time, x%.1f RSS)", float64(r.N)/float64(prev.N), r.RolloutWall/prev.RolloutWall, r.MaxRSSMiB/prev.MaxRSSMiB)
		}
		fmt.Printf("%8d %12.2f %12.2f %9.0fs %10.0fMiB %10.0fMiB %8.0fMiB %12.2fms%s\n", r.N, r.CreateWall, r.RolloutWall, r.ClusterSeconds,
			r.PeakHeapMiB, r.MaxRSSMiB, r.StoreMiB, 1000*r.RolloutWall/float64(r.N), growth)
		prev = &r
	}
}

func deployment(name, image string, replicas int) map[string]any {
	labels := map[string]any{"app": name}
	return map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": name, "namespace": "default"},
		"spec": map[string]any{
			"replicas": int64(replicas),
			"selector": map[string]any{"matchLabels": labels},
			"template": map[string]any{
				"metadata": map[string]any{"labels": labels},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "web", "image": image}}},
			},
		},
	}
}

// run creates n Deployments, brings them up, updates their image and
// rolls it out, timing the last step.
func run(n, replicas int) (result, error) {
	ctx := context.Background()
	res := result{N: n, Replicas: replicas}
	dir, err := os.MkdirTemp("", "konverge-bench-rollout-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	clk := clock.New(clock.Manual, clock.Epoch)
	st, err := local.Open(dir, local.Options{Clock: clk, LockTimeout: -1})
	if err != nil {
		return res, err
	}
	defer st.Close()
	// One node with pod room for every replica and its surge: the
	// scheduler holds a node to its pods capacity (110 by default).
	prof := kubelet.DefaultProfile()
	prof.Nodes = []kubelet.NodeSpec{{Name: "konverge-node", Capacity: map[string]string{"pods": strconv.Itoa(2 * n * replicas)}}}
	r := sim.New(st, clk, sim.Controllers(prof)...)

	var peak atomic.Uint64
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()

	err = st.Batch(ctx, func(c cluster.Interface) error {
		for i := range n {
			if _, err := c.Create(ctx, deployment(fmt.Sprintf("web-%05d", i), "nginx:1.16.1", replicas)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return res, err
	}
	done := func() (bool, error) {
		list, err := st.List(ctx, deployGVK)
		if err != nil {
			return false, err
		}
		for _, d := range list.Items {
			s, _ := d["status"].(map[string]any)
			want := int64(replicas)
			if s["updatedReplicas"] != want || s["availableReplicas"] != want || s["replicas"] != want {
				return false, nil
			}
		}
		return true, nil
	}
	start := time.Now()
	if met, err := r.RunUntil(ctx, done, 10*time.Minute); err != nil || !met {
		return res, fmt.Errorf("bringing up: met %v, %v", met, err)
	}
	res.CreateWall = time.Since(start).Seconds()

	err = st.Batch(ctx, func(c cluster.Interface) error {
		list, err := c.List(ctx, deployGVK)
		if err != nil {
			return err
		}
		for _, d := range list.Items {
			d["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["image"] = "nginx:1.14.2"
			if _, err := c.Update(ctx, d); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return res, err
	}
	t0 := clk.Now()
	start = time.Now()
	if met, err := r.RunUntil(ctx, done, 30*time.Minute); err != nil || !met {
		return res, fmt.Errorf("rollout: met %v, %v", met, err)
	}
	res.RolloutWall = time.Since(start).Seconds()
	res.ClusterSeconds = clk.Now().Sub(t0).Seconds()
	res.PeakHeapMiB = float64(peak.Load()) / (1 << 20)
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		res.MaxRSSMiB = float64(ru.Maxrss) / 1024 // kilobytes on Linux
	}
	if fi, err := os.ReadDir(dir); err == nil {
		for _, e := range fi {
			if info, err := e.Info(); err == nil {
				res.StoreMiB += float64(info.Size()) / (1 << 20)
			}
		}
	}
	return res, nil
}
