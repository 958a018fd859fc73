package merge

import (
	"bytes"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

// countFast counts the merges the fast path of ThreeWayJSON completes
// while f runs.
func countFast(f func()) int64 {
	var n atomic.Int64
	fastUsed = func() { n.Add(1) }
	defer func() { fastUsed = nil }()
	f()
	return n.Load()
}

// compareJSONPaths runs ThreeWayJSON and the decode/ThreeWay/Apply/encode
// path on the same documents and reports how they differ.
func compareJSONPaths(last, config, live []byte, typ *schema.Type) error {
	fp, fr, ferr := ThreeWayJSON(last, config, live, typ, Options{})
	sp, sr, serr := threeWayJSONSlow(last, config, live, typ, Options{})
	switch {
	case ferr != nil && serr != nil:
		if ferr.Error() != serr.Error() {
			return fmt.Errorf("errors differ:\n fast: %v\n slow: %v", ferr, serr)
		}
		return nil
	case ferr != nil || serr != nil:
		return fmt.Errorf("only one fails:\n fast: %v\n slow: %v", ferr, serr)
	}
	for _, x := range []struct {
		name      string
		got, want []byte
	}{{"patch", fp, sp}, {"result", fr, sr}} {
		g, err := value.Decode(x.got)
		if err != nil {
			return fmt.Errorf("%s is not JSON: %v\n%s", x.name, err, x.got)
		}
		w, _ := value.Decode(x.want)
		if !value.Equal(g, w) {
			return fmt.Errorf("%s differs:\n fast: %s\n slow: %s", x.name, x.got, x.want)
		}
	}
	return nil
}

// TestThreeWayJSONAgrees holds the fast path of ThreeWayJSON to the
// general one on the differential generator's triples of every kind and on
// the benchmark's cases, and checks that it takes most of them.
func TestThreeWayJSONAgrees(t *testing.T) {
	n := 400
	if testing.Short() {
		n = 60
	}
	var total, failures int
	fast := countFast(func() {
		for ki, k := range genKinds {
			typ := k.Type()
			for i := range n {
				seed := uint64(ki)*1_000_000 + uint64(i)
				tr := newGen(seed, nil).triple(k)
				total++
				var last []byte
				if tr.Last != nil {
					last = diffEncode(t, tr.Last)
				}
				if err := compareJSONPaths(last, diffEncode(t, tr.Config), diffEncode(t, tr.Live), typ); err != nil {
					failures++
					if failures <= 3 {
						t.Errorf("%s seed %d: %v", k.Name, seed, err)
					}
				}
			}
		}
		for _, c := range newBenchCases(t) {
			total++
			if err := compareJSONPaths(c.last, c.config, c.live, schema.Builtin().Lookup(c.gvk)); err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
		}
	})
	t.Logf("%d of %d merges on the fast path", fast, total)
	if fast < int64(total)/10 {
		t.Errorf("the fast path took only %d of %d merges", fast, total)
	}
}

// TestThreeWayJSONFastCases checks cases built to take the fast path (or
// to leave it) against the general path.
func TestThreeWayJSONFastCases(t *testing.T) {
	deploy := schema.Builtin().Lookup(schema.GVK{Group: "apps", Version: "v1", Kind: "Deployment"})
	cases := []struct {
		name             string
		last, conf, live string
		fast             bool
	}{
		{"image changed", `{"spec":{"template":{"spec":{"containers":[{"image":"a:1","name":"a"}]}}}}`,
			`{"spec":{"template":{"spec":{"containers":[{"image":"a:2","name":"a"}]}}}}`,
			`{"spec":{"template":{"spec":{"containers":[{"image":"a:1","imagePullPolicy":"Always","name":"a"}]}}}}`, true},
		{"field dropped", `{"metadata":{"labels":{"a":"1","b":"2"}},"spec":{"replicas":3}}`,
			`{"metadata":{"labels":{"a":"1"}}}`, `{"metadata":{"labels":{"a":"1","b":"2","c":"3"}},"spec":{"replicas":5}}`, true},
		{"no last-applied", ``, `{"spec":{"replicas":2}}`, `{"spec":{"paused":true,"replicas":1}}`, true},
		{"unchanged", `{"a":"x"}`, `{"a":"x"}`, `{"a":"x","b":[1,2]}`, true},
		{"escaped strings equal", `{"a":"\u0041"}`, `{"a":"\u0041"}`, `{"a":"A"}`, true},
		{"escaped strings differ", `{"a":"\"x\""}`, `{"a":"\"y\""}`, `{"a":"\"x\""}`, true},
		{"element removed", `{"spec":{"template":{"spec":{"containers":[{"name":"a"},{"name":"b"}]}}}}`,
			`{"spec":{"template":{"spec":{"containers":[{"name":"a"}]}}}}`,
			`{"spec":{"template":{"spec":{"containers":[{"name":"a"},{"name":"b"}]}}}}`, false},
		{"element added", `{"spec":{"template":{"spec":{"containers":[{"name":"a"}]}}}}`,
			`{"spec":{"template":{"spec":{"containers":[{"name":"a"},{"name":"b"}]}}}}`,
			`{"spec":{"template":{"spec":{"containers":[{"name":"a"}]}}}}`, false},
		{"field dropped inside an element", `{"spec":{"template":{"spec":{"containers":[{"image":"x","name":"a"}]}}}}`,
			`{"spec":{"template":{"spec":{"containers":[{"name":"a"}]}}}}`,
			`{"spec":{"template":{"spec":{"containers":[{"image":"x","name":"a"}]}}}}`, false},
		{"duplicate container", ``, `{"spec":{"template":{"spec":{"containers":[{"name":"a"},{"name":"a"}]}}}}`,
			`{"spec":{"template":{"spec":{"containers":[{"name":"a"},{"name":"a"}]}}}}`, false},
		{"wrong type", ``, `{"spec":{"replicas":"three"}}`, `{"spec":{"replicas":1}}`, false},
		{"null", ``, `{"spec":{"replicas":null}}`, `{"spec":{"replicas":1}}`, false},
		{"unsorted keys", ``, `{"spec":{"replicas":1},"metadata":{}}`, `{"spec":{"replicas":2}}`, false},
		{"strategy changed", ``, `{"spec":{"strategy":{"type":"Recreate"}}}`,
			`{"spec":{"strategy":{"rollingUpdate":{"maxSurge":1},"type":"RollingUpdate"}}}`, false},
		{"float", ``, `{"spec":{"replicas":1.5}}`, `{"spec":{"replicas":1}}`, false},
		{"not json", ``, `{"spec":`, `{}`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var err error
			fast := countFast(func() { err = compareJSONPaths([]byte(c.last), []byte(c.conf), []byte(c.live), deploy) })
			if err != nil {
				t.Fatal(err)
			}
			if (fast == 1) != c.fast {
				t.Errorf("fast path taken: %v, want %v", fast == 1, c.fast)
			}
		})
	}
}

