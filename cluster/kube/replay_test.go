package kube_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"sync"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/konverge/konverge/cluster/kube"
	"github.com/konverge/konverge/internal/realcluster"
)

// recording, when set, is the server exampleServer gives the example: the
// recording proxy.
var recording *rest.Config

// exampleServer returns the API server the examples talk to: a server
// that answers as kube-apiserver v1.37.1 answered when the example was
// recorded (or, while recording, the proxy to the real one).
func exampleServer() (*rest.Config, func()) {
	if recording != nil {
		return recording, func() {}
	}
	s, err := newReplayServer()
	if err != nil {
		panic(err)
	}
	return &rest.Config{Host: s.URL}, func() {
		s.Close()
		if len(s.unexpected) > 0 {
			fmt.Println("requests that were not recorded:", s.unexpected)
		}
	}
}

// exchangesFile holds the requests of exampleSession and kube-apiserver
// v1.37.1's answers, recorded by TestRecordExample.
const exchangesFile = "testdata/example-exchanges.json.gz"

// exchange is one request and its answer.
type exchange struct {
	Method string `json:"method"`
	// URI is the path and query.
	URI         string `json:"uri"`
	Status      int    `json:"status"`
	ContentType string `json:"contentType"`
	Body        string `json:"body"`
}

// replayServer answers requests with recorded exchanges: each request gets
// the next unused answer recorded for its method and URI. Anything else is
// a 404, and unexpected lists it.
type replayServer struct {
	*httptest.Server
	mu         sync.Mutex
	answers    map[string][]exchange
	unexpected []string
}

// newReplayServer serves the recorded exchanges.
func newReplayServer() (*replayServer, error) {
	f, err := os.Open(exchangesFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	var xs []exchange
	if err := json.NewDecoder(zr).Decode(&xs); err != nil {
		return nil, fmt.Errorf("%s: %w", exchangesFile, err)
	}
	s := &replayServer{answers: map[string][]exchange{}}
	for _, x := range xs {
		k := x.Method + " " + x.URI
		s.answers[k] = append(s.answers[k], x)
	}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s, nil
}

func (s *replayServer) serve(w http.ResponseWriter, r *http.Request) {
	k := r.Method + " " + r.URL.RequestURI()
	s.mu.Lock()
	xs := s.answers[k]
	var x exchange
	ok := len(xs) > 0
	if ok {
		x = xs[0]
		if len(xs) > 1 {
			s.answers[k] = xs[1:]
		}
	} else {
		s.unexpected = append(s.unexpected, k)
	}
	s.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	if x.ContentType != "" {
		w.Header().Set("Content-Type", x.ContentType)
	}
	w.WriteHeader(x.Status)
	io.WriteString(w, x.Body)
}

// TestRecordExample records exampleSession against the real control
// plane, through a proxy that keeps every exchange
// (KONVERGE_RECORD=1 KONVERGE_REALCLUSTER=1 go test ./cluster/kube -run RecordExample).
func TestRecordExample(t *testing.T) {
	if os.Getenv("KONVERGE_RECORD") == "" {
		t.Skip("set KONVERGE_RECORD=1 (and KONVERGE_REALCLUSTER) to record the example's exchanges")
	}
	real, err := kube.RESTConfig(realcluster.Kubeconfig(t), "")
	if err != nil {
		t.Fatal(err)
	}
	transport, err := rest.TransportFor(real)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var xs []exchange
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		out, err := http.NewRequestWithContext(r.Context(), r.Method, real.Host+r.URL.RequestURI(), r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		out.Header = r.Header.Clone()
		resp, err := transport.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		mu.Lock()
		xs = append(xs, exchange{Method: r.Method, URI: r.URL.RequestURI(), Status: resp.StatusCode,
			ContentType: resp.Header.Get("Content-Type"), Body: string(body)})
		mu.Unlock()
		if ct := resp.Header.Get("Content-Type"); ct != "" {
			w.Header().Set("Content-Type", ct)
		}
		w.WriteHeader(resp.StatusCode)
		w.Write(body)
	}))
	defer proxy.Close()

	recording = &rest.Config{Host: proxy.URL}
	defer func() { recording = nil }()
	ExampleNew()
	for i := range xs {
		xs[i].Body = maskServer(xs[i].Body)
	}
	data, err := json.MarshalIndent(xs, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	zw.Write(data)
	zw.Close()
	if err := os.WriteFile(exchangesFile, gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d exchanges, %d bytes (%d gzipped)", len(xs), len(data), gz.Len())
}

var (
	ipRE   = regexp.MustCompile(`"serverAddress":"[^"]*"`)
	uidRE  = regexp.MustCompile(`"uid":"[0-9a-f-]{36}"`)
	timeRE = regexp.MustCompile(`"20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z"`)
)

// maskServer hides the recording machine's address, uids and times.
func maskServer(body string) string {
	body = ipRE.ReplaceAllString(body, `"serverAddress":"10.0.0.1:6443"`)
	body = uidRE.ReplaceAllString(body, `"uid":"00000000-0000-4000-8000-000000000000"`)
	return timeRE.ReplaceAllString(body, `"2026-01-01T00:00:00Z"`)
}
