// Command realcluster benchmarks konverge against kubectl on a real
// control plane: it starts etcd and kube-apiserver v1.37.1 on loopback
// (scripts/realcluster.sh, binaries from REALCLUSTER_HOME/bin), generates
// directories of N objects (a third each Deployments, Services and
// ConfigMaps), and runs the same steps with kubectl (the one built with the
// control plane) into one namespace and with konverge --kubeconfig into
// another, in the same run:
//
//  1. first apply
//  2. no-op re-apply
//  3. diff after changing 100 objects
//  4. apply of those changes
//  5. apply --prune -l after removing the Services
//
// It prints each tool's wall time per step and the ratio (kubectl's time
// over konverge's) and, when it started the control plane, the CPU time
// kube-apiserver and etcd spent on each tool's step (the server's cost,
// which the load of other processes disturbs less than wall times); it
// checks after each step that the live objects of both
// namespaces are identical (uids, resourceVersions, times and the
// namespace's name masked) and that both exited with the same status and
// printed the same result lines, and fails when they do not.
//
//	go run ./bench/realcluster                       # 300 objects
//	go run ./bench/realcluster -n 300,1000,10000 -runs 3
//	go run ./bench/realcluster -kubeconfig ~/.kube/config   # a running cluster
//	go run ./bench/realcluster -steps 1 -runs 5             # the first apply alone
//
// Both tools keep their discovery and OpenAPI caches in one KUBECACHEDIR of
// the run, warmed by an untimed apply before the steps.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/cluster/kube"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

type config struct {
	konverge, kubectl string
	// withKubectl runs kubectl's side of every step; without, konverge's
	// times only (no ratios, no comparisons).
	withKubectl bool
	kubeconfig  string
	cacheDir    string
	extraArgs   []string
	// serverPIDs are the processes of the control plane the benchmark
	// started (etcd, kube-apiserver), whose CPU time it reports.
	serverPIDs []int
}

func main() {
	sizes := flag.String("n", "300", "numbers of objects, comma-separated")
	runs := flag.Int("runs", 1, "runs of every step, each in fresh namespaces; the median is reported")
	changed := flag.Int("changed", 100, "objects changed for the diff and the apply of changes")
	home := flag.String("home", os.Getenv("REALCLUSTER_HOME"), "REALCLUSTER_HOME whose bin/ holds etcd, kube-apiserver and kubectl (default ~/.cache/realcluster)")
	kubeconfig := flag.String("kubeconfig", "", "a running cluster to use instead of starting one (kubectl must be on PATH or in -home)")
	script := flag.String("script", "scripts/realcluster.sh", "the control plane script")
	bin := flag.String("bin", "", "konverge binary (default: build ./cmd/konverge)")
	concurrency := flag.Int("concurrency", 0, "konverge --concurrency (0: its default)")
	keep := flag.Bool("keep", false, "keep the work directory and leave the objects")
	onlySteps := flag.Int("steps", 0, "run only the first this many steps (1: the first apply alone; 0: all)")
	withKubectl := flag.Bool("kubectl", true, "run kubectl's side of the steps (false: konverge's times only, for sizes where kubectl takes hours)")
	flag.Parse()
	log.SetFlags(0)

	if *home == "" {
		h, _ := os.UserHomeDir()
		*home = filepath.Join(h, ".cache", "realcluster")
	}
	work, err := os.MkdirTemp("", "konverge-realbench-")
	if err != nil {
		log.Fatal(err)
	}
	if *keep {
		log.Printf("work directory: %s", work)
	} else {
		defer os.RemoveAll(work)
	}
	cfg := config{kubectl: filepath.Join(*home, "bin", "kubectl"), withKubectl: *withKubectl, cacheDir: filepath.Join(work, "cache")}
	if _, err := os.Stat(cfg.kubectl); err != nil {
		if cfg.kubectl, err = exec.LookPath("kubectl"); err != nil {
			log.Fatalf("no kubectl in %s/bin or on PATH", *home)
		}
	}
	if *concurrency > 0 {
		cfg.extraArgs = []string{"--concurrency", strconv.Itoa(*concurrency)}
	}
	cfg.konverge = *bin
	if cfg.konverge == "" {
		cfg.konverge = filepath.Join(work, "konverge")
		if out, err := exec.Command("go", "build", "-o", cfg.konverge, "./cmd/konverge").CombinedOutput(); err != nil {
			log.Fatalf("go build: %v\n%s", err, out)
		}
	}

	cfg.kubeconfig = *kubeconfig
	if cfg.kubeconfig == "" {
		stop, kc, err := startControlPlane(*script, *home, filepath.Join(work, "home"))
		if err != nil {
			log.Fatal(err)
		}
		defer stop()
		cfg.kubeconfig = kc
		cfg.serverPIDs = controlPlanePIDs(filepath.Join(work, "home", "run"))
	}
	c, err := kube.FromKubeconfig(cfg.kubeconfig, "")
	if err != nil {
		log.Fatal(err)
	}
	version, _, _ := cfg.run(cfg.kubectl, "version")
	fmt.Printf("konverge against kubectl on a real control plane (%s)\n", strings.Join(strings.Fields(strings.ReplaceAll(version, "Version:", "")), " "))
	if err := cfg.warmUp(work); err != nil {
		log.Fatalf("warm-up: %v", err)
	}

	failed := false
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 3 {
			log.Fatalf("-n %q: want numbers of 3 or more", s)
		}
		if !cfg.bench(c, work, n, min(*changed, n), *runs, *onlySteps, *keep) {
			failed = true
		}
	}
	if failed {
		os.Exit(1)
	}
}

