package diff

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v2"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/konverge/konverge/value"
)

// TestYAMLMatchesSigsYAML checks that YAML prints what sigs.k8s.io/yaml
// (kubectl diff's printer) prints, on values chosen to hit go-yaml's
// special cases and on random ones.
func TestYAMLMatchesSigsYAML(t *testing.T) {
	objs := []map[string]any{
		{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "x", "annotations": map[string]any{}}},
		{"data": map[string]any{
			"multi": "line one\nline two\n", "trailing": "no newline\nat end", "bool": "true", "yes": "yes", "on": "on",
			"null": "null", "tilde": "~", "int": "123", "octal": "0777", "float": "1.5", "exp": "1e3", "colon": "a: b",
			"hash": "a #b", "dash": "- x", "star": "*x", "amp": "&x", "empty": "", "space": " lead", "tab": "a\tb",
			"quote": `it's "quoted"`, "unicode": "héllo ✓", "long": strings.Repeat("word ", 40), "base60": "1:20",
			"colon-end": "x:", "percent": "%x", "at": "@x", "backtick": "`x", "brace": "{x}", "bracket": "[x]",
			"bang": "!x", "pipe": "|x", "gt": ">x", "question": "? x", "comma": "a, b", "dot": ".inf", "nan": ".nan",
			"crlf": "a\r\nb", "nbsp": "a\u00a0b", "ctrl": "a\x01b",
		}},
		{"rv": "12345", "zero": "0", "lead": "007", "huge": "123456789012345678901234567890123", "digits": []any{"1", "42", "0777", "99999999999999999999"},
			"uid": "019408a7-2c3c-471e-a981-3be66f9ff1ff", "uid-digits": "12345678-1234-1234-1234-123456789012", "uid-0b": "0b123456-1234-1234-1234-123456789012",
			"uid-exp": "1e100000-0000-0000-0000-000000000000", "uid-year": "2026aaaa-0000-0000-0000-000000000000", "uid-upper": "019408A7-2C3C-471E-A981-3BE66F9FF1FF",
			"uid-short": "019408a7-2c3c-471e-a981-3be66f9ff1f", "not-uid": "019408a7_2c3c-471e-a981-3be66f9ff1ff", "00000000-0000-0000-0000-000000000000": "12345678"},
		{"numbers": []any{int64(0), int64(-1), int64(math.MaxInt64), int64(math.MinInt64), 0.5, -2.25, 1e21, 1e-7, 3.0, 1e20, 123456789.125}},
		{"nested": []any{map[string]any{"a": []any{}, "b": map[string]any{}, "c": nil, "d": false}, []any{int64(1), "x"}, nil}},
		{"keys": map[string]any{"a10": int64(1), "a9": int64(2), "A": int64(3), "b": int64(4), "1": int64(5), "10": int64(6), "2": int64(7), "true": int64(8), "": int64(9), "a b": int64(10), strings.Repeat("k", 129): int64(11), strings.Repeat("k ", 70): "x"}},
		{"long": map[string]any{"value": strings.Repeat("abc ", 30), "nospace": strings.Repeat("x", 200), "literal": strings.Repeat("line with words\n", 3), "nested": []any{map[string]any{"k": strings.Repeat("y z", 30)}}}},
	}
	typical := map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{
			"annotations":       map[string]any{"kubectl.kubernetes.io/last-applied-configuration": `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{},"name":"web"}}` + "\n"},
			"creationTimestamp": "2026-03-01T12:00:00Z", "name": "web", "namespace": "default", "uid": "019408a7-2c3c-471e-a981-3be66f9ff1ff",
			"labels": map[string]any{"app": "web", "shard": "7"},
		},
		"spec": map[string]any{
			"replicas": int64(2), "revisionHistoryLimit": int64(10), "progressDeadlineSeconds": int64(600),
			"strategy": map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"maxSurge": "25%", "maxUnavailable": "25%"}},
			"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{
				"name": "web", "image": "nginx:1.27", "args": []any{"--port=80", "-v", "serve now"},
				"ports":     []any{map[string]any{"containerPort": int64(80), "protocol": "TCP"}},
				"resources": map[string]any{}, "terminationMessagePath": "/dev/termination-log",
			}}, "securityContext": map[string]any{}}},
		},
	}
	if w := (&yamlWriter{cache: map[string]string{}}); !w.document(typical) {
		t.Errorf("a typical object does not take the fast path")
	}
	objs = append(objs, typical)
	rng := rand.New(rand.NewPCG(3, 4))
	for range 3000 {
		objs = append(objs, randomObject(rng, 0))
	}
	fast := 0
	for i, obj := range objs {
		w := &yamlWriter{cache: map[string]string{}}
		if w.document(obj) {
			fast++
		}
		j, err := value.Encode(obj)
		if err != nil {
			t.Fatal(err)
		}
		want, err := sigsyaml.JSONToYAML(j)
		if err != nil {
			t.Fatal(err)
		}
		got, err := YAML(obj)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("object %d:\ngot\n%s\nwant\n%s", i, got, want)
		}
	}
	// The fast path must be the common one, or this test checks little.
	if fast < len(objs)/3 {
		t.Errorf("fast path took %d of %d objects", fast, len(objs))
	}
	t.Logf("fast path took %d of %d objects", fast, len(objs))
}

