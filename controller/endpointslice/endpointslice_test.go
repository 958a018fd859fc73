package endpointslice_test

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/konverge/konverge/controller"
	"github.com/konverge/konverge/controller/endpointslice"
	"github.com/konverge/konverge/controller/internal/ctrltest"
	"github.com/konverge/konverge/controller/internal/kobj"
	"github.com/konverge/konverge/controller/internal/svcpods"
)

// each runs fn with the full and the incremental controller, node-1 in
// zone-a, and sync settling the controller.
func each(t *testing.T, fn func(t *testing.T, e *ctrltest.Env, sync func())) {
	t.Helper()
	ctrltest.Modes(t, func() controller.Controller { return endpointslice.Controller{} },
		func() controller.Controller { return endpointslice.New() },
		func(t *testing.T, e *ctrltest.Env, ctl controller.Controller) {
			e.Create(ctrltest.Node("node-1", map[string]string{"topology.kubernetes.io/zone": "zone-a"}))
			fn(t, e, func() { e.Settle([]controller.Controller{ctl}) })
		})
}

// pod creates a pod on node-1 with an address, ready or not, whose
// container port "http" is port.
func pod(e *ctrltest.Env, name, ip string, ready bool, port int64, labels map[string]any) {
	e.TB.Helper()
	p := e.Create(map[string]any{"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": name, "namespace": "default", "labels": labels},
		"spec": map[string]any{"nodeName": "node-1", "containers": []any{map[string]any{"name": "c", "image": "nginx",
			"ports": []any{map[string]any{"name": "http", "containerPort": port}}}}}})
	status := "False"
	if ready {
		status = "True"
	}
	p["status"] = map[string]any{"phase": "Running", "podIP": ip, "podIPs": []any{map[string]any{"ip": ip}},
		"conditions": []any{map[string]any{"type": "Ready", "status": status, "lastTransitionTime": kobj.FormatTime(e.Now())}}}
	e.UpdateStatus(p)
}

func service(name string, labels map[string]any, spec map[string]any) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"name": name, "namespace": "default", "labels": labels}, "spec": spec}
}

// summary is a slice as a line: its ports, then its endpoints (pod,
// address, ready/serving/terminating, zone), sorted.
func summary(s map[string]any) string {
	var ports []string
	for _, p := range kobj.Slice(s, "ports") {
		m := p.(map[string]any)
		ports = append(ports, fmt.Sprintf("%v:%v/%v", m["name"], m["port"], m["protocol"]))
	}
	var eps []string
	for _, x := range kobj.Slice(s, "endpoints") {
		m := x.(map[string]any)
		c := kobj.Map(m, "conditions")
		eps = append(eps, fmt.Sprintf("%s=%v %v/%v/%v %v", kobj.Str(m, "targetRef", "name"), kobj.Slice(m, "addresses"),
			c["ready"], c["serving"], c["terminating"], m["zone"]))
	}
	sort.Strings(eps)
	return fmt.Sprintf("%s ports%v endpoints%v", kobj.Str(s, "addressType"), ports, eps)
}

// slicesOf returns the summaries of a Service's slices, sorted, and
// checks their labels and owner.
func slicesOf(t *testing.T, e *ctrltest.Env, svc string, extraLabels map[string]string) []string {
	t.Helper()
	var out []string
	for _, s := range e.List(svcpods.EndpointSliceGVK, "default") {
		l := kobj.Labels(s)
		if l[endpointslice.LabelServiceName] != svc {
			continue
		}
		want := map[string]string{endpointslice.LabelServiceName: svc, endpointslice.LabelManagedBy: endpointslice.ControllerName}
		for k, v := range extraLabels {
			want[k] = v
		}
		if fmt.Sprint(l) != fmt.Sprint(want) {
			t.Errorf("slice %s: labels %v, want %v", kobj.Name(s), l, want)
		}
		if !strings.HasPrefix(kobj.Name(s), svc+"-") {
			t.Errorf("slice %s is not named after %s", kobj.Name(s), svc)
		}
		if ref := kobj.ControllerRef(s); ref == nil || ref["kind"] != "Service" || ref["name"] != svc || ref["blockOwnerDeletion"] != true {
			t.Errorf("slice %s: controller reference %v", kobj.Name(s), ref)
		}
		out = append(out, summary(s))
	}
	sort.Strings(out)
	return out
}

