package defaults

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/konverge/konverge/internal/realcluster"
	"github.com/konverge/konverge/value"
)

// The tests of this file compare konverge with a real kube-apiserver
// v1.37.1 started by scripts/realcluster.sh. They run when
// KONVERGE_REALCLUSTER is set (to "1" for ~/.cache/realcluster, or to the
// REALCLUSTER_HOME of a running cluster):
//
//	realcluster.sh up
//	KONVERGE_REALCLUSTER=1 go test ./defaults -run RealServer -v
//	realcluster.sh down

// realServer is the running cluster's API server, with this file's helpers.
type realServer struct{ *realcluster.Server }

func newRealServer(t *testing.T) *realServer {
	return &realServer{realcluster.NewServer(t)}
}

// resourcePath is the collection path of a built-in kind in namespace ns.
func resourcePath(apiVersion, kind, ns string) string {
	plural := strings.ToLower(kind) + "s"
	switch kind {
	case "Ingress":
		plural = "ingresses"
	case "NetworkPolicy":
		plural = "networkpolicies"
	case "IngressClass":
		plural = "ingressclasses"
	}
	prefix := "/apis/" + apiVersion
	if apiVersion == "v1" {
		prefix = "/api/v1"
	}
	switch kind {
	case "Namespace", "ClusterRole", "ClusterRoleBinding", "IngressClass":
		return prefix + "/" + plural
	}
	return prefix + "/namespaces/" + ns + "/" + plural
}

// storeOwned removes from what kube-apiserver returned what the registry
// strategies, the allocators and the admission plugins added after
// defaulting (see the package report), so that it compares with Apply.
func storeOwned(got, in, want map[string]any) {
	meta := child(got, "metadata")
	for _, k := range []string{"uid", "resourceVersion", "creationTimestamp", "generation", "managedFields"} {
		delete(meta, k)
	}
	if _, ok := child(in, "metadata")["namespace"]; !ok {
		delete(meta, "namespace")
	}
	if ann := child(meta, "annotations"); ann != nil {
		delete(ann, "deprecated.daemonset.template.generation")
		if len(ann) == 0 {
			delete(meta, "annotations")
		}
	}
	if _, ok := want["status"]; !ok {
		delete(got, "status")
	}
	spec := child(got, "spec")
	switch got["kind"] {
	case "Namespace":
		delete(spec, "finalizers")
	case "Service":
		for _, k := range []string{"clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy", "healthCheckNodePort"} {
			delete(spec, k)
		}
		inPorts := objects(child(in, "spec"), "ports")
		for i, p := range objects(spec, "ports") {
			if i < len(inPorts) && inPorts[i]["nodePort"] == nil {
				delete(p, "nodePort") // allocated
			}
		}
	case "PersistentVolumeClaim":
		// StorageObjectInUseProtection admission.
		if f, _ := meta["finalizers"].([]any); len(f) == 1 && f[0] == "kubernetes.io/pvc-protection" {
			delete(meta, "finalizers")
		}
	case "Job":
		delete(spec, "selector")
		// The Job's labels, when defaulted from the template's, are the
		// same Go map: they get the generated labels too.
		if ml := child(meta, "labels"); ml != nil {
			for _, k := range []string{"controller-uid", "job-name", "batch.kubernetes.io/controller-uid", "batch.kubernetes.io/job-name"} {
				delete(ml, k)
			}
			if len(ml) == 0 {
				delete(meta, "labels")
			}
		}
		tmeta := child(child(spec, "template"), "metadata")
		labels := child(tmeta, "labels")
		for _, k := range []string{"controller-uid", "job-name", "batch.kubernetes.io/controller-uid", "batch.kubernetes.io/job-name"} {
			delete(labels, k)
		}
		if labels != nil && len(labels) == 0 {
			delete(tmeta, "labels")
		}
	case "Pod":
		inSpec := child(in, "spec")
		// ServiceAccount admission: default service account and its token volume.
		if _, ok := inSpec["serviceAccountName"]; !ok {
			if _, ok := inSpec["serviceAccount"]; !ok {
				delete(spec, "serviceAccountName")
				delete(spec, "serviceAccount")
			}
		}
		var vols []any
		for _, v := range objects(spec, "volumes") {
			if !strings.HasPrefix(str(v, "name"), "kube-api-access-") {
				vols = append(vols, v)
			}
		}
		if len(vols) == 0 {
			delete(spec, "volumes")
		} else {
			spec["volumes"] = vols
		}
		for _, k := range []string{"containers", "initContainers"} {
			for _, c := range objects(spec, k) {
				var mounts []any
				for _, m := range objects(c, "volumeMounts") {
					if !strings.HasPrefix(str(m, "name"), "kube-api-access-") {
						mounts = append(mounts, m)
					}
				}
				if len(mounts) == 0 {
					delete(c, "volumeMounts")
				} else {
					c["volumeMounts"] = mounts
				}
			}
		}
		// DefaultTolerationSeconds admission.
		var tols []any
		for _, tol := range objects(spec, "tolerations") {
			k := str(tol, "key")
			if (k == "node.kubernetes.io/not-ready" || k == "node.kubernetes.io/unreachable") && tol["tolerationSeconds"] == int64(300) {
				continue
			}
			tols = append(tols, tol)
		}
		if len(tols) == 0 {
			delete(spec, "tolerations")
		} else {
			spec["tolerations"] = tols
		}
		// Priority admission.
		if _, ok := inSpec["priority"]; !ok {
			delete(spec, "priority")
		}
		if _, ok := inSpec["preemptionPolicy"]; !ok {
			delete(spec, "preemptionPolicy")
		}
	}
}

