package kube

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/kinds"
	kschema "github.com/konverge/konverge/schema"
)

// fakeServer answers the requests of one test with canned responses, and
// counts them.
func fakeServer(t *testing.T, handle func(w http.ResponseWriter, r *http.Request, n int)) (*Cluster, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		handle(w, r, int(n.Add(1)))
	}))
	t.Cleanup(srv.Close)
	rc, err := rest.UnversionedRESTClientFor(dynamic.ConfigFor(&rest.Config{Host: srv.URL, QPS: -1}))
	if err != nil {
		t.Fatal(err)
	}
	m := &mapper{builtin: kschema.Builtin(), gvs: map[string]*gvSchemas{}, crds: map[string]*crdSchemas{}}
	m.cur.Store(kinds.NewMapper(kinds.Builtin(), m.builtin))
	return &Cluster{rc: rc, mapper: m, host: srv.URL}, &n
}

var gvkConfigMap = kschema.GVK{Version: "v1", Kind: "ConfigMap"}

// TestRawList: the items of a List get the list's apiVersion and kind, as
// client-go's unstructured lists give them, and the request carries the
// selectors.
func TestRawList(t *testing.T) {
	c, _ := fakeServer(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		if r.URL.Path != "/api/v1/namespaces/team/configmaps" || r.URL.Query().Get("labelSelector") != "app=web" {
			t.Errorf("request %s %s", r.Method, r.URL)
		}
		io.WriteString(w, `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"42"},"items":[{"metadata":{"name":"a","namespace":"team"},"data":{"n":"1"}}]}`)
	})
	l, err := c.List(context.Background(), gvkConfigMap, cluster.InNamespace("team"), cluster.MatchingLabels("app=web"))
	if err != nil {
		t.Fatal(err)
	}
	if l.ResourceVersion != "42" || len(l.Items) != 1 {
		t.Fatalf("list %+v", l)
	}
	if it := l.Items[0]; it["apiVersion"] != "v1" || it["kind"] != "ConfigMap" || it["data"].(map[string]any)["n"] != "1" {
		t.Errorf("item %v", it)
	}
}

// TestRawErrors: the server's Status answers become *cluster.StatusError
// with their reason, message and causes.
func TestRawErrors(t *testing.T) {
	c, _ := fakeServer(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		w.Header().Set("Content-Type", "application/json")
		switch r.Method {
		case "GET":
			w.WriteHeader(404)
			io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"configmaps \"x\" not found","reason":"NotFound","details":{"name":"x","kind":"configmaps"},"code":404}`)
		default:
			if r.URL.Query().Get("dryRun") != "All" || r.URL.Query().Get("fieldManager") != "m" || r.URL.Query().Get("fieldValidation") != "Strict" {
				t.Errorf("request %s %s", r.Method, r.URL)
			}
			w.WriteHeader(422)
			io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"ConfigMap \"x\" is invalid: data[bad key]: Invalid value","reason":"Invalid","details":{"name":"x","kind":"ConfigMap","causes":[{"reason":"FieldValueInvalid","message":"Invalid value","field":"data[bad key]"}]},"code":422}`)
		}
	})
	ctx := context.Background()
	if _, err := c.Get(ctx, gvkConfigMap, "default", "x"); !cluster.IsNotFound(err) || err.Error() != `configmaps "x" not found` {
		t.Errorf("get: %v", err)
	}
	obj := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "x", "namespace": "default"}}
	_, err := c.Create(ctx, obj, cluster.DryRunAll, cluster.FieldOwner("m"), cluster.FieldValidationStrict)
	var se *cluster.StatusError
	if !cluster.IsInvalid(err) || !errors.As(err, &se) || len(se.Causes) != 1 || se.Causes[0].Field != "data[bad key]" {
		t.Errorf("create: %#v", err)
	}
}

// TestRawRetriesTooManyRequests: a 429 with a Retry-After (API Priority
// and Fairness turning a request away) is sent again, as kubectl's client
// does, and the write's body goes again whole.
func TestRawRetriesTooManyRequests(t *testing.T) {
	c, n := fakeServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		body, _ := io.ReadAll(r.Body)
		if !strings.Contains(string(body), `"name":"x"`) {
			t.Errorf("try %d: body %q", n, body)
		}
		if n < 3 {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(429)
			io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"TooManyRequests","code":429}`)
			return
		}
		w.WriteHeader(201)
		io.WriteString(w, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"default","uid":"u"}}`)
	})
	obj := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "x", "namespace": "default"}}
	out, err := c.Create(context.Background(), obj)
	if err != nil || out["metadata"].(map[string]any)["uid"] != "u" {
		t.Fatalf("create: %v %v", out, err)
	}
	if got := n.Load(); got != 3 {
		t.Errorf("%d requests, want 3", got)
	}
}