// TestServices: the slices of Services of each kind, as the endpoints
// scenario of internal/workloadtest recorded them from
// kube-controller-manager (labels, owner, placeholder and port-less
// slices, a named port resolved per pod) and as TestReadinessAndTermination
// of package endpoint checks the conditions.
func TestServices(t *testing.T) {
	web := map[string]any{"app": "web"}
	httpPort := []any{map[string]any{"name": "http", "port": int64(80), "targetPort": "http"}}
	for _, tc := range []struct {
		name   string
		svc    map[string]any
		labels map[string]string // the slices' labels beyond the two of every slice
		want   []string
	}{
		{
			name:   "named target port, ready and not",
			svc:    service("s", map[string]any{"tier": "front"}, map[string]any{"selector": web, "ports": httpPort}),
			labels: map[string]string{"tier": "front"},
			want: []string{
				"IPv4 ports[http:8080/TCP] endpoints[a=[10.0.0.1] true/true/false zone-a b=[10.0.0.2] false/false/false zone-a]",
				"IPv4 ports[http:8081/TCP] endpoints[c=[10.0.0.3] true/true/false zone-a]",
			},
		},
		{
			name:   "headless without ports",
			svc:    service("s", nil, map[string]any{"selector": web, "clusterIP": "None"}),
			labels: map[string]string{svcpods.HeadlessLabel: ""},
			want: []string{
				"IPv4 ports[] endpoints[a=[10.0.0.1] true/true/false zone-a b=[10.0.0.2] false/false/false zone-a c=[10.0.0.3] true/true/false zone-a]",
			},
		},
		{
			name: "selects nothing: a placeholder",
			svc:  service("s", nil, map[string]any{"selector": map[string]any{"app": "nothing"}, "ports": []any{map[string]any{"port": int64(80), "targetPort": "missing"}}}),
			want: []string{"IPv4 ports[] endpoints[]"},
		},
		{
			name: "no selector",
			svc:  service("s", nil, map[string]any{"ports": httpPort}),
		},
		{
			name: "ExternalName",
			svc:  service("s", nil, map[string]any{"type": "ExternalName", "externalName": "example.com", "selector": web}),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			each(t, func(t *testing.T, e *ctrltest.Env, sync func()) {
				pod(e, "a", "10.0.0.1", true, 8080, web)
				pod(e, "b", "10.0.0.2", false, 8080, web)
				pod(e, "c", "10.0.0.3", true, 8081, map[string]any{"app": "web", "alt": "1"})
				e.Create(tc.svc)
				sync()
				if got := slicesOf(t, e, "s", tc.labels); !slices.Equal(got, tc.want) {
					t.Errorf("slices\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
				}
			})
		})
	}
}