// TestThreeWayJSONLongStrings covers the word-at-a-time string scan:
// quotes, escapes, control characters and UTF-8 at every offset.
func TestThreeWayJSONLongStrings(t *testing.T) {
	cm := schema.Builtin().Lookup(schema.GVK{Version: "v1", Kind: "ConfigMap"})
	for off := 0; off < 20; off++ {
		for _, mid := range []string{`\"`, `\\`, `é`, `\u00e9`, "\x01", `\ud83d\ude00`, "\xff", `\x`} {
			s := strings.Repeat("a", off) + mid + strings.Repeat("b", 20-off)
			conf := []byte(`{"data":{"k":"` + s + `"}}`)
			live := []byte(`{"data":{"k":"` + strings.Repeat("a", off) + `"}}`)
			if err := compareJSONPaths(nil, conf, live, cm); err != nil {
				t.Errorf("offset %d, %q: %v", off, mid, err)
			}
			if err := compareJSONPaths(conf, conf, conf, cm); err != nil {
				t.Errorf("offset %d, %q, unchanged: %v", off, mid, err)
			}
		}
	}
	if !stringsEqual([]byte(`x\u00e9\ud83d\ude00\n`), true, []byte("x\u00e9\U0001F600\\n"), true) {
		t.Error("escaped and literal forms of one string compare unequal")
	}
	if stringsEqual([]byte(`a\nb`), true, []byte(`a\tb`), true) {
		t.Error("different escapes compare equal")
	}
}

// TestThreeWayJSONReusesNothing checks that results do not alias pooled
// scratch space: a second merge leaves the first results as they were.
func TestThreeWayJSONReusesNothing(t *testing.T) {
	cases := newBenchCases(t)
	c := cases[0]
	typ := schema.Builtin().Lookup(c.gvk)
	p1, r1, err := ThreeWayJSON(c.last, c.config, c.live, typ, Options{})
	if err != nil {
		t.Fatal(err)
	}
	keepP, keepR := bytes.Clone(p1), bytes.Clone(r1)
	for _, c := range cases[1:] {
		if _, _, err := ThreeWayJSON(c.last, c.config, c.live, schema.Builtin().Lookup(c.gvk), Options{}); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(p1, keepP) || !bytes.Equal(r1, keepR) {
		t.Error("a later merge changed an earlier result")
	}
}
