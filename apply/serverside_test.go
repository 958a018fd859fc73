package apply_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/konverge/konverge/apply"
)

// managers returns "manager/operation" of each managedFields entry.
func managers(obj map[string]any) []string {
	md, _ := obj["metadata"].(map[string]any)
	list, _ := md["managedFields"].([]any)
	var out []string
	for _, x := range list {
		e := x.(map[string]any)
		out = append(out, e["manager"].(string)+"/"+e["operation"].(string))
	}
	return out
}

const cmV1 = `
apiVersion: v1
kind: ConfigMap
metadata: {name: cm}
data: {a: "1", b: "2"}
`

// Client-side apply, then server-side: kubectl's migration moves the
// client-side manager's fields to "kubectl" (and the last-applied
// annotation to its own manager), so that a field dropped afterwards is
// removed.
func TestServerSideMigratesClientSideApply(t *testing.T) {
	s := openStore(t)
	mustApply(t, s, apply.Options{}, parse(t, cmV1))
	if got := managers(mustGet(t, s, gvkConfigMap, "default", "cm")); !reflect.DeepEqual(got, []string{"kubectl-client-side-apply/Update"}) {
		t.Fatalf("after client-side apply: %v", got)
	}
	res := mustApply(t, s, apply.Options{ServerSide: true}, parse(t, cmV1))
	if lines(res) != "configmap/cm serverside-applied\n" {
		t.Errorf("results %q", lines(res))
	}
	live := mustGet(t, s, gvkConfigMap, "default", "cm")
	if got := managers(live); !reflect.DeepEqual(got, []string{"kubectl/Apply", "kubectl-last-applied/Apply"}) {
		t.Fatalf("after server-side apply: %v", got)
	}
	mustApply(t, s, apply.Options{ServerSide: true}, parse(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {a: \"1\"}\n"))
	data := mustGet(t, s, gvkConfigMap, "default", "cm")["data"].(map[string]any)
	if _, ok := data["b"]; ok || data["a"] != "1" {
		t.Errorf("dropped field kept: %v", data)
	}
}

// A conflict is a *apply.ConflictError naming the managers and fields.
func TestServerSideConflictError(t *testing.T) {
	s := openStore(t)
	mustApply(t, s, apply.Options{ServerSide: true}, parse(t, cmV1))
	_, err := apply.New(s, apply.Options{ServerSide: true, FieldManager: "other"}).Apply(context.Background(),
		parse(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {a: \"9\", b: \"8\", c: \"3\"}\n"))
	var ce *apply.ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v (%T)", err, err)
	}
	want := []apply.FieldConflict{
		{Manager: "kubectl", Operation: "Apply", Field: ".data.a"},
		{Manager: "kubectl", Operation: "Apply", Field: ".data.b"},
	}
	if !reflect.DeepEqual(ce.Conflicts, want) || !reflect.DeepEqual(ce.Managers(), []string{"kubectl"}) {
		t.Errorf("conflicts %+v", ce.Conflicts)
	}
	if !strings.HasPrefix(ce.Error(), "Apply failed with 2 conflicts: conflicts with \"kubectl\":\n- .data.a\n- .data.b\nPlease review the fields above") {
		t.Errorf("message %q", ce.Error())
	}
	if data := mustGet(t, s, gvkConfigMap, "default", "cm")["data"].(map[string]any); data["a"] != "1" || data["c"] != nil {
		t.Errorf("a refused apply wrote: %v", data)
	}
	// With ForceConflicts the fields change hands.
	mustApply(t, s, apply.Options{ServerSide: true, FieldManager: "other", ForceConflicts: true},
		parse(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {a: \"9\"}\n"))
	if data := mustGet(t, s, gvkConfigMap, "default", "cm")["data"].(map[string]any); data["a"] != "9" || data["b"] != "2" {
		t.Errorf("after force: %v", data)
	}
}

func TestServerSideOptionsError(t *testing.T) {
	s := openStore(t)
	_, err := apply.New(s, apply.Options{ForceConflicts: true}).Apply(context.Background(), parse(t, cmV1))
	var oe *apply.OptionsError
	if !errors.As(err, &oe) || oe.Err.Error() != "--force-conflicts only works with --server-side" || err.Error() != "apply: --force-conflicts only works with --server-side" {
		t.Errorf("error %v", err)
	}
}
