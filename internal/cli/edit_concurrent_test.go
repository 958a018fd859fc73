package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestEditHoldsNothingWhileEditorRuns opens an editor that waits while
// another command changes (or deletes) the object, then edits it: the
// other command must not wait for the editor (edit holds no lock while it
// runs), and the outcome is kubectl edit's, as observed on kube-apiserver
// and kubectl v1.37.1 with the same editor scripts: the user's change is
// sent as a patch, so a change made meanwhile to another field is kept and
// one to the same field is overwritten (exit 0, "edited"); an object
// deleted meanwhile, or a resourceVersion the user edited, keeps the
// edits in a file and says why (exit 1).
func TestEditHoldsNothingWhileEditorRuns(t *testing.T) {
	cases := []struct {
		name string
		// meanwhile is the command run while the editor is open.
		meanwhile []string
		// sed is the editor's change.
		sed      string
		out      string
		errOut   *regexp.Regexp
		code     int
		data     string
		keptFile bool
	}{
		{
			name:      "another field changed meanwhile",
			meanwhile: []string{"patch", "cm", "c1", "-p", `{"data":{"b":"changed-meanwhile"}}`},
			sed:       `s/^  a: one/  a: edited/`,
			out:       "configmap/c1 edited\n",
			errOut:    regexp.MustCompile(`^$`),
			data:      `{"a":"edited","b":"changed-meanwhile"}`,
		},
		{
			name:      "the same field changed meanwhile",
			meanwhile: []string{"patch", "cm", "c1", "-p", `{"data":{"a":"changed-meanwhile"}}`},
			sed:       `s/^  a: one/  a: edited/`,
			out:       "configmap/c1 edited\n",
			errOut:    regexp.MustCompile(`^$`),
			data:      `{"a":"edited","b":"two"}`,
		},
		{
			name:      "deleted meanwhile",
			meanwhile: []string{"delete", "cm", "c1"},
			sed:       `s/^  a: one/  a: edited/`,
			errOut:    regexp.MustCompile(`^error: configmaps "c1" could not be found on the server\nThe edits you made on deleted resources have been saved to "([^"]*konverge-edit-[0-9]+\.yaml)"\n$`),
			code:      1,
			keptFile:  true,
		},
		{
			name:      "resourceVersion edited, changed meanwhile",
			meanwhile: []string{"patch", "cm", "c1", "-p", `{"data":{"b":"changed-meanwhile"}}`},
			sed:       `s/^  a: one/  a: edited/; s/^  resourceVersion: "\([0-9]*\)"/  resourceVersion: "1\1"/`,
			errOut:    regexp.MustCompile("^error: configmaps \"c1\" could not be patched: Operation cannot be fulfilled on configmaps \"c1\": the object has been modified; please apply your changes to the latest version and try again\nYou can run `konverge replace -f ([^`]*konverge-edit-[0-9]+\\.yaml)` to try this update again.\n$"),
			code:      1,
			data:      `{"a":"one","b":"changed-meanwhile"}`,
			keptFile:  true,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			state := t.TempDir()
			sig := t.TempDir()
			if _, e, code := konvergeRun(t, nil, "--state", state, "create", "cm", "c1", "--from-literal=a=one", "--from-literal=b=two"); code != 0 {
				t.Fatal(e)
			}
			script := filepath.Join(sig, "editor.sh")
			started, proceed := filepath.Join(sig, "started"), filepath.Join(sig, "proceed")
			body := "#!/bin/sh\ntouch " + shellQuote(started) + "\n" +
				"n=0; while [ ! -f " + shellQuote(proceed) + " ] && [ $n -lt 600 ]; do sleep 0.05; n=$((n+1)); done\n" +
				"sed -i " + shellQuote(c.sed) + " \"$1\"\n"
			if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
				t.Fatal(err)
			}
			t.Setenv("KUBE_EDITOR", script)
			type res struct {
				out, errOut string
				code        int
			}
			done := make(chan res, 1)
			go func() {
				o, e, code := konvergeRun(t, nil, "--state", state, "edit", "cm", "c1")
				done <- res{o, e, code}
			}()
			for i := 0; ; i++ {
				if _, err := os.Stat(started); err == nil {
					break
				}
				if i > 600 {
					t.Fatal("the editor did not start")
				}
				time.Sleep(50 * time.Millisecond)
			}
			// The editor is open: another command on the state must go
			// through at once.
			begin := time.Now()
			if _, e, code := konvergeRun(t, nil, append([]string{"--state", state}, c.meanwhile...)...); code != 0 {
				t.Fatalf("%s while the editor is open: exit %d: %s", c.meanwhile[0], code, e)
			}
			if d := time.Since(begin); d > 10*time.Second {
				t.Errorf("%s waited %v for the editor", c.meanwhile[0], d)
			}
			if err := os.WriteFile(proceed, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			r := <-done
			if r.out != c.out || r.code != c.code || !c.errOut.MatchString(r.errOut) {
				t.Fatalf("edit: out %q, err %q, exit %d; want out %q, err matching %q, exit %d", r.out, r.errOut, r.code, c.out, c.errOut, c.code)
			}
			if c.keptFile {
				path := c.errOut.FindStringSubmatch(r.errOut)[1]
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("the edits were not kept: %v", err)
				}
				os.Remove(path)
				if !strings.Contains(string(b), "a: edited") {
					t.Errorf("the kept file lacks the edit:\n%s", b)
				}
			}
			if c.data != "" {
				got, e, code := konvergeRun(t, nil, "--state", state, "get", "cm", "c1", "-o", "jsonpath={.data}")
				if code != 0 || got != c.data {
					t.Errorf("data %q (%s), want %q", got, e, c.data)
				}
			}
		})
	}
}
