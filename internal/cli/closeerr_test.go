package cli

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
)

// failingClose are the states whose sessions fail to close: the commit at
// the end of a command fails (a full disk, say).
var failingClose sync.Map

func init() {
	openHooks = append(openHooks, func(ctx context.Context, g *Globals, s *Session) error {
		if _, ok := failingClose.Load(g.StateDir()); ok {
			s.OnClose(func(context.Context) error { return errors.New("no space left on device") })
		}
		return nil
	})
}

// Every command that writes reports a failure to save at its end, with a
// non-zero exit code, even when it already printed what it did.
func TestEveryCommandReportsTheCommitAtClose(t *testing.T) {
	c := newSeedCluster(t)
	d := c.file("d.yaml", strings.ReplaceAll(robustDeployment("web", 2, plainContainer, "", ""), "robust", "web"))
	cm := c.file("cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {a: b}\n")
	other := c.file("other.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other}\ndata: {a: b}\n")
	// An editor that changes the Deployment.
	t.Setenv("KUBE_EDITOR", "sed -i s/minReadySeconds:.*/minReadySeconds:\\ 2/")
	c.ok("apply", "-f", d)
	c.ok("rollout", "status", "deployment/web")
	c.ok("apply", "-f", cm)
	failingClose.Store(c.state, true)
	defer failingClose.Delete(c.state)
	for _, args := range [][]string{
		{"apply", "-f", d},
		{"set", "image", "deployment/web", "nginx=nginx:1.14.2"},
		{"scale", "deployment/web", "--replicas=3"},
		{"label", "deployment/web", "tier=front"},
		{"annotate", "deployment/web", "note=x"},
		{"patch", "deployment/web", "-p", `{"spec":{"minReadySeconds":1}}`},
		{"rollout", "restart", "deployment/web"},
		{"rollout", "pause", "deployment/web"},
		{"rollout", "resume", "deployment/web"},
		{"rollout", "undo", "deployment/web"},
		{"rollout", "status", "deployment/web"},
		{"create", "-f", other},
		{"edit", "deployment/web"},
		{"replace", "-f", cm},
		{"delete", "configmap", "cm"},
		{"get", "pods"},
		{"describe", "deployment", "web"},
		{"diff", "-f", d},
		{"clock", "advance", "1s"},
		{"wait", "--for=condition=Available", "deployment/web"},
	} {
		if !hasSubcommand(args[0]) {
			continue
		}
		out, errOut, code := c.run(args...)
		if code == 0 || !strings.Contains(errOut, "no space left on device") {
			t.Errorf("konverge %s: exit %d, stderr %q (stdout %q): want the failure to save reported", strings.Join(args, " "), code, errOut, out)
		}
		if args[0] == "diff" && code < 2 {
			t.Errorf("diff: exit %d, want > 1 for an error", code)
		}
	}
}
