package manifest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// kubectlRead reads a stream as kubectl apply -f does: the decoder of
// cli-runtime's StreamVisitor (YAMLOrJSONDecoder, sigs.k8s.io/yaml, go-yaml
// v2), the unstructured JSON scheme, and FlattenListVisitor's list
// extraction, without the REST mapping.
func kubectlRead(data []byte) ([]map[string]any, error) {
	d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []map[string]any
	for {
		ext := runtime.RawExtension{}
		if err := d.Decode(&ext); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, err
		}
		raw := bytes.TrimSpace(ext.Raw)
		if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
			continue
		}
		obj, _, err := unstructured.UnstructuredJSONScheme.Decode(raw, nil, nil)
		if err != nil {
			return nil, err
		}
		if !meta.IsListType(obj) {
			out = append(out, obj.(*unstructured.Unstructured).Object)
			continue
		}
		items, err := meta.ExtractList(obj)
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			u, ok := it.(*unstructured.Unstructured)
			if !ok || meta.IsListType(u) {
				return nil, fmt.Errorf("unexpected list item %T", it)
			}
			out = append(out, u.Object)
		}
	}
}

// sameAsKubectl are inputs that kubectl reads without error; Parse must
// read the same objects from them.
var sameAsKubectl = map[string]string{
	"booleans": `apiVersion: v1
kind: ConfigMap
metadata: {name: booleans}
spec:
  l: [y, Y, yes, Yes, YES, on, On, ON, true, True, TRUE, n, N, no, No, NO, off, Off, OFF, false, False, FALSE]
  notBooleans: [yES, oN, tRUE, "yes", 'no', ye, nope, offf]
`,
	"numbers": `apiVersion: v1
kind: ConfigMap
metadata: {name: numbers}
spec:
  l: [1, -1, +1, 1.0, -1.0, 1e3, 1E3, 1.5, 1.5e-3, 0777, 0o17, 0x1F, -0x1F, 0b101, -0b101, 1_000, 08, 09.5,
      9223372036854775807, -9223372036854775808, 9223372036854775808, 18446744073709551615, 18446744073709551616,
      1e20, 1e21, 123456789012345678901234, .5, -.5, +.5, 1., -0, -0.0, 0.0, 12:30, 1e400, 0x, 1__0, 3.14.15, 2e, 1_0.5]
`,
	"nulls and strings": `apiVersion: v1
kind: ConfigMap
metadata: {name: strings}
spec:
  nulls: [~, null, Null, NULL, ]
  empty:
  strings: ["", '', "a\tb\x41\u00e9", 'it''s', plain text, "null", nULL, -, --, ---a, <<, "<<", '~']
  literal: |
    line 1
      line 2
  folded: >
    a
    b

  keep: |+
    kept

  strip: |-
    stripped
`,
	"timestamps": `apiVersion: v1
kind: ConfigMap
metadata: {name: timestamps}
spec:
  l: [2001-12-14, 2001-12-14t21:59:43.10-05:00, 2001-12-14T21:59:43Z, 2001-12-14 21:59:43.10, 2001-12-14 21:59:43.10 -5, 2001-13-14, 1999-1-1]
  ts: !!timestamp 2001-12-14
`,
	"tags": `apiVersion: v1
kind: ConfigMap
metadata: {name: tags}
spec:
  str: !!str 123
  strBool: !!str yes
  int: !!int "12"
  float: !!float 1
  floatQuoted: !!float "2.5"
  bool: !!bool yes
  boolQuoted: !!bool "on"
  nullValue: !!null ~
  binary: !!binary aGVsbG8=
  binaryBlock: !!binary |
    aGVs
    bG8=
  binaryInvalidUTF8: !!binary /w==
  custom: !custom foo
  customInt: !custom 12
  verbatim: !<tag:yaml.org,2002:str> 12
  mapTag: !!map {a: 1}
  seqTag: !!seq [1]
  setTag: !!set {a, b}
`,
	"keys": `apiVersion: v1
kind: ConfigMap
metadata: {name: keys}
data:
  1: a
  -2: b
  1.5: c
  0.1: c2
  1e3: c3
  true: d
  no: e
  0x10: f
  1_0: f2
  2001-12-14: g
  .inf: h
  -.inf: h2
  .nan: h3
  ? complex
  : i
  "quoted key": j
  'single': k
  ~x: l
  !!str 0x11: m
`,
	"merge keys": `apiVersion: v1
kind: ConfigMap
metadata:
  name: merge
  labels: &labels
    app: web
    tier: frontend
base: &base {a: 1, b: 2}
other: &other {b: 3, c: 4}
spec:
  one:
    <<: *base
    c: 5
  many:
    <<: [*other, *base]
  overrideAfter:
    b: 9
    <<: *base
  inline:
    <<: {x: 1}
    y: 2
  labels:
    <<: *labels
    version: v1
  mergeTag:
    !!merge <<: *base
  quotedIsKey:
    "<<": not a merge
`,
	"anchors": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
      - name: a
        env: &env
        - name: MODE
          value: production
        resources: &res {limits: {cpu: 500m}}
      - name: b
        env: *env
        resources: *res
      - &c {name: c, image: nginx}
      - *c
`,
	"unicode and escapes": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: unicode}\ndata:\n  a: \"\\u263A \\U0001F600 \\x41 \\0 \\e \\N \\_ \\L \\P\"\n  b: ☺ 😀\n  c: 'tab\there'\n  d: \"multi\n    line\n\n    folded\"\n",
	"crlf":                "apiVersion: v1\r\nkind: ConfigMap\r\nmetadata:\r\n  name: crlf\r\ndata:\r\n  a: |\r\n    x\r\n    y\r\n---\r\napiVersion: v1\r\nkind: ConfigMap\r\nmetadata:\r\n  name: crlf2\r\n",
	"documents": `# leading comment
---
apiVersion: v1
kind: ConfigMap
metadata: {name: one}
---
# only a comment
---

---
null
---
~
--- # comment after the separator
apiVersion: v1
kind: ConfigMap
metadata: {name: two}
...
---
apiVersion: v1
kind: ConfigMap
metadata: {name: three}
---
`,
	"list": `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: a}
