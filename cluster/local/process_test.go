package local

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/konverge/konverge/cluster"
)

// Tests that need other processes re-execute the test binary with
// childEnv set to a role; TestMain runs the role instead of the tests.
const childEnv = "KONVERGE_LOCAL_TEST_CHILD"

func TestMain(m *testing.M) {
	if role := os.Getenv(childEnv); role != "" {
		if err := runChild(role, os.Getenv("KONVERGE_LOCAL_TEST_DIR")); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func childProcess(t *testing.T, role, dir string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+role, "KONVERGE_LOCAL_TEST_DIR="+dir)
	return cmd
}

func runChild(role, dir string) error {
	ctx := context.Background()
	switch role {
	case "hold":
		// Hold the state until stdin closes.
		s, err := Open(dir, Options{})
		if err != nil {
			return err
		}
		fmt.Println("locked")
		_, _ = io.Copy(io.Discard, os.Stdin)
		return s.Close()
	case "try":
		_, err := Open(dir, Options{LockTimeout: 200 * time.Millisecond})
		if err == nil {
			return errors.New("opened a state another process holds")
		}
		fmt.Println(err)
		return nil
	case "increment":
		// Read, add one, write back: as many short commands would.
		for range 20 {
			s, err := Open(dir, Options{LockTimeout: time.Minute})
			if err != nil {
				return err
			}
			cm, err := s.Get(ctx, gvkConfigMap, "default", "counter")
			if err != nil {
				return err
			}
			data, _ := cm["data"].(map[string]any)
			n, _ := strconv.Atoi(str(data, "count"))
			data["count"] = strconv.Itoa(n + 1)
			if _, err := s.Update(ctx, cm); err != nil {
				return err
			}
			if err := s.Close(); err != nil {
				return err
			}
		}
		return nil
	case "crash":
		return crashWorkload(ctx, dir)
	}
	return fmt.Errorf("unknown role %q", role)
}

func TestLockedByAnotherProcess(t *testing.T) {
	dir := t.TempDir()
	holder := childProcess(t, "hold", dir)
	stdin, err := holder.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	holder.Stderr = os.Stderr
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "locked\n" {
		t.Fatalf("holder: %q %v", line, err)
	}

	start := time.Now()
	_, err = Open(dir, Options{LockTimeout: 300 * time.Millisecond})
	var locked *LockedError
	if !errors.As(err, &locked) || !errors.Is(err, ErrLocked) {
		t.Fatalf("Open of a held state: %v", err)
	}
	want := fmt.Sprintf("konverge: state %s is in use by another konverge process (pid %d)", dir, holder.Process.Pid)
	if err.Error() != want {
		t.Errorf("got %q\nwant %q", err, want)
	}
	if waited := time.Since(start); waited < 250*time.Millisecond {
		t.Errorf("gave up after %v, before the timeout", waited)
	}

	// A waiting Open gets the state once the holder lets go.
	done := make(chan error, 1)
	go func() {
		s, err := Open(dir, Options{LockTimeout: time.Minute})
		if err == nil {
			err = s.Close()
		}
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	stdin.Close()
	if err := <-done; err != nil {
		t.Errorf("waiting Open: %v", err)
	}
	if err := holder.Wait(); err != nil {
		t.Errorf("holder: %v", err)
	}

	// And the other way round: this process holds it.
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	out, err := childProcess(t, "try", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("try: %v\n%s", err, out)
	}
	if want := fmt.Sprintf("(pid %d)", os.Getpid()); !strings.Contains(string(out), want) {
		t.Errorf("child saw %q, want the pid %s", out, want)
	}
}

func TestConcurrentProcessesLoseNoUpdate(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s, `{apiVersion: v1, kind: ConfigMap, metadata: {name: counter, namespace: default}, data: {count: "0"}}`)
	s.Close()

	var cmds []*exec.Cmd
	for range 2 {
		cmd := childProcess(t, "increment", dir)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("child: %v", err)
		}
	}
	s, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n := path(mustGet(t, s, gvkConfigMap, "default", "counter"), "data.count"); n != "40" {
		t.Errorf("counter %v, want 40", n)
	}
}

// The crash workload applies crashObjects ConfigMaps again and again, in
// batches of crashBatch, each batch also recording its progress; its
// parent kills it at random moments.
const (
	crashObjects = 2000
	crashBatch   = 250
)