// startControlPlane runs the script's up in a home of the run whose bin
// is the given home's, and returns how to stop it and its kubeconfig.
func startControlPlane(script, from, home string) (func(), string, error) {
	if err := os.MkdirAll(home, 0o755); err != nil {
		return nil, "", err
	}
	if err := os.Symlink(filepath.Join(from, "bin"), filepath.Join(home, "bin")); err != nil {
		return nil, "", err
	}
	env := append(os.Environ(), "REALCLUSTER_HOME="+home)
	up := exec.Command(script, "up")
	up.Env, up.Stdout, up.Stderr = env, os.Stderr, os.Stderr
	stop := func() {
		down := exec.Command(script, "down")
		down.Env = env
		if out, err := down.CombinedOutput(); err != nil {
			log.Printf("%s down: %v\n%s", script, err, out)
		}
	}
	if err := up.Run(); err != nil {
		stop()
		return nil, "", fmt.Errorf("%s up: %w", script, err)
	}
	return stop, filepath.Join(home, "kubeconfig"), nil
}

// run runs a tool with the run's kubeconfig and cache directory.
func (cfg config) run(tool string, args ...string) (stdout, stderr string, code int) {
	stdout, stderr, code, _ = cfg.runMeasured(tool, args...)
	return stdout, stderr, code
}

// usage is what a tool's process cost: its CPU time (user and system)
// and its peak resident memory.
type usage struct {
	cpu time.Duration
	rss int64 // bytes
}

// runMeasured is run that also reports the process's own usage.
func (cfg config) runMeasured(tool string, args ...string) (stdout, stderr string, code int, u usage) {
	cmd := exec.Command(tool, append([]string{"--kubeconfig", cfg.kubeconfig}, args...)...)
	cmd.Env = append(os.Environ(), "KUBECACHEDIR="+cfg.cacheDir)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		log.Fatalf("%s: %v", tool, err)
	}
	if ps := cmd.ProcessState; ps != nil {
		u.cpu = ps.UserTime() + ps.SystemTime()
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
			u.rss = int64(ru.Maxrss) * 1024 // Linux reports KiB
		}
	}
	return out.String(), errOut.String(), code, u
}

// warmUp fills the discovery and OpenAPI caches of both tools with an
// apply of every kind of the benchmark into a namespace of its own.
func (cfg config) warmUp(work string) error {
	dir := filepath.Join(work, "warm")
	generate(dir, 3, 0, false, false)
	for _, tool := range []string{cfg.kubectl, cfg.konverge} {
		ns := "warm-" + filepath.Base(tool)
		if _, errOut, code := cfg.run(cfg.kubectl, "create", "namespace", ns); code != 0 {
			return errors.New(errOut)
		}
		if _, errOut, code := cfg.run(tool, "apply", "-n", ns, "-f", dir); code != 0 {
			return errors.New(errOut)
		}
	}
	return nil
}

// step is one step of the benchmark: a command and the directory it runs on.
type step struct {
	name string
	args []string
}

// outcome is one tool's run of one step.
type outcome struct {
	wall   time.Duration
	code   int
	stdout string
	stderr string
}

