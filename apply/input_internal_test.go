package apply

import (
	"hash/maphash"
	"testing"

	"github.com/konverge/konverge/objref"
	"github.com/konverge/konverge/schema"
)

// TestSeenKeys: an object given twice is found by its key, also when
// another key took the hash of its key (forced here: a 64-bit hash
// makes it rare).
func TestSeenKeys(t *testing.T) {
	mk := func(name string) *item {
		return &item{ref: objref.Ref{GVK: schema.GVK{Version: "v1", Kind: "ConfigMap"}, Namespace: "default", Name: name}}
	}
	a, b, b2, c, c2 := mk("a"), mk("b"), mk("b"), mk("c"), mk("c")
	s := seenKeys{byHash: map[uint64]*item{}, seed: maphash.MakeSeed()}
	if first := s.add(a.key(), a); first != nil {
		t.Fatalf("a: first %v", first.ref)
	}
	if first := s.add(a.key(), mk("a")); first != a {
		t.Fatalf("a again: first %v, want a", first)
	}
	// b's hash is taken by a.
	s.byHash[maphash.Comparable(s.seed, b.key())] = a
	if first := s.add(b.key(), b); first != nil {
		t.Fatalf("b: first %v", first.ref)
	}
	if first := s.add(b.key(), b2); first != b {
		t.Fatalf("b again: first %v, want b", first)
	}
	if first := s.add(c.key(), c); first != nil {
		t.Fatalf("c: first %v", first.ref)
	}
	if first := s.add(c.key(), c2); first != c {
		t.Fatalf("c again: first %v, want c", first)
	}
}