func crashWorkload(ctx context.Context, dir string) error {
	s, err := Open(dir, Options{LockTimeout: time.Minute})
	if err != nil {
		return err
	}
	// Resume after the last committed batch, so that the objects are
	// always at one round up to that batch and at the round before after
	// it.
	round, first := 0, 0
	if p, err := s.Get(ctx, gvkConfigMap, "default", "progress"); err == nil {
		data := p["data"].(map[string]any)
		round, _ = strconv.Atoi(str(data, "round"))
		first, _ = strconv.Atoi(str(data, "batch"))
		if first++; first == crashObjects/crashBatch {
			round, first = round+1, 0
		}
	}
	fmt.Println("ready")
	payload := strings.Repeat("x", 512)
	for ; ; round, first = round+1, 0 {
		for b := first; b < crashObjects/crashBatch; b++ {
			err := s.Batch(ctx, func(c cluster.Interface) error {
				for i := b * crashBatch; i < (b+1)*crashBatch; i++ {
					o := map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
						"metadata": map[string]any{"name": fmt.Sprintf("obj-%04d", i), "namespace": "default"},
						"data":     map[string]any{"round": strconv.Itoa(round), "check": fmt.Sprintf("%d/%d", round, i), "payload": payload}}
					if _, err := c.Update(ctx, o); cluster.IsNotFound(err) {
						_, err = c.Create(ctx, o)
						if err != nil {
							return err
						}
					} else if err != nil {
						return err
					}
				}
				p := map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
					"metadata": map[string]any{"name": "progress", "namespace": "default"},
					"data":     map[string]any{"round": strconv.Itoa(round), "batch": strconv.Itoa(b)}}
				if _, err := c.Update(ctx, p); cluster.IsNotFound(err) {
					_, err = c.Create(ctx, p)
					return err
				} else {
					return err
				}
			})
			if err != nil {
				return err
			}
		}
	}
}

func TestKillDuringWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("kill -9 test skipped in short mode")
	}
	dir := t.TempDir()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	const runs = 20
	for run := range runs {
		cmd := childProcess(t, "crash", dir)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "ready\n" {
			t.Fatalf("run %d: child: %q %v", run, line, err)
		}
		time.Sleep(time.Duration(rng.IntN(400)) * time.Millisecond)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		round, batch := checkCrashState(t, dir)
		t.Logf("run %d: killed after round %d batch %d", run, round, batch)
	}
}

// checkCrashState opens a state the crash workload left and checks that
// every object is whole and at the version of the last committed batch
// that wrote it, and that the revision counter is consistent.
func checkCrashState(t *testing.T, dir string) (round, batch int) {
	t.Helper()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatalf("reopen after kill: %v", err)
	}
	defer s.Close()
	ctx := context.Background()
	round, batch = -1, crashObjects/crashBatch-1
	if p, err := s.Get(ctx, gvkConfigMap, "default", "progress"); err == nil {
		data := p["data"].(map[string]any)
		round, _ = strconv.Atoi(str(data, "round"))
		batch, _ = strconv.Atoi(str(data, "batch"))
	} else if !cluster.IsNotFound(err) {
		t.Fatal(err)
	}
	list, err := s.List(ctx, gvkConfigMap, cluster.InNamespace("default"))
	if err != nil {
		t.Fatal(err)
	}
	counter, _ := strconv.ParseUint(list.ResourceVersion, 10, 64)
	seen := map[string]bool{}
	var maxRV uint64
	byName := map[string]map[string]any{}
	for _, o := range list.Items {
		rv, err := strconv.ParseUint(metaString(o, "resourceVersion"), 10, 64)
		if err != nil || rv == 0 || rv > counter {
			t.Errorf("%s: resourceVersion %q, counter %d", metaString(o, "name"), metaString(o, "resourceVersion"), counter)
		}
		if seen[metaString(o, "resourceVersion")] {
			t.Errorf("resourceVersion %s used twice", metaString(o, "resourceVersion"))
		}
		seen[metaString(o, "resourceVersion")] = true
		maxRV = max(maxRV, rv)
		byName[metaString(o, "name")] = o
	}
	// The newest write may be another kind's: the checks write a Secret
	// each, and Open writes what every cluster holds.
	for _, r := range s.Mapper().Resources() {
		others, err := s.List(ctx, r.GVK)
		if err != nil {
			continue
		}
		for _, o := range others.Items {
			rv, _ := strconv.ParseUint(metaString(o, "resourceVersion"), 10, 64)
			maxRV = max(maxRV, rv)
		}
	}
	if maxRV != counter {
		t.Errorf("revision counter %d, newest object at %d", counter, maxRV)
	}
	for i := range crashObjects {
		name := fmt.Sprintf("obj-%04d", i)
		want := round
		if i/crashBatch > batch {
			want = round - 1
		}
		o := byName[name]
		if want < 0 {
			if o != nil {
				t.Errorf("%s exists before its first batch committed", name)
			}
			continue
		}
		if o == nil {
			t.Errorf("%s missing (want round %d)", name, want)
			continue
		}
		data, _ := o["data"].(map[string]any)
		if str(data, "round") != strconv.Itoa(want) || str(data, "check") != fmt.Sprintf("%d/%d", want, i) || len(str(data, "payload")) != 512 {
			t.Errorf("%s: round %q check %q, want round %d (progress %d/%d)", name, str(data, "round"), str(data, "check"), want, round, batch)
		}
	}
	// The state takes new writes at the next revision.
	c := mustCreate(t, s, fmt.Sprintf(`{apiVersion: v1, kind: Secret, metadata: {name: after-%d, namespace: default}}`, counter))
	if metaString(c, "resourceVersion") != strconv.FormatUint(counter+1, 10) {
		t.Errorf("next write at %s, counter was %d", metaString(c, "resourceVersion"), counter)
	}
	return round, batch
}
