package value_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/konverge/konverge/value"
)

type obj = map[string]any
type list = []any

var decodeValid = []struct {
	name string
	in   string
	want any
}{
	{"null", `null`, nil},
	{"true", `true`, true},
	{"false", `false`, false},
	{"zero", `0`, int64(0)},
	{"negative zero integer", `-0`, int64(0)},
	{"negative zero float", `-0.0`, math.Copysign(0, -1)},
	{"int", `42`, int64(42)},
	{"negative int", `-17`, int64(-17)},
	{"max int64", `9223372036854775807`, int64(math.MaxInt64)},
	{"min int64", `-9223372036854775808`, int64(math.MinInt64)},
	{"max int64 plus one", `9223372036854775808`, float64(1 << 63)},
	{"min int64 minus one", `-9223372036854775809`, float64(-(1 << 63))},
	{"twenty digits", `12345678901234567890`, 12345678901234567890.0},
	{"max uint64", `18446744073709551615`, float64(1 << 64)},
	{"integral float", `1.0`, 1.0},
	{"exponent makes a float", `1e2`, 100.0},
	{"capital exponent", `1E+2`, 100.0},
	{"negative exponent", `25e-1`, 2.5},
	{"fraction", `3.14`, 3.14},
	{"zero exponent", `0e0`, 0.0},
	{"underflow to zero", `1e-400`, 0.0},
	{"negative underflow", `-1e-400`, math.Copysign(0, -1)},
	{"smallest denormal", `5e-324`, 5e-324},
	{"max float", `1.7976931348623157e308`, math.MaxFloat64},
	{"empty string", `""`, ""},
	{"string", `"nginx:1.27"`, "nginx:1.27"},
	{"simple escapes", `"\"\\\/\b\f\n\r\t"`, "\"\\/\b\f\n\r\t"},
	{"unicode escape", `"\u00e9\u4e16"`, "é世"},
	{"escaped NUL", `"a\u0000b"`, "a\x00b"},
	{"surrogate pair", `"\ud83d\ude00"`, "😀"},
	{"upper-case surrogate pair", `"\uD834\uDD1E"`, "𝄞"},
	{"lone high surrogate", `"\ud800"`, "\uFFFD"},
	{"lone low surrogate", `"\udc00x"`, "\uFFFDx"},
	{"high surrogate then letter escape", `"\ud800\u0041"`, "\uFFFDA"},
	{"two high surrogates", `"\ud800\ud800\udc00"`, "\uFFFD𐀀"},
	{"reversed pair", `"\udc00\ud800"`, "\uFFFD\uFFFD"},
	{"high surrogate then backslash", `"\ud800\\"`, "\uFFFD\\"},
	{"raw UTF-8", `"日本語 ✓"`, "日本語 ✓"},
	{"raw U+FFFD", "\"\uFFFD\"", "\uFFFD"},
	{"raw U+2028", "\"a\u2028b\"", "a\u2028b"},
	{"DEL is allowed", "\"\x7f\"", "\x7f"},
	{"invalid UTF-8 byte", "\"a\xffb\"", "a\uFFFDb"},
	{"invalid UTF-8 after escape", "\"\\n\xff\"", "\n\uFFFD"},
	{"truncated UTF-8", "\"\xe6\x97\"", "\uFFFD\uFFFD"},
	{"UTF-8 encoded surrogate", "\"\xed\xa0\x80\"", "\uFFFD\uFFFD\uFFFD"},
	{"overlong UTF-8", "\"\xc0\xaf\"", "\uFFFD\uFFFD"},
	{"empty object", `{}`, obj{}},
	{"empty list", `[]`, list{}},
	{"nested empties", `[{},[],[[]],{"a":{}}]`, list{obj{}, list{}, list{list{}}, obj{"a": obj{}}}},
	{"object", `{"a":1,"b":"x","c":null,"d":[true]}`, obj{"a": int64(1), "b": "x", "c": nil, "d": list{true}}},
	{"escaped key", `{"\u0061\n":1}`, obj{"a\n": int64(1)}},
	{"keys differing in case", `{"a":1,"A":2}`, obj{"a": int64(1), "A": int64(2)}},
	{"empty key", `{"":0}`, obj{"": int64(0)}},
	{"whitespace everywhere", " \t\r\n{ \"a\" : [ 1 , 2 ] , \"b\" :\n{ } } \n", obj{"a": list{int64(1), int64(2)}, "b": obj{}}},
	{"mixed numbers", `[1,1.5,-2,1e3,-0]`, list{int64(1), 1.5, int64(-2), 1000.0, int64(0)}},
}

