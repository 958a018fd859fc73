package selector_test

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/konverge/konverge/selector"
)

func TestParseLabels(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		want     string
		empty    bool
		match    []map[string]string
		notMatch []map[string]string
	}{
		{name: "empty selects everything", in: "", want: "", empty: true,
			match: []map[string]string{nil, {"a": "b"}}},
		{name: "equals", in: "app=web", want: "app=web",
			match: []map[string]string{{"app": "web"}, {"app": "web", "x": "y"}}, notMatch: []map[string]string{nil, {"app": "db"}}},
		{name: "double equals", in: "app==web", want: "app==web", match: []map[string]string{{"app": "web"}}},
		{name: "not equals matches absent", in: "app!=web", want: "app!=web",
			match: []map[string]string{nil, {"app": "db"}}, notMatch: []map[string]string{{"app": "web"}}},
		{name: "in sorts values", in: "tier in (b, a)", want: "tier in (a,b)",
			match: []map[string]string{{"tier": "a"}}, notMatch: []map[string]string{{"tier": "c"}, nil}},
		{name: "notin matches absent", in: "tier notin (a)", want: "tier notin (a)",
			match: []map[string]string{nil, {"tier": "b"}}, notMatch: []map[string]string{{"tier": "a"}}},
		{name: "exists", in: "canary", want: "canary",
			match: []map[string]string{{"canary": ""}}, notMatch: []map[string]string{nil}},
		{name: "does not exist", in: "!canary", want: "!canary",
			match: []map[string]string{nil}, notMatch: []map[string]string{{"canary": "true"}}},
		{name: "greater than", in: "replicas>1", want: "replicas>1",
			match: []map[string]string{{"replicas": "2"}}, notMatch: []map[string]string{{"replicas": "1"}, {"replicas": "x"}, nil}},
		{name: "less than", in: "replicas<3", want: "replicas<3",
			match: []map[string]string{{"replicas": "-7"}}, notMatch: []map[string]string{{"replicas": "3"}}},
		{name: "requirements sorted by key", in: "z=1,a=2", want: "a=2,z=1",
			match: []map[string]string{{"a": "2", "z": "1"}}, notMatch: []map[string]string{{"a": "2"}}},
		{name: "empty value", in: "a=", want: "a=", match: []map[string]string{{"a": ""}}, notMatch: []map[string]string{nil}},
		{name: "prefixed key", in: "app.kubernetes.io/name=web", want: "app.kubernetes.io/name=web",
			match: []map[string]string{{"app.kubernetes.io/name": "web"}}},
		{name: "keywords as names", in: "in in (in)", want: "in in (in)", match: []map[string]string{{"in": "in"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sel, err := selector.ParseLabels(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if got := sel.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
			if got := sel.Empty(); got != tt.empty {
				t.Errorf("Empty() = %v, want %v", got, tt.empty)
			}
			for _, l := range tt.match {
				if !sel.Matches(l) {
					t.Errorf("does not match %v", l)
				}
			}
			for _, l := range tt.notMatch {
				if sel.Matches(l) {
					t.Errorf("matches %v", l)
				}
			}
		})
	}
}

func TestParseLabelsErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{name: "unclosed set", in: "a in (b",
			want: `selector: label selector "a in (b": unable to parse requirement: found '', expected: ',' or ')'`},
		{name: "missing operator", in: "a b",
			want: `selector: label selector "a b": unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt`},
		{name: "trailing comma", in: "a=b,",
			want: `selector: label selector "a=b,": found '', expected: identifier after ','`},
		{name: "empty prefix", in: "/a",
			want: `selector: label selector "/a": unable to parse requirement: <nil>: Invalid value: "/a": prefix part must be non-empty`},
		{name: "not an integer", in: "a<",
			want: `selector: label selector "a<": unable to parse requirement: values[0]: Invalid value: "": for 'Gt', 'Lt' operators, the value must be an integer`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := selector.ParseLabels(tt.in)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("error\n got: %v\nwant: %s", err, tt.want)
			}
			var se *selector.Error
			if !errors.As(err, &se) || se.Input != tt.in || se.Syntax != "label selector" {
				t.Errorf("error %#v does not name the input", err)
			}
		})
	}
}

