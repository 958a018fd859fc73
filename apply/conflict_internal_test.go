package apply

import "testing"

func TestParseConflict(t *testing.T) {
	cases := []struct {
		msg  string
		want FieldConflict
		ok   bool
	}{
		{`conflict with "kubectl"`, FieldConflict{Manager: "kubectl", Operation: "Apply"}, true},
		{`conflict with "kubectl-client-side-apply" using apps/v1`, FieldConflict{Manager: "kubectl-client-side-apply", Operation: "Update", APIVersion: "apps/v1"}, true},
		{`conflict with "kubectl" with subresource "scale" using apps/v1`, FieldConflict{Manager: "kubectl", Operation: "Update", APIVersion: "apps/v1", Subresource: "scale"}, true},
		{`conflict with "m \"q\"" using v1 at 2026-01-01T00:00:00Z`, FieldConflict{Manager: `m "q"`, Operation: "Update", APIVersion: "v1"}, true},
		{`something else`, FieldConflict{}, false},
	}
	for _, c := range cases {
		got, ok := parseConflict(c.msg)
		if ok != c.ok || got != c.want {
			t.Errorf("%s: got %+v %v", c.msg, got, ok)
		}
	}
}