// decodeInvalid are documents Decode rejects; offset is where the
// SyntaxError points and msg what its message says.
var decodeInvalid = []struct {
	name   string
	in     string
	offset int
	msg    string
}{
	{"empty", ``, 0, "unexpected end of input"},
	{"only whitespace", "  \n", 3, "unexpected end of input"},
	{"open object", `{`, 1, "expected a string key"},
	{"key without colon", `{"a"`, 4, "expected ':' after object key"},
	{"key then value", `{"a" 1}`, 5, "expected ':' after object key"},
	{"colon without value", `{"a":`, 5, "unexpected end of input"},
	{"unterminated object", `{"a":1`, 6, "unexpected end of input in object"},
	{"trailing comma in object", `{"a":1,}`, 7, "expected a string key"},
	{"number key", `{1:2}`, 1, "expected a string key"},
	{"single-quoted key", `{'a':1}`, 1, "expected a string key"},
	{"missing comma in object", `{"a":1 "b":2}`, 7, "expected ',' or '}' in object"},
	{"open list", `[`, 1, "unexpected end of input"},
	{"unterminated list", `[1`, 2, "unexpected end of input in array"},
	{"trailing comma in list", `[1,]`, 3, "unexpected ']'"},
	{"leading comma in list", `[,1]`, 1, "unexpected ','"},
	{"missing comma in list", `[1 2]`, 3, "expected ',' or ']' in array"},
	{"list closed by brace", `[1}`, 2, "expected ',' or ']' in array"},
	{"stray close", `]`, 0, "unexpected ']'"},
	{"short literal", `tru`, 0, "invalid literal, expected true"},
	{"wrong-case literal", `nulL`, 0, "invalid literal, expected null"},
	{"NaN", `NaN`, 0, "unexpected 'N'"},
	{"Infinity", `-Infinity`, 1, "invalid number"},
	{"single quotes", `'a'`, 0, `unexpected '\''`},
	{"two documents", `true false`, 5, "unexpected 'f' after the document"},
	{"garbage after object", `{"a":1}x`, 7, "unexpected 'x' after the document"},
	{"leading zero", `01`, 1, "unexpected '1' after the document"},
	{"leading zero in list", `[01]`, 2, "expected ',' or ']' in array"},
	{"minus alone", `-`, 1, "invalid number"},
	{"minus letter", `-a`, 1, "invalid number"},
	{"plus sign", `+1`, 0, "unexpected '+'"},
	{"leading dot", `.5`, 0, "unexpected '.'"},
	{"trailing dot", `1.`, 2, "no digits after '.'"},
	{"dot exponent", `1.e5`, 2, "no digits after '.'"},
	{"empty exponent", `1e`, 2, "no digits in exponent"},
	{"signed empty exponent", `1e+`, 3, "no digits in exponent"},
	{"hex number", `0x10`, 1, "unexpected 'x' after the document"},
	{"float overflow", `1e400`, 0, "number 1e400 out of range"},
	{"float overflow in list", `[1, -1e999]`, 4, "number -1e999 out of range"},
	{"integer overflow beyond float", `1` + strings.Repeat("0", 400), 0, "out of range"},
	{"unterminated string", `"abc`, 4, "unterminated string"},
	{"unterminated escape", `"a\`, 3, "unterminated string"},
	{"unterminated after escape", `"a\n`, 4, "unterminated string"},
	{"bad escape", `"\x41"`, 2, `invalid escape \x`},
	{"escaped single quote", `"\'"`, 2, `invalid escape \'`},
	{"short unicode escape", `"\u12"`, 3, `invalid \u escape`},
	{"bad hex in unicode escape", `"\u12G4"`, 3, `invalid \u escape`},
	{"bad second escape of pair", `"\ud800\u"`, 9, `invalid \u escape`},
	{"raw tab in string", "\"a\tb\"", 2, "control character in string"},
	{"raw NUL in string", "\"a\x00\"", 2, "control character in string"},
	{"raw newline after escape", "\"\\n\n\"", 3, "control character in string"},
	{"byte order mark", "\xef\xbb\xbf{}", 0, "unexpected byte 0xef"},
	{"invalid UTF-8 outside strings", "[\xff]", 1, "unexpected byte 0xff"},
	{"duplicate key", `{"a":1,"a":2}`, 7, `duplicate key "a"`},
	{"duplicate key after escape", `{"a":1,"\u0061":2}`, 7, `duplicate key "a"`},
	{"duplicate key nested", `{"a":{"b":1,"c":2,"b":3}}`, 18, `duplicate key "b"`},
	{"duplicate empty key", `{"":1,"":2}`, 6, `duplicate key ""`},
	{"duplicate replaced byte", "{\"\xff\":1,\"\xfe\":2}", 7, "duplicate key \"\uFFFD\""},
	{"duplicate key in large object", largeObject(40, "k7"), strings.LastIndex(largeObject(40, "k7"), `"k7"`), `duplicate key "k7"`},
	{"duplicate key just past small", largeObject(17, "k16"), strings.LastIndex(largeObject(17, "k16"), `"k16"`), `duplicate key "k16"`},
	{"duplicate key in small object", largeObject(16, "k0"), strings.LastIndex(largeObject(16, "k0"), `"k0"`), `duplicate key "k0"`},
}

// largeObject is an object with members k0 … k(n-1), and then dup again
// when dup is set.
func largeObject(n int, dup string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%d":%d`, i, i)
	}
	if dup != "" {
		fmt.Fprintf(&b, `,%q:true`, dup)
	}
	b.WriteByte('}')
	return b.String()
}