- apiVersion: v1
  kind: Secret
  metadata: {name: booleans}
  stringData: {x: "1"}
`,
	"typed list": `apiVersion: apps/v1
kind: DeploymentList
metadata: {resourceVersion: "12"}
items:
- metadata: {name: a}
  spec: {replicas: 1}
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: booleans}
`,
	"empty list":        "apiVersion: v1\nkind: List\nitems: []\n",
	"json":              `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"j"},"data":{"a":"1","n":1.0,"big":1e3,"f":1.5,"nested":{"l":[1,2.5,true,null,"s"]}}}`,
	"json stream":       "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\"}}\n{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"b\"}}{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\"}}\n\n",
	"json list":         `{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}]}`,
	"json then yaml":    "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\"}}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n",
	"yaml flow as json": "{apiVersion: v1, kind: ConfigMap, metadata: {name: flow}, data: {a: yes},}\n",
	"json with escapes": `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"e"},"data":{"a":"\u00e9\n\"<&>\"","b":"\ud83d\ude00"}}`,
	"json in yaml":      "apiVersion: v1\nkind: ConfigMap\nmetadata: {\"name\": \"jy\"}\ndata: {\"a\": \"1\", \"b\": 2}\n",
	"bom":               "\xef\xbb\xbfapiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bom\n",
	"explicit doc end":  "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: e\n...\n",
	"indentless list":   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: i\nspec:\n  a:\n  - 1\n  - - 2\n    - 3\n  - {b: 4}\n  -   c: 5\n      d: 6\n",
}

func TestSameAsKubectl(t *testing.T) {
	for name, in := range sameAsKubectl {
		t.Run(name, func(t *testing.T) {
			compareWithKubectl(t, []byte(in), true)
		})
	}
}

// TestTestdataSameAsKubectl compares the valid files of testdata.
func TestTestdataSameAsKubectl(t *testing.T) {
	files, err := filepath.Glob("../testdata/manifest/valid/*")
	if err != nil || len(files) == 0 {
		t.Fatalf("no files: %v", err)
	}
	for _, f := range files {
		if fi, err := os.Stat(f); err != nil || fi.IsDir() {
			continue
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			compareWithKubectl(t, data, true)
		})
	}
}

// compareWithKubectl requires Parse to read the objects kubectl reads from
// data. With mustRead, kubectl must read data without error; otherwise
// inputs kubectl rejects are skipped.
func compareWithKubectl(t *testing.T, data []byte, mustRead bool) {
	t.Helper()
	want, kerr := kubectlRead(data)
	if kerr != nil {
		if mustRead {
			t.Fatalf("kubectl: %v", kerr)
		}
		return
	}
	objs, err := Parse(context.Background(), "in.yaml", data)
	if err != nil {
		t.Fatalf("Parse: %v\nkubectl read: %v", err, want)
	}
	got := make([]map[string]any, len(objs))
	for i, o := range objs {
		got[i] = o.Obj
	}
	if len(want) == 0 {
		want = nil
	}
	if len(got) == 0 {
		got = nil
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("objects differ\n got: %s\nwant: %s", dump(got), dump(want))
	}
}

// dump prints values with their Go types, so that int64 1 and float64 1
// differ.
func dump(v any) string {
	var b strings.Builder
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case []map[string]any:
			for _, m := range x {
				walk(m)
				b.WriteString("\n      ")
			}
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sortStrings(keys)
			b.WriteString("{")
			for i, k := range keys {
				if i > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "%q: ", k)
				walk(x[k])
			}
			b.WriteString("}")
		case []any:
			b.WriteString("[")
			for i, e := range x {
				if i > 0 {
					b.WriteString(", ")
				}
				walk(e)
			}
			b.WriteString("]")
		default:
			fmt.Fprintf(&b, "%T(%#v)", v, v)
		}
	}
	walk(v)
	return b.String()
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// TestWhereWeDiffer pins, for each place where this package is stricter
// than kubectl, what kubectl does, so that the package documentation stays
// true.
func TestWhereWeDiffer(t *testing.T) {
	const head = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"
	cases := []struct {
		name    string
		in      string
		kubectl string // kubectl's objects as dump prints them, or "error: " and a part of its error
		ours    string // a part of our error
	}{{
		name:    "duplicate key: kubectl keeps the last value",
		in:      head + "data:\n  a: first\n  a: second\n",
		kubectl: `{"apiVersion": string("v1"), "data": {"a": string("second")}, "kind": string("ConfigMap"), "metadata": {"name": string("x")}}`,
		ours:    `data.a: line 7: duplicate key "a" (first at line 6)`,
	}, {
		name:    "keys equal once converted: kubectl keeps one of them at random",
		in:      head + "data:\n  1: a\n  \"1\": b\n",
		kubectl: "",
		ours:    `data.1: line 7: duplicate key "1" (first at line 6)`,
	}, {
		name:    "nested deeper than value.MaxDepth: kubectl reads it",
		in:      head + "data: " + strings.Repeat("[", 1001) + strings.Repeat("]", 1001) + "\n",
		kubectl: "",
		ours:    "line 5: nested deeper than 1000 levels",
	}, {
		name:    "text after ... without ---: kubectl drops it",
		in:      head + "...\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dropped\n",
		kubectl: `{"apiVersion": string("v1"), "kind": string("ConfigMap"), "metadata": {"name": string("x")}}`,
		ours:    "line 5: after the end of the document: invalid YAML: did not find expected <document start>",
	}, {
		name:    "a second flow mapping without ---: kubectl drops it",
		in:      "{apiVersion: v1, kind: ConfigMap, metadata: {name: x}}\n{apiVersion: v1, kind: ConfigMap, metadata: {name: dropped}}\n",
		kubectl: `{"apiVersion": string("v1"), "kind": string("ConfigMap"), "metadata": {"name": string("x")}}`,
		ours:    "manifest: in.yaml#1 (line 1): line 1: after the end of the document: invalid YAML: did not find expected <document start>",
	}, {
		name:    "billion laughs: kubectl refuses it too",
		in:      mustRead(t, "../testdata/manifest/invalid/alias-bomb.yaml"),
		kubectl: "error: document contains excessive aliasing",
		ours:    "aliases expand to more than 10000 values",
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			objs, kerr := kubectlRead([]byte(c.in))
			switch {
			case strings.HasPrefix(c.kubectl, "error: "):
				if kerr == nil || !strings.Contains(kerr.Error(), strings.TrimPrefix(c.kubectl, "error: ")) {
					t.Errorf("kubectl: got %v, want %s", kerr, c.kubectl)
				}
			case kerr != nil:
				t.Errorf("kubectl fails: %v", kerr)
			case c.kubectl != "" && strings.TrimSpace(dump(objs)) != c.kubectl:
				t.Errorf("kubectl reads %s\nwant %s", dump(objs), c.kubectl)
			}
			_, err := Parse(context.Background(), "in.yaml", []byte(c.in))
			if err == nil || !strings.Contains(err.Error(), c.ours) {
				t.Errorf("ours: got %v, want %s", err, c.ours)
			}
		})
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