func TestFromLabelSelector(t *testing.T) {
	tests := []struct {
		name    string
		doc     string
		want    string
		empty   bool
		matches map[string]string
		match   bool
		err     string
	}{
		{name: "nil matches nothing", doc: `null`, want: "", matches: map[string]string{"a": "b"}, match: false},
		{name: "empty matches everything", doc: `{}`, want: "", empty: true, matches: nil, match: true},
		{name: "matchLabels", doc: `{"matchLabels":{"tier":"web","app":"nginx"}}`, want: "app=nginx,tier=web",
			matches: map[string]string{"app": "nginx", "tier": "web", "x": "y"}, match: true},
		{name: "matchExpressions", doc: `{"matchExpressions":[{"key":"env","operator":"NotIn","values":["dev"]},{"key":"app","operator":"Exists"}]}`,
			want: "app,env notin (dev)", matches: map[string]string{"app": "a", "env": "prod"}, match: true},
		{name: "values keep duplicates", doc: `{"matchExpressions":[{"key":"a","operator":"In","values":["y","x","y"]}]}`,
			want: "a in (x,y,y)", matches: map[string]string{"a": "x"}, match: true},
		{name: "bad operator", doc: `{"matchExpressions":[{"key":"a","operator":"Gt","values":["1"]}]}`,
			err: `selector: LabelSelector matchExpressions[0]: "Gt" is not a valid label selector operator`},
		{name: "in without values", doc: `{"matchExpressions":[{"key":"a","operator":"In"}]}`,
			err: `selector: LabelSelector matchExpressions[0]: values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty`},
		{name: "bad label value", doc: `{"matchLabels":{"app":"-web"}}`,
			err: `selector: LabelSelector matchLabels["app"]: values[0][app]: Invalid value: "-web": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`},
		{name: "label value not a string", doc: `{"matchLabels":{"app":1}}`,
			err: `selector: LabelSelector matchLabels["app"]: must be a string, not number`},
		{name: "matchExpressions not a list", doc: `{"matchExpressions":{}}`,
			err: `selector: LabelSelector matchExpressions: must be a list, not object`},
		{name: "value not a string", doc: `{"matchExpressions":[{"key":"a","operator":"In","values":[true]}]}`,
			err: `selector: LabelSelector matchExpressions[0].values[0]: must be a string, not boolean`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m map[string]any
			if err := json.Unmarshal([]byte(tt.doc), &m); err != nil {
				t.Fatal(err)
			}
			sel, err := selector.FromLabelSelector(m)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("error\n got: %v\nwant: %s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if sel.String() != tt.want || sel.Empty() != tt.empty {
				t.Errorf("got %q (empty %v), want %q (empty %v)", sel.String(), sel.Empty(), tt.want, tt.empty)
			}
			if got := sel.Matches(tt.matches); got != tt.match {
				t.Errorf("Matches(%v) = %v, want %v", tt.matches, got, tt.match)
			}
		})
	}
}

func TestEverythingNothing(t *testing.T) {
	var zero selector.Labels
	for name, tt := range map[string]struct {
		sel          selector.Labels
		empty, match bool
	}{
		"zero":       {sel: zero, empty: true, match: true},
		"Everything": {sel: selector.Everything(), empty: true, match: true},
		"Nothing":    {sel: selector.Nothing(), empty: false, match: false},
	} {
		t.Run(name, func(t *testing.T) {
			if tt.sel.Empty() != tt.empty || tt.sel.Matches(map[string]string{"a": "b"}) != tt.match || tt.sel.String() != "" {
				t.Errorf("Empty %v Matches %v String %q", tt.sel.Empty(), tt.sel.Matches(map[string]string{"a": "b"}), tt.sel.String())
			}
		})
	}
}

