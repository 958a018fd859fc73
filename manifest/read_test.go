package manifest

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// readResult prints what Read returned: one line per object (source and
// Kind/name) and the error text, one line per error.
func readResult(objs []Object, err error) (objects, errs []string) {
	for _, o := range objs {
		meta, _ := o.Obj["metadata"].(map[string]any)
		name := stringField(meta, "name")
		if name == "" {
			name = stringField(meta, "generateName") + "*"
		}
		objects = append(objects, o.Source.String()+" "+stringField(o.Obj, "kind")+"/"+name)
	}
	if err != nil {
		errs = strings.Split(err.Error(), "\n")
	}
	return objects, errs
}

// TestRead reads the files of testdata/manifest and checks the sources of
// the objects and the exact text of every error.
func TestRead(t *testing.T) {
	t.Chdir("../testdata/manifest")
	cases := []struct {
		name    string
		paths   []string
		opts    Options
		objects []string
		errors  []string
	}{{
		name:  "multi-document stream with comments, a leading --- and empty documents",
		paths: []string{"valid/multi-doc.yaml"},
		objects: []string{
			"valid/multi-doc.yaml#1 (line 4) Namespace/shop",
			"valid/multi-doc.yaml#2 (line 13) Service/web",
			"valid/multi-doc.yaml#3 (line 25) Deployment/web",
		},
	}, {
		name:  "List and typed list flattened",
		paths: []string{"valid/list.yaml"},
		objects: []string{
			"valid/list.yaml#1 item 1 (line 4) ConfigMap/settings",
			"valid/list.yaml#1 item 2 (line 10) ServiceAccount/runner",
			"valid/list.yaml#2 item 1 (line 22) Deployment/api",
			"valid/list.yaml#2 item 2 (line 26) Deployment/worker",
		},
	}, {
		name:  "JSON stream with a List",
		paths: []string{"valid/stream.json"},
		objects: []string{
			"valid/stream.json#1 (line 1) ConfigMap/first",
			"valid/stream.json#2 (line 7) ConfigMap/second",
			"valid/stream.json#3 item 1 (line 8) ConfigMap/third",
		},
	}, {
		name:    "JSON object with generateName",
		paths:   []string{"valid/single.json"},
		objects: []string{"valid/single.json#1 (line 1) Job/migrate-*"},
	}, {
		name:    "anchors, aliases and merge keys",
		paths:   []string{"valid/anchors.yaml"},
		objects: []string{"valid/anchors.yaml#1 (line 2) Deployment/anchors"},
	}, {
		name:    "byte order mark and CRLF",
		paths:   []string{"valid/windows.yaml"},
		objects: []string{"valid/windows.yaml#1 (line 1) ConfigMap/windows"},
	}, {
		name:  "directory: manifest extensions only, sorted by name, no subdirectories",
		paths: []string{"dir"},
		objects: []string{
			"dir/10-late.yaml#1 (line 1) ConfigMap/ten",
			"dir/9-early.yaml#1 (line 1) ConfigMap/nine",
			"dir/Z.yaml#1 (line 1) ConfigMap/z-upper",
			"dir/a.yml#1 (line 1) ConfigMap/a",
			"dir/b.yaml#1 (line 1) ConfigMap/b",
			"dir/c.json#1 (line 1) ConfigMap/c",
			"dir/t.yaml#1 (line 1) ConfigMap/t",
		},
	}, {
		name:  "directory with -R: subdirectories where they sort",
		paths: []string{"dir/"},
		opts:  Options{Recursive: true},
		objects: []string{
			"dir/10-late.yaml#1 (line 1) ConfigMap/ten",
			"dir/9-early.yaml#1 (line 1) ConfigMap/nine",
			"dir/Z.yaml#1 (line 1) ConfigMap/z-upper",
			"dir/a.yml#1 (line 1) ConfigMap/a",
			"dir/b.yaml#1 (line 1) ConfigMap/b",
			"dir/c.json#1 (line 1) ConfigMap/c",
			"dir/sub/d.yaml#1 (line 1) ConfigMap/d",
			"dir/sub/deeper/e.yaml#1 (line 1) ConfigMap/e",
			"dir/t.yaml#1 (line 1) ConfigMap/t",
		},
	}, {
		name:    "a file named explicitly is read whatever its extension",
		paths:   []string{"dir/upper.YAML", "dir/a.yml"},
		objects: []string{"dir/upper.YAML#1 (line 1) ConfigMap/ignored", "dir/a.yml#1 (line 1) ConfigMap/a"},
	}, {
		name:   "malformed YAML",
		paths:  []string{"invalid/malformed.yaml"},
		errors: []string{"manifest: invalid/malformed.yaml#1 (line 1): line 7: invalid YAML: mapping values are not allowed in this context"},
	}, {
		name:   "a scalar document",
		paths:  []string{"invalid/scalar.yaml"},
		errors: []string{"manifest: invalid/scalar.yaml#1 (line 2): a document must be a mapping (an object with apiVersion and kind), not a string"},
	}, {
		name:   "a list document",
		paths:  []string{"invalid/list-doc.yaml"},
		errors: []string{"manifest: invalid/list-doc.yaml#1 (line 1): a document must be a mapping (an object with apiVersion and kind), not a list"},
	}, {
		name:   "missing apiVersion",
		paths:  []string{"invalid/missing-apiversion.yaml"},
		errors: []string{"manifest: invalid/missing-apiversion.yaml#1 (line 1): ConfigMap/no-version: apiVersion: required"},
	}, {
		name:   "missing kind",
		paths:  []string{"invalid/missing-kind.yaml"},
		errors: []string{"manifest: invalid/missing-kind.yaml#1 (line 1): kind: required"},
	}, {
		name:   "missing name",
		paths:  []string{"invalid/missing-name.yaml"},
		errors: []string{"manifest: invalid/missing-name.yaml#1 (line 1): Deployment: metadata.name: required"},
	}, {
		name:   "duplicate key",
		paths:  []string{"invalid/duplicate-keys.yaml"},
		errors: []string{`manifest: invalid/duplicate-keys.yaml#1 (line 1): Deployment/web: spec.template.metadata.labels.app: line 11: duplicate key "app" (first at line 9)`},
	}, {
		name:   "alias bomb",
		paths:  []string{"invalid/alias-bomb.yaml"},
		errors: []string{"manifest: invalid/alias-bomb.yaml#1 (line 2): ConfigMap/lol: line 7: aliases expand to more than 10000 values (the document holds 110 as written)"},
	}, {
		name:   "alias inside its anchor",
		paths:  []string{"invalid/cycle.yaml"},
		errors: []string{"manifest: invalid/cycle.yaml#1 (line 1): ConfigMap/cycle: data.self.self: line 6: an alias refers to a value that contains it"},
	}, {
		name:   "Secret with a syntax error",
		paths:  []string{"invalid/secret-syntax.yaml"},
		errors: []string{"manifest: invalid/secret-syntax.yaml#1 (line 1): line 6: invalid YAML: found unexpected end of stream"},
	}, {
		name:   "Secret with an unknown alias: go-yaml quotes it, we do not",
		paths:  []string{"invalid/secret-alias.yaml"},
		errors: []string{"manifest: invalid/secret-alias.yaml#1 (line 1): line 6: invalid YAML: an alias refers to an unknown anchor"},
	}, {
		name:    "text after ---",
		paths:   []string{"invalid/bad-separator.yaml"},
		objects: []string{"invalid/bad-separator.yaml#1 (line 1) ConfigMap/before"},
		errors: []string{
			"manifest: invalid/bad-separator.yaml#2 (line 5): line 5: invalid document separator: only a comment may follow --- on its line",
			"manifest: invalid/bad-separator.yaml#3 (line 6): ConfigMap/after: apiVersion: required",
		},
	}, {
		name:  "JSON stream with a bad object in the middle",
		paths: []string{"invalid/bad-json.json"},
		objects: []string{
			"invalid/bad-json.json#1 (line 1) ConfigMap/ok-1",
			"invalid/bad-json.json#2 (line 2) ConfigMap/ok-2",
			"invalid/bad-json.json#4 (line 4) ConfigMap/ok-3",
		},
		errors: []string{`manifest: invalid/bad-json.json#3 (line 3): line 3, column 71: invalid JSON: duplicate key "name"`},
	}, {
		name:  "every problem of a file, and its good objects",
		paths: []string{"invalid/mixed.yaml"},
		objects: []string{
			"invalid/mixed.yaml#1 (line 3) ConfigMap/good",
			"invalid/mixed.yaml#4 item 1 (line 20) ConfigMap/good-item",
			"invalid/mixed.yaml#6 (line 36) ConfigMap/also-good",
		},
		errors: []string{
			"manifest: invalid/mixed.yaml#2 (line 8): ConfigMap: metadata.name: must be a string, not a list",
			"manifest: invalid/mixed.yaml#3 (line 13): ConfigMap: apiVersion: must be a string, not a number",
			"manifest: invalid/mixed.yaml#3 (line 13): ConfigMap: metadata: must be a mapping, not a string",
			"manifest: invalid/mixed.yaml#4 item 2 (line 24): ConfigMap: metadata.name: required",
			"manifest: invalid/mixed.yaml#4 item 3 (line 27): a List item must be a mapping (an object with apiVersion and kind), not a number",
			"manifest: invalid/mixed.yaml#5 (line 29): ConfigMap/infinite: data.x: line 34: infinity and NaN cannot be represented in JSON",
		},
	}, {
		name:    "every problem of every path, in order",
		paths:   []string{"invalid/missing-kind.yaml", "nope.yaml", "dir/a.yml", "https://example.com/app.yaml", "invalid/malformed.yaml"},
		objects: []string{"dir/a.yml#1 (line 1) ConfigMap/a"},
		errors: []string{
			"manifest: invalid/missing-kind.yaml#1 (line 1): kind: required",
			"manifest: nope.yaml: path does not exist",
			"manifest: https://example.com/app.yaml: reading URLs is not supported; download the file and give its path",
			"manifest: invalid/malformed.yaml#1 (line 1): line 7: invalid YAML: mapping values are not allowed in this context",
		},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			objects, errs := readResult(Read(context.Background(), c.paths, c.opts))
			if !reflect.DeepEqual(objects, c.objects) {
				t.Errorf("objects:\n got: %q\nwant: %q", objects, c.objects)
			}
			if !reflect.DeepEqual(errs, c.errors) {
				t.Errorf("errors:\n got: %q\nwant: %q", errs, c.errors)
			}
		})
	}
}

