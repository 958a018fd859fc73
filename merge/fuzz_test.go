package merge

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

// Fuzz inputs come in two modes, chosen by the first byte:
//
//   - fuzzGen: byte 1 picks the kind, bytes 2-9 are the generator's seed
//     and the rest its choices (gen_test.go reads them before falling
//     back to the seeded PCG), so the fuzzer steers the generator;
//   - fuzzJSON: the rest is a JSON object {"kind", "lastApplied",
//     "config", "live"} that the fuzzer mutates directly.
//
// Both check what TestDifferential checks (checkTriple): konverge's
// result is kubectl's after normalization, kubectl's StrategicMergePatch
// applying konverge's patch gives the same result, a second apply changes
// nothing, conflicts agree, inputs are not modified, and nothing panics.
const (
	fuzzGen  = 0
	fuzzJSON = 1
)

func fuzzGenInput(kind int, seed uint64, choices []byte) []byte {
	b := []byte{fuzzGen, byte(kind)}
	b = binary.LittleEndian.AppendUint64(b, seed)
	return append(b, choices...)
}

func fuzzJSONInput(tb testing.TB, kind string, last, config, live map[string]any) []byte {
	doc := map[string]any{"kind": kind, "config": config, "live": live}
	if last != nil {
		doc["lastApplied"] = last
	}
	return append([]byte{fuzzJSON}, diffEncode(tb, doc)...)
}

// mergeCaseSeeds reads the cases of testdata/merge, if there are any: a
// directory per case with config.yaml, live.yaml and last-applied.yaml
// (else live's last-applied annotation), or a YAML file per case with
// lastApplied, config, live and an optional kind (apiVersion, kind).
// Cases of kinds the generator does not know are skipped.
func mergeCaseSeeds(tb testing.TB) [][]byte {
	var out [][]byte
	add := func(kind map[string]any, last, config, live map[string]any) {
		if config == nil || live == nil {
			return
		}
		if kind == nil {
			kind = config
		}
		av, _ := kind["apiVersion"].(string)
		kn, _ := kind["kind"].(string)
		k := genKindByGVK(schema.ParseGVK(av, kn))
		if k == nil {
			return
		}
		out = append(out, fuzzJSONInput(tb, k.Name, last, config, live))
	}
	load := func(path string) map[string]any {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		return mustYAMLObject(tb, string(b))
	}
	dirs, _ := filepath.Glob("../testdata/merge/*")
	for _, d := range dirs {
		if strings.HasSuffix(d, ".yaml") {
			c := load(d)
			m := func(k string) map[string]any { v, _ := c[k].(map[string]any); return v }
			add(m("kind"), m("lastApplied"), m("config"), m("live"))
			continue
		}
		config, live, last := load(filepath.Join(d, "config.yaml")), load(filepath.Join(d, "live.yaml")), load(filepath.Join(d, "last-applied.yaml"))
		if last == nil && live != nil {
			if md, ok := live["metadata"].(map[string]any); ok {
				if ann, ok := md["annotations"].(map[string]any); ok {
					if s, ok := ann["kubectl.kubernetes.io/last-applied-configuration"].(string); ok {
						last, _ = value.DecodeObject([]byte(s))
					}
				}
			}
		}
		add(nil, last, config, live)
	}
	return out
}

func FuzzThreeWay(f *testing.F) {
	for i := range 2 * len(genKinds) {
		f.Add(fuzzGenInput(i%len(genKinds), uint64(i), nil))
	}
	for _, s := range mergeCaseSeeds(f) {
		f.Add(s)
	}
	for _, r := range fuzzRegressions {
		f.Add(fuzzJSONInput(f, r.kind, mustYAMLObject(f, r.last), mustYAMLObject(f, r.config), mustYAMLObject(f, r.live)))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 {
			return
		}
		switch data[0] {
		case fuzzGen:
			k := genKinds[int(data[1])%len(genKinds)]
			var seedBytes [8]byte
			copy(seedBytes[:], data[2:])
			var choices []byte
			if len(data) > 10 {
				choices = data[10:]
			}
			tr := newGen(binary.LittleEndian.Uint64(seedBytes[:]), choices).triple(k)
			if err := checkTriple(t, tr, &diffStats{}); err != nil {
				t.Fatalf("%s\n%v", tr, err)
			}
		case fuzzJSON:
			tr, ok := fuzzTriple(data[1:])
			if !ok {
				return
			}
			if err := checkJSONTriple(t, tr); err != nil {
				t.Fatalf("%s\n%v", tr, err)
			}
		}
	})
}

// fuzzTriple decodes a JSON-mode input; ok is false for inputs outside the
// domain where konverge promises kubectl's behaviour.
func fuzzTriple(data []byte) (triple, bool) {
	doc, err := value.DecodeObject(data)
	if err != nil {
		return triple{}, false
	}
	name, _ := doc["kind"].(string)
	k := genKindByName(name)
	config, ok1 := doc["config"].(map[string]any)
	live, ok2 := doc["live"].(map[string]any)
	last, ok3 := doc["lastApplied"].(map[string]any)
	if k == nil || !ok1 || !ok2 || (!ok3 && doc["lastApplied"] != nil) {
		return triple{}, false
	}
	tr := triple{Kind: k, Last: last, Config: config, Live: live}
	typ := k.Type()
	for _, obj := range []map[string]any{config, last, live} {
		if obj != nil && !inFuzzDomain(obj, typ) {
			return triple{}, false
		}
	}
	return tr, true
}

