package local

import (
	"crypto/rand"
	"encoding/hex"
	mathrand "math/rand/v2"

	"github.com/konverge/konverge/cluster/local/internal/jsonobj"
	"github.com/konverge/konverge/schema"
)

// Accessors for metadata of objects held as JSON values. They modify the
// object they are given: the store works on its own copies.

// Short names for the accessors of package jsonobj, which the store, the
// strategies and the admission plugins share.

func metadata(obj map[string]any) map[string]any         { return jsonobj.Metadata(obj) }
func str(m map[string]any, field string) string          { return jsonobj.Str(m, field) }
func metaString(obj map[string]any, field string) string { return jsonobj.MetaString(obj, field) }
func setString(m map[string]any, field, s string)        { jsonobj.SetString(m, field, s) }
func child(m map[string]any, field string) map[string]any {
	return jsonobj.Child(m, field)
}
func peek(m map[string]any, field string) map[string]any { return jsonobj.Peek(m, field) }
func objectList(v any) []map[string]any                  { return jsonobj.ObjectList(v) }
func finalizers(obj map[string]any) []string             { return jsonobj.Finalizers(obj) }
func setFinalizers(obj map[string]any, fs []string)      { jsonobj.SetFinalizers(obj, fs) }

func gvkOf(obj map[string]any) schema.GVK {
	return schema.ParseGVK(str(obj, "apiVersion"), str(obj, "kind"))
}

func hasFinalizer(obj map[string]any, f string) bool {
	return containsString(finalizers(obj), f)
}

func withoutFinalizer(fs []string, f string) []string {
	out := fs[:0:0]
	for _, x := range fs {
		if x != f {
			out = append(out, x)
		}
	}
	return out
}

// ownerRef is one entry of metadata.ownerReferences.
type ownerRef struct {
	APIVersion, Kind, Name, UID string
	BlockOwnerDeletion          bool
}

func ownerRefs(obj map[string]any) []ownerRef {
	md, _ := obj["metadata"].(map[string]any)
	list, _ := md["ownerReferences"].([]any)
	out := make([]ownerRef, 0, len(list))
	for _, x := range list {
		m, ok := x.(map[string]any)
		if !ok {
			continue
		}
		block, _ := m["blockOwnerDeletion"].(bool)
		out = append(out, ownerRef{APIVersion: str(m, "apiVersion"), Kind: str(m, "kind"), Name: str(m, "name"), UID: str(m, "uid"), BlockOwnerDeletion: block})
	}
	return out
}

func ownerUIDs(obj map[string]any) []string {
	if obj == nil {
		return nil
	}
	refs := ownerRefs(obj)
	if len(refs) == 0 {
		return nil
	}
	out := make([]string, 0, len(refs))
	for _, r := range refs {
		if r.UID != "" && !containsString(out, r.UID) {
			out = append(out, r.UID)
		}
	}
	return out
}

// removeOwnerRefs drops the ownerReferences whose uid is in uids.
func removeOwnerRefs(obj map[string]any, uids ...string) {
	md := metadata(obj)
	list, _ := md["ownerReferences"].([]any)
	kept := make([]any, 0, len(list))
	for _, x := range list {
		if m, ok := x.(map[string]any); ok && containsString(uids, str(m, "uid")) {
			continue
		}
		kept = append(kept, x)
	}
	if len(kept) == 0 {
		delete(md, "ownerReferences")
	} else {
		md["ownerReferences"] = kept
	}
}

// newUID returns a random (version 4) UUID.
func newUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:], b[10:])
	return string(s[:])
}

// generateName appends five random characters to prefix, from the
// alphabet and within the length the API server uses.
func generateName(prefix string) string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	const maxName, randomLength = 63, 5
	if len(prefix) > maxName-randomLength {
		prefix = prefix[:maxName-randomLength]
	}
	b := make([]byte, randomLength)
	for i := range b {
		b[i] = alphabet[mathrand.IntN(len(alphabet))]
	}
	return prefix + string(b)
}