func randomObject(rng *rand.Rand, depth int) map[string]any {
	n := rng.IntN(5)
	m := make(map[string]any, n)
	for range n {
		m[randomString(rng)] = randomValue(rng, depth+1)
	}
	return m
}

func randomValue(rng *rand.Rand, depth int) any {
	k := rng.IntN(8)
	if depth > 3 && k >= 6 {
		k = 0
	}
	switch k {
	case 0:
		return randomString(rng)
	case 1:
		return rng.Int64() >> rng.IntN(64)
	case 2:
		return rng.NormFloat64() * math.Pow(10, float64(rng.IntN(30)-15))
	case 3:
		return rng.IntN(2) == 0
	case 4:
		return nil
	case 5:
		return float64(rng.IntN(1000))
	case 6:
		l := make([]any, rng.IntN(4))
		for i := range l {
			l[i] = randomValue(rng, depth+1)
		}
		return l
	}
	return randomObject(rng, depth)
}

var pieces = []string{"word", "/path", "Kind", "a", "a", "a", "B", "b", "c", "d", ".", "-", "_", "9", "ab", "xyz", "1", "0", " ", ":", "#", "-", "\n", "'", `"`, "yes", "null", "~", ".", "e", "x", "é", "\t", "*", "&", "!", "%", "@", "`", "{", "}", "[", "]", ",", "?", "|", ">", "0x", "_", "+"}

func randomString(rng *rand.Rand) string {
	var b strings.Builder
	n := rng.IntN(6)
	if rng.IntN(8) == 0 {
		n = rng.IntN(60)
	}
	for range n {
		b.WriteString(pieces[rng.IntN(len(pieces))])
	}
	return b.String()
}

