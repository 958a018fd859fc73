// Command robust benchmarks the embedded cluster on the workloads that
// used to hang it, through the built konverge binary on a manual clock:
//
//   - catch-up: a Deployment of 10 crash-looping replicas (`sleep 5; exit
//     1`), then `konverge clock advance 2400h` (100 days of restarts at
//     the kubelet's 5-minute back-off cap);
//   - 100k: a Deployment of `replicas: 100000` applied, then `konverge
//     rollout status` run until every replica is ready (each command does
//     a bounded amount of work and leaves the rest for the next one),
//     with the time `konverge get deploy` takes while the ReplicaSet
//     fills, and then the cost of `clock advance 1s`, `get pods` and
//     `get events` on the cluster in steady state;
//   - runaway: one waiting command (`rollout status`, which ends at its
//     work limit) on a Deployment whose selector includes
//     pod-template-hash, and on one of 20,000 crash-looping replicas.
//
// It prints the wall time, the CPU time (user + system: what the command
// costs whatever the machine's load) and the peak RSS of each command.
//
//	go run ./bench/robust                 # all three
//	go run ./bench/robust -only catch-up
//	go run ./bench/robust -only runaway
//	go run ./bench/robust -replicas 20000
//	go run ./bench/robust -only 100k -commands 3   # give up after 3 waits
//	go run ./bench/robust -only runaway -bin /tmp/konverge-old   # another build
package main

