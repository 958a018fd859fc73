package local

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/konverge/konverge/cluster"
)

func TestList(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	for _, ns := range []string{"a", "a-b", "b"} {
		mustCreate(t, s, `{apiVersion: v1, kind: Namespace, metadata: {name: `+ns+`}}`)
	}
	pods := []struct{ ns, name, app, node, phase string }{
		{"b", "p1", "web", "n1", ""},
		{"a", "p2", "web", "", ""},
		{"a-b", "p0", "db", "n1", ""},
		{"a", "p1", "db", "n2", ""},
	}
	for _, p := range pods {
		node := ""
		if p.node != "" {
			node = "nodeName: " + p.node + ","
		}
		mustCreate(t, s, fmt.Sprintf(`{apiVersion: v1, kind: Pod, metadata: {name: %s, namespace: %s, labels: {app: %s}}, spec: {%s containers: [{name: c, image: x}]}}`,
			p.name, p.ns, p.app, node))
	}
	// One pod runs: its status says so.
	running := mustGet(t, s, gvkPod, "a", "p1")
	running["status"] = map[string]any{"phase": "Running"}
	if _, err := s.UpdateStatus(ctx, running); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name string
		opts []cluster.ListOption
		want string
	}{
		{"all, by namespace and name", nil, "a/p1 a/p2 a-b/p0 b/p1"},
		{"one namespace", []cluster.ListOption{cluster.InNamespace("a")}, "a/p1 a/p2"},
		{"namespace is not a prefix match", []cluster.ListOption{cluster.InNamespace("a-")}, ""},
		{"label equality", []cluster.ListOption{cluster.MatchingLabels("app=web")}, "a/p2 b/p1"},
		{"label set", []cluster.ListOption{cluster.MatchingLabels("app in (db),app!=web")}, "a/p1 a-b/p0"},
		{"field spec.nodeName", []cluster.ListOption{cluster.MatchingFields("spec.nodeName=n1")}, "a-b/p0 b/p1"},
		{"field status.phase", []cluster.ListOption{cluster.MatchingFields("status.phase=Running")}, "a/p1"},
		{"field status.phase !=", []cluster.ListOption{cluster.MatchingFields("status.phase!=Running")}, "a/p2 a-b/p0 b/p1"},
		{"field metadata", []cluster.ListOption{cluster.MatchingFields("metadata.name=p1,metadata.namespace=b")}, "b/p1"},
		{"absent boolean reads false", []cluster.ListOption{cluster.MatchingFields("spec.hostNetwork=false,metadata.namespace=a")}, "a/p1 a/p2"},
		{"labels and fields and namespace", []cluster.ListOption{cluster.InNamespace("a"), cluster.MatchingLabels("app=db"), cluster.MatchingFields("spec.nodeName=n2")}, "a/p1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			list, err := s.List(ctx, gvkPod, c.opts...)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range list.Items {
				got = append(got, metaString(p, "namespace")+"/"+metaString(p, "name"))
			}
			if strings.Join(got, " ") != c.want {
				t.Errorf("got %q, want %q", strings.Join(got, " "), c.want)
			}
		})
	}
	list, _ := s.List(ctx, gvkPod)
	if want := metaString(mustGet(t, s, gvkPod, "a", "p1"), "resourceVersion"); list.ResourceVersion != want {
		t.Errorf("collection resourceVersion %s, want %s (the last write)", list.ResourceVersion, want)
	}
}

func TestListErrors(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	cases := []struct {
		name string
		gvk  any
		opts []cluster.ListOption
		msg  string
	}{
		{"pod field not supported", gvkPod, []cluster.ListOption{cluster.MatchingFields("spec.foo=x")}, "field label not supported: spec.foo"},
		{"configmap field", gvkConfigMap, []cluster.ListOption{cluster.MatchingFields("data.a=x")}, `"data.a" is not a known field selector: only "metadata.name", "metadata.namespace"`},
		{"bad field selector", gvkPod, []cluster.ListOption{cluster.MatchingFields("spec.nodeName")}, `invalid selector: 'spec.nodeName'; can't understand 'spec.nodeName'`},
		{"bad label selector", gvkPod, []cluster.ListOption{cluster.MatchingLabels("app in (a")}, `unable to parse requirement: found '', expected: ',' or ')'`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			gvk := gvkPod
			if c.gvk == gvkConfigMap {
				gvk = gvkConfigMap
			}
			_, err := s.List(ctx, gvk, c.opts...)
			if cluster.ReasonOf(err) != cluster.ReasonBadRequest || errText(err) != c.msg {
				t.Errorf("got %v (%s), want %s", err, cluster.ReasonOf(err), c.msg)
			}
		})
	}
}
