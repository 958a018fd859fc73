package cli

import (
	"slices"
	"testing"
)

func TestWatchChanges(t *testing.T) {
	obj := func(ns, name, rv string) map[string]any {
		return map[string]any{"metadata": map[string]any{"namespace": ns, "name": name, "resourceVersion": rv}}
	}
	seen := map[string]map[string]any{
		"default/a": obj("default", "a", "5"),
		"default/b": obj("default", "b", "6"),
		"default/c": obj("default", "c", "7"),
		"kube/z":    obj("kube", "z", "2"),
	}
	items := []map[string]any{
		obj("default", "a", "12"), // modified after d was added
		obj("default", "b", "6"),  // unchanged
		obj("default", "d", "9"),  // added
	}
	changes, current := watchChanges(seen, items)
	var got []string
	for _, c := range changes {
		got = append(got, c.event+" "+objectKey(c.obj))
	}
	want := []string{"ADDED default/d", "MODIFIED default/a", "DELETED default/c", "DELETED kube/z"}
	if !slices.Equal(got, want) {
		t.Errorf("changes = %q, want %q", got, want)
	}
	if len(current) != 3 || current["default/b"] == nil || current["default/c"] != nil {
		t.Errorf("current = %v, want a, b and d", current)
	}
	if changes, _ := watchChanges(current, items); len(changes) != 0 {
		t.Errorf("a second poll with nothing changed reports %d changes", len(changes))
	}
}
