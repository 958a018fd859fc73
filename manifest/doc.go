// Package manifest reads Kubernetes objects from files, directories and
// standard input, as kubectl apply -f does, and checks that each is an
// object that can be applied: a mapping with apiVersion, kind and
// metadata.name (or metadata.generateName). It does not validate objects
// against a schema, does not default them, and does not fetch URLs.
//
// Read takes paths; Parse takes the bytes of one file. Both return Objects
// (the object as a JSON value of package value, and its Source: file,
// document, List item, line) and every problem of every file as Errors.
//
// # Files and directories
//
// A path is a file, read whatever its name; a directory, whose files ending
// in .json, .yaml or .yml are read in the order of their names (with
// Options.Recursive, its subdirectories too, where they sort); or "-" for
// standard input. Files larger than Options.MaxFileSize (32 MiB by default)
// are rejected before they are read.
//
// # Documents
//
// As kubectl, a file whose first character other than white space is "{"
// is a stream of JSON objects, and any other file is YAML: documents
// separated by lines that start with "---" (only a comment may follow on the
// line). Empty documents (only comments, or null) are skipped. A document
// whose kind ends in "List" and that has items (List, v1 List, PodList) is
// replaced by its items; items without kind and apiVersion take them from
// the List ("Pod" from "PodList"), as kubectl does. kubectl treats any
// document with items as a List, whatever its kind, and fails on nested
// Lists; this package flattens only kinds ending in "List", nested ones
// too.
//
// # YAML
//
// YAML is parsed by go.yaml.in/yaml/v3 into nodes, which give lines and
// show aliases, and the nodes are converted with the rules kubectl applies
// through sigs.k8s.io/yaml and go-yaml v2, so that every document means here
// what it means to kubectl:
//
//   - YAML 1.1 scalars: unquoted y, Y, yes, on, n, no, off (any case form
//     go-yaml v2 knows) are booleans, 0777 is octal, 0x1F hexadecimal,
//     1_000 an integer, and timestamps stay strings.
//   - Numbers as Kubernetes decodes the JSON kubectl makes of them: integers
//     are int64, and so is every float whose JSON form has no fraction or
//     exponent (1.0 and 1e3 are int64 1 and 1000); other numbers are
//     float64. .inf and .nan are errors (JSON cannot hold them).
//   - Keys that are numbers or booleans become strings ("on:" is "true").
//   - Merge keys (<<) merge as go-yaml v2 merges them.
//
// One difference remains: go-yaml v3 drops the non-specific tag "!" (as in
// "! 12"), with which go-yaml v2 keeps a plain scalar a string; here such a
// scalar is resolved as if it had no tag.
//
// Where kubectl is silent or lax, this package is strict:
//
//   - A duplicate key in a mapping is an error naming the key and both lines
//     (go-yaml v2 keeps the last value).
//   - Aliases may add at most 10 times the values a document holds as
//     written (at least 10,000, at most 1,000,000 values), which stops
//     "billion laughs" documents; an alias inside its own anchor is an
//     error.
//   - Documents nested deeper than value.MaxDepth are errors, as JSON
//     documents are for package value.
//   - Text after the end of a document and before the next "---" line (a
//     second flow mapping, text after the end marker "...") is an error:
//     go-yaml v2 ignores it, so kubectl drops it without a word.
//
// # Errors
//
// Each problem is an *Error, printed as
//
//	manifest: deploy/app.yaml#2 (line 14): Deployment/web: metadata.name: required
//
// with its Source, the object when known, the field path when known, and
// the cause: ErrRequired, ErrNotExist, a *SyntaxError with the line (and
// for JSON the column) in the file, a *SizeError. Read returns them all as
// Errors, in the order of the inputs and documents. Errors never quote a
// field's value: the parser's own messages are stripped of anything they
// quote, so that a broken Secret cannot leak its data into a log.
package manifest