func TestDecode(t *testing.T) {
	for _, tc := range decodeValid {
		t.Run(tc.name, func(t *testing.T) {
			got, err := value.Decode([]byte(tc.in))
			if err != nil {
				t.Fatalf("Decode(%q): %v", tc.in, err)
			}
			if !identical(got, tc.want) {
				t.Errorf("Decode(%q) = %#v, want %#v", tc.in, got, tc.want)
			}
		})
	}
}

func TestDecodeInvalid(t *testing.T) {
	for _, tc := range decodeInvalid {
		t.Run(tc.name, func(t *testing.T) {
			got, err := value.Decode([]byte(tc.in))
			var se *value.SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Decode(%q) = %#v, %v; want a *SyntaxError", tc.in, got, err)
			}
			if got != nil {
				t.Errorf("Decode(%q) returned %#v with its error", tc.in, got)
			}
			if se.Offset != tc.offset || !strings.Contains(se.Msg, tc.msg) {
				t.Errorf("Decode(%q) error at offset %d: %q; want offset %d: %q", tc.in, se.Offset, se.Msg, tc.offset, tc.msg)
			}
			want := fmt.Sprintf("value: invalid JSON at offset %d: %s", se.Offset, se.Msg)
			if err.Error() != want {
				t.Errorf("Error() = %q, want %q", err.Error(), want)
			}
		})
	}
}

