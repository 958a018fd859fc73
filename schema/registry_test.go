package schema

import (
	"os/exec"
	"reflect"
	"strings"
	"testing"
)

func TestParseGVK(t *testing.T) {
	tests := []struct {
		apiVersion, kind string
		want             GVK
		str              string
	}{
		{"v1", "Pod", GVK{Version: "v1", Kind: "Pod"}, "v1, Kind=Pod"},
		{"apps/v1", "Deployment", GVK{Group: "apps", Version: "v1", Kind: "Deployment"}, "apps/v1, Kind=Deployment"},
		{"networking.k8s.io/v1", "Ingress", GVK{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"}, "networking.k8s.io/v1, Kind=Ingress"},
		{"", "", GVK{}, ", Kind="},
	}
	for _, tt := range tests {
		t.Run(tt.str, func(t *testing.T) {
			got := ParseGVK(tt.apiVersion, tt.kind)
			if got != tt.want {
				t.Errorf("ParseGVK(%q, %q) = %#v, want %#v", tt.apiVersion, tt.kind, got, tt.want)
			}
			if s := got.String(); s != tt.str {
				t.Errorf("String() = %q, want %q", s, tt.str)
			}
			if av := got.APIVersion(); av != tt.apiVersion {
				t.Errorf("APIVersion() = %q, want %q", av, tt.apiVersion)
			}
		})
	}
}

func TestRegistry(t *testing.T) {
	a := GVK{Group: "a", Version: "v1", Kind: "A"}
	b := GVK{Group: "b", Version: "v1", Kind: "B"}
	c := GVK{Version: "v1", Kind: "C"}
	ta, tb, tb2 := &Type{Kind: Struct}, &Type{Kind: Map}, &Type{Kind: List}

	t.Run("zero and nil", func(t *testing.T) {
		var zero Registry
		if zero.Lookup(a) != nil || zero.Len() != 0 || len(zero.Kinds()) != 0 {
			t.Error("zero Registry is not empty")
		}
		var nilReg *Registry
		if nilReg.Lookup(a) != nil || nilReg.Len() != 0 || nilReg.Kinds() != nil {
			t.Error("nil Registry is not empty")
		}
		zero.Add(a, ta)
		if zero.Lookup(a) != ta {
			t.Error("Add on the zero Registry")
		}
	})

	t.Run("add merge clone", func(t *testing.T) {
		r := NewRegistry()
		r.Add(b, tb)
		r.Add(a, ta)
		r.Add(c, nil)
		if got := r.Kinds(); !reflect.DeepEqual(got, []GVK{c, a, b}) {
			t.Errorf("Kinds() = %v, want sorted", got)
		}
		if r.Lookup(c) != UntypedType() {
			t.Error("Add(nil) is not Untyped")
		}
		other := NewRegistry()
		other.Add(b, tb2)
		clone := r.Clone()
		r.Merge(other)
		if r.Lookup(b) != tb2 {
			t.Error("Merge: other's type does not win")
		}
		if clone.Lookup(b) != tb || clone.Len() != 3 {
			t.Error("Clone follows changes of the original")
		}
		r.Merge(nil)
	})

	t.Run("layered", func(t *testing.T) {
		base := NewRegistry()
		base.Add(a, ta)
		base.Add(b, tb)
		l := layered(base)
		l.Add(b, tb2)
		l.Add(c, ta)
		if l.Lookup(a) != ta || l.Lookup(b) != tb2 || l.Lookup(c) != ta {
			t.Error("layered lookups")
		}
		if base.Lookup(b) != tb || base.Lookup(c) != nil {
			t.Error("Add on a layered registry changed its base")
		}
		if got := l.Kinds(); !reflect.DeepEqual(got, []GVK{c, a, b}) || l.Len() != 3 {
			t.Errorf("Kinds() = %v, Len() = %d", got, l.Len())
		}
		// Merging a layered registry copies both layers.
		m := NewRegistry()
		m.Add(GVK{Kind: "Z"}, tb)
		m.Merge(l)
		if m.Len() != 4 || m.Lookup(b) != tb2 || m.Lookup(a) != ta {
			t.Errorf("Merge of a layered registry: %v", m.Kinds())
		}
		// Merging into an empty registry shares the base.
		e := NewRegistry()
		e.Merge(layered(base))
		if e.base != base || e.Lookup(a) != ta {
			t.Error("Merge into an empty registry")
		}
		e.Add(a, tb)
		if base.Lookup(a) != ta {
			t.Error("Add after Merge changed the shared base")
		}
	})
}

// TestImports keeps package schema free of dependencies: it imports nothing
// but the standard library.
func TestImports(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if p != "github.com/konverge/konverge/schema" {
			t.Errorf("package schema depends on %s", p)
		}
	}
}
