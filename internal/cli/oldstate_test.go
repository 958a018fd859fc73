package cli

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// TestEarlierStatesOpen opens states written by earlier builds
// (testdata/state) and runs the usual commands on them: they open, keep
// their clock and objects, stamp nothing after the cluster time (the
// bootstrap of objects an earlier build did not make happens at the
// state's time, not the wall time), and their workloads go on.
func TestEarlierStatesOpen(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "state", "*.db.gz"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no states in testdata/state: %v", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".db.gz"), func(t *testing.T) {
			t.Parallel()
			c := &seedCluster{t: t, state: t.TempDir(), dir: t.TempDir()}
			useSimSessions(c.state)
			unzip(t, f, filepath.Join(c.state, "state.db"))
			if got := c.robustOK("clock"); got != "2026-01-01T01:00:00Z manual\n" {
				t.Fatalf("clock of the earlier state: %q", got)
			}
			out := c.robustOK("get", "all", "-A")
			for _, want := range []string{"deployment.apps/web", "statefulset.apps/db", "daemonset.apps/agent", "cronjob.batch/tick", "job.batch/once", "horizontalpodautoscaler.autoscaling/web", "service/web"} {
				if !strings.Contains(out, want) {
					t.Errorf("get all -A lacks %s:\n%s", want, out)
				}
			}
			c.robustOK("clock", "advance", "1h")
			for _, kinds := range []string{"all", "sa,cm,secret,pvc,pv,events,endpoints"} {
				out := c.robustOK("get", kinds, "-A")
				if strings.Contains(out, "<invalid>") {
					t.Errorf("get %s -A: an object created after the cluster time:\n%s", kinds, out)
				}
				var l map[string]any
				if err := yaml.Unmarshal([]byte(c.quiet("get", kinds, "-A", "-o", "json")), &l); err != nil {
					t.Fatal(err)
				}
				now := time.Date(2026, 1, 1, 2, 0, 0, 0, time.UTC)
				if at, path := latestTime(l, ""); at.After(now) {
					t.Errorf("%s is %s, after the cluster time %s", path, at.Format(time.RFC3339), now.Format(time.RFC3339))
				}
			}
			c.robustOK("-n", "shop", "rollout", "status", "deployment/web", "--timeout=10m")
			c.robustOK("-n", "shop", "rollout", "status", "statefulset/db", "--timeout=10m")
			c.robustOK("-n", "shop", "rollout", "status", "daemonset/agent", "--timeout=10m")
			if out := c.robustOK("-n", "shop", "get", "secret", "token", "-o", "jsonpath={.data.token}"); out != "czNjcjN0" {
				t.Errorf("secret data %q", out)
			}
			c.robustOK("apply", "-f", c.file("healthy.yaml", strings.ReplaceAll(robustDeployment("healthy", 2, plainContainer, "", ""), "robust", "healthy")))
			c.robustOK("rollout", "status", "deployment/healthy", "--timeout=10m")
			c.robustOK("delete", "namespace", "shop")
			c.robustOK("clock", "advance", "10m")
			if out := c.robustOK("get", "all", "-n", "shop"); !strings.Contains(out, "No resources found") && strings.TrimSpace(out) != "" {
				t.Errorf("namespace shop 10m after its deletion:\n%s", out)
			}
		})
	}
}

func unzip(t *testing.T, from, to string) {
	t.Helper()
	f, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, z); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