// bench runs the steps on n objects, runs times, and prints the table; it
// reports whether both tools agreed everywhere.
func (cfg config) bench(c *kube.Cluster, work string, n, changed, runs, onlySteps int, keep bool) bool {
	dir := filepath.Join(work, fmt.Sprintf("n%d", n))
	v1, v2, v3 := filepath.Join(dir, "v1"), filepath.Join(dir, "v2"), filepath.Join(dir, "v3")
	generate(v1, n, 0, false, true)
	generate(v2, n, changed, false, true)
	generate(v3, n, changed, true, true)
	steps := []step{
		{"first apply", []string{"apply", "-f", v1}},
		{"no-op re-apply", []string{"apply", "-f", v1}},
		{fmt.Sprintf("diff, %d changed", changed), []string{"diff", "-f", v2}},
		{fmt.Sprintf("apply of %d changes", changed), []string{"apply", "-f", v2}},
		{"prune (Services removed)", []string{"apply", "-f", v3, "--prune", "-l", "tier=bench"}},
	}
	if onlySteps > 0 && onlySteps < len(steps) {
		steps = steps[:onlySteps]
	}
	loadBefore := loadAverage()
	walls := make([][2][]time.Duration, len(steps))
	cpus := make([][2][]time.Duration, len(steps))
	ownCPU := make([][2][]time.Duration, len(steps))
	peak := make([][2]int64, len(steps))
	var ceilings, ceilingCPUs []time.Duration
	notes := make([][]string, len(steps))
	ok := true
	for r := range runs {
		nsK, nsC := fmt.Sprintf("kubectl-%d-%d", n, r), fmt.Sprintf("konverge-%d-%d", n, r)
		for _, ns := range []string{nsK, nsC} {
			if _, errOut, code := cfg.run(cfg.kubectl, "create", "namespace", ns); code != 0 {
				log.Fatalf("create namespace %s: %s", ns, errOut)
			}
		}
		for i, s := range steps {
			var out [2]outcome
			// Alternate which tool goes first, run by run.
			order := []int{0, 1}
			if r%2 == 1 {
				order = []int{1, 0}
			}
			for _, t := range order {
				if t == 0 && !cfg.withKubectl {
					continue
				}
				tool, ns, extra := cfg.kubectl, nsK, []string(nil)
				if t == 1 {
					tool, ns, extra = cfg.konverge, nsC, cfg.extraArgs
				}
				args := append(append([]string{"-n", ns}, s.args...), extra...)
				cpu0 := cfg.serverCPU()
				start := time.Now()
				stdout, stderr, code, u := cfg.runMeasured(tool, args...)
				out[t] = outcome{wall: time.Since(start), code: code, stdout: stdout, stderr: stderr}
				walls[i][t] = append(walls[i][t], out[t].wall)
				ownCPU[i][t] = append(ownCPU[i][t], u.cpu)
				peak[i][t] = max(peak[i][t], u.rss)
				cpus[i][t] = append(cpus[i][t], cfg.serverCPU()-cpu0)
			}
			if !cfg.withKubectl {
				if out[1].code > 1 || (s.args[0] == "apply" && out[1].code != 0) {
					ok = false
					notes[i] = append(notes[i], "konverge failed")
					log.Printf("%s: konverge: %s", s.name, head(out[1].stderr))
				}
				continue
			}
			var problems []string
			if out[0].code != out[1].code {
				problems = append(problems, fmt.Sprintf("exit %d/%d", out[0].code, out[1].code))
			}
			if s.args[0] == "apply" && out[0].stdout != out[1].stdout {
				problems = append(problems, "lines differ")
				log.Printf("%s, %d objects: kubectl printed:\n%s%s\nkonverge printed:\n%s%s", s.name, n,
					head(out[0].stdout), head(out[0].stderr), head(out[1].stdout), head(out[1].stderr))
			}
			if out[0].code > 1 || (s.args[0] == "apply" && out[0].code != 0) {
				problems = append(problems, "kubectl failed")
				log.Printf("%s: kubectl: %s", s.name, head(out[0].stderr))
			}
			if out[1].code > 1 || (s.args[0] == "apply" && out[1].code != 0) {
				problems = append(problems, "konverge failed")
				log.Printf("%s: konverge: %s", s.name, head(out[1].stderr))
			}
			same, detail, err := compareLive(c, nsK, nsC)
			switch {
			case err != nil:
				log.Fatalf("reading the live objects: %v", err)
			case !same:
				problems = append(problems, "live objects differ")
				log.Printf("%s, %d objects: %s", s.name, n, detail)
			}
			if r == 0 {
				notes[i] = append(notes[i], fmt.Sprintf("exit %d/%d", out[0].code, out[1].code))
				if same {
					notes[i] = append(notes[i], detail)
				}
			}
			if len(problems) > 0 {
				ok = false
				notes[i] = append(notes[i], strings.Join(problems, ", "))
			}
		}
		// The server's ceiling for the first apply: a bare client-go
		// program sending the same objects, dry runs first, 16 at a time,
		// without a process to start or files to read.
		nsB := fmt.Sprintf("ceiling-%d-%d", n, r)
		if _, errOut, code := cfg.run(cfg.kubectl, "create", "namespace", nsB); code != 0 {
			log.Fatalf("create namespace %s: %s", nsB, errOut)
		}
		d, cpu, err := ceiling(cfg, v1, nsB, 16)
		if err != nil {
			log.Fatalf("ceiling: %v", err)
		}
		ceilings = append(ceilings, d)
		ceilingCPUs = append(ceilingCPUs, cpu)
		if !keep {
			for _, ns := range []string{nsK, nsC, nsB} {
				if err := clear(c, ns); err != nil {
					log.Printf("clearing %s: %v", ns, err)
				}
			}
		}
	}
	fmt.Printf("\n%d objects (%d Deployments, %d Services, %d ConfigMaps), median of %d run(s); load average before %s, after %s:\n",
		n, count(n, 0), count(n, 1), count(n, 2), runs, loadBefore, loadAverage())
	fmt.Printf("%-26s %10s %10s %8s  %s\n", "step", "kubectl", "konverge", "ratio", "checks (exit kubectl/konverge, live objects)")
	for i, s := range steps {
		v := median(walls[i][1])
		if !cfg.withKubectl {
			fmt.Printf("%-26s %10s %9.2fs %8s  %s\n", s.name, "-", v.Seconds(), "-", strings.Join(notes[i], "; "))
			continue
		}
		k := median(walls[i][0])
		fmt.Printf("%-26s %9.2fs %9.2fs %7.1fx  %s\n", s.name, k.Seconds(), v.Seconds(), k.Seconds()/v.Seconds(), strings.Join(notes[i], "; "))
	}
	fmt.Printf("\nEach tool's own CPU time (median) and peak resident memory (largest run):\n")
	fmt.Printf("%-26s %10s %10s %10s %10s\n", "step", "kubectl", "konverge", "kubectl", "konverge")
	for i, s := range steps {
		k, kr := "-", "-"
		if cfg.withKubectl {
			k = fmt.Sprintf("%.2fs", median(ownCPU[i][0]).Seconds())
			kr = fmt.Sprintf("%dMiB", peak[i][0]>>20)
		}
		fmt.Printf("%-26s %10s %9.2fs %10s %7dMiB\n", s.name, k, median(ownCPU[i][1]).Seconds(), kr, peak[i][1]>>20)
	}
	fmt.Printf("first apply by a bare client-go program (the same objects, dry runs first, 16 at a time, no process start): %.2fs\n", median(ceilings).Seconds())
	if len(cfg.serverPIDs) > 0 {
		fmt.Printf("\nCPU time of kube-apiserver and etcd during each step (median):\n")
		fmt.Printf("%-26s %10s %10s %8s\n", "step", "kubectl", "konverge", "ratio")
		for i, s := range steps {
			v := median(cpus[i][1])
			if !cfg.withKubectl {
				fmt.Printf("%-26s %10s %9.2fs %8s\n", s.name, "-", v.Seconds(), "-")
				continue
			}
			k := median(cpus[i][0])
			fmt.Printf("%-26s %9.2fs %9.2fs %7.1fx\n", s.name, k.Seconds(), v.Seconds(), k.Seconds()/max(v.Seconds(), 0.01))
		}
		fmt.Printf("%-26s %10s %9.2fs\n", "bare client-go, first apply", "", median(ceilingCPUs).Seconds())
	}
	return ok
}

