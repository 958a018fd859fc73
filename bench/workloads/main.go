// Command workloads benchmarks the workload controllers of the embedded
// cluster on a manual clock, driven by sim.Runner as the CLI drives them:
//
//   - sts: a StatefulSet of -replicas pods (OrderedReady, one claim each)
//     is created and brought up, then its image changes and the rolling
//     update runs to completion, one pod at a time from the highest
//     ordinal;
//   - cron: a CronJob with -schedule (every minute by default) whose Jobs
//     run one pod for 5 s runs for -days of cluster time, every
//     schedule in it, with the default history limits.
//
// It prints the wall and CPU time of each phase, the cluster time it covered, the
// work done (objects written) and the peak memory.
//
//	go run ./bench/workloads -what sts -replicas 100
//	go run ./bench/workloads -what cron -days 30
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"runtime"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/konverge/konverge/apply"
	"github.com/konverge/konverge/clock"
	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/kubelet"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/sim"
)

var (
	stsGVK = schema.GVK{Group: "apps", Version: "v1", Kind: "StatefulSet"}
	jobGVK = schema.GVK{Group: "batch", Version: "v1", Kind: "Job"}
)

func main() {
	what := flag.String("what", "sts", "sts or cron")
	replicas := flag.Int("replicas", 100, "sts: replicas of the StatefulSet")
	days := flag.Float64("days", 30, "cron: days of cluster time")
	schedule := flag.String("schedule", "*/1 * * * *", "cron: the CronJob's schedule")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile to this file")
	flag.Parse()
	log.SetFlags(0)
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	dir, err := os.MkdirTemp("", "konverge-bench-workloads")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	clk := clock.New(clock.Manual, clock.Epoch)
	st, err := local.Open(dir, local.Options{Clock: clk})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	r := sim.New(st, clk, sim.Controllers(kubelet.DefaultProfile())...)
	r.MaxWork = 1 << 40
	ctx := context.Background()
	fmt.Printf("GOMAXPROCS=%d %s\n", runtime.GOMAXPROCS(0), runtime.Version())
	switch *what {
	case "sts":
		err = benchSTS(ctx, st, r, clk, *replicas)
	case "cron":
		err = benchCron(ctx, st, r, clk, *days, *schedule)
	default:
		err = fmt.Errorf("-what %q: want sts or cron", *what)
	}
	if err != nil {
		log.Fatal(err)
	}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		fmt.Printf("max RSS %.0f MiB\n", float64(ru.Maxrss)/1024)
	}
	if fi, err := os.Stat(dir + "/state.db"); err == nil {
		fmt.Printf("store %.1f MiB\n", float64(fi.Size())/(1<<20))
	}
}

func applyYAML(ctx context.Context, c cluster.Interface, obj map[string]any) error {
	_, err := apply.New(c, apply.Options{}).Apply(ctx, apply.Objects(obj))
	return err
}

func statefulSet(replicas int, image string) map[string]any {
	return map[string]any{
		"apiVersion": "apps/v1", "kind": "StatefulSet",
		"metadata": map[string]any{"name": "web", "namespace": "default"},
		"spec": map[string]any{
			"serviceName": "web",
			"replicas":    int64(replicas),
			"selector":    map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
				"spec": map[string]any{"containers": []any{
					map[string]any{"name": "nginx", "image": image},
				}},
			},
			"volumeClaimTemplates": []any{map[string]any{
				"metadata": map[string]any{"name": "data"},
				"spec": map[string]any{"accessModes": []any{"ReadWriteOnce"},
					"resources": map[string]any{"requests": map[string]any{"storage": "1Gi"}}},
			}},
		},
	}
}

func stsDone(ctx context.Context, c cluster.Interface, replicas int) func() (bool, error) {
	return func() (bool, error) {
		s, err := c.Get(ctx, stsGVK, "default", "web")
		if err != nil {
			return false, err
		}
		st, _ := s["status"].(map[string]any)
		md, _ := s["metadata"].(map[string]any)
		return st["observedGeneration"] == md["generation"] && st["readyReplicas"] == int64(replicas) &&
			st["updatedReplicas"] == int64(replicas) && st["currentRevision"] == st["updateRevision"], nil
	}
}