// BenchmarkYAML renders a Deployment as a dry run returns it, with a new
// uid and resourceVersion each time (as every object of a diff has), by
// YAML and by sigs.k8s.io/yaml (kubectl diff's printer) in one run.
func BenchmarkYAML(b *testing.B) {
	obj := func(i int) map[string]any {
		return map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{
				"annotations":       map[string]any{"deployment.kubernetes.io/revision": "1"},
				"creationTimestamp": "2026-03-01T12:00:00Z", "generation": int64(2), "name": "web", "namespace": "default",
				"resourceVersion": strconv.Itoa(100000 + i), "uid": uuidOf(i),
				"labels": map[string]any{"app": "web", "shard": "7"},
			},
			"spec": map[string]any{
				"replicas": int64(2), "revisionHistoryLimit": int64(10), "progressDeadlineSeconds": int64(600),
				"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
				"strategy": map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"maxSurge": "25%", "maxUnavailable": "25%"}},
				"template": map[string]any{
					"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
					"spec": map[string]any{"containers": []any{map[string]any{
						"name": "web", "image": "nginx:1.27", "imagePullPolicy": "IfNotPresent",
						"ports":     []any{map[string]any{"containerPort": int64(80), "protocol": "TCP"}},
						"resources": map[string]any{}, "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
					}}, "dnsPolicy": "ClusterFirst", "restartPolicy": "Always", "schedulerName": "default-scheduler",
						"securityContext": map[string]any{}, "terminationGracePeriodSeconds": int64(30)},
				},
			},
			"status": map[string]any{"observedGeneration": int64(1), "replicas": int64(2), "updatedReplicas": int64(2)},
		}
	}
	o := obj(0)
	md := o["metadata"].(map[string]any)
	// Each iteration sets a uid and resourceVersion not seen before (made
	// in the loop, for both the same).
	next := func(i int) {
		md["uid"] = uuidOf(i)
		md["resourceVersion"] = strconv.Itoa(100000 + i)
	}
	b.Run("konverge", func(b *testing.B) {
		b.ReportAllocs()
		for i := range b.N {
			next(i)
			if _, err := YAML(o); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sigs.k8s.io-yaml", func(b *testing.B) {
		b.ReportAllocs()
		for i := range b.N {
			next(i)
			if _, err := sigsyaml.Marshal(o); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// uuidOf makes a uid from i.
func uuidOf(i int) string {
	const hex = "0123456789abcdef"
	b := []byte("019408a7-2c3c-471e-a981-000000000000")
	for j := len(b) - 1; i > 0; j-- {
		b[j] = hex[i%16]
		i /= 16
	}
	return string(b)
}

// TestASCIILess checks asciiLess against runesLess on random ASCII keys
// made of letters, digits (zeros among them) and other characters.
func TestASCIILess(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const chars = "aZb0019.-_/x "
	key := func() string {
		b := make([]byte, rng.IntN(8))
		for i := range b {
			b[i] = chars[rng.IntN(len(chars))]
		}
		return string(b)
	}
	for range 100000 {
		a, b := key(), key()
		want := runesLess(a, b, len(a), len(b), func(s string, i int) rune { return rune(s[i]) })
		if got := asciiLess(a, b); got != want {
			t.Fatalf("asciiLess(%q, %q) = %v, runesLess %v", a, b, got, want)
		}
	}
}

// TestSpacedPlain checks the strings spacedPlain takes against go-yaml,
// which must write them as they are: a condition's message, and random
// strings of letters, spaces, quotes and indicators.
func TestSpacedPlain(t *testing.T) {
	strs := []string{
		`ReplicaSet "web-5bd649d78b" has successfully progressed.`, "Deployment has minimum availability.",
		"it's", `say "hi"`, "a b", "a:b c", "x y:z", "a #b", "a b ", "a  b", "a: b", "a b:", "true x",
	}
	rng := rand.New(rand.NewPCG(9, 10))
	const chars = `ab Z0.:#"'-/,?[]{}!|>*&%@`
	for range 200000 {
		b := []byte{"aZ/"[rng.IntN(3)]}
		for range rng.IntN(12) {
			b = append(b, chars[rng.IntN(len(chars))])
		}
		strs = append(strs, string(b))
	}
	taken := 0
	for _, s := range strs {
		if !spacedPlain(s) {
			continue
		}
		taken++
		out, err := yaml.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != s+"\n" {
			t.Errorf("spacedPlain(%q), go-yaml writes %q", s, out)
		}
		// As a key too.
		out, err = yaml.Marshal(map[string]any{s: int64(1)})
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != s+": 1\n" {
			t.Errorf("spacedPlain(%q), go-yaml writes the key %q", s, out)
		}
	}
	if taken < 1000 {
		t.Errorf("spacedPlain took %d strings", taken)
	}
	t.Logf("spacedPlain took %d of %d strings", taken, len(strs))
}