func TestDecodeLargeObject(t *testing.T) {
	// Objects past the size where duplicates are found with a map instead of
	// a scan, and a big one that a quadratic check would take seconds on.
	for _, n := range []int{15, 16, 17, 18, 100, 100_000} {
		v, err := value.DecodeObject([]byte(largeObject(n, "")))
		if err != nil {
			t.Fatalf("%d members: %v", n, err)
		}
		if len(v) != n {
			t.Fatalf("%d members: decoded %d", n, len(v))
		}
		for i := range n {
			if got := v["k"+strconv.Itoa(i)]; got != int64(i) {
				t.Fatalf("%d members: k%d = %#v", n, i, got)
			}
		}
	}
	// Members of nested objects are kept apart from their parent's.
	in := `{"a":` + largeObject(20, "") + `,"b":{"a":1},"k0":` + largeObject(3, "") + `}`
	v, err := value.Decode([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	ref, ok, why := reference([]byte(in))
	if !ok {
		t.Fatal(why)
	}
	if !identical(v, ref) {
		t.Errorf("Decode(%s) = %v, want %v", in, v, ref)
	}
}

func TestDecodeObject(t *testing.T) {
	v, err := value.DecodeObject([]byte(` {"kind":"Pod"} `))
	if err != nil || v["kind"] != "Pod" || len(v) != 1 {
		t.Errorf("DecodeObject = %v, %v", v, err)
	}
	for in, msg := range map[string]string{
		`[]`:   "expected an object, got list",
		`null`: "expected an object, got null",
		`"x"`:  "expected an object, got string",
		`1.5`:  "expected an object, got number",
		`{`:    "expected a string key",
	} {
		v, err := value.DecodeObject([]byte(in))
		var se *value.SyntaxError
		if !errors.As(err, &se) || se.Msg != msg || v != nil {
			t.Errorf("DecodeObject(%s) = %v, %v; want a SyntaxError %q", in, v, err, msg)
		}
	}
}

func TestDecodeObjectWithout(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"metadata":{"name":"a","managedFields":[{"f:x":{"\"}]":{}}},"a\u00e9"]},"spec":{"managedFields":1}}`,
			`{"metadata":{"name":"a"},"spec":{"managedFields":1}}`},
		{`{"metadata":{"managedFields":null,"x":[{"managedFields":2}]}}`, `{"metadata":{"x":[{"managedFields":2}]}}`},
		{`{"metadata":[{"managedFields":2}],"managedFields":3}`, `{"metadata":[{"managedFields":2}],"managedFields":3}`},
		{`{"metadata":{"managedFields":"x"}, "kind":"Pod"}`, `{"metadata":{},"kind":"Pod"}`},
		{`{"metadata":{ "managedFields" : [ ] }}`, `{"metadata":{}}`},
	} {
		got, err := value.DecodeObjectWithout([]byte(c.in), "metadata", "managedFields")
		want, _ := value.DecodeObject([]byte(c.want))
		if err != nil || !value.Equal(got, want) {
			t.Errorf("DecodeObjectWithout(%s) = %v, %v; want %v", c.in, got, err, want)
		}
	}
	raw, err := os.ReadFile("testdata/deployment.json")
	if err != nil {
		t.Fatal(err)
	}
	full, err := value.DecodeObject(raw)
	if err != nil {
		t.Fatal(err)
	}
	lean, err := value.DecodeObjectWithout(raw, "metadata", "managedFields")
	if err != nil {
		t.Fatal(err)
	}
	md := full["metadata"].(map[string]any)
	if _, ok := md["managedFields"]; !ok {
		t.Fatal("testdata/deployment.json has no managedFields")
	}
	delete(md, "managedFields")
	if !value.Equal(lean, full) {
		t.Errorf("DecodeObjectWithout differs from DecodeObject less managedFields")
	}
	for _, in := range []string{
		`{"metadata":{"managedFields":[{"a":"b}]}}`,
		`{"metadata":{"managedFields":[{"a":1}`,
		`{"metadata":{"managedFields":` + strings.Repeat("[", value.MaxDepth) + strings.Repeat("]", value.MaxDepth) + `}}`,
		"{\"metadata\":{\"managedFields\":\"\x01\"}}",
		`{"metadata":{"managedFields":tru}}`,
		`{"metadata":{"managedFields":[]}} x`,
		`[]`,
	} {
		if v, err := value.DecodeObjectWithout([]byte(in), "metadata", "managedFields"); err == nil {
			t.Errorf("DecodeObjectWithout(%.60s) = %v, want an error", in, v)
		}
	}
}

func TestDecodeDepth(t *testing.T) {
	nest := func(open, close string, n int) []byte {
		return []byte(strings.Repeat(open, n) + "1" + strings.Repeat(close, n))
	}
	for _, tc := range []struct {
		name        string
		open, close string
	}{
		{"lists", "[", "]"},
		{"objects", `{"a":`, "}"},
		{"both", `[{"a":`, "}]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			per := 1
			if tc.name == "both" {
				per = 2
			}
			in := nest(tc.open, tc.close, value.MaxDepth/per)
			v, err := value.Decode(in)
			if err != nil {
				t.Fatalf("%d levels: %v", value.MaxDepth, err)
			}
			if depth(v) != value.MaxDepth {
				t.Fatalf("%d levels decoded %d deep", value.MaxDepth, depth(v))
			}

			in = append([]byte(tc.open[:1]), in...) // one level more
			in = append(in, tc.close[len(tc.close)-1])
			if tc.open == `{"a":` {
				in = nest(tc.open, tc.close, value.MaxDepth+1)
			}
			_, err = value.Decode(in)
			var se *value.SyntaxError
			if !errors.As(err, &se) || se.Msg != "document nested deeper than 1000 levels" {
				t.Fatalf("%d levels: %v, want the nesting error", value.MaxDepth+1, err)
			}
			if c := in[se.Offset]; c != '[' && c != '{' {
				t.Errorf("error offset %d is at %q, not at an opening bracket", se.Offset, in[se.Offset])
			}
		})
	}
}

// TestDecodeDeep checks that a document far deeper than MaxDepth fails at
// level MaxDepth+1, without reading the rest (so quickly, and without
// blowing the stack): the error is at offset MaxDepth whatever the length.
func TestDecodeDeep(t *testing.T) {
	for _, n := range []int{10_000, 10_000_000} {
		in := bytes.Repeat([]byte("["), n)
		_, err := value.Decode(in)
		var se *value.SyntaxError
		if !errors.As(err, &se) || se.Offset != value.MaxDepth || !strings.Contains(se.Msg, "nested deeper") {
			t.Fatalf("%d levels: %v, want the nesting error at offset %d", n, err, value.MaxDepth)
		}
	}
	in := []byte(strings.Repeat(`{"a":`, 10_000) + "1" + strings.Repeat("}", 10_000))
	_, err := value.Decode(in)
	var se *value.SyntaxError
	if !errors.As(err, &se) || se.Offset != 5*value.MaxDepth {
		t.Fatalf("10000 nested objects: %v, want the nesting error at offset %d", err, 5*value.MaxDepth)
	}
}

func depth(v any) int {
	switch x := v.(type) {
	case map[string]any:
		d := 0
		for _, el := range x {
			d = max(d, depth(el))
		}
		return d + 1
	case []any:
		d := 0
		for _, el := range x {
			d = max(d, depth(el))
		}
		return d + 1
	}
	return 0
}

// differentialCorpus are inputs on which Decode must agree with encoding/json
// (see reference), valid or not.
var differentialCorpus = []string{
	`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"nginx","labels":{"app":"nginx"}},"spec":{"replicas":3}}`,
	`"\u003cscript\u003e \u0026amp; \u2028\u2029"`,
	`"\ud83d\ude00\ud83d"`,
	`"\ud83d\ude00\ude00"`,
	`"\uDBFF\uDFFF"`,
	`"\uD800\uDBFF"`,
	`"\uD800\"`,
	`"\uD800\u12"`,
	`"\uD800\uD800"`,
	`"\uDFFF"`,
	`"\u0000\u001f\u007f\u0080\u00ff"`,
	`"\uFFFE\uFFFF\uFEFF"`,
	"\"\xf0\x9f\x98\x80\xf0\x9f\x98\"",
	"\"\xf4\x90\x80\x80\"",
	"\"\xed\xbf\xbf\"",
	"\"\x80\x80\"",
	"{\"\xff\":\"\xfe\"}",
	"\"\xc3\"",
	"\"\xc3\"x",
	"\"\x1f\"",
	"\"\x7f\"",
	"\"\\u00e9\xe9\"",
	`9223372036854775807`,
	`9223372036854775808`,
	`-9223372036854775808`,
	`-9223372036854775809`,
	`18446744073709551616`,
	`123456789012345678901234567890`,
	`1` + strings.Repeat("0", 308),
	`1` + strings.Repeat("0", 309),
	`-0`,
	`-0.0`,
	`-0e0`,
	`0.0000000000000000000000000000001`,
	`1e400`,
	`-1e400`,
	`1e-400`,
	`1E308`,
	`2e308`,
	`1.7976931348623157e308`,
	`1.7976931348623159e308`,
	`4.9e-324`,
	`2.4e-324`,
	`123456789.0`,
	`1e21`,
	`1e-7`,
	`00`,
	`-01`,
	`1.0e`,
	`1e+-1`,
	` `,
	"\t\n\r 1 \t\n\r",
	"\f1",
	"\v1",
	"\u00a01",
	`[[[]],{},{"":{}},[{}]]`,
	`{"a":[],"b":{},"c":[{}],"d":""}`,
	`[ ]`,
	`{ }`,
	`[1,2,3,]`,
	`{"a":1,"a":1}`,
	`{"a":1,"b":{"a":1}}`,
	`{"a":{"b":1},"c":{"b":2}}`,
	`[true,false,null,"",0,-1,1.5]`,
	`nul`,
	`true1`,
	`"a"1`,
	`{}{}`,
	`[]]`,
	`"\/"`,
	`"\a"`,
	`"\U0041"`,
	"\"\\\n\"",
}

func TestDecodeDifferential(t *testing.T) {
	inputs := append([]string{}, differentialCorpus...)
	for _, tc := range decodeValid {
		inputs = append(inputs, tc.in)
	}
	for _, tc := range decodeInvalid {
		inputs = append(inputs, tc.in)
	}
	for _, in := range inputs {
		checkAgainstReference(t, []byte(in))
	}
}

// checkAgainstReference fails t unless Decode(in) is what reference decodes.
func checkAgainstReference(t *testing.T, in []byte) {
	t.Helper()
	got, err := value.Decode(in)
	if err != nil {
		var se *value.SyntaxError
		if !errors.As(err, &se) {
			t.Fatalf("Decode(%q) error %T %v is not a *SyntaxError", in, err, err)
		}
		if se.Offset < 0 || se.Offset > len(in) {
			t.Fatalf("Decode(%q) error offset %d outside the input", in, se.Offset)
		}
	}
	want, ok, why := reference(in)
	switch {
	case ok && err != nil:
		t.Fatalf("Decode(%q) = %v; encoding/json decodes %#v", in, err, want)
	case !ok && err == nil:
		t.Fatalf("Decode(%q) = %#v; encoding/json: %s", in, got, why)
	case ok && !identical(got, want):
		t.Fatalf("Decode(%q) = %#v; encoding/json decodes %#v", in, got, want)
	}
}

// reference decodes in with encoding/json, following the rules Decode
// documents: numbers are int64 when they parse as one and have no '.', 'e'
// or 'E', float64 otherwise (and an error if that overflows); a repeated
// key in an object or nesting deeper than value.MaxDepth is an error. ok
// is false, and why says why, when in is not such a document.
func reference(in []byte) (v any, ok bool, why string) {
	if !json.Valid(in) {
		var x any
		return nil, false, fmt.Sprint(json.Unmarshal(in, &x))
	}
	dec := json.NewDecoder(bytes.NewReader(in))
	dec.UseNumber()
	v, err := refValue(dec, 0)
	if err != nil {
		return nil, false, err.Error()
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false, fmt.Sprintf("more after the document: %v", err)
	}
	return v, true, ""
}

func refValue(dec *json.Decoder, depth int) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok := tok.(type) {
	case json.Delim:
		if depth == value.MaxDepth {
			return nil, errors.New("too deep")
		}
		if tok == '[' {
			l := []any{}
			for dec.More() {
				el, err := refValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				l = append(l, el)
			}
			_, err := dec.Token() // ]
			return l, err
		}
		m := map[string]any{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			key := k.(string)
			if _, dup := m[key]; dup {
				return nil, fmt.Errorf("duplicate key %q", key)
			}
			m[key], err = refValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
		}
		_, err := dec.Token() // }
		return m, err
	case json.Number:
		return refNumber(string(tok))
	}
	return tok, nil // string, bool, nil
}

// refNumber is the number literal s as Decode documents it: an int64 when
// it parses as one and has no '.', 'e' or 'E', a float64 otherwise.
func refNumber(s string) (any, error) {
	if !strings.ContainsAny(s, ".eE") {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return i, nil
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// identical is stricter than value.Equal: Go types must match, and floats
// must have the same bits (so -0.0 differs from 0.0).
func identical(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || (x == nil) != (y == nil) || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !identical(xv, yv) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || (x == nil) != (y == nil) || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !identical(x[i], y[i]) {
				return false
			}
		}
		return true
	case float64:
		y, ok := b.(float64)
		return ok && math.Float64bits(x) == math.Float64bits(y)
	}
	return a == b
}

func TestInterner(t *testing.T) {
	in := value.NewInterner(3, "spec.containers", "spec.volumes.[].projected", "metadata.labels")
	doc := func(name, image, token string) []byte {
		return []byte(`{"metadata":{"name":"` + name + `","labels":{"app":"web"},"managedFields":[{"manager":"x"}]},` +
			`"spec":{"containers":[{"name":"app","image":"` + image + `"}],` +
			`"volumes":[{"name":"` + token + `","projected":{"sources":[{"configMap":{"name":"ca"}}]}}]}}`)
	}
	var objs []map[string]any
	for i, d := range [][]byte{doc("a", "nginx", "t1"), doc("b", "nginx", "t2"), doc("c", "redis", "t3")} {
		got, err := in.DecodeObjectWithout(d, "metadata", "managedFields")
		if err != nil {
			t.Fatal(err)
		}
		want, err := value.DecodeObjectWithout(d, "metadata", "managedFields")
		if err != nil || !value.Equal(got, want) {
			t.Fatalf("document %d: %v, want %v (%v)", i, got, want, err)
		}
		objs = append(objs, got)
	}
	containers := func(o map[string]any) *any { return &o["spec"].(map[string]any)["containers"].([]any)[0] }
	projected := func(o map[string]any) map[string]any {
		return o["spec"].(map[string]any)["volumes"].([]any)[0].(map[string]any)["projected"].(map[string]any)
	}
	labels := func(o map[string]any) map[string]any {
		return o["metadata"].(map[string]any)["labels"].(map[string]any)
	}
	if containers(objs[0]) != containers(objs[1]) || containers(objs[0]) == containers(objs[2]) {
		t.Errorf("containers not shared between equal documents only")
	}
	if fmt.Sprintf("%p", projected(objs[0])) != fmt.Sprintf("%p", projected(objs[1])) {
		t.Errorf("projected volume sources not shared")
	}
	if fmt.Sprintf("%p", labels(objs[0])) != fmt.Sprintf("%p", labels(objs[2])) {
		t.Errorf("labels not shared")
	}
	if in.Hits != 4 {
		t.Errorf("%d hits, want 4", in.Hits)
	}
	if _, err := in.DecodeObjectWithout([]byte(`{"spec":{"containers":[{"a":"b}]}}`), "metadata", "managedFields"); err == nil {
		t.Errorf("a malformed interned value decoded")
	}
}

func TestInternerShare(t *testing.T) {
	in := value.NewInterner(16, "spec.containers", "spec.volumes.[].projected")
	doc := []byte(`{"spec":{"containers":[{"image":"nginx","name":"app"}],"volumes":[{"name":"t1","projected":{"sources":[{"configMap":{"name":"ca"}}]}},{"name":"x"}]}}`)
	decoded, err := in.DecodeObjectWithout(doc, "metadata", "managedFields")
	if err != nil {
		t.Fatal(err)
	}
	written, err := value.DecodeObject(doc)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := value.Encode(written)
	shared := in.Share(written)
	if after, _ := value.Encode(written); string(after) != string(before) {
		t.Errorf("Share changed its argument: %s", after)
	}
	if !value.Equal(shared, written) {
		t.Errorf("Share = %v, want %v", shared, written)
	}
	spec := func(o map[string]any) map[string]any { return o["spec"].(map[string]any) }
	if &spec(shared)["containers"].([]any)[0] != &spec(decoded)["containers"].([]any)[0] {
		t.Errorf("containers not shared")
	}
	proj := func(o map[string]any) string {
		return fmt.Sprintf("%p", spec(o)["volumes"].([]any)[0].(map[string]any)["projected"])
	}
	if proj(shared) != proj(decoded) || proj(written) == proj(decoded) {
		t.Errorf("projected volume: shared %s, decoded %s, written %s", proj(shared), proj(decoded), proj(written))
	}
	if in.Hits != 2 {
		t.Errorf("%d hits, want 2", in.Hits)
	}
}