// TestSecretValuesNeverInErrors reads broken Secrets and requires that no
// error mentions their values.
func TestSecretValuesNeverInErrors(t *testing.T) {
	for _, f := range []string{"secret-syntax.yaml", "secret-alias.yaml"} {
		_, err := Read(context.Background(), []string{filepath.Join("../testdata/manifest/invalid", f)}, Options{})
		if err == nil {
			t.Fatalf("%s: no error", f)
		}
		if strings.Contains(err.Error(), "SECRET") {
			t.Errorf("%s: error reveals the value: %v", f, err)
		}
	}
	// Every message of the YAML parser that quotes more than one character
	// loses the quote.
	for in, want := range map[string]string{
		"unknown anchor 'hunter2' referenced":     "unknown anchor referenced",
		"did not find expected ',' or ']'":        "did not find expected ',' or ']'",
		"cannot decode !!str `s3cr3t` as a !!int": "cannot decode !!str as a !!int",
		`found "quoted" here`:                     "found here",
	} {
		if got := redactQuoted(in); got != want {
			t.Errorf("redactQuoted(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestYAML11 pins what kubectl (go-yaml v2 through sigs.k8s.io/yaml) makes
// of YAML 1.1 scalars; TestSameAsKubectl checks the same against kubectl's
// decoder itself.
func TestYAML11(t *testing.T) {
	objs, err := Read(context.Background(), []string{"../testdata/manifest/valid/yaml11.yaml"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := objs[0].Obj["spec"]
	want := map[string]any{
		"true":          true,
		"enabled":       true,
		"disabled":      false,
		"answer":        false,
		"quoted":        "yes",
		"octal":         int64(493),
		"hex":           int64(31),
		"underscores":   int64(1000),
		"float":         1.5,
		"integralFloat": int64(1),
		"exponent":      int64(1000),
		"date":          "2024-01-31",
		"version":       1.1,
		"empty":         nil,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %s\nwant %s", dump(got), dump(want))
	}
}

// TestDeepNesting reads documents nested 10,000 levels deep, which must fail
// quickly with a clear error.
func TestDeepNesting(t *testing.T) {
	const depth = 10_000
	head := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep\ndata:\n  x: "
	cases := []struct {
		name string
		data string
		want string
	}{{
		name: "YAML flow",
		data: head + strings.Repeat("[", depth) + strings.Repeat("]", depth) + "\n",
		want: "manifest: deep.yaml#1 (line 1): ConfigMap/deep: line 6: nested deeper than 1000 levels",
	}, {
		name: "YAML flow beyond the parser's limit",
		data: head + strings.Repeat("{a: ", depth+1) + strings.Repeat("}", depth+1) + "\n",
		want: "manifest: deep.yaml#1 (line 1): line 6: invalid YAML: exceeded max depth of 10000",
	}, {
		name: "YAML block sequences",
		data: head + "\n" + strings.Repeat("  - ", depth/2) + "x\n",
		want: "manifest: deep.yaml#1 (line 1): ConfigMap/deep: line 7: nested deeper than 1000 levels",
	}, {
		name: "YAML block mappings",
		data: head + "\n" + blockNesting(2000),
		want: "manifest: deep.yaml#1 (line 1): ConfigMap/deep: line 1006: nested deeper than 1000 levels",
	}, {
		name: "JSON",
		data: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep"},"data":` + strings.Repeat(`{"a":`, depth) + "1" + strings.Repeat("}", depth) + "}",
		want: "manifest: deep.yaml#1 (line 1): line 1, column 5068: invalid JSON: document nested deeper than 1000 levels",
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			_, err := Parse(context.Background(), "deep.yaml", []byte(c.data))
			if err == nil || err.Error() != c.want {
				t.Errorf("got  %v\nwant %s", err, c.want)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}

// blockNesting returns depth levels of block mappings, each indented one
// more space ("a:\n a:\n  a: ...").
func blockNesting(depth int) string {
	var b strings.Builder
	for i := range depth {
		b.WriteString(strings.Repeat(" ", i+2))
		b.WriteString("a:\n")
	}
	return b.String()
}

// TestTooLarge rejects a 50 MiB file and a 50 MiB stream without reading
// them whole.
func TestTooLarge(t *testing.T) {
	const size = 50 << 20
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	// A sparse file: 50 MiB long, written with one byte.
	if _, err := f.WriteAt([]byte("\n"), size-1); err != nil {
		t.Fatal(err)
	}
	f.Close()

	_, err = Read(context.Background(), []string{big}, Options{})
	want := "manifest: " + big + ": 52428800 bytes, larger than the limit of 33554432 bytes (Options.MaxFileSize)"
	if err == nil || err.Error() != want {
		t.Errorf("file:\n got %v\nwant %s", err, want)
	}
	var se *SizeError
	if !errors.As(err, &se) || se.Size != size || se.Limit != DefaultMaxFileSize {
		t.Errorf("file: not a SizeError with the sizes: %#v", se)
	}

	stdin := &countingReader{n: size}
	_, err = Read(context.Background(), []string{"-"}, Options{Stdin: stdin})
	want = "manifest: -: larger than the limit of 33554432 bytes (Options.MaxFileSize)"
	if err == nil || err.Error() != want {
		t.Errorf("stdin:\n got %v\nwant %s", err, want)
	}
	if stdin.read > DefaultMaxFileSize+1 {
		t.Errorf("read %d bytes of standard input, more than the limit", stdin.read)
	}

	// A smaller limit, and no limit.
	small := filepath.Join(dir, "small.yaml")
	if err := os.WriteFile(small, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(context.Background(), []string{small}, Options{MaxFileSize: 10}); err == nil || !strings.HasSuffix(err.Error(), ": 51 bytes, larger than the limit of 10 bytes (Options.MaxFileSize)") {
		t.Errorf("limit 10: %v", err)
	}
	if objs, err := Read(context.Background(), []string{small}, Options{MaxFileSize: -1}); err != nil || len(objs) != 1 {
		t.Errorf("no limit: %v %v", objs, err)
	}
}

// countingReader yields n newlines and counts what was read.
type countingReader struct {
	n, read int
}

func (r *countingReader) Read(p []byte) (int, error) {
	if r.read >= r.n {
		return 0, io.EOF
	}
	k := min(len(p), r.n-r.read)
	for i := range k {
		p[i] = '\n'
	}
	r.read += k
	return k, nil
}

func TestStdin(t *testing.T) {
	in := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-stdin\n---\nkind: ConfigMap\n"
	objs, err := Read(context.Background(), []string{"-", "-"}, Options{Stdin: strings.NewReader(in)})
	objects, errs := readResult(objs, err)
	wantObjects := []string{"-#1 (line 1) ConfigMap/from-stdin"}
	wantErrors := []string{
		"manifest: -#2 (line 6): ConfigMap: apiVersion: required",
		"manifest: -#2 (line 6): ConfigMap: metadata.name: required",
		"manifest: -: standard input given more than once",
	}
	if !reflect.DeepEqual(objects, wantObjects) || !reflect.DeepEqual(errs, wantErrors) {
		t.Errorf("got %q %q\nwant %q %q", objects, errs, wantObjects, wantErrors)
	}
}

func TestPathErrors(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := Read(context.Background(), []string{empty}, Options{})
	if want := "manifest: " + empty + ": no files ending in .json, .yaml or .yml"; err == nil || err.Error() != want {
		t.Errorf("empty directory: got %v, want %s", err, want)
	}

	_, err = Read(context.Background(), []string{filepath.Join(dir, "missing")}, Options{})
	if !errors.Is(err, fs.ErrNotExist) || !errors.Is(err, ErrNotExist) {
		t.Errorf("missing: %v is not ErrNotExist", err)
	}
	var me *Error
	if !errors.As(err, &me) || me.Source.File != filepath.Join(dir, "missing") {
		t.Errorf("missing: not an *Error naming the path: %#v", me)
	}

	// A symbolic link to a directory is read when given, not followed
	// inside a directory.
	if err := os.WriteFile(filepath.Join(empty, "a.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(empty, link); err != nil {
		t.Skip(err)
	}
	if err := os.Symlink(empty, filepath.Join(empty, "loop.yaml")); err != nil {
		t.Fatal(err)
	}
	objs, err := Read(context.Background(), []string{link}, Options{Recursive: true})
	if err != nil || len(objs) != 1 || objs[0].Source.File != filepath.Join(link, "a.yaml") {
		t.Errorf("symbolic links: %v %v", objs, err)
	}
}

func TestCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	objs, err := Read(ctx, []string{"../testdata/manifest/valid"}, Options{})
	if !errors.Is(err, context.Canceled) || objs != nil {
		t.Errorf("got %v, %v", objs, err)
	}
}

func TestErrorsAreTyped(t *testing.T) {
	_, err := Parse(context.Background(), "f.yaml", []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n---\na: [\n"))
	var es Errors
	if !errors.As(err, &es) || len(es) != 2 {
		t.Fatalf("not Errors: %#v", err)
	}
	if !errors.Is(err, ErrRequired) || es[0].Path != "metadata.name" || es[0].Object != "ConfigMap" || es[0].Source != (Source{File: "f.yaml", Doc: 1, Line: 1}) {
		t.Errorf("first: %#v", es[0])
	}
	var se *SyntaxError
	if !errors.As(es[1], &se) || se.Line != 5 || es[1].Source.Doc != 2 {
		t.Errorf("second: %#v", es[1])
	}
}

func TestSourceString(t *testing.T) {
	for _, c := range []struct {
		s    Source
		want string
	}{
		{Source{File: "deploy/app.yaml", Doc: 2, Line: 14}, "deploy/app.yaml#2 (line 14)"},
		{Source{File: "deploy/list.yaml", Doc: 1, Item: 3, Line: 9}, "deploy/list.yaml#1 item 3 (line 9)"},
		{Source{File: "-", Doc: 1, Line: 1}, "-#1 (line 1)"},
		{Source{File: "deploy/missing.yaml"}, "deploy/missing.yaml"},
	} {
		if got := c.s.String(); got != c.want {
			t.Errorf("%#v: got %q, want %q", c.s, got, c.want)
		}
	}
}

// TestUTF16 reads files that Windows tools write in UTF-16 with a byte
// order mark, as kubectl does.
func TestUTF16(t *testing.T) {
	text := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: utf16\ndata:\n  a: é☺\n"
	for _, c := range []struct {
		name string
		bom  []byte
		word func(u uint16) []byte
	}{
		{"little endian", []byte{0xFF, 0xFE}, func(u uint16) []byte { return []byte{byte(u), byte(u >> 8)} }},
		{"big endian", []byte{0xFE, 0xFF}, func(u uint16) []byte { return []byte{byte(u >> 8), byte(u)} }},
	} {
		data := append([]byte(nil), c.bom...)
		for _, r := range text {
			data = append(data, c.word(uint16(r))...)
		}
		objs, err := Parse(context.Background(), "w.yaml", data)
		if err != nil || len(objs) != 1 || objs[0].Obj["data"].(map[string]any)["a"] != "é☺" {
			t.Errorf("%s: %v %v", c.name, objs, err)
		}
	}
}
