package selector_test

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/konverge/konverge/selector"
)

// labelSelectorCorpus holds label selectors, valid and invalid, that the
// differential tests parse with both ParseLabels and labels.Parse.
var labelSelectorCorpus = []string{
	"", " ", "a", "!a", " ! a ", "a=b", "a==b", "a!=b", "a = b", "a=", "a==", "a!=",
	"a,b", "a,!b", "a=b,c=d", "c=d,a=b", "a=b,a!=c", "a!=c,a=b",
	"x in (a,b)", "x in (b, a)", "x notin (a)", "x in ()", "x in (,)", "x in (a,,b)",
	"x in (,a)", "x in (a,)", "x notin ()", "x in (a,a)", "x in(a)", "x in (a", "x in a",
	"x in (foo,,baz),y,z notin ()", "in in (in)", "notin notin (notin)", "in", "notin",
	"a>1", "a<3", "a>-1", "a>+1", "a>x", "a<", "a>", "a>1,a<5", "a>99999999999999999999",
	"a<=3", "a>=3", "a=>3", "a=<3", "a<>3", "a=!b", "a!==b", "a===b",
	"app.kubernetes.io/name=web", "example.com/a=b", "Example.com/a=b", "/a", "a/", "a/b/c",
	"-a", "a-", "a_b", "_a", "a.b", "A", "a=b=c", "a=b c", "a b", "a=(b)", "a notin",
	"!a=b", "!a in (b)", "!", "!!a", ",", "a,", ",a", "a,,b", "a=b,", "(", ")", "a)",
	"a=-", "a=b-", "a=b_c", "a=B.C", "a=" + strings.Repeat("v", 63), "a=" + strings.Repeat("v", 64),
	strings.Repeat("k", 63), strings.Repeat("k", 64), strings.Repeat("p", 254) + "/a",
	strings.Repeat("p", 253) + "/a", "a.-b/c", "a..b/c", "a/-", "a/" + strings.Repeat("n", 64) + "-",
	"a\tin\t(b)", "a\nin\n(b)", "a\rin (b)", "a in (b)\n", "a\x00b", "a=\x00", "\x00a",
	"a=b\x00c=d", "é=b", "a=é", "a in (é)", "x in (c,b,a),a=1,a!=2", "tier notin (frontend,backend),env=prod",
	"k1,k2,k3,k4,k5,k6,k7,k8,k9,k10,k11,k12,k13,k1=a,k2!=b,k3 in (c)",
	"b=1,a=2,b!=3,a!=4,b in (5),a in (6),b notin (7),a notin (8),b,a,!b,!a,b>1,a<2",
	"a>1,a>2,a>3,a>4,a>5,a>6,a>7,a>8,a>9,a>10,a>11,a>12,a>13,a>14",
}

// labelSets are the labels the differential tests match selectors against.
var labelSets = []map[string]string{
	nil,
	{},
	{"a": "b"},
	{"a": ""},
	{"a": "1"},
	{"a": "3"},
	{"a": "-5"},
	{"a": "x"},
	{"a": "b", "c": "d"},
	{"x": "a"},
	{"x": "b", "y": "1", "z": ""},
	{"x": "foo", "y": ""},
	{"app.kubernetes.io/name": "web", "example.com/a": "b"},
	{"in": "in", "notin": "notin"},
	{"tier": "frontend", "env": "prod"},
	{"tier": "db", "env": "prod"},
	{"k1": "a", "k3": "c"},
	{"a": "2", "b": "5"},
	{"a": "99999999999999999999"},
}

// compareLabels checks ParseLabels against labels.Parse on one input.
func compareLabels(t *testing.T, s string) {
	t.Helper()
	got, err := selector.ParseLabels(s)
	want, wantErr := labels.Parse(s)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("ParseLabels(%q) error = %v, labels.Parse error = %v", s, err, wantErr)
	}
	if err != nil {
		var se *selector.Error
		if !errors.As(err, &se) {
			t.Fatalf("ParseLabels(%q) error %T is not *selector.Error", s, err)
		}
		if se.Reason != wantErr.Error() {
			t.Fatalf("ParseLabels(%q) reason\n got: %s\nwant: %s", s, se.Reason, wantErr.Error())
		}
		return
	}
	if got.String() != want.String() {
		t.Fatalf("ParseLabels(%q).String() = %q, want %q", s, got.String(), want.String())
	}
	if got.Empty() != want.Empty() {
		t.Fatalf("ParseLabels(%q).Empty() = %v, want %v", s, got.Empty(), want.Empty())
	}
	for _, set := range labelSets {
		if g, w := got.Matches(set), want.Matches(labels.Set(set)); g != w {
			t.Fatalf("ParseLabels(%q).Matches(%v) = %v, want %v", s, set, g, w)
		}
	}
	// The canonical form parses back to the same selector.
	again, err := selector.ParseLabels(got.String())
	if err != nil || again.String() != got.String() {
		t.Fatalf("ParseLabels(%q) does not round-trip: %q, %v", got.String(), again.String(), err)
	}
}

