package cli

import (
	"strings"
	"testing"
)

// TestLogsOnTheEmbeddedCluster: a container that only echoes logs what
// it echoes; any other program has no output, which logs says on
// standard error (exit 0); objects that select pods log their first pod.
func TestLogsOnTheEmbeddedCluster(t *testing.T) {
	t.Parallel()
	c := newSeedCluster(t)
	c.ok("run", "hello", "--image=busybox", "--restart=Never", "--", "sh", "-c", "echo hello; echo 'two words' && exit 0")
	c.ok("apply", "-f", c.file("d.yaml", simDeployment))
	c.ok("clock", "advance", "2m")
	if out, errOut, code := c.run("logs", "hello"); code != 0 || out != "hello\ntwo words\n" || errOut != "" {
		t.Errorf("logs hello: exit %d, %q %q", code, out, errOut)
	}
	if out := c.ok("logs", "hello", "--tail=1", "--prefix"); out != "[pod/hello/hello] two words\n" {
		t.Errorf("logs hello --tail=1 --prefix: %q", out)
	}
	out, errOut, code := c.run("logs", "deploy/nginx-deployment")
	if code != 0 || out != "" || !strings.HasPrefix(errOut, "Found 3 pods, using pod/nginx-deployment-") ||
		!strings.Contains(errOut, `konverge: container "nginx" of pod default/nginx-deployment-`) || !strings.Contains(errOut, "runs no program: no output to show") {
		t.Errorf("logs deploy/nginx-deployment: exit %d, %q %q", code, out, errOut)
	}
	if _, errOut, code := c.run("logs", "hello", "-p"); code != 1 || errOut != "Error from server (BadRequest): previous terminated container \"hello\" in pod \"hello\" not found\n" {
		t.Errorf("logs hello -p: exit %d, %q", code, errOut)
	}
}

func TestEchoOutput(t *testing.T) {
	for _, c := range []struct {
		cmd   []string
		lines []string
		known bool
	}{
		{[]string{"echo", "a", "b"}, []string{"a b"}, true},
		{[]string{"/bin/echo", "-n", "x"}, []string{"x"}, true},
		{[]string{"sh", "-c", `echo "a  b"; sleep 3; echo 'c'`}, []string{"a  b", "c"}, true},
		{[]string{"sh", "-c", "echo $HOME"}, nil, false},
		{[]string{"sh", "-c", "echo a | tee b"}, nil, false},
		{[]string{"sh", "-c", "nginx -g 'daemon off;'"}, nil, false},
		{[]string{"nginx"}, nil, false},
		{nil, nil, false},
	} {
		lines, known := echoOutput(c.cmd)
		if known != c.known || strings.Join(lines, "|") != strings.Join(c.lines, "|") {
			t.Errorf("%q: %q %v, want %q %v", c.cmd, lines, known, c.lines, c.known)
		}
	}
}
