// Command cli is the whole-command benchmark of konverge: it builds the
// konverge binary, generates a directory of manifests (Deployments,
// Services and ConfigMaps across a few namespaces) and times apply and diff
// on it as a user would run them, reporting wall time, objects per second
// and the peak resident set size of each konverge process.
//
//	go run ./bench/cli              # 10,000 objects
//	go run ./bench/cli -n 2000 -runs 3
//	go run ./bench/cli -replicas 0   # without the pods the controllers run
//
// Steps: first apply, the controllers' catch-up (clock advance, see
// -catch-up), no-op re-apply, diff with no differences, diff with one
// field changed in every object, apply of that change. Each is reported
// with its wall time, its CPU time (user and system, all threads) and
// peak RSS, and the load average of the machine before and after.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

func main() {
	n := flag.Int("n", 10000, "number of objects (besides the namespaces)")
	namespaces := flag.Int("namespaces", 4, "number of namespaces the objects spread over")
	runs := flag.Int("runs", 1, "runs of each step (the median is reported); the first apply runs once per fresh state")
	bin := flag.String("bin", "", "konverge binary to use (default: build ./cmd/konverge)")
	keep := flag.Bool("keep", false, "keep the work directory")
	replicas := flag.Int("replicas", 2, "spec.replicas of the Deployments: the embedded cluster's controllers create and run that many pods each after every command, which the timings include; 0 measures the commands alone")
	catchUp := flag.String("catch-up", "15m", "cluster time the step after the first apply advances the clock by, for the controllers to create what the Deployments and Services need at their rate-limited pace (0s: the step does nothing)")
	clockMode := flag.String("clock", "manual", "clock of the embedded cluster (konverge cluster init --clock): manual keeps cluster time still between commands, so each command's figures hold only the controller work its own writes cause; wall lets the controllers catch up with the wall time that passed between commands")
	flag.Parse()
	log.SetFlags(0)

	work, err := os.MkdirTemp("", "konverge-bench-")
	if err != nil {
		log.Fatal(err)
	}
	if *keep {
		log.Printf("work directory: %s", work)
	} else {
		defer os.RemoveAll(work)
	}
	if *bin == "" {
		*bin = filepath.Join(work, "konverge")
		out, err := exec.Command("go", "build", "-o", *bin, "github.com/konverge/konverge/cmd/konverge").CombinedOutput()
		if err != nil {
			log.Fatalf("go build: %v\n%s", err, out)
		}
	}
	v1 := filepath.Join(work, "v1")
	v2 := filepath.Join(work, "v2")
	generate(v1, *n, *namespaces, *replicas, "1")
	generate(v2, *n, *namespaces, *replicas, "2")
	total := *n + *namespaces

	type step struct {
		name     string
		args     []string
		wantCode int
		fresh    bool // run on a fresh state each time
		reset    bool // re-apply v1 before each run (not timed)
		once     bool // run once whatever -runs says (it leaves nothing to do)
	}
	steps := []step{
		{name: "first apply", args: []string{"apply", "-f", v1}, fresh: true},
		// The controllers' clients are rate-limited in cluster time as
		// kube-controller-manager's (20 requests a second each): the
		// first apply's settle is their first second; the ReplicaSets,
		// pods, Endpoints and EndpointSlices of the rest come as the
		// clock moves.
		{name: "catch-up " + *catchUp, args: []string{"clock", "advance", *catchUp}, once: true},
		{name: "no-op re-apply", args: []string{"apply", "-f", v1}},
		{name: "diff, no differences", args: []string{"diff", "-f", v1}},
		{name: "diff, all changed", args: []string{"diff", "-f", v2}, wantCode: 1},
		{name: "apply, all changed", args: []string{"apply", "-f", v2}, reset: true},
	}
	state := filepath.Join(work, "state")
	fmt.Printf("konverge whole-command benchmark: %d objects (%d Deployments of %d replicas, %d Services, %d ConfigMaps, %d Namespaces), %s clock\n",
		total, count(*n, 0), *replicas, count(*n, 1), count(*n, 2), *namespaces, *clockMode)
	fmt.Printf("load average before: %s\n", load())
	fmt.Printf("%-24s %10s %10s %12s %12s\n", "step", "wall", "CPU", "objects/s", "peak RSS")
	for _, s := range steps {
		var walls, cpus []time.Duration
		var rss int64
		n := *runs
		if s.once {
			n = 1
		}
		for r := 0; r < n; r++ {
			if s.fresh {
				os.RemoveAll(state)
				initState(*bin, state, *clockMode)
			}
			if s.reset {
				if _, _, _, err := run(*bin, state, 0, "apply", "-f", v1); err != nil {
					log.Fatalf("reset: %v", err)
				}
			}
			wall, peak, _, err := run(*bin, state, s.wantCode, s.args...)
			if err != nil {
				log.Fatalf("%s: %v", s.name, err)
			}
			walls = append(walls, wall)
			cpus = append(cpus, lastCPU)
			rss = max(rss, peak)
		}
		sort.Slice(walls, func(i, j int) bool { return walls[i] < walls[j] })
		sort.Slice(cpus, func(i, j int) bool { return cpus[i] < cpus[j] })
		med := walls[len(walls)/2]
		fmt.Printf("%-24s %9.2fs %9.2fs %12.0f %9.0f MiB\n", s.name, med.Seconds(), cpus[len(cpus)/2].Seconds(), float64(total)/med.Seconds(), float64(rss)/1024)
		if s.fresh && *runs > 1 {
			// Leave the state applied for the next steps.
			os.RemoveAll(state)
			initState(*bin, state, *clockMode)
			if _, _, _, err := run(*bin, state, 0, "apply", "-f", v1); err != nil {
				log.Fatal(err)
			}
		}
	}
	fmt.Printf("load average after: %s\n", load())
}