// inFuzzDomain reports whether obj is an object kubectl and konverge both
// take as it is: valid for its schema, with no two elements of a merged
// list sharing a merge key (konverge's deliberate difference) and no null
// list elements, and without patch directives (a config may hold them, but
// kubectl's handling of them is erratic: it fails to re-apply a config
// holding {"$patch": "replace"} in a list, for one; konverge does not
// promise to match it there).
func inFuzzDomain(obj map[string]any, t *schema.Type) bool {
	if Validate(obj, t) != nil {
		return false
	}
	var ok func(v any, t *schema.Type) bool
	ok = func(v any, t *schema.Type) bool {
		switch x := v.(type) {
		case map[string]any:
			for k, el := range x {
				if strings.HasPrefix(k, "$") || !ok(el, t.Field(k)) {
					return false
				}
			}
		case []any:
			seen := map[any]bool{}
			for _, el := range x {
				if el == nil || !ok(el, t.Element()) {
					return false
				}
				if m, isMap := el.(map[string]any); isMap && t.KindOf() == schema.List && t.ListType == schema.MergeByKey {
					id := comparable(m[t.MergeKey])
					if seen[id] {
						return false
					}
					seen[id] = true
				}
			}
		}
		return true
	}
	return ok(obj, t)
}

// checkJSONTriple is checkTriple for fuzzer-made objects: where kubectl
// fails on them and konverge does not (an unknown field of a Go struct, a
// list of lists), there is nothing to compare.
func checkJSONTriple(t *testing.T, tr triple) error {
	if _, _, err := safeReference(t, tr.Kind.newStruct(), tr.Last, tr.Config, tr.Live, true); err != nil {
		if _, ourErr := ThreeWay(tr.Last, tr.Config, tr.Live, tr.Kind.Type(), Options{}); ourErr != nil {
			return nil
		}
		if strings.Contains(err.Error(), "panicked") {
			// kubectl crashing is no reason for konverge to; it must not
			// panic either, which checkTriple would catch.
			_ = checkTriple(t, tr, &diffStats{})
		}
		return nil
	}
	return checkTriple(t, tr, &diffStats{lenient: true})
}

// fuzzRegressions are the cases the fuzzer found, minimized; they run as
// unit tests (TestFuzzRegressions) and seed the fuzzer.
var fuzzRegressions = []struct {
	name, kind         string
	last, config, live string
	patch              string // kubectl's, as value.Encode writes it
}{
	{
		// kubectl sorts live's list in place before it compares it with
		// the config's: the config's sorted values in another order than
		// live's get no $setElementOrder, and live keeps its order.
		name: "set-sorted-config-no-element-order", kind: "ConfigMap",
		last:   `{apiVersion: v1, kind: ConfigMap, metadata: {name: c, finalizers: [b, a]}}`,
		config: `{apiVersion: v1, kind: ConfigMap, metadata: {name: c, finalizers: [a, b]}}`,
		live:   `{apiVersion: v1, kind: ConfigMap, metadata: {name: c, finalizers: [b, a]}}`,
		patch:  `{}`,
	},
	{
		// ... and unsorted config values get one even where live's order
		// is the config's.
		name: "set-unsorted-config-element-order", kind: "ConfigMap",
		last:   `{apiVersion: v1, kind: ConfigMap, metadata: {name: c, finalizers: [b, a]}}`,
		config: `{apiVersion: v1, kind: ConfigMap, metadata: {name: c, finalizers: [b, a]}}`,
		live:   `{apiVersion: v1, kind: ConfigMap, metadata: {name: c, finalizers: [b, a]}}`,
		patch:  `{"metadata":{"$setElementOrder/finalizers":["b","a"]}}`,
	},
	{
		// kubectl apply --overwrite=false deduplicates and sorts, in
		// place in its patch, an atomic list of scalars it compares with
		// live's change to the same list: it sends [a, b, b], not the
		// config's [b, a, b] (checkTriple compares the patches).
		name: "overwrite-false-sorts-compared-lists", kind: "Deployment",
		last:   `{apiVersion: apps/v1, kind: Deployment, metadata: {name: d}, spec: {template: {spec: {containers: [{name: c, image: i, args: [x, y]}]}}}}`,
		config: `{apiVersion: apps/v1, kind: Deployment, metadata: {name: d}, spec: {template: {spec: {containers: [{name: c, image: i, args: [b, a, b]}]}}}}`,
		live:   `{apiVersion: apps/v1, kind: Deployment, metadata: {name: d}, spec: {template: {spec: {containers: [{name: c, image: i, args: [a, b, b]}]}}}}`,
	},
}

func TestFuzzRegressions(t *testing.T) {
	for _, r := range fuzzRegressions {
		t.Run(r.name, func(t *testing.T) {
			k := genKindByName(r.kind)
			tr := triple{Kind: k, Last: mustYAMLObject(t, r.last), Config: mustYAMLObject(t, r.config), Live: mustYAMLObject(t, r.live)}
			if err := checkTriple(t, tr, &diffStats{}); err != nil {
				t.Fatalf("%s\n%v", tr, err)
			}
			if r.patch == "" {
				return
			}
			patch, err := ThreeWay(tr.Last, tr.Config, tr.Live, k.Type(), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := diffEncode(t, patch); string(got) != r.patch {
				t.Errorf("patch\n got %s\nwant %s", got, r.patch)
			}
		})
	}
}

func genKindByName(name string) *genKind {
	for _, k := range genKinds {
		if k.Name == name {
			return k
		}
	}
	return nil
}