import (
	"bytes"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

func main() {
	only := flag.String("only", "", "run only this benchmark: catch-up, 100k or runaway")
	replicas := flag.Int("replicas", 100_000, "spec.replicas of the large Deployment")
	maxCommands := flag.Int("commands", 100, "rollout status commands to run at most before giving up")
	prebuilt := flag.String("bin", "", "a konverge binary to measure instead of building this tree's (another release, side by side)")
	flag.Parse()
	log.SetFlags(0)
	tmp, err := os.MkdirTemp("", "konverge-bench-robust-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "konverge")
	if *prebuilt != "" {
		bin = *prebuilt
	} else if out, err := exec.Command("go", "build", "-o", bin, "github.com/konverge/konverge/cmd/konverge").CombinedOutput(); err != nil {
		log.Fatalf("go build: %v\n%s", err, out)
	}
	if *only == "" || *only == "catch-up" {
		catchUp(bin, filepath.Join(tmp, "catch-up"))
	}
	if *only == "" || *only == "100k" {
		large(bin, filepath.Join(tmp, "large"), *replicas, *maxCommands)
	}
	if *only == "" || *only == "runaway" {
		runaway(bin, filepath.Join(tmp, "runaway"))
	}
}

// step is one command's figures.
type step struct {
	wall   time.Duration
	cpu    time.Duration // user + system
	rssMiB float64
	out    string
	code   int
}

func run(bin, state string, args ...string) step {
	cmd := exec.Command(bin, append([]string{"--state", state}, args...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	s := step{wall: time.Since(start), out: out.String()}
	if cmd.ProcessState == nil {
		log.Fatalf("konverge %s: %v", strings.Join(args, " "), err)
	}
	s.code = cmd.ProcessState.ExitCode()
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		s.rssMiB = float64(ru.Maxrss) / 1024 // KiB on Linux
	}
	s.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return s
}

func must(bin, state string, args ...string) step {
	s := run(bin, state, args...)
	if s.code != 0 {
		log.Fatalf("konverge %s: exit %d\n%s", strings.Join(args, " "), s.code, s.out)
	}
	return s
}

func deployment(name string, replicas int, container string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %s}
spec:
  replicas: %d
  selector: {matchLabels: {app: %s}}
  template:
    metadata: {labels: {app: %s}}
    spec:
      containers: [%s]
`, name, replicas, name, name, container)
}

func writeManifest(dir, content string) string {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		log.Fatal(err)
	}
	p := filepath.Join(dir, "manifest.yaml")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		log.Fatal(err)
	}
	return p
}

func catchUp(bin, state string) {
	must(bin, state, "cluster", "init", "--clock=manual")
	f := writeManifest(state+"-in", deployment("crash", 10, `{name: app, image: busybox:1.36, command: ["sh", "-c", "sleep 5; exit 1"]}`))
	must(bin, state, "apply", "-f", f)
	must(bin, state, "clock", "advance", "1m")
	s := must(bin, state, "clock", "advance", "2400h")
	pods := must(bin, state, "get", "pods", "--no-headers")
	restarts := ""
	if lines := strings.Split(strings.TrimSpace(pods.out), "\n"); len(lines) > 0 {
		if f := strings.Fields(lines[0]); len(f) >= 4 {
			restarts = f[3]
		}
	}
	fmt.Printf("catch-up: clock advance 2400h, 10 crash-looping pods: %.2f s wall, %.2f s CPU, peak RSS %.0f MiB (%d pods, restarts of the first: %s)\n",
		s.wall.Seconds(), s.cpu.Seconds(), s.rssMiB, len(strings.Split(strings.TrimSpace(pods.out), "\n")), restarts)
}

func large(bin, state string, replicas, maxCommands int) {
	must(bin, state, "cluster", "init", "--clock=manual")
	f := writeManifest(state+"-in", deployment("big", replicas, `{name: app, image: nginx:1.16.1}`))
	start := time.Now()
	a := must(bin, state, "apply", "-f", f)
	fmt.Printf("100k: apply of replicas: %d: %.2f s wall, %.2f s CPU, peak RSS %.0f MiB\n", replicas, a.wall.Seconds(), a.cpu.Seconds(), a.rssMiB)
	g := must(bin, state, "get", "deploy", "big", "--no-headers")
	fmt.Printf("100k: get deploy while the ReplicaSet fills: %.2f s wall, %.2f s CPU (%s)\n", g.wall.Seconds(), g.cpu.Seconds(), strings.Join(strings.Fields(g.out), " "))
	peak := max(a.rssMiB, g.rssMiB)
	cpu := a.cpu + g.cpu
	var commands int
	for {
		commands++
		s := run(bin, state, "rollout", "status", "deployment/big", "--timeout=1h")
		peak, cpu = max(peak, s.rssMiB), cpu+s.cpu
		d := run(bin, state, "get", "deploy", "big", "--no-headers")
		fmt.Printf("100k: rollout status #%d: %.2f s wall, %.2f s CPU, peak RSS %.0f MiB, exit %d: %s [get deploy: %s]\n", commands, s.wall.Seconds(), s.cpu.Seconds(), s.rssMiB, s.code, lastLine(s.out), strings.Join(strings.Fields(d.out), " "))
		if s.code == 0 {
			break
		}
		if commands >= maxCommands {
			fmt.Printf("100k: no steady state after %d commands (%.1f s CPU)\n", commands, cpu.Seconds())
			return
		}
	}
	total := time.Since(start)
	clk := must(bin, state, "clock")
	g = must(bin, state, "get", "deploy", "big", "--no-headers")
	fmt.Printf("100k: steady state after %.1f s wall, %.1f s CPU in %d commands (apply, get, %d rollout status), peak RSS %.0f MiB; cluster time %s; %s\n",
		total.Seconds(), cpu.Seconds(), commands+2, commands, peak, strings.TrimSpace(clk.out), strings.Join(strings.Fields(g.out), " "))
	// Commands on the cluster in steady state: one that has controller
	// work to do (the first sync of every controller in a new process),
	// and two that list every pod or Event.
	for _, args := range [][]string{{"clock", "advance", "1s"}, {"get", "pods"}, {"get", "events"}} {
		s := must(bin, state, args...)
		fmt.Printf("100k: steady state: %s: %.2f s wall, %.2f s CPU, peak RSS %.0f MiB (%d lines)\n",
			strings.Join(args, " "), s.wall.Seconds(), s.cpu.Seconds(), s.rssMiB, strings.Count(s.out, "\n"))
	}
	if fi, err := os.Stat(filepath.Join(state, "state.db")); err == nil {
		fmt.Printf("100k: state.db %.0f MiB\n", float64(fi.Size())/(1<<20))
	}
}

// runaway is one waiting command on workloads that never converge: the
// cost of a command that ends at its work limit.
func runaway(bin, state string) {
	hash := strings.Replace(deployment("hash", 3, `{name: app, image: nginx:1.16.1}`),
		"matchLabels: {app: hash}", "matchLabels: {app: hash, pod-template-hash: abc}", 1)
	hash = strings.Replace(hash, "labels: {app: hash}", "labels: {app: hash, pod-template-hash: abc}", 1)
	for _, c := range []struct{ name, what, manifest string }{
		{"hash", "a selector with pod-template-hash (ReplicaSets without end)", hash},
		{"crash", "20,000 crash-looping replicas", deployment("crash", 20_000, `{name: app, image: busybox:1.36, command: ["sh", "-c", "sleep 5; exit 1"]}`)},
	} {
		st := state + "-" + c.name
		must(bin, st, "cluster", "init", "--clock=manual")
		must(bin, st, "apply", "-f", writeManifest(st+"-in", c.manifest))
		for i := 1; i <= 2; i++ {
			s := run(bin, st, "rollout", "status", "deployment/"+c.name, "--timeout=1h")
			fmt.Printf("runaway: %s: rollout status #%d: %.2f s wall, %.2f s CPU, peak RSS %.0f MiB, exit %d\n", c.what, i, s.wall.Seconds(), s.cpu.Seconds(), s.rssMiB, s.code)
		}
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
