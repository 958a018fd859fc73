package validate

import (
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/konverge/konverge/internal/realcluster"
)

// TestRealServer sends every case to a real kube-apiserver v1.37.1
// (scripts/realcluster.sh up; KONVERGE_REALCLUSTER=1): creates
// with dryRun=All, updates by creating old for real and replacing it with
// dryRun=All, custom resources through a CRD widgets.example.com; and
// compares the causes of the Invalid answer with the case's errors.
func TestRealServer(t *testing.T) {
	s := newRealServer(t)
	for _, file := range validateCaseFiles(t) {
		name := strings.TrimSuffix(strings.TrimPrefix(file, "../testdata/validate/"), ".yaml")
		t.Run(name, func(t *testing.T) {
			c := loadCase(t, file)
			obj := decode(t, c.Object)
			var status int
			var resp map[string]any
			switch {
			case c.Schema != nil:
				resp, status = s.createCustomResource(t, obj, decode(t, c.Schema))
			case c.Old != nil:
				old := decode(t, c.Old)
				coll := collectionPath(old)
				item := coll + "/" + old["metadata"].(map[string]any)["name"].(string)
				s.remove(t, item)
				if st, r := s.Do(t, "POST", coll, old); st != 201 {
					t.Fatalf("create old: %d %v", st, r["message"])
				}
				defer s.remove(t, item)
				// With kube-controller-manager running, a controller may
				// write the object (its status) between the read and the
				// replace: read again on a Conflict, as kubectl does.
				for try := 0; ; try++ {
					_, live := s.Do(t, "GET", item, nil)
					meta := obj["metadata"].(map[string]any)
					meta["resourceVersion"] = live["metadata"].(map[string]any)["resourceVersion"]
					status, resp = s.Do(t, "PUT", item+"?dryRun=All", obj)
					if status != 409 || try == 5 {
						break
					}
					time.Sleep(100 * time.Millisecond)
				}
			default:
				status, resp = s.Do(t, "POST", collectionPath(obj)+"?dryRun=All", obj)
			}
			var got []string
			switch status {
			case 200, 201:
			case 422:
				details, _ := resp["details"].(map[string]any)
				causes, _ := details["causes"].([]any)
				for _, c := range causes {
					cm := c.(map[string]any)
					f, _ := cm["field"].(string)
					m, _ := cm["message"].(string)
					// Generated uids are the test's; kube-apiserver appends a
					// diff of the specs to a Pod's forbidden update, which
					// konverge leaves out.
					m = uidRe.ReplaceAllString(m, testUID)
					m, _, _ = strings.Cut(m, "\n")
					got = append(got, f+": "+m)
				}
			default:
				t.Fatalf("status %d: %v", status, resp["message"])
			}
			want := c.Errors
			if c.Schema != nil {
				// kube-openapi walks an object's properties in random
				// order; konverge sorts them. Compare as sets.
				got, want = sorted(got), sorted(want)
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("kube-apiserver:\n%s\ncase:\n%s", strings.Join(got, "\n"), strings.Join(c.Errors, "\n"))
			}
		})
	}
}

// remove deletes an object for good: in the background (no orphan
// finalizer, which nothing would remove without the garbage collector),
// dropping finalizers left by earlier runs.
func (s *realServer) remove(t *testing.T, item string) {
	s.Do(t, "PATCH", item, map[string]any{"metadata": map[string]any{"finalizers": nil}})
	s.Do(t, "DELETE", item, map[string]any{"apiVersion": "v1", "kind": "DeleteOptions", "propagationPolicy": "Background"})
	waitGone(t, s, item)
}

func sorted(l []string) []string {
	out := append([]string(nil), l...)
	sort.Strings(out)
	return out
}

var uidRe = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

func waitGone(t *testing.T, s *realServer, item string) {
	for i := 0; i < 100; i++ {
		if st, _ := s.Do(t, "GET", item, nil); st == 404 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// realServer is the running cluster's API server, with this file's helpers.
type realServer struct{ *realcluster.Server }

func newRealServer(t *testing.T) *realServer {
	return &realServer{realcluster.NewServer(t)}
}

func collectionPath(obj map[string]any) string {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	plural := strings.ToLower(kind) + "s"
	if kind == "Ingress" {
		plural = "ingresses"
	}
	prefix := "/apis/" + apiVersion
	if apiVersion == "v1" {
		prefix = "/api/v1"
	}
	if clusterScoped[kind] {
		return prefix + "/" + plural
	}
	ns := "default"
	if m, ok := obj["metadata"].(map[string]any); ok {
		if n, ok := m["namespace"].(string); ok && n != "" {
			ns = n
		}
	}
	return prefix + "/namespaces/" + ns + "/" + plural
}

func (s *realServer) createCustomResource(t *testing.T, obj, schema map[string]any) (map[string]any, int) {
	t.Helper()
	// The group differs from the defaults package's, whose tests may run
	// at the same time.
	crdPath := "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	s.Do(t, "DELETE", crdPath+"/widgets.validate.example.com", nil)
	waitGone(t, s, crdPath+"/widgets.validate.example.com")
	obj["apiVersion"] = "validate.example.com/v1"
	crd := map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "widgets.validate.example.com"},
		"spec": map[string]any{
			"group": "validate.example.com", "scope": "Namespaced",
			"names": map[string]any{"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": schema}}},
		},
	}
	if st, resp := s.Do(t, "POST", crdPath, crd); st != 201 {
		t.Fatalf("CRD: %d %v", st, resp["message"])
	}
	var st int
	var got map[string]any
	for i := 0; i < 100; i++ {
		st, got = s.Do(t, "POST", "/apis/validate.example.com/v1/namespaces/default/widgets?dryRun=All&fieldValidation=Ignore", obj)
		if st != 404 && st != 503 { // not served yet, or the new schema not yet in place
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	return got, st
}
