package kube

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
)

func TestTracerPrintsOneLinePerRequest(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusCreated)
		}
	}))
	defer srv.Close()
	var out strings.Builder
	client := &http.Client{Transport: tracer{next: http.DefaultTransport, mu: &sync.Mutex{}, w: &out}}
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		req, err := http.NewRequest(method, srv.URL+"/api/v1/namespaces/a/configmaps?dryRun=All", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	want := []*regexp.Regexp{
		regexp.MustCompile(`^trace: \+ *[0-9.]+ms GET +/api/v1/namespaces/a/configmaps\?dryRun=All 200 OK HTTP/1\.1 [0-9.]+ms$`),
		regexp.MustCompile(`^trace: \+ *[0-9.]+ms POST +/api/v1/namespaces/a/configmaps\?dryRun=All 201 Created HTTP/1\.1 [0-9.]+ms$`),
	}
	if len(lines) != len(want) {
		t.Fatalf("trace:\n%s\nwant %d lines", out.String(), len(want))
	}
	for i, re := range want {
		if !re.MatchString(lines[i]) {
			t.Errorf("line %d = %q, want %v", i, lines[i], re)
		}
	}
}

func TestTraceWrapperOnlyWithTheVariable(t *testing.T) {
	t.Setenv(EnvTrace, "")
	if traceWrapper() != nil {
		t.Errorf("a wrapper without %s", EnvTrace)
	}
	t.Setenv(EnvTrace, "1")
	if traceWrapper() == nil {
		t.Errorf("no wrapper with %s=1", EnvTrace)
	}
}