func TestFieldsMatches(t *testing.T) {
	pod := map[string]any{
		"metadata": map[string]any{"name": "web-1", "namespace": "default", "labels": map[string]any{"app": "web"}},
		"spec":     map[string]any{"nodeName": "", "restartCount": int64(3), "hostNetwork": true, "ratio": 0.5, "big": 1e21},
		"status":   map[string]any{"phase": "Running", "podIPs": []any{"10.0.0.1"}},
	}
	tests := []struct {
		name, sel string
		want      bool
	}{
		{name: "name", sel: "metadata.name=web-1", want: true},
		{name: "double equals", sel: "metadata.name==web-1", want: true},
		{name: "namespace not", sel: "metadata.namespace!=kube-system", want: true},
		{name: "and", sel: "metadata.namespace=default,status.phase=Running", want: true},
		{name: "and fails", sel: "metadata.namespace=default,status.phase=Pending", want: false},
		{name: "empty string field", sel: "spec.nodeName=", want: true},
		{name: "absent field is empty", sel: "spec.schedulerName=", want: true},
		{name: "absent field not value", sel: "spec.schedulerName!=x", want: true},
		{name: "path through a string", sel: "metadata.name.x=", want: true},
		{name: "integer", sel: "spec.restartCount=3", want: true},
		{name: "boolean", sel: "spec.hostNetwork=true", want: true},
		{name: "float", sel: "spec.ratio=0.5", want: true},
		{name: "large float as JSON writes it", sel: "spec.big=1e+21", want: true},
		{name: "object equals nothing", sel: "metadata.labels=", want: false},
		{name: "object differs from anything", sel: "metadata.labels!=", want: true},
		{name: "list equals nothing", sel: "status.podIPs=10.0.0.1", want: false},
		{name: "escaped value", sel: `metadata.name=web\,1`, want: false},
		{name: "everything", sel: "", want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sel, err := selector.ParseFields(tt.sel)
			if err != nil {
				t.Fatal(err)
			}
			if got := sel.Matches(pod); got != tt.want {
				t.Errorf("ParseFields(%q).Matches(pod) = %v, want %v", tt.sel, got, tt.want)
			}
		})
	}
}

func TestParseFieldsErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{name: "no operator", in: "metadata.name",
			want: `selector: field selector "metadata.name": invalid selector: 'metadata.name'; can't understand 'metadata.name'`},
		{name: "unescaped equals", in: "a=b=c",
			want: `selector: field selector "a=b=c": invalid field selector: unescaped character in value: 61`},
		{name: "bad escape", in: `a=b\c`,
			want: `selector: field selector "a=b\\c": invalid field selector: invalid escape sequence: \c`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := selector.ParseFields(tt.in)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("error\n got: %v\nwant: %s", err, tt.want)
			}
		})
	}
}

func TestFieldsString(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{name: "sorted", in: "status.phase=Running,metadata.name=web", want: "metadata.name=web,status.phase=Running"},
		{name: "double equals printed single", in: "a==b", want: "a=b"},
		{name: "escapes", in: `a=b\,c\=d\\e`, want: `a=b\,c\=d\\e`},
		{name: "empty term dropped", in: "=,a!=b", want: "a!=b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sel, err := selector.ParseFields(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if got := sel.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
		})
	}
}

var benchLabels = map[string]string{
	"app.kubernetes.io/name": "web", "app.kubernetes.io/instance": "web-prod", "tier": "frontend",
	"env": "prod", "replicas": "3", "pod-template-hash": "5d4f8c7b9",
}

const benchLabelSelector = "app.kubernetes.io/name=web,tier in (frontend,backend),env!=dev,!canary,replicas>1"

func BenchmarkLabelsMatches(b *testing.B) {
	b.Run("konverge", func(b *testing.B) {
		sel, err := selector.ParseLabels(benchLabelSelector)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if !sel.Matches(benchLabels) {
				b.Fatal("no match")
			}
		}
	})
	b.Run("apimachinery", func(b *testing.B) {
		sel, err := labels.Parse(benchLabelSelector)
		if err != nil {
			b.Fatal(err)
		}
		set := labels.Set(benchLabels)
		b.ReportAllocs()
		for b.Loop() {
			if !sel.Matches(set) {
				b.Fatal("no match")
			}
		}
	})
}

