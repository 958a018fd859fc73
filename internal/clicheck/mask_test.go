package clicheck

import (
	"reflect"
	"testing"
)

func TestSplitWords(t *testing.T) {
	cases := map[string][]string{
		`get cm -o jsonpath='{.items[*].metadata.name}'`: {"get", "cm", "-o", "jsonpath={.items[*].metadata.name}"},
		`get cm -o go-template="{{.a}} \"q\""`:           {"get", "cm", "-o", `go-template={{.a}} "q"`},
		`create cm x --from-literal=a\ b`:                {"create", "cm", "x", "--from-literal=a b"},
		`patch -p ''`:                                    {"patch", "-p", ""},
	}
	for in, want := range cases {
		got, err := splitWords(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("splitWords(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := splitWords(`get 'open`); err == nil {
		t.Error("unterminated quote accepted")
	}
}

func TestMask(t *testing.T) {
	// Ages and addresses of different widths mask alike, with the columns
	// after them.
	a := "web   ClusterIP   10.0.0.12    80/TCP   5s    x\n"
	b := "web   ClusterIP   10.96.3.4    80/TCP   112s  x\n"
	if mask(a) != mask(b) {
		t.Errorf("mask(%q) = %q, mask(%q) = %q", a, mask(a), b, mask(b))
	}
	if got := mask("See 'kubectl get -h'"); got != "See 'konverge get -h'" {
		t.Errorf("program name: %q", got)
	}
	if got := mask("kubectl.kubernetes.io/last-applied-configuration"); got != "kubectl.kubernetes.io/last-applied-configuration" {
		t.Errorf("annotation masked: %q", got)
	}
	if got := mask(`  uid: 0e6c96ce-aa7d-4d98-ba52-4bc5260ace43` + "\n" + `  resourceVersion: "123"`); got != "  uid: <uid>\n  resourceVersion: \"<rv>\"" {
		t.Errorf("uid/rv: %q", got)
	}
}