func TestLabelsDifferential(t *testing.T) {
	for _, s := range labelSelectorCorpus {
		t.Run(strings.ReplaceAll(s, "/", "∕"), func(t *testing.T) { compareLabels(t, s) })
	}
}

// randomLabelSelector builds a selector from pieces of the syntax, valid
// and not.
func randomLabelSelector(r *rand.Rand) string {
	pieces := []string{"a", "b", "x", "in", "notin", "!", "=", "==", "!=", ">", "<", "(", ")", ",", " ",
		"1", "-2", "v", "v-", "-", "_", ".", "/", "a.b/c", "A", "é", "\t", "\x00", "\\", "99999999999999999999"}
	n := 1 + r.IntN(8)
	var b strings.Builder
	for range n {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

func TestLabelsDifferentialRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	valid := 0
	for range 20000 {
		s := randomLabelSelector(r)
		compareLabels(t, s)
		if t.Failed() {
			return
		}
		if _, err := selector.ParseLabels(s); err == nil {
			valid++
		}
	}
	t.Logf("%d of 20000 random selectors valid", valid)
}

func FuzzParseLabels(f *testing.F) {
	for _, s := range labelSelectorCorpus {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { compareLabels(t, s) })
}

// labelSelectorJSON holds metav1.LabelSelector documents, valid and
// invalid, that the differential test converts with both FromLabelSelector
// and metav1.LabelSelectorAsSelector.
var labelSelectorJSON = []string{
	`null`,
	`{}`,
	`{"matchLabels":{}}`,
	`{"matchLabels":null,"matchExpressions":[]}`,
	`{"matchLabels":{"app":"web"}}`,
	`{"matchLabels":{"app":"web","tier":"frontend"}}`,
	`{"matchLabels":{"app":""}}`,
	`{"matchLabels":{"app":"-web"}}`,
	`{"matchLabels":{"-app":"web"}}`,
	`{"matchLabels":{"-app":"-web"}}`,
	`{"matchExpressions":[{"key":"tier","operator":"In","values":["b","a"]}]}`,
	`{"matchExpressions":[{"key":"tier","operator":"NotIn","values":["a"]}]}`,
	`{"matchExpressions":[{"key":"tier","operator":"Exists"}]}`,
	`{"matchExpressions":[{"key":"tier","operator":"DoesNotExist"}]}`,
	`{"matchExpressions":[{"key":"tier","operator":"In"}]}`,
	`{"matchExpressions":[{"key":"tier","operator":"In","values":[]}]}`,
	`{"matchExpressions":[{"key":"tier","operator":"NotIn","values":null}]}`,
	`{"matchExpressions":[{"key":"tier","operator":"Exists","values":["a"]}]}`,
	`{"matchExpressions":[{"key":"tier","operator":"DoesNotExist","values":["a","<b>"]}]}`,
	`{"matchExpressions":[{"key":"tier","operator":"Gt","values":["1"]}]}`,
	`{"matchExpressions":[{"key":"tier","operator":"in","values":["a"]}]}`,
	`{"matchExpressions":[{"key":"tier","operator":"","values":["a"]}]}`,
	`{"matchExpressions":[{"key":"","operator":"Exists"}]}`,
	`{"matchExpressions":[{"key":"a/b/c","operator":"In","values":["-x","y_"]}]}`,
	`{"matchExpressions":[{"key":"tier","operator":"In","values":["a","a",""]}]}`,
	`{"matchLabels":{"app":"web"},"matchExpressions":[{"key":"app","operator":"NotIn","values":["db"]},{"key":"env","operator":"Exists"}]}`,
	`{"matchLabels":{"tier":"frontend"},"matchExpressions":[{"key":"tier","operator":"In","values":["frontend","backend"]}]}`,
}

func TestFromLabelSelectorDifferential(t *testing.T) {
	for _, doc := range labelSelectorJSON {
		t.Run(doc, func(t *testing.T) {
			var m map[string]any
			if err := json.Unmarshal([]byte(doc), &m); err != nil {
				t.Fatal(err)
			}
			var ls *metav1.LabelSelector
			if err := json.Unmarshal([]byte(doc), &ls); err != nil {
				t.Fatal(err)
			}
			got, err := selector.FromLabelSelector(m)
			want, wantErr := metav1.LabelSelectorAsSelector(ls)
			if (err != nil) != (wantErr != nil) {
				t.Fatalf("error = %v, apimachinery error = %v", err, wantErr)
			}
			if err != nil {
				var se *selector.Error
				if !errors.As(err, &se) || se.Reason != wantErr.Error() {
					t.Fatalf("error\n got: %v\nwant reason: %s", err, wantErr)
				}
				return
			}
			if got.String() != want.String() || got.Empty() != want.Empty() {
				t.Fatalf("got %q (empty %v), want %q (empty %v)", got.String(), got.Empty(), want.String(), want.Empty())
			}
			for _, set := range labelSets {
				if g, w := got.Matches(set), want.Matches(labels.Set(set)); g != w {
					t.Fatalf("Matches(%v) = %v, want %v", set, g, w)
				}
			}
		})
	}
}

// fieldSelectorCorpus holds field selectors that the differential tests
// parse with both ParseFields and fields.ParseSelector.
var fieldSelectorCorpus = []string{
	"", ",", ",,", "=", "!=", "==", "=,a=b", "metadata.name=web", "metadata.name==web",
	"metadata.name!=web", "metadata.namespace!=kube-system,status.phase=Running",
	"status.phase=Running,metadata.namespace!=kube-system", "spec.nodeName=", "spec.nodeName!=",
	"a", "a=b=c", `a=b\=c`, `a=b\,c`, `a=b\\c`, `a=b\c`, `a=b\`, `a=\\`, `a=b\,c,d=e`, "a=b,c",
	"a=!=b", "a!==b", "a===b", " a = b ", "a =b", "=b", "a.b.c=d", "spec.replicas=3",
	"spec.suspend=true", "a=é", "a=\xff,b", `a=\xff\,`, "a=\xff\\,", "a=\\\xff", "b=1,a=2,b=1",
	"x=1,x!=1", "status.podIP=10.0.0.1", "metadata.labels=x",
}

// fieldObjects are the objects the differential tests match field
// selectors against, with their fields flattened to strings for
// apimachinery's fields.Set.
var fieldObjects = []struct {
	obj map[string]any
	set fields.Set
}{
	{obj: nil, set: fields.Set{}},
	{obj: map[string]any{"metadata": map[string]any{"name": "web", "namespace": "default"}},
		set: fields.Set{"metadata.name": "web", "metadata.namespace": "default"}},
	{obj: map[string]any{"metadata": map[string]any{"name": "db", "namespace": "kube-system"}, "status": map[string]any{"phase": "Running"}},
		set: fields.Set{"metadata.name": "db", "metadata.namespace": "kube-system", "status.phase": "Running"}},
	{obj: map[string]any{"spec": map[string]any{"nodeName": "n1", "replicas": int64(3), "suspend": true}, "status": map[string]any{"phase": "Pending"}},
		set: fields.Set{"spec.nodeName": "n1", "spec.replicas": "3", "spec.suspend": "true", "status.phase": "Pending"}},
	{obj: map[string]any{"a": "b=c", "x": "1", "b": "1", "a.b": map[string]any{"c": "d"}},
		set: fields.Set{"a": "b=c", "x": "1", "b": "1"}},
	{obj: map[string]any{"a": `b,c`, "d": "e", "a.b": nil},
		set: fields.Set{"a": "b,c", "d": "e"}},
	{obj: map[string]any{"a": `b\c`, " a ": " b ", "status": map[string]any{"podIP": "10.0.0.1"}},
		set: fields.Set{"a": `b\c`, " a ": " b ", "status.podIP": "10.0.0.1"}},
}

func compareFields(t *testing.T, s string) {
	t.Helper()
	got, err := selector.ParseFields(s)
	want, wantErr := fields.ParseSelector(s)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("ParseFields(%q) error = %v, fields.ParseSelector error = %v", s, err, wantErr)
	}
	if err != nil {
		var se *selector.Error
		if !errors.As(err, &se) || se.Reason != wantErr.Error() {
			t.Fatalf("ParseFields(%q) error\n got: %v\nwant reason: %s", s, err, wantErr)
		}
		return
	}
	if got.String() != want.String() || got.Empty() != want.Empty() {
		t.Fatalf("ParseFields(%q) = %q (empty %v), want %q (empty %v)", s, got.String(), got.Empty(), want.String(), want.Empty())
	}
	for _, o := range fieldObjects {
		w := want.Matches(o.set)
		if nonScalar(want, o.obj) {
			// apimachinery matches flat string fields only; an object or a
			// list equals no value, so the selector matches only if every
			// term on one is "!=" and the others hold.
			continue
		}
		if g := got.Matches(o.obj); g != w {
			t.Fatalf("ParseFields(%q).Matches(%v) = %v, want %v", s, o.obj, g, w)
		}
	}
}

// nonScalar reports whether a field of the selector is an object or a list
// in obj.
func nonScalar(sel fields.Selector, obj map[string]any) bool {
	for _, r := range sel.Requirements() {
		var v any = obj
		for name := range strings.SplitSeq(r.Field, ".") {
			m, ok := v.(map[string]any)
			if !ok {
				v = nil
				break
			}
			v = m[name]
		}
		switch v.(type) {
		case map[string]any, []any:
			return true
		}
	}
	return false
}

func TestFieldsDifferential(t *testing.T) {
	for _, s := range fieldSelectorCorpus {
		t.Run(strings.ReplaceAll(s, "/", "∕"), func(t *testing.T) { compareFields(t, s) })
	}
}

func TestFieldsDifferentialRandom(t *testing.T) {
	pieces := []string{"a", "b", "x", ".", "=", "!", ",", `\`, " ", "1", "é", "\xff", "metadata.name", "status.phase"}
	r := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		n := 1 + r.IntN(8)
		var b strings.Builder
		for range n {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		compareFields(t, b.String())
		if t.Failed() {
			return
		}
	}
}

func FuzzParseFields(f *testing.F) {
	for _, s := range fieldSelectorCorpus {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { compareFields(t, s) })
}