// TestRealServer creates every case's input with dryRun=All (and
// fieldValidation=Ignore, so that unknown fields are dropped as Apply
// drops them) and compares the stored object with want.
func TestRealServer(t *testing.T) {
	s := newRealServer(t)
	for _, file := range caseFiles(t) {
		name := strings.TrimSuffix(strings.TrimPrefix(file, "../testdata/defaults/"), ".yaml")
		t.Run(name, func(t *testing.T) {
			var c defaultsCase
			loadYAML(t, file, &c)
			in := decodeValue(t, c.In)
			if c.Schema != nil {
				got, status := s.createCustomResource(t, in, decodeValue(t, c.Schema))
				if status != 201 {
					t.Fatalf("status %d: %s", status, toYAML(t, got))
				}
				want := decodeValue(t, c.Want)
				storeOwned(got, in, want)
				if !value.Equal(got, want) {
					t.Errorf("kube-apiserver:\n%s\nkonverge:\n%s", toYAML(t, got), toYAML(t, want))
				}
				return
			}
			ns := "default"
			if n := str(child(in, "metadata"), "namespace"); n != "" {
				ns = n
				s.Do(t, "POST", "/api/v1/namespaces", map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": n}})
			}
			if sa := str(child(in, "spec"), "serviceAccountName"); sa != "" && in["kind"] == "Pod" {
				s.Do(t, "POST", "/api/v1/namespaces/"+ns+"/serviceaccounts", map[string]any{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": map[string]any{"name": sa}})
			}
			path := resourcePath(in["apiVersion"].(string), in["kind"].(string), ns) + "?dryRun=All&fieldValidation=Ignore"
			status, got := s.Do(t, "POST", path, in)
			if c.Error != "" {
				kind := in["kind"].(string)
				apiVersion := in["apiVersion"].(string)
				version := apiVersion[strings.LastIndex(apiVersion, "/")+1:]
				want := fmt.Sprintf("%s in version %q cannot be handled as a %s: %s", kind, version, kind, c.Error)
				if status != 400 || got["message"] != want {
					t.Errorf("status %d, message\n%v\nwant 400 and\n%s", status, got["message"], want)
				}
				return
			}
			if status != 201 {
				t.Fatalf("status %d: %v", status, got["message"])
			}
			want := decodeValue(t, c.Want)
			storeOwned(got, in, want)
			if !value.Equal(got, want) {
				t.Errorf("kube-apiserver:\n%s\nkonverge:\n%s", toYAML(t, got), toYAML(t, want))
			}
			if len(c.Unknown) > 0 {
				status, strict := s.Do(t, "POST", resourcePath(in["apiVersion"].(string), in["kind"].(string), ns)+"?dryRun=All&fieldValidation=Strict", in)
				msg, _ := strict["message"].(string)
				for _, u := range c.Unknown {
					if !strings.Contains(msg, fmt.Sprintf("unknown field %q", u)) {
						t.Errorf("strict: status %d %q does not name %s", status, msg, u)
					}
				}
			}
		})
	}
}

// createCustomResource installs a CRD widgets.example.com with the
// schema, then creates obj with dryRun=All.
func (s *realServer) createCustomResource(t *testing.T, obj, schema map[string]any) (map[string]any, int) {
	t.Helper()
	crdPath := "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	s.Do(t, "DELETE", crdPath+"/widgets.example.com", nil)
	for i := 0; i < 100; i++ {
		if st, _ := s.Do(t, "GET", crdPath+"/widgets.example.com", nil); st == 404 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	crd := map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "widgets.example.com"},
		"spec": map[string]any{
			"group": "example.com", "scope": "Namespaced",
			"names": map[string]any{"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": schema}}},
		},
	}
	if st, resp := s.Do(t, "POST", crdPath, crd); st != 201 {
		t.Fatalf("CRD: %d %v", st, resp["message"])
	}
	path := "/apis/example.com/v1/namespaces/default/widgets?dryRun=All&fieldValidation=Ignore"
	var st int
	var got map[string]any
	for i := 0; i < 100; i++ {
		st, got = s.Do(t, "POST", path, obj)
		if st != 404 && st != 503 { // not served yet, or the new schema not yet in place
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	return got, st
}
