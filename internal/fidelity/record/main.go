// Command record runs the cases of the fidelity corpus against a real
// control plane with real kubectl and writes what it answered as golden
// files (testdata/fidelity/golden), masked by package fidelity.
//
//	scripts/realcluster.sh up --with-controllers
//	eval "$(scripts/realcluster.sh env)"
//	go run ./internal/fidelity/record [-run REGEXP] [-root testdata/fidelity]
//
// Each case runs in a fresh namespace of its own (the current namespace of
// a kubeconfig copy), whose name the recording replaces by "default"; the
// recorder waits for its default ServiceAccount and kube-root-ca.crt
// ConfigMap, as a user would find them, and deletes what the case created
// afterwards.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/konverge/konverge/internal/fidelity"
)

func main() {
	root := flag.String("root", "testdata/fidelity", "the corpus directory")
	run := flag.String("run", "", "record only the cases whose name matches this regular expression")
	kubectl := flag.String("kubectl", "kubectl", "the kubectl binary")
	flag.Parse()
	if err := record(*root, *run, *kubectl); err != nil {
		fmt.Fprintln(os.Stderr, "record:", err)
		os.Exit(1)
	}
}

func record(root, run, kubectl string) error {
	kubeconfig := os.Getenv("KUBECONFIG")
	if kubeconfig == "" {
		return errors.New("KUBECONFIG is not set (eval \"$(scripts/realcluster.sh env)\")")
	}
	var match *regexp.Regexp
	if run != "" {
		var err error
		if match, err = regexp.Compile(run); err != nil {
			return err
		}
	}
	cases, err := fidelity.Load(root)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "fidelity-record")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for _, c := range cases {
		if match != nil && !match.MatchString(c.Name) {
			continue
		}
		start := time.Now()
		rec, err := recordCase(c, kubectl, kubeconfig, tmp)
		if err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
		data, err := fidelity.Encode(rec)
		if err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
		path := fidelity.GoldenPath(root, c)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return err
		}
		fmt.Printf("%-50s %d steps  %.1fs\n", c.Name, len(c.Steps), time.Since(start).Seconds())
	}
	return nil
}

func recordCase(c fidelity.Case, kubectl, kubeconfig, tmp string) (fidelity.Recording, error) {
	if !strings.HasPrefix(c.Name, "kinds/") {
		return recordInDefault(c, kubectl, kubeconfig)
	}
	ns := fidelity.Namespace(c)
	admin := func(args ...string) (string, error) {
		out, errOut, code := runKubectl(kubectl, kubeconfig, "", args...)
		if code != 0 {
			return out, fmt.Errorf("kubectl %s: %s", strings.Join(args, " "), errOut)
		}
		return out, nil
	}
	// A namespace left over by an earlier run goes first.
	_, _ = admin("delete", "namespace", ns, "--ignore-not-found", "--wait=true", "--timeout=60s")
	if _, err := admin("create", "namespace", ns); err != nil {
		return fidelity.Recording{}, err
	}
	for _, what := range []string{"serviceaccount/default", "configmap/kube-root-ca.crt"} {
		if err := waitFor(func() bool { _, err := admin("get", "-n", ns, what); return err == nil }); err != nil {
			return fidelity.Recording{}, fmt.Errorf("namespace %s: no %s", ns, what)
		}
	}
	cfg := filepath.Join(tmp, ns+".kubeconfig")
	data, err := os.ReadFile(kubeconfig)
	if err != nil {
		return fidelity.Recording{}, err
	}
	if err := os.WriteFile(cfg, data, 0o600); err != nil {
		return fidelity.Recording{}, err
	}
	if _, errOut, code := runKubectl(kubectl, cfg, "", "config", "set-context", "--current", "--namespace="+ns); code != 0 {
		return fidelity.Recording{}, errors.New(errOut)
	}

	rec := fidelity.Recording{Case: c.Name}
	for _, args := range c.Steps {
		if args[0] == fidelity.Sleep {
			secs, _ := strconv.ParseFloat(args[1], 64)
			time.Sleep(time.Duration(secs * float64(time.Second)))
			continue
		}
		stdout, stderr, code := runKubectl(kubectl, cfg, c.Dir, args...)
		stdout = strings.ReplaceAll(stdout, ns, "default")
		stderr = strings.ReplaceAll(stderr, ns, "default")
		step, err := fidelity.Outcome(args, code, stdout, stderr)
		if err != nil {
			return rec, err
		}
		rec.Steps = append(rec.Steps, step)
	}

	// Clean up: the manifests' objects (cluster-scoped ones too), then
	// the namespace.
	for _, f := range manifests(c) {
		runKubectl(kubectl, cfg, c.Dir, "delete", "-f", f, "--ignore-not-found", "--wait=false")
	}
	_, _ = admin("delete", "namespace", ns, "--wait=false")
	return rec, nil
}

// recordInDefault runs a case in the default namespace, which holds what
// it holds in every cluster (the kubernetes Service), and deletes what the
// case created, waiting for it to go.
func recordInDefault(c fidelity.Case, kubectl, kubeconfig string) (fidelity.Recording, error) {
	cleanup := func() {
		for _, args := range c.Cleanup {
			runKubectl(kubectl, kubeconfig, c.Dir, args...)
		}
		files := manifests(c)
		for i := len(files) - 1; i >= 0; i-- {
			runKubectl(kubectl, kubeconfig, c.Dir, "delete", "-f", files[i], "--ignore-not-found", "--cascade=foreground", "--wait=true", "--timeout=90s")
		}
	}
	cleanup()
	rec := fidelity.Recording{Case: c.Name}
	for _, args := range c.Steps {
		if args[0] == fidelity.Sleep {
			secs, _ := strconv.ParseFloat(args[1], 64)
			time.Sleep(time.Duration(secs * float64(time.Second)))
			continue
		}
		expanded, err := fidelity.Expand(args, func(resource, name, namespace string) (string, error) {
			get := []string{"get", resource, name, "-o", "jsonpath={.metadata.uid}"}
			if namespace != "" {
				get = append(get, "-n", namespace)
			}
			out, errOut, code := runKubectl(kubectl, kubeconfig, c.Dir, get...)
			if code != 0 {
				return "", errors.New(errOut)
			}
			return out, nil
		})
		if err != nil {
			return rec, err
		}
		stdout, stderr, code := runKubectl(kubectl, kubeconfig, c.Dir, expanded...)
		step, err := fidelity.Outcome(args, code, stdout, stderr)
		if err != nil {
			return rec, err
		}
		rec.Steps = append(rec.Steps, step)
	}
	cleanup()
	return rec, nil
}

// manifests lists the -f arguments of a case's steps.
func manifests(c fidelity.Case) []string {
	seen := map[string]bool{}
	var out []string
	for _, args := range c.Steps {
		for i, a := range args {
			var f string
			switch {
			case (a == "-f" || a == "--filename") && i+1 < len(args):
				f = args[i+1]
			case strings.HasPrefix(a, "--filename="):
				f = strings.TrimPrefix(a, "--filename=")
			}
			if f != "" && f != "-" && !seen[f] {
				seen[f] = true
				out = append(out, f)
			}
		}
	}
	return out
}

func waitFor(ok func() bool) error {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if ok() {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return errors.New("timed out")
}

func runKubectl(kubectl, kubeconfig, dir string, args ...string) (stdout, stderr string, code int) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, kubectl, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		code = -1
		errOut.WriteString(err.Error())
	}
	return out.String(), errOut.String(), code
}
