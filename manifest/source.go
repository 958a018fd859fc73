package manifest

import "strconv"

// Source is where an object was read from.
//
// It prints as the file, "#" and the document number, the List item when
// there is one, and the line:
//
//	deploy/app.yaml#2 (line 14)
//	deploy/list.yaml#1 item 3 (line 9)
//	-#1 (line 1)
//	deploy/missing.yaml
type Source struct {
	// File is the path as given to Read, or as found under a directory
	// given to Read (filepath.Join(dir, name)); "-" for standard input.
	File string
	// Doc is the 1-based number of the document within the file, counting
	// the documents that hold something: empty documents (only comments,
	// or null) are skipped, as kubectl skips them, and not counted. A JSON
	// stream counts one document per top-level value. 0 for problems with
	// the whole file.
	Doc int
	// Item is the 1-based position of the object among the items of the
	// List document it comes from (nested Lists flattened as kubectl
	// flattens them), 0 when the document is not a List.
	Item int
	// Line is the 1-based line where the document starts (its first line
	// that is not blank or a comment), or for an item of a YAML List, where
	// the item starts. 0 when unknown.
	Line int
}

// String returns the source as shown in the type's documentation.
func (s Source) String() string {
	b := make([]byte, 0, len(s.File)+24)
	b = append(b, s.File...)
	if s.Doc > 0 {
		b = append(b, '#')
		b = strconv.AppendInt(b, int64(s.Doc), 10)
	}
	if s.Item > 0 {
		b = append(b, " item "...)
		b = strconv.AppendInt(b, int64(s.Item), 10)
	}
	if s.Line > 0 {
		b = append(b, " (line "...)
		b = strconv.AppendInt(b, int64(s.Line), 10)
		b = append(b, ')')
	}
	return string(b)
}

// Object is one Kubernetes object read from a manifest.
type Object struct {
	// Obj is the object as a JSON value (see package value): maps, lists,
	// strings, int64, float64, booleans and nil.
	Obj map[string]any
	// Source is where it was read from.
	Source Source
	// Digest is a 64-bit digest of the bytes the object was decoded from
	// (its document, and its position in a List), seeded at random per
	// process; 0 when unknown (an object built in code). Objects with the
	// same non-zero Digest were read from the same text, so they are equal:
	// a Planner with memory (package apply) takes it as the identity of
	// the object's content and does not look at Obj again. Whoever
	// modifies Obj after reading it must set Digest to 0.
	Digest uint64
}
