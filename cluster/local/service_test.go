package local

import (
	"context"
	"net/netip"
	"testing"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

var gvkService = schema.GVK{Version: "v1", Kind: "Service"}

func TestServiceAllocation(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	svc := mustCreate(t, s, `
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec:
  type: NodePort
  selector: {app: web}
  ports: [{name: http, port: 80}, {name: https, port: 443, nodePort: 30443}]
`)
	ip := path(svc, "spec.clusterIP").(string)
	if addr, err := netip.ParseAddr(ip); err != nil || !serviceCIDR.Contains(addr) {
		t.Errorf("clusterIP %q", ip)
	}
	if !value.Equal(path(svc, "spec.clusterIPs"), []any{ip}) || !value.Equal(path(svc, "spec.ipFamilies"), []any{"IPv4"}) || path(svc, "spec.ipFamilyPolicy") != "SingleStack" {
		t.Errorf("spec %v", svc["spec"])
	}
	ports := path(svc, "spec.ports").([]any)
	http := ports[0].(map[string]any)["nodePort"].(int64)
	if http < 30000 || http > 32767 || ports[1].(map[string]any)["nodePort"] != int64(30443) {
		t.Errorf("node ports %v", ports)
	}

	// An update from the manifest (without the allocated values) keeps them.
	again := obj(t, `
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec:
  type: NodePort
  selector: {app: web}
  ports: [{name: http, port: 80}, {name: https, port: 443, nodePort: 30443}]
`)
	out, err := s.Update(ctx, again)
	if err != nil {
		t.Fatal(err)
	}
	if metaString(out, "resourceVersion") != metaString(svc, "resourceVersion") {
		t.Errorf("the update changed the service: %v", out["spec"])
	}

	_, err = s.Create(ctx, obj(t, `{apiVersion: v1, kind: Service, metadata: {name: clash, namespace: default}, spec: {type: NodePort, ports: [{port: 80, nodePort: 30443}]}}`))
	if want := `Service "clash" is invalid: spec.ports[0].nodePort: Invalid value: 30443: provided port is already allocated`; errText(err) != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	_, err = s.Create(ctx, obj(t, `{apiVersion: v1, kind: Service, metadata: {name: clash, namespace: default}, spec: {clusterIP: `+ip+`, ports: [{port: 80}]}}`))
	if !cluster.IsInvalid(err) {
		t.Errorf("taken clusterIP: %v", err)
	}
	headless := mustCreate(t, s, `{apiVersion: v1, kind: Service, metadata: {name: headless, namespace: default}, spec: {clusterIP: None, ports: [{port: 80}]}}`)
	if path(headless, "spec.clusterIP") != "None" {
		t.Errorf("headless %v", headless["spec"])
	}
	ext := mustCreate(t, s, `{apiVersion: v1, kind: Service, metadata: {name: ext, namespace: default}, spec: {type: ExternalName, externalName: example.com}}`)
	if path(ext, "spec.clusterIP") != nil {
		t.Errorf("ExternalName got an IP: %v", ext["spec"])
	}

	// Deleting the service frees its IP and ports.
	if err := s.Delete(ctx, gvkService, "default", "web"); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s, `{apiVersion: v1, kind: Service, metadata: {name: reuse, namespace: default}, spec: {type: NodePort, clusterIP: `+ip+`, ports: [{port: 80, nodePort: 30443}]}}`)
}
