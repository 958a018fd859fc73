package kube

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"time"
)

// EnvTrace names the environment variable that, when not empty, makes
// every Cluster print one line per HTTP request to standard error: when it
// started (since the process started), its method, path and query, the
// answer's status and protocol, and how long it took. It is how the round
// trips of a command are counted and timed.
const EnvTrace = "KONVERGE_TRACE"

// processStart is when the process started, as near as a package
// variable can tell.
var processStart = time.Now()

// tracer is a RoundTripper that prints one line per request to w.
type tracer struct {
	next http.RoundTripper
	mu   *sync.Mutex
	w    io.Writer
}

func (t tracer) RoundTrip(req *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := t.next.RoundTrip(req)
	status, proto := "error", ""
	if err == nil {
		status, proto = resp.Status, resp.Proto
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintf(t.w, "trace: +%7.1fms %-6s %s %s %s %.1fms\n",
		float64(start.Sub(processStart).Microseconds())/1000, req.Method, req.URL.RequestURI(), status, proto,
		float64(time.Since(start).Microseconds())/1000)
	return resp, err
}

// traceWrapper returns the transport wrapper of EnvTrace, nil when it is
// not set.
func traceWrapper() func(http.RoundTripper) http.RoundTripper {
	if os.Getenv(EnvTrace) == "" {
		return nil
	}
	mu := &sync.Mutex{}
	return func(next http.RoundTripper) http.RoundTripper {
		return tracer{next: next, mu: mu, w: os.Stderr}
	}
}