// cpuTime is the CPU time the process used so far (user and system, all
// threads): on a shared machine it tells the work apart from the waiting.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func phase(name string, st *local.Store, clk *clock.Clock, r *sim.Runner, body func() error) error {
	ctx := context.Background()
	rev0, err := sim.Revision(ctx, st)
	if err != nil {
		return err
	}
	start, cstart, cpu0 := time.Now(), clk.Now(), cpuTime()
	var m0 runtime.MemStats
	runtime.ReadMemStats(&m0)
	if err := body(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	var m1 runtime.MemStats
	runtime.ReadMemStats(&m1)
	wall, cpu := time.Since(start), cpuTime()-cpu0
	fmt.Printf("%-28s wall %8.2fs  cpu %8.2fs  cluster %-10s heap in use %4.0f MiB  allocated %6.0f MiB\n", name, wall.Seconds(), cpu.Seconds(),
		clk.Now().Sub(cstart).String(), float64(m1.HeapInuse)/(1<<20), float64(m1.TotalAlloc-m0.TotalAlloc)/(1<<20))
	rev1, err := sim.Revision(ctx, st)
	if err != nil {
		return err
	}
	fmt.Printf("%-28s %d objects written\n", "", rev1-rev0)
	if u := r.Unsettled(); u != nil {
		return fmt.Errorf("%s: not settled: %v", name, u)
	}
	return nil
}

func benchSTS(ctx context.Context, st *local.Store, r *sim.Runner, clk *clock.Clock, replicas int) error {
	if err := phase(fmt.Sprintf("create %d-replica sts", replicas), st, clk, r, func() error {
		if err := applyYAML(ctx, st, statefulSet(replicas, "nginx:1.25")); err != nil {
			return err
		}
		met, err := r.RunUntil(ctx, stsDone(ctx, st, replicas), 24*time.Hour)
		if err == nil && !met {
			err = fmt.Errorf("not rolled out")
		}
		return err
	}); err != nil {
		return err
	}
	return phase("rolling update", st, clk, r, func() error {
		if err := applyYAML(ctx, st, statefulSet(replicas, "nginx:1.26")); err != nil {
			return err
		}
		met, err := r.RunUntil(ctx, stsDone(ctx, st, replicas), 24*time.Hour)
		if err == nil && !met {
			err = fmt.Errorf("not rolled out")
		}
		return err
	})
}

func benchCron(ctx context.Context, st *local.Store, r *sim.Runner, clk *clock.Clock, days float64, schedule string) error {
	cj := map[string]any{
		"apiVersion": "batch/v1", "kind": "CronJob",
		"metadata": map[string]any{"name": "tick", "namespace": "default"},
		"spec": map[string]any{
			"schedule": schedule,
			"jobTemplate": map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
				"restartPolicy": "Never",
				"containers": []any{map[string]any{"name": "t", "image": "busybox:1.36",
					"command": []any{"sh", "-c", "sleep 5"}}},
			}}}},
		},
	}
	if err := applyYAML(ctx, st, cj); err != nil {
		return err
	}
	span := time.Duration(days * float64(24*time.Hour))
	if err := phase(fmt.Sprintf("cronjob over %s", span), st, clk, r, func() error {
		return r.Advance(ctx, span)
	}); err != nil {
		return err
	}
	jobs, err := st.List(ctx, jobGVK)
	if err != nil {
		return err
	}
	c, err := st.Get(ctx, schema.GVK{Group: "batch", Version: "v1", Kind: "CronJob"}, "default", "tick")
	if err != nil {
		return err
	}
	status, _ := c["status"].(map[string]any)
	fmt.Printf("jobs left %d, lastScheduleTime %v, lastSuccessfulTime %v\n", len(jobs.Items), status["lastScheduleTime"], status["lastSuccessfulTime"])
	return nil
}