// loadAverage is the machine's load average over the last minute, "?" when
// it cannot be read: the benchmark shares the machine's CPUs with whatever
// else runs.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "?"
	}
	return f[0]
}

func head(s string) string {
	if len(s) > 1500 {
		return s[:1500] + "...\n"
	}
	return s
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

var benchKinds = []schema.GVK{
	{Group: "apps", Version: "v1", Kind: "Deployment"},
	{Version: "v1", Kind: "Service"},
	{Version: "v1", Kind: "ConfigMap"},
}

// compareLive compares the benchmark's objects in two namespaces.
func compareLive(c *kube.Cluster, nsA, nsB string) (bool, string, error) {
	ctx := context.Background()
	total := 0
	for _, gvk := range benchKinds {
		a, err := comparable(ctx, c, gvk, nsA)
		if err != nil {
			return false, "", err
		}
		b, err := comparable(ctx, c, gvk, nsB)
		if err != nil {
			return false, "", err
		}
		total += len(a)
		names := map[string]bool{}
		for name := range a {
			names[name] = true
		}
		for name := range b {
			names[name] = true
		}
		sorted := make([]string, 0, len(names))
		for name := range names {
			sorted = append(sorted, name)
		}
		sort.Strings(sorted)
		for _, name := range sorted {
			if a[name] != b[name] {
				return false, fmt.Sprintf("%s %s differs:\n  kubectl:  %s\n  konverge: %s", gvk.Kind, name, a[name], b[name]), nil
			}
		}
	}
	return true, fmt.Sprintf("%d live objects identical", total), nil
}

var masks = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`"uid":"[^"]*"`), `"uid":"<uid>"`},
	{regexp.MustCompile(`"resourceVersion":"[^"]*"`), `"resourceVersion":"<rv>"`},
	{regexp.MustCompile(`"(creationTimestamp|time)":"[^"]*"`), `"$1":"<time>"`},
	{regexp.MustCompile(`"(clusterIPs?)":("[^"]*"|\["[^"]*"\])`), `"$1":"<ip>"`},
}