// TestChanges: the slices follow the pods, the Service's labels and
// ports, the zones of the nodes, and go with the Service.
func TestChanges(t *testing.T) {
	web := map[string]any{"app": "web"}
	each(t, func(t *testing.T, e *ctrltest.Env, sync func()) {
		pod(e, "a", "10.0.0.1", true, 8080, web)
		e.Create(service("s", nil, map[string]any{"selector": web,
			"ports": []any{map[string]any{"name": "http", "port": int64(80), "targetPort": "http"}}}))
		sync()
		check := func(step string, labels map[string]string, want ...string) {
			t.Helper()
			if got := slicesOf(t, e, "s", labels); !slices.Equal(got, want) {
				t.Errorf("%s: slices\n%s\nwant\n%s", step, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		}
		check("created", nil, "IPv4 ports[http:8080/TCP] endpoints[a=[10.0.0.1] true/true/false zone-a]")

		pod(e, "b", "10.0.0.2", true, 8080, web)
		sync()
		check("pod added", nil, "IPv4 ports[http:8080/TCP] endpoints[a=[10.0.0.1] true/true/false zone-a b=[10.0.0.2] true/true/false zone-a]")

		e.Delete(kobj.PodGVK, "default", "a")
		sync()
		// A pod bound to a node terminates until its kubelet is done.
		check("pod deleted", nil, "IPv4 ports[http:8080/TCP] endpoints[a=[10.0.0.1] false/true/true zone-a b=[10.0.0.2] true/true/false zone-a]")

		e.Modify(kobj.PodGVK, "default", "b", func(p map[string]any) { p["metadata"].(map[string]any)["labels"] = map[string]any{"app": "other"} })
		sync()
		check("pod relabelled", nil, "IPv4 ports[http:8080/TCP] endpoints[a=[10.0.0.1] false/true/true zone-a]")

		e.Modify(svcpods.ServiceGVK, "default", "s", func(s map[string]any) {
			s["metadata"].(map[string]any)["labels"] = map[string]any{"tier": "back"}
			s["spec"].(map[string]any)["ports"] = []any{map[string]any{"name": "direct", "port": int64(80), "targetPort": int64(9000)}}
		})
		sync()
		check("service changed", map[string]string{"tier": "back"}, "IPv4 ports[direct:9000/TCP] endpoints[a=[10.0.0.1] false/true/true zone-a]")

		e.Modify(kobj.NodeGVK, "", "node-1", func(n map[string]any) {
			n["metadata"].(map[string]any)["labels"] = map[string]any{"topology.kubernetes.io/zone": "zone-b"}
		})
		sync()
		check("node's zone changed", map[string]string{"tier": "back"}, "IPv4 ports[direct:9000/TCP] endpoints[a=[10.0.0.1] false/true/true zone-b]")

		e.Delete(svcpods.ServiceGVK, "default", "s")
		sync()
		if got := slicesOf(t, e, "s", nil); len(got) != 0 {
			t.Errorf("the slices of a deleted Service stay: %v", got)
		}
	})
}

// ofS returns the slices of Service s.
func ofS(e *ctrltest.Env) []map[string]any {
	var out []map[string]any
	for _, s := range e.List(svcpods.EndpointSliceGVK, "default") {
		if kobj.Labels(s)[endpointslice.LabelServiceName] == "s" {
			out = append(out, s)
		}
	}
	return out
}

// TestCapacity: at most MaxEndpointsPerSlice endpoints a slice; the
// endpoints of a slice stay in it when others come.
func TestCapacity(t *testing.T) {
	web := map[string]any{"app": "web"}
	each(t, func(t *testing.T, e *ctrltest.Env, sync func()) {
		e.Create(service("s", nil, map[string]any{"selector": web, "ports": []any{map[string]any{"port": int64(80), "targetPort": int64(80)}}}))
		for i := range endpointslice.MaxEndpointsPerSlice + 1 {
			pod(e, fmt.Sprintf("p%03d", i), fmt.Sprintf("10.0.%d.%d", i/200, i%200+1), true, 80, web)
		}
		sync()
		before := map[string][]string{}
		sizes := []int{}
		for _, s := range ofS(e) {
			var pods []string
			for _, x := range kobj.Slice(s, "endpoints") {
				pods = append(pods, kobj.Str(x.(map[string]any), "targetRef", "name"))
			}
			before[kobj.Name(s)] = pods
			sizes = append(sizes, len(pods))
		}
		sort.Ints(sizes)
		if want := []int{1, endpointslice.MaxEndpointsPerSlice}; !slices.Equal(sizes, want) {
			t.Fatalf("slice sizes %v, want %v", sizes, want)
		}
		pod(e, "q", "10.0.9.9", true, 80, web)
		sync()
		for _, s := range ofS(e) {
			var pods []string
			for _, x := range kobj.Slice(s, "endpoints") {
				pods = append(pods, kobj.Str(x.(map[string]any), "targetRef", "name"))
			}
			old, ok := before[kobj.Name(s)]
			if !ok {
				t.Errorf("a new slice %s for one more endpoint", kobj.Name(s))
				continue
			}
			for _, p := range old {
				if !slices.Contains(pods, p) {
					t.Errorf("slice %s lost %s", kobj.Name(s), p)
				}
			}
		}
	})
}