func BenchmarkFieldsMatches(b *testing.B) {
	pod := map[string]any{
		"metadata": map[string]any{"name": "web-1", "namespace": "default"},
		"spec":     map[string]any{"nodeName": "node-1", "restartCount": int64(3)},
		"status":   map[string]any{"phase": "Running"},
	}
	const s = "metadata.namespace!=kube-system,status.phase=Running,spec.nodeName=node-1,spec.restartCount=3"
	b.Run("konverge", func(b *testing.B) {
		sel, err := selector.ParseFields(s)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if !sel.Matches(pod) {
				b.Fatal("no match")
			}
		}
	})
	b.Run("apimachinery", func(b *testing.B) {
		sel, err := fields.ParseSelector(s)
		if err != nil {
			b.Fatal(err)
		}
		set := fields.Set{"metadata.name": "web-1", "metadata.namespace": "default", "spec.nodeName": "node-1",
			"spec.restartCount": "3", "status.phase": "Running"}
		b.ReportAllocs()
		for b.Loop() {
			if !sel.Matches(set) {
				b.Fatal("no match")
			}
		}
	})
}

func TestMatchesDoesNotAllocate(t *testing.T) {
	ls, err := selector.ParseLabels(benchLabelSelector)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := selector.ParseFields("metadata.name=web,spec.replicas=3,spec.paused=false,spec.ratio=0.5")
	if err != nil {
		t.Fatal(err)
	}
	obj := map[string]any{"metadata": map[string]any{"name": "web"},
		"spec": map[string]any{"replicas": int64(3), "paused": false, "ratio": 0.5}}
	tests := []struct {
		name string
		f    func()
	}{
		{name: "labels", f: func() { ls.Matches(benchLabels) }},
		{name: "fields", f: func() { fs.Matches(obj) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if n := testing.AllocsPerRun(100, tt.f); n != 0 {
				t.Errorf("%v allocations per run, want 0", n)
			}
		})
	}
}

func BenchmarkParse(b *testing.B) {
	b.Run("labels", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := selector.ParseLabels(benchLabelSelector); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("fields", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := selector.ParseFields("metadata.namespace!=kube-system,status.phase=Running,spec.nodeName=node-1"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// MatchesObject agrees with Matches on the same labels copied into a map
// of strings (a value that is not a string counts as ""), for random
// selectors and label sets.
func TestMatchesObject(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	keys := []string{"app", "tier", "env"}
	values := []any{"web", "db", "", int64(1), nil}
	compared, matched := 0, 0
	for range 5000 {
		reqs := []string{"app=web", "app!=db", "tier in (web,db)", "tier notin (web)", "!env", "env", "app=", "env==db"}
		var parts []string
		for range 1 + r.IntN(3) {
			parts = append(parts, reqs[r.IntN(len(reqs))])
		}
		sel, err := selector.ParseLabels(strings.Join(parts, ","))
		if err != nil {
			t.Fatal(err)
		}
		obj := map[string]any{}
		for _, k := range keys {
			if r.IntN(2) == 0 {
				obj[k] = values[r.IntN(len(values))]
			}
		}
		strs := map[string]string{}
		for k, v := range obj {
			s, _ := v.(string)
			strs[k] = s
		}
		got, want := sel.MatchesObject(obj), sel.Matches(strs)
		if got != want {
			t.Fatalf("%q on %v: MatchesObject %v, Matches %v", sel.String(), obj, got, want)
		}
		compared++
		if got {
			matched++
		}
	}
	if compared < 1000 || matched == 0 || matched == compared {
		t.Fatalf("%d compared, %d matched: the random cases cover too little", compared, matched)
	}
	if !selector.Everything().MatchesObject(nil) || selector.Nothing().MatchesObject(map[string]any{"app": "web"}) {
		t.Fatal("Everything must match and Nothing must not")
	}
}