// comparable lists the objects of a kind in a namespace as JSON, with
// what differs between namespaces masked, by name.
func comparable(ctx context.Context, c *kube.Cluster, gvk schema.GVK, ns string) (map[string]string, error) {
	l, err := c.List(ctx, gvk, cluster.InNamespace(ns))
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(l.Items))
	for _, obj := range l.Items {
		b, err := value.Encode(obj)
		if err != nil {
			return nil, err
		}
		s := strings.ReplaceAll(string(b), `"`+ns+`"`, `"<ns>"`)
		s = strings.ReplaceAll(s, `\"`+ns+`\"`, `\"<ns>\"`)
		for _, m := range masks {
			s = m.re.ReplaceAllString(s, m.with)
		}
		md, _ := obj["metadata"].(map[string]any)
		name, _ := md["name"].(string)
		out[name] = s
	}
	return out, nil
}

// clear deletes the benchmark's objects of a namespace (without
// kube-controller-manager, deleting the namespace would leave them).
func clear(c *kube.Cluster, ns string) error {
	ctx := context.Background()
	for _, gvk := range benchKinds {
		l, err := c.List(ctx, gvk, cluster.InNamespace(ns))
		if err != nil {
			return err
		}
		for _, obj := range l.Items {
			md, _ := obj["metadata"].(map[string]any)
			name, _ := md["name"].(string)
			if err := c.Delete(ctx, gvk, ns, name); err != nil && !cluster.IsNotFound(err) {
				return err
			}
		}
	}
	return nil
}

