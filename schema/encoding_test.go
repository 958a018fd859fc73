package schema

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"math"
	"reflect"
	"testing"
)

func embeddedRaw(t testing.TB) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(builtinData))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestBinaryRoundTrip encodes registries, decodes them and checks that the
// graphs are equal and that encoding again gives the same bytes (which only
// holds if shared Types and Fields maps stayed shared).
func TestBinaryRoundTrip(t *testing.T) {
	self := &Type{Kind: Struct, Name: "self", Fields: map[string]*Type{}}
	self.Fields["next"] = self
	self.Fields["list"] = &Type{Kind: List, Elem: self, ListType: MergeByKey, MergeKey: "k", Keys: []string{"k", "j"}, RetainKeys: true}
	shared := &Type{Kind: Struct, Name: "shared", Fields: self.Fields, Replace: true, Default: map[string]any{
		"s": "x", "i": int64(-7), "f": 1.5, "big": math.MaxFloat64, "b": false, "t": true, "n": nil,
		"l": []any{int64(1), "two", []any{}, map[string]any{}},
	}}
	custom := NewRegistry()
	custom.Add(GVK{Group: "g", Version: "v1", Kind: "Self"}, self)
	custom.Add(GVK{Group: "g", Version: "v1", Kind: "Shared"}, shared)
	custom.Add(GVK{Version: "v1", Kind: "Untyped"}, nil)
	custom.Add(GVK{Version: "v1", Kind: "Set"}, &Type{Kind: List, ListType: Set, Elem: &Type{Kind: Scalar, Scalar: IntOrString}})

	builtin := &Registry{}
	if err := builtin.UnmarshalBinary(embeddedRaw(t)); err != nil {
		t.Fatal(err)
	}

	for name, reg := range map[string]*Registry{"custom": custom, "builtin": builtin, "empty": NewRegistry()} {
		t.Run(name, func(t *testing.T) {
			data, err := reg.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			got := &Registry{}
			if err := got.UnmarshalBinary(data); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Kinds(), reg.Kinds()) {
				t.Fatalf("kinds %v, want %v", got.Kinds(), reg.Kinds())
			}
			for _, gvk := range reg.Kinds() {
				if !reflect.DeepEqual(got.Lookup(gvk), reg.Lookup(gvk)) {
					t.Errorf("%v: decoded type differs", gvk)
				}
			}
			again, err := got.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, data) {
				t.Error("encoding the decoded registry gives other bytes")
			}
		})
	}

	t.Run("sharing", func(t *testing.T) {
		data, err := custom.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		got := &Registry{}
		if err := got.UnmarshalBinary(data); err != nil {
			t.Fatal(err)
		}
		s := got.Lookup(GVK{Group: "g", Version: "v1", Kind: "Self"})
		if s.Field("next") != s || s.Field("list").Element() != s {
			t.Error("a cycle was not kept")
		}
		sh := got.Lookup(GVK{Group: "g", Version: "v1", Kind: "Shared"})
		if reflect.ValueOf(sh.Fields).UnsafePointer() != reflect.ValueOf(s.Fields).UnsafePointer() {
			t.Error("a shared Fields map was not kept")
		}
		if d := sh.Default.(map[string]any); d["i"] != int64(-7) || d["f"] != 1.5 {
			t.Errorf("default %#v", d)
		}
	})

	t.Run("builtin is the embedded table", func(t *testing.T) {
		data, err := builtin.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(data, embeddedRaw(t)) {
			t.Error("re-encoding the built-in registry changes it")
		}
	})
}

func TestUnmarshalBinaryErrors(t *testing.T) {
	valid, err := Builtin().MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string][]byte{
		"empty":     nil,
		"magic":     []byte("KVS0"),
		"truncated": valid[:len(valid)/2],
		"trailing":  append(bytes.Clone(valid), 0),
		"huge":      []byte("KVS1\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"),
	}
	for name, data := range tests {
		t.Run(name, func(t *testing.T) {
			r := &Registry{}
			err := r.UnmarshalBinary(data)
			if err == nil {
				t.Fatal("no error")
			}
			if name != "empty" && name != "magic" && !errors.Is(err, errCorrupt) {
				t.Errorf("error %v is not errCorrupt", err)
			}
		})
	}
}

func FuzzUnmarshalBinary(f *testing.F) {
	small := NewRegistry()
	small.Add(GVK{Version: "v1", Kind: "A"}, &Type{Kind: Struct, Fields: map[string]*Type{
		"l": {Kind: List, ListType: MergeByKey, MergeKey: "k", Keys: []string{"k"}, Elem: &Type{Kind: Struct}},
		"d": {Kind: Scalar, Scalar: String, Default: map[string]any{"a": []any{1.5, int64(2)}}},
	}})
	data, err := small.MarshalBinary()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte("KVS1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &Registry{}
		if err := r.UnmarshalBinary(data); err != nil {
			return
		}
		// Whatever decodes must encode and walk without trouble.
		if _, err := r.MarshalBinary(); err != nil {
			t.Fatal(err)
		}
		for _, gvk := range r.Kinds() {
			r.Lookup(gvk).Field("a").Element().Field("b")
		}
	})
}
