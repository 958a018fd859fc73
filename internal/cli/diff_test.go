package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkDiffCommand runs konverge diff in-process on the directory
// KONVERGE_BENCH_DIR/v2 against the state KONVERGE_BENCH_DIR/state (made by
// go run ./bench/cli -keep), for profiling with -cpuprofile.
func BenchmarkDiffCommand(b *testing.B) {
	dir := os.Getenv("KONVERGE_BENCH_DIR")
	if dir == "" {
		b.Skip("KONVERGE_BENCH_DIR is not set (run go run ./bench/cli -keep)")
	}
	for b.Loop() {
		_, stderr, code := konvergeRun(b, nil, "--state", dir+"/state", "diff", "-f", dir+"/v2")
		if code != 1 {
			b.Fatalf("exit %d: %s", code, stderr)
		}
	}
}

// TestDiffExternal runs diff with KONVERGE_EXTERNAL_DIFF naming a script
// that shows the two directories it is given: one file per object, Secret
// values masked, and the program's exit status passed on.
func TestDiffExternal(t *testing.T) {
	state := t.TempDir()
	dir := t.TempDir()
	script := filepath.Join(dir, "show")
	writeFile(t, script, []byte("#!/bin/sh\necho \"flags: $1\"\nshift\nfor d in \"$1\" \"$2\"; do echo \"$(basename \"$d\" | cut -d- -f1):\"; for f in \"$d\"/*; do [ -e \"$f\" ] && echo \"$(basename \"$f\")\" && cat \"$f\"; done; done\nexit 1\n"))
	if err := os.Chmod(script, 0o755); err != nil {
		t.Fatal(err)
	}
	input := filepath.Join(dir, "in.yaml")
	writeFile(t, input, []byte("apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\nstringData:\n  password: very-secret-value\n"))
	t.Setenv("KONVERGE_EXTERNAL_DIFF", script+" -u")
	stdout, stderr, code := konvergeRun(t, nil, "--state", state, "diff", "-f", input)
	if code != 1 {
		t.Fatalf("exit %d, want 1; stderr:\n%s", code, stderr)
	}
	for _, want := range []string{"flags: -u", "LIVE:", "MERGED:", "v1.Secret.default.db", "password: '***'"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout+stderr, "very-secret-value") {
		t.Errorf("the secret value shows:\n%s", stdout)
	}

	// A program that fails (exit status > 1) is konverge's error, status 2.
	writeFile(t, script, []byte("#!/bin/sh\nexit 3\n"))
	if _, _, code := konvergeRun(t, nil, "--state", state, "diff", "-f", input); code != 2 {
		t.Errorf("failing program: exit %d, want 2", code)
	}
}

// BenchmarkApplyCommand runs a first konverge apply in-process of the
// directory KONVERGE_BENCH_DIR/v1 (made by go run ./bench/cli -keep) into a
// fresh state, for profiling with -cpuprofile.
func BenchmarkApplyCommand(b *testing.B) {
	dir := os.Getenv("KONVERGE_BENCH_DIR")
	if dir == "" {
		b.Skip("KONVERGE_BENCH_DIR is not set (run go run ./bench/cli -keep)")
	}
	for b.Loop() {
		b.StopTimer()
		state := b.TempDir()
		b.StartTimer()
		_, stderr, code := konvergeRun(b, nil, "--state", state, "apply", "-f", dir+"/v1")
		if code != 0 {
			b.Fatalf("exit %d: %s", code, stderr)
		}
	}
}