// ceiling creates the objects of dir in namespace ns as fast as client-go
// can with workers requests in flight, without a client-side limit: every
// object first as a dry run, then for real. It returns the time of the
// requests alone.
func ceiling(bc config, dir, ns string, workers int) (time.Duration, time.Duration, error) {
	cfg, err := kube.RESTConfig(bc.kubeconfig, "")
	if err != nil {
		return 0, 0, err
	}
	cfg.QPS = -1
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return 0, 0, err
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return 0, 0, err
	}
	resources := map[string]k8sschema.GroupVersionResource{
		"Deployment": {Group: "apps", Version: "v1", Resource: "deployments"},
		"Service":    {Version: "v1", Resource: "services"},
		"ConfigMap":  {Version: "v1", Resource: "configmaps"},
	}
	type object struct {
		gvr k8sschema.GroupVersionResource
		u   *unstructured.Unstructured
	}
	var objs []object
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return 0, 0, err
		}
		for _, doc := range strings.Split(string(b), "---\n") {
			if strings.TrimSpace(doc) == "" {
				continue
			}
			j, err := yaml.YAMLToJSON([]byte(doc))
			if err != nil {
				return 0, 0, err
			}
			m, err := value.DecodeObject(j)
			if err != nil {
				return 0, 0, err
			}
			u := &unstructured.Unstructured{Object: m}
			u.SetNamespace(ns)
			objs = append(objs, object{resources[u.GetKind()], u})
		}
	}
	ctx := context.Background()
	cpu0 := bc.serverCPU()
	start := time.Now()
	for _, dry := range []bool{true, false} {
		opts := metav1.CreateOptions{FieldManager: "kubectl-client-side-apply"}
		if dry {
			opts.DryRun = []string{metav1.DryRunAll}
		}
		var wg sync.WaitGroup
		var next atomic.Int64
		errs := make([]error, len(objs))
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					i := int(next.Add(1) - 1)
					if i >= len(objs) {
						return
					}
					_, errs[i] = dyn.Resource(objs[i].gvr).Namespace(ns).Create(ctx, objs[i].u, opts)
				}
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return 0, 0, err
		}
	}
	return time.Since(start), bc.serverCPU() - cpu0, nil
}

// controlPlanePIDs reads the pid files of etcd and kube-apiserver in the
// run directory of scripts/realcluster.sh.
func controlPlanePIDs(run string) []int {
	var pids []int
	for _, name := range []string{"etcd", "kube-apiserver"} {
		b, err := os.ReadFile(filepath.Join(run, name+".pid"))
		if err != nil {
			log.Printf("no CPU times of %s: %v", name, err)
			continue
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// clockTick is the unit of the CPU times of /proc/<pid>/stat (USER_HZ).
const clockTick = 10 * time.Millisecond

// serverCPU is the CPU time (user and system) the control plane's
// processes have used so far, 0 when unknown.
func (cfg config) serverCPU() time.Duration {
	var total time.Duration
	for _, pid := range cfg.serverPIDs {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// The fields after the command name, which is in parentheses:
		// utime and stime are the 12th and 13th.
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b)[i+1:])
		if len(f) < 13 {
			continue
		}
		u, _ := strconv.ParseInt(f[11], 10, 64)
		s, _ := strconv.ParseInt(f[12], 10, 64)
		total += time.Duration(u+s) * clockTick
	}
	return total
}

// count returns how many of n objects are of kind k (0 Deployment,
// 1 Service, 2 ConfigMap) when kinds rotate.
func count(n, k int) int { return (n + 2 - k) / 3 }

// generate writes n objects, kinds rotating, into dir, one file per 100
// objects; the first changed of them differ from version 1 (another image,
// target port or data value); withoutServices leaves the Services out.
func generate(dir string, n, changed int, withoutServices, labelled bool) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		log.Fatal(err)
	}
	var b strings.Builder
	flush := func(i int) {
		if b.Len() == 0 {
			return
		}
		path := filepath.Join(dir, fmt.Sprintf("objects-%05d.yaml", i/100))
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			log.Fatal(err)
		}
		b.Reset()
	}
	label := ""
	if labelled {
		label = "\n    tier: bench"
	}
	for i := range n {
		name := fmt.Sprintf("app-%05d", i)
		version := "1"
		if i < changed {
			version = "2"
		}
		switch i % 3 {
		case 0:
			fmt.Fprintf(&b, `---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[1]s
  labels:
    app: %[1]s%[3]s
spec:
  replicas: 2
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
        image: nginx:1.16.%[2]s
        ports:
        - containerPort: 80
        env:
        - name: MODE
          value: production
        resources:
          requests:
            cpu: 100m
            memory: 128Mi
`, name, version, label)
		case 1:
			if withoutServices {
				break
			}
			fmt.Fprintf(&b, `---
apiVersion: v1
kind: Service
metadata:
  name: %[1]s
  labels:
    app: %[1]s%[3]s
spec:
  selector:
    app: %[1]s
  ports:
  - name: http
    port: 80
    targetPort: 808%[2]s
`, name, version, label)
		case 2:
			fmt.Fprintf(&b, `---
apiVersion: v1
kind: ConfigMap
metadata:
  name: %[1]s
  labels:
    app: %[1]s%[3]s
data:
  version: "%[2]s"
  settings.conf: |
    listen 80
    workers 4
`, name, version, label)
		}
		if (i+1)%100 == 0 {
			flush(i)
		}
	}
	flush(n - 1)
}