// initState creates a fresh embedded cluster with the given clock mode.
func initState(bin, state, mode string) {
	if _, _, _, err := run(bin, state, 0, "cluster", "init", "--clock="+mode); err != nil {
		log.Fatalf("cluster init: %v", err)
	}
}

// run runs konverge and returns its wall time and peak RSS in KiB (its
// CPU time is in lastCPU).
func run(bin, state string, wantCode int, args ...string) (time.Duration, int64, []byte, error) {
	cmd := exec.Command(bin, append([]string{"--state", state}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	code := 0
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else {
			return 0, 0, nil, err
		}
	}
	if code != wantCode {
		return 0, 0, nil, fmt.Errorf("konverge %s: exit %d, want %d\n%s", strings.Join(args, " "), code, wantCode, tail(stderr.String()))
	}
	var rss int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = ru.Maxrss // KiB on Linux
	}
	lastCPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return wall, rss, stdout.Bytes(), nil
}

// lastCPU is the CPU time of the last process run ran.
var lastCPU time.Duration

// load is the machine's load average, as uptime prints it.
func load() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func tail(s string) string {
	if len(s) > 2000 {
		return "..." + s[len(s)-2000:]
	}
	return s
}

// count returns how many of n objects are of kind k (0 Deployment,
// 1 Service, 2 ConfigMap) when kinds rotate.
func count(n, k int) int { return (n + 2 - k) / 3 }

// generate writes n objects, kinds rotating, over namespaces, into dir: one
// file per 100 objects, plus the namespaces. version changes one field in
// every object (an image tag, a port's target, a data value).
func generate(dir string, n, namespaces, replicas int, version string) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		log.Fatal(err)
	}
	var ns strings.Builder
	for i := range namespaces {
		fmt.Fprintf(&ns, "---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: bench-%d\n", i)
	}
	write(filepath.Join(dir, "00-namespaces.yaml"), ns.String())
	var b strings.Builder
	for i := range n {
		namespace := fmt.Sprintf("bench-%d", i%namespaces)
		name := fmt.Sprintf("app-%05d", i)
		b.WriteString("---\n")
		switch i % 3 {
		case 0:
			fmt.Fprintf(&b, `apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[1]s
  namespace: %[2]s
  labels:
    app: %[1]s
    tier: bench
spec:
  replicas: %[4]d
  selector:
    matchLabels:
      app: %[1]s
  template:
    metadata:
      labels:
        app: %[1]s
    spec:
      containers:
      - name: web
        image: nginx:1.16.%[3]s
        ports:
        - containerPort: 80
        env:
        - name: MODE
          value: production
        resources:
          requests:
            cpu: 100m
            memory: 128Mi
`, name, namespace, version, replicas)
		case 1:
			fmt.Fprintf(&b, `apiVersion: v1
kind: Service
metadata:
  name: %[1]s
  namespace: %[2]s
  labels:
    app: %[1]s
    tier: bench
spec:
  selector:
    app: %[1]s
  ports:
  - name: http
    port: 80
    targetPort: 808%[3]s
`, name, namespace, version)
		case 2:
			fmt.Fprintf(&b, `apiVersion: v1
kind: ConfigMap
metadata:
  name: %[1]s
  namespace: %[2]s
  labels:
    app: %[1]s
    tier: bench
data:
  version: "%[3]s"
  settings.conf: |
    listen 80
    workers 4
`, name, namespace, version)
		}
		if (i+1)%100 == 0 || i == n-1 {
			write(filepath.Join(dir, fmt.Sprintf("objects-%05d.yaml", i/100)), b.String())
			b.Reset()
		}
	}
}

func write(path, s string) {
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		log.Fatal(err)
	}
}
