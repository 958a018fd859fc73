package manifest

import (
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// checkFastYAML fails when fastYAML decodes a document to anything but what
// decodeYAML makes of it; it returns whether fastYAML took the document.
func checkFastYAML(t *testing.T, name string, data []byte) bool {
	t.Helper()
	got, ok := fastYAML(data)
	if !ok {
		return false
	}
	want, root, err := decodeYAML(data, 0)
	if err != nil {
		t.Errorf("%s: fastYAML decoded %q, decodeYAML fails: %v", name, data, err)
		return true
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: %q\nfastYAML:   %#v\ndecodeYAML: %#v", name, data, got, want)
	}
	if lines := itemLines(root, 0); lines != nil {
		t.Errorf("%s: fastYAML took a List, whose item lines it does not know", name)
	}
	return true
}

// fastYAMLCases are documents at the edges of what fastYAML takes, each
// with whether it takes it.
var fastYAMLCases = []struct {
	doc  string
	fast bool
}{
	{"a: 1\n", true},
	{"a: 1", true},
	{"a: b\nc:\n  d: e\n  f:\n  - 1\n  - x\n  -\n  - - y\n", false},
	{"a: b\nc:\n  d: e\n  f:\n  - 1\n  - x\n  -\n  - y: z\n    w: 2\n", true},
	{"a:\n- b\n- c: d\n  e: f\nx: y\n", true},
	{"a:\n  - b\n  # comment\n  - c # trailing\nd: 'it''s' # c\ne: \"q # not a comment\"\n", true},
	{"a: yes\nb: no\nc: on\nd: ~\ne: null\nf: 0777\ng: 0x1F\nh: 1e3\ni: 1.5\nj: 2001-12-14\nk: 100m\nl: -1\nm: .inf\n", false},
	{"a: yes\nb: no\nc: on\nd: ~\ne: null\nf: 0777\ng: 0x1F\nh: 1e3\ni: 1.5\nj: 2001-12-14\nk: 100m\n", true},
	{"80: http\nyes: 1\n1.5: x\n", true},
	{"~: x\n", false},
	{"a: |\n  line 1\n\n  line 3\n   indented\nb: |-\n  x\n\n\nc: |+\n  y\n\n\nd: 1\n", true},
	{"a: |\n\n  after an empty line\n", true},
	{"a: |\n  no final newline", false},
	{"a: |+\n  kept\n\n", true},
	{"a: | # comment\n  x\n", true},
	{"a: |2\n   x\n", false},
	{"a: >\n  folded\n", false},
	{"a: |\n  x\n  \n  y\n", false},
	{"a: |\nb: 1\n", false},
	{"a: []\nb: {}\nc: [] # c\n", true},
	{"a: [1]\n", true},
	{"a: [\"--port=8080\", '--x', y z, 1, yes, ~, [], {}, [b], {c: d}]\nb: {cpu: 100m, memory: 128Mi, n: {x: 1}}\n", true},
	{"a: [1, ]\n", false},
	{"a: [1,2]\nb: {c: d,e: f}\n", true},
	{"a: [b: c]\n", false},
	{"a: {b}\n", false},
	{"a: {b: c, b: d}\n", false},
	{"a: [1\n", false},
	{"a: [1\n  , 2]\n", false},
	{"a: [x # c]\n", false},
	{"a: [x#c, http://h:80]\n", true},
	{"a: {b:c}\n", false},
	{"a: ['it''s']\n", false},
	{"a: [1] x\n", false},
	{"a: [1] # c\n", true},
	{"a: &x 1\nb: *x\n", false},
	{"a: !!str 1\n", false},
	{"a: \"esc\\n\"\n", false},
	{"a: \"open\n  b\"\n", false},
	{"a: plain\n  continued\n", false},
	{"a: b: c\n", false},
	{"a: b:\n", false},
	{"a: 1\na: 2\n", false},
	{"a:\tb\n", false},
	{"a: b\r\n", false},
	{"a: é\n", false},
	{"<<: {a: 1}\n", false},
	{"- a\n", false},
	{"a\n", false},
	{"a: 1\n b: 2\n", false},
	{"  a: 1\n  b: 2\n", true},
	{"a:\n  b: 1\n c: 2\n", false},
	{"kind: List\nitems: []\n", false},
	{"a: -x\nb: x-\nc: a:b\nd: http://h:80/p\ne: x#y\nf: [x\n", false},
	{"a: -x\nb: x-\nc: a:b\nd: http://h:80/p\ne: x#y\n", true},
	{"a: ''\nb: \"\"\nc: ' '\n", true},
	{"a: 'x'y\n", false},
	{"a: '''\n", false},
	{"a: 1e400\n", true},
	{"a: 18446744073709551615\n", true},
	{"a: .nan\n", false},
	{"a: b #\n#c\n", true},
	{"a:#b\n", false},
	{"a: b\n...\n", false},
	{"%YAML 1.1\na: b\n", false},
	{"a: -\n", false},
	{"a: - b\n", false},
	{"a: ? b\n", false},
	{"a: @b\n", false},
	{"a:\n  - |\n    x\n", false},
	{"a: x\n# only a comment\n", true},
	{"a: x\n    # an indented comment\nb: y\n", true},
}

func TestFastYAMLMatchesDecode(t *testing.T) {
	for _, c := range fastYAMLCases {
		if got := checkFastYAML(t, "case", []byte(c.doc)); got != c.fast {
			t.Errorf("fastYAML(%q) took it: %v, want %v", c.doc, got, c.fast)
		}
	}
}

// TestFastYAMLOnTestdata holds fastYAML to decodeYAML on every YAML
// document of the repository's test data.
func TestFastYAMLOnTestdata(t *testing.T) {
	docs, fast := 0, 0
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !(strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, u := range splitYAML(decodeText(data), 1) {
			if u.err != nil {
				continue
			}
			docs++
			if checkFastYAML(t, path, u.data) {
				fast++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d of %d documents decoded by fastYAML", fast, docs)
	if docs == 0 || fast == 0 {
		t.Fatalf("fastYAML took %d of %d documents", fast, docs)
	}
}

// TestFastYAMLTakesTheBenchmarkDocuments keeps the fast path on the kind of
// documents the whole-command benchmark applies.
func TestFastYAMLTakesTheBenchmarkDocuments(t *testing.T) {
	for _, doc := range []string{cliDeployment, cliService, cliConfigMap} {
		if !checkFastYAML(t, "bench", []byte(doc)) {
			t.Errorf("fastYAML does not take\n%s", doc)
		}
	}
}

const cliDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: app-00000
  namespace: bench-0
  labels:
    app: app-00000
    tier: bench
spec:
  replicas: 2
  selector:
    matchLabels:
      app: app-00000
  template:
    metadata:
      labels:
        app: app-00000
    spec:
      containers:
      - name: web
        image: nginx:1.16.1
        ports:
        - containerPort: 80
        env:
        - name: MODE
          value: production
        resources:
          requests:
            cpu: 100m
            memory: 128Mi
`

const cliService = `apiVersion: v1
kind: Service
metadata:
  name: app-00001
  namespace: bench-1
  labels:
    app: app-00001
    tier: bench
spec:
  selector:
    app: app-00001
  ports:
  - name: http
    port: 80
    targetPort: 8081
`

const cliConfigMap = `apiVersion: v1
kind: ConfigMap
metadata:
  name: app-00002
  namespace: bench-2
  labels:
    app: app-00002
    tier: bench
data:
  version: "1"
  settings.conf: |
    listen 80
    workers 4
`

// FuzzFastYAML holds fastYAML to decodeYAML on whatever it takes.
func FuzzFastYAML(f *testing.F) {
	for _, c := range fastYAMLCases {
		f.Add([]byte(c.doc))
	}
	for _, doc := range []string{cliDeployment, cliService, cliConfigMap} {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkFastYAML(t, "fuzz", data)
	})
}

// TestFastYAMLRandomLines holds fastYAML to decodeYAML on documents made
// of random lines, indented at random: the shapes manifests have and the
// mistakes people make in them.
func TestFastYAMLRandomLines(t *testing.T) {
	pool := []string{
		"a: 1", "b: x", "c:", "d: |", "e: |-", "f: |+", "- x", "- y: 1", "-", "- z:",
		"g: []", "h: {}", "i: 'q'", "j: \"q\"", "k: x # c", "# c", "", "l: yes",
		"m: 1.0", "n: -1", "o: a:b", "p: x:", "text", "- - x", "q: ~", "80: r",
		"s: 0o17", "t: 1_000", "u: 2001-12-14", "v: 12:30", "w: -.inf", "x: 0b101",
		"a: 2", "- |", "y: >", "z: &a 1", "k2: *a", "aa: [1, 2]", "bb: {c: d}",
		"cc: 'it''s'", "dd: \"a#b\"", "ee: x #", "ff: +1", "gg: 1e5", "hh: 0x",
		"ii: [a, 'b', \"c\", 1, [d]]", "jj: {a: 1, b: [x, y], c: {d: e}}", "kk: [a,b", "ll: {a: }",
		"mm: {a, b}", "nn: [a: b]", "oo: [x, ]", "pp: {a: 1,}", "- [a, b]", "- {a: b}", "qq: [ a , b ]",
	}
	rng := rand.New(rand.NewPCG(1, 2))
	taken, total := 0, 0
	for range 100_000 {
		var b strings.Builder
		for range 1 + rng.IntN(8) {
			b.WriteString(strings.Repeat(" ", rng.IntN(3)*(1+rng.IntN(2))))
			b.WriteString(pool[rng.IntN(len(pool))])
			b.WriteByte('\n')
		}
		total++
		if checkFastYAML(t, "random", []byte(b.String())) {
			taken++
		}
		if t.Failed() {
			return
		}
	}
	t.Logf("fastYAML took %d of %d random documents", taken, total)
}
