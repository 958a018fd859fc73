// Package realcluster lets tests reach the real control plane that
// scripts/realcluster.sh runs (kube-apiserver v1.37.1 on loopback). Tests
// that need it call Home, Kubeconfig or NewServer, which skip the test
// unless KONVERGE_REALCLUSTER is set: to "1" for ~/.cache/realcluster, or
// to the REALCLUSTER_HOME of a running cluster.
package realcluster

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/konverge/konverge/value"
)

// Home returns the REALCLUSTER_HOME of the running cluster, or skips t.
func Home(t testing.TB) string {
	t.Helper()
	home := os.Getenv("KONVERGE_REALCLUSTER")
	if home == "" {
		t.Skip("KONVERGE_REALCLUSTER not set (scripts/realcluster.sh up; KONVERGE_REALCLUSTER=1)")
	}
	if home == "1" {
		h, _ := os.UserHomeDir()
		home = filepath.Join(h, ".cache", "realcluster")
	}
	return home
}

// Kubeconfig returns the kubeconfig of the running cluster, or skips t.
func Kubeconfig(t testing.TB) string {
	t.Helper()
	return filepath.Join(Home(t), "kubeconfig")
}

// RequireScheduler skips t unless the running cluster has a kube-scheduler
// (scripts/realcluster.sh up --with-scheduler): without one, the pods of
// a multi-node scenario are never bound and the recording would be empty.
// It reads the pid file the script writes and checks that the process is
// alive.
func RequireScheduler(t testing.TB) {
	t.Helper()
	pid, err := os.ReadFile(filepath.Join(Home(t), "run", "kube-scheduler.pid"))
	if err != nil {
		t.Skip("no kube-scheduler in this cluster (scripts/realcluster.sh up --with-scheduler)")
	}
	if _, err := os.Stat(filepath.Join("/proc", strings.TrimSpace(string(pid)))); err != nil {
		t.Skipf("kube-scheduler pid %s is not running (scripts/realcluster.sh up --with-scheduler)", strings.TrimSpace(string(pid)))
	}
}

// Server is a plain HTTPS client of the cluster's kube-apiserver, as its
// administrator: requests and responses are JSON values, as the API
// server sends them, with no client library in between.
type Server struct {
	base   string
	client *http.Client
}

// NewServer connects to the running cluster, or skips t.
func NewServer(t testing.TB) *Server {
	t.Helper()
	run := filepath.Join(Home(t), "run")
	ports, err := os.ReadFile(filepath.Join(run, "ports.env"))
	if err != nil {
		t.Fatalf("no running cluster: %v", err)
	}
	port := ""
	for _, l := range strings.Split(string(ports), "\n") {
		if v, ok := strings.CutPrefix(l, "APISERVER_PORT="); ok {
			port = v
		}
	}
	ca, err := os.ReadFile(filepath.Join(run, "pki", "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	cert, err := tls.LoadX509KeyPair(filepath.Join(run, "pki", "admin.crt"), filepath.Join(run, "pki", "admin.key"))
	if err != nil {
		t.Fatal(err)
	}
	return &Server{
		base: "https://127.0.0.1:" + port,
		client: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}},
		}},
	}
}

// Do sends body (nil for none; a PATCH is a JSON merge patch) to path and returns the status code and the
// decoded response; a response that is not a JSON object comes back as
// {"message": text}.
func (s *Server) Do(t testing.TB, method, path string, body any) (int, map[string]any) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, err := value.Encode(body)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.base+path, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if method == "PATCH" {
		req.Header.Set("Content-Type", "application/merge-patch+json")
	}
	req.Header.Set("Accept", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	m, err := value.DecodeObject(b)
	if err != nil {
		return resp.StatusCode, map[string]any{"message": string(b)}
	}
	return resp.StatusCode, m
}

// Kubectl returns the kubectl binary built with the running cluster's
// control plane, or skips t.
func Kubectl(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(Home(t), "bin", "kubectl")
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("no kubectl beside the control plane: %v", err)
	}
	return bin
}

// Comparable returns obj as JSON with what differs between two copies of
// one object applied into two namespaces masked: the namespace's name
// (wherever it appears, the last-applied annotation included), uid,
// resourceVersion, creationTimestamp and the times of managedFields. What
// controllers write on their own time is left out: status, the managed
// fields of kube-controller-manager and of status writes, and the
// Deployment controller's revision annotation.
func Comparable(t testing.TB, obj map[string]any, namespace string) string {
	t.Helper()
	obj = maps.Clone(obj)
	delete(obj, "status")
	if md, ok := obj["metadata"].(map[string]any); ok {
		md = maps.Clone(md)
		obj["metadata"] = md
		if ann, ok := md["annotations"].(map[string]any); ok {
			ann = maps.Clone(ann)
			delete(ann, "deployment.kubernetes.io/revision")
			md["annotations"] = ann
		}
		if mf, ok := md["managedFields"].([]any); ok {
			var keep []any
			for _, e := range mf {
				em, _ := e.(map[string]any)
				if em["manager"] == "kube-controller-manager" || em["subresource"] == "status" {
					continue
				}
				keep = append(keep, e)
			}
			md["managedFields"] = keep
		}
	}
	b, err := value.Encode(obj)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if namespace != "" {
		s = strings.ReplaceAll(s, `"`+namespace+`"`, `"<ns>"`)
		s = strings.ReplaceAll(s, `\"`+namespace+`\"`, `\"<ns>\"`)
	}
	for _, m := range masks {
		s = m.re.ReplaceAllString(s, m.with)
	}
	return s
}

var masks = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`"uid":"[^"]*"`), `"uid":"<uid>"`},
	{regexp.MustCompile(`"resourceVersion":"[^"]*"`), `"resourceVersion":"<rv>"`},
	{regexp.MustCompile(`"(creationTimestamp|time)":"[^"]*"`), `"$1":"<time>"`},
}
