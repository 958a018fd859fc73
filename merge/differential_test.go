package merge

import (
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	jsonpatchv4 "gopkg.in/evanphx/json-patch.v4"
	"k8s.io/apimachinery/pkg/util/jsonmergepatch"
	"k8s.io/apimachinery/pkg/util/mergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"github.com/konverge/konverge/lastapplied"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

// The differential tests: konverge's ThreeWay and Apply against kubectl's
// strategicpatch on generated triples (gen_test.go), and ThreeWayJSONMerge
// and MergePatch against apimachinery's jsonmergepatch and
// evanphx/json-patch on a custom resource.
//
// konverge differs from kubectl on purpose in a few ways, which the
// comparison allows for:
//
//   - lists whose elements share the patch merge key are merged by all
//     their key fields (TestDifferentialFullKeys; the generator keeps merge
//     keys unique elsewhere);
//   - Apply drops nulls and directives from the values it inserts, as an
//     API server does when it decodes the result: results are compared
//     after normalizeResult;
//   - numbers compare by value: results are compared as value.Encode
//     writes them;
//   - errors may differ in kind where both fail.
//
// Reproduce a failure with
//
//	go test ./merge -run 'TestDifferential$' -differential.kind=Deployment -differential.seed=1234 -v

var (
	diffN    = flag.Int("differential.n", 0, "triples per kind for TestDifferential (default 2000, 150 with -short)")
	diffSeed = flag.Int64("differential.seed", -1, "run TestDifferential on this one seed only")
	diffKind = flag.String("differential.kind", "", "run TestDifferential on this kind only")
)

// diffStats counts what the differential checks saw.
type diffStats struct {
	mu sync.Mutex

	triples        int
	lastNil        int
	bothErr        int
	patchEqual     int // patches byte-equal after value.Encode
	normalizedRef  int // the reference result needed normalizing
	normalizedOurs int // ours did
	fullKeyPatch   int // our patch used the full-key replace list
	secondEmpty    int // ThreeWay(config, config, result) was {}
	secondNoop     int // ... was not {}, but applying it changed nothing
	conflicts      int // both found a conflict
	noConflicts    int // neither did
	// the reference's conflict check failed (kubectl apply
	// --overwrite=false errors), and how often we found a conflict there
	refConflictErr, refConflictErrOurs int
	failures                           int
	examples                           []string // the first few non-equal patches

	// lenient skips the conflict check where kubectl's fails: fuzzed
	// objects have fields its Go structs lack.
	lenient bool
}

func (s *diffStats) add(o *diffStats) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.triples += o.triples
	s.lastNil += o.lastNil
	s.bothErr += o.bothErr
	s.patchEqual += o.patchEqual
	s.normalizedRef += o.normalizedRef
	s.normalizedOurs += o.normalizedOurs
	s.fullKeyPatch += o.fullKeyPatch
	s.secondEmpty += o.secondEmpty
	s.secondNoop += o.secondNoop
	s.conflicts += o.conflicts
	s.noConflicts += o.noConflicts
	s.refConflictErr += o.refConflictErr
	s.refConflictErrOurs += o.refConflictErrOurs
	s.failures += o.failures
	s.examples = append(s.examples, o.examples...)
}

func (s *diffStats) String() string {
	pct := func(n int) string {
		if s.triples == 0 {
			return "0"
		}
		return fmt.Sprintf("%d (%.2f%%)", n, 100*float64(n)/float64(s.triples))
	}
	return fmt.Sprintf("triples %d (last-applied nil %d), both error %d, failures %d\n"+
		"  patch byte-equal: %s\n"+
		"  normalization needed: reference result %s, ours %s\n"+
		"  second apply: empty patch %s, non-empty no-op patch %s\n"+
		"  conflict detection: both conflict %s, neither %s, reference errors %s (we find a conflict in %d)",
		s.triples, s.lastNil, s.bothErr, s.failures,
		pct(s.patchEqual), pct(s.normalizedRef), pct(s.normalizedOurs),
		pct(s.secondEmpty), pct(s.secondNoop), pct(s.conflicts), pct(s.noConflicts),
		pct(s.refConflictErr), s.refConflictErrOurs)
}

// normalizeResult removes what konverge's Apply drops and the reference
// keeps: null fields, directive fields and directive list elements. It
// reports whether it removed anything.
func normalizeResult(v any) (any, bool) {
	switch x := v.(type) {
	case map[string]any:
		changed := false
		out := make(map[string]any, len(x))
		for k, el := range x {
			if el == nil || isDirectiveKey(k) {
				changed = true
				continue
			}
			n, c := normalizeResult(el)
			changed = changed || c
			out[k] = n
		}
		return out, changed
	case []any:
		changed := false
		out := make([]any, 0, len(x))
		for _, el := range x {
			if m, ok := el.(map[string]any); ok {
				if _, ok := m[patchKey]; ok {
					changed = true
					continue
				}
			}
			n, c := normalizeResult(el)
			changed = changed || c
			out = append(out, n)
		}
		return out, changed
	}
	return v, false
}

func diffEncode(tb testing.TB, v any) []byte {
	tb.Helper()
	b, err := value.Encode(v)
	if err != nil {
		tb.Fatalf("encode: %v", err)
	}
	return b
}

func encodeOrNil(tb testing.TB, m map[string]any) []byte {
	if m == nil {
		return nil
	}
	return diffEncode(tb, m)
}

// safeReference is reference that turns a panic of strategicpatch into an
// error.
func safeReference(tb testing.TB, dataStruct any, last, config, live map[string]any, overwrite bool) (patch, result map[string]any, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("strategicpatch panicked: %v", r)
		}
	}()
	return reference(tb, dataStruct, last, config, live, overwrite)
}

// referenceApply applies a patch with strategicpatch.StrategicMergePatch.
func referenceApply(tb testing.TB, dataStruct any, live, patch map[string]any) (result map[string]any, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("strategicpatch panicked: %v", r)
		}
	}()
	out, err := strategicpatch.StrategicMergePatch(diffEncode(tb, live), diffEncode(tb, patch), dataStruct)
	if err != nil {
		return nil, err
	}
	return value.DecodeObject(out)
}

// checkTriple runs every differential check on one triple and returns
// what went wrong, or nil.
func checkTriple(tb testing.TB, tr triple, st *diffStats) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("konverge panicked: %v", r)
		}
		if err != nil {
			st.failures++
		}
	}()
	st.triples++
	if tr.Last == nil {
		st.lastNil++
	}
	k := tr.Kind
	typ := k.Type()
	before := string(encodeOrNil(tb, tr.Last)) + string(encodeOrNil(tb, tr.Config)) + string(encodeOrNil(tb, tr.Live))

	refPatch, refResult, refErr := safeReference(tb, k.newStruct(), tr.Last, tr.Config, tr.Live, true)
	patch, ourErr := ThreeWay(tr.Last, tr.Config, tr.Live, typ, Options{})
	var result map[string]any
	if ourErr == nil {
		result, ourErr = Apply(tr.Live, patch, typ)
	}
	after := string(encodeOrNil(tb, tr.Last)) + string(encodeOrNil(tb, tr.Config)) + string(encodeOrNil(tb, tr.Live))
	if before != after {
		return errors.New("ThreeWay or Apply modified its inputs")
	}
	// ThreeWayJSON (its fast path when it takes it) agrees with the maps.
	if err := compareJSONPaths(encodeOrNil(tb, tr.Last), encodeOrNil(tb, tr.Config), encodeOrNil(tb, tr.Live), typ); err != nil {
		return fmt.Errorf("ThreeWayJSON: %w", err)
	}
	switch {
	case ourErr != nil && refErr != nil:
		st.bothErr++
		return nil
	case ourErr != nil:
		return fmt.Errorf("only konverge fails: %v", ourErr)
	case refErr != nil:
		return fmt.Errorf("only the reference fails: %v\nour patch: %s", refErr, diffEncode(tb, patch))
	}

	// (a) the results, normalized.
	ourN, c1 := normalizeResult(result)
	refN, c2 := normalizeResult(refResult)
	if c1 {
		st.normalizedOurs++
	}
	if c2 {
		st.normalizedRef++
	}
	ourRJ, refRJ := diffEncode(tb, ourN), diffEncode(tb, refN)
	ourPJ, refPJ := diffEncode(tb, patch), diffEncode(tb, refPatch)
	if string(ourRJ) != string(refRJ) {
		return fmt.Errorf("results differ\n ours: %s\n  ref: %s\nour patch: %s\nref patch: %s", ourRJ, refRJ, ourPJ, refPJ)
	}

	// (b) the patches: byte equality counted, equivalence required.
	if string(ourPJ) == string(refPJ) {
		st.patchEqual++
	} else {
		if strings.Contains(string(ourPJ), `"$patch":"replace"`) {
			st.fullKeyPatch++
		}
		if len(st.examples) < 3 {
			st.examples = append(st.examples, fmt.Sprintf("%s\n ours: %s\n  ref: %s", tr.Kind.Name, ourPJ, refPJ))
		}
		viaRef, err := referenceApply(tb, k.newStruct(), tr.Live, patch)
		if err != nil {
			return fmt.Errorf("the reference cannot apply our patch: %v\nour patch: %s\nref patch: %s", err, ourPJ, refPJ)
		}
		viaRefN, _ := normalizeResult(viaRef)
		if got := diffEncode(tb, viaRefN); string(got) != string(refRJ) {
			return fmt.Errorf("our patch applied by the reference gives another result\n  got: %s\n want: %s\nour patch: %s\nref patch: %s", got, refRJ, ourPJ, refPJ)
		}
	}

	// (c) a second apply of the same config changes nothing.
	second, err := ThreeWay(tr.Config, tr.Config, result, typ, Options{})
	if err != nil {
		return fmt.Errorf("second ThreeWay: %v", err)
	}
	if len(second) == 0 {
		st.secondEmpty++
	} else {
		again, err := Apply(result, second, typ)
		if err != nil {
			return fmt.Errorf("second Apply: %v", err)
		}
		if !value.Equal(again, result) {
			return fmt.Errorf("a second apply changes the object\nsecond patch: %s\n  result: %s\n   again: %s", diffEncode(tb, second), ourRJ, diffEncode(tb, again))
		}
		st.secondNoop++
	}

	// (d) conflicts, as kubectl apply --overwrite=false finds them.
	ourCPatch, ourCErr := ThreeWay(tr.Last, tr.Config, tr.Live, typ, Options{DetectConflicts: true})
	refCPatch, _, refCErr := safeReference(tb, k.newStruct(), tr.Last, tr.Config, tr.Live, false)
	ourC, refC := errors.Is(ourCErr, ErrConflict), refCErr != nil && mergepatch.IsConflict(refCErr)
	if ourCErr != nil && !ourC {
		return fmt.Errorf("ThreeWay with DetectConflicts: %v", ourCErr)
	}
	if refCErr != nil && !refC {
		// kubectl's conflict check fails where the patch and live's
		// changes both hold a $deleteFromPrimitiveList key (it looks up
		// its schema) or an empty list at the same position (it cannot
		// tell the element type); kubectl apply --overwrite=false then
		// errors. Count these, with our answer.
		msg := refCErr.Error()
		if st.lenient {
			return nil
		}
		if !strings.Contains(msg, `for the json field "$deleteFromPrimitiveList/`) && !strings.Contains(msg, "no elements in any of the given slices") {
			return fmt.Errorf("reference with overwrite=false: %v", refCErr)
		}
		st.refConflictErr++
		if ourC {
			st.refConflictErrOurs++
		}
		return nil
	}
	switch {
	case ourC && refC:
		st.conflicts++
	case !ourC && !refC:
		st.noConflicts++
		// kubectl sorts some lists of its patch while it looks for
		// conflicts; konverge's patch must be the same.
		if a, b := diffEncode(tb, ourCPatch), diffEncode(tb, refCPatch); string(a) != string(b) {
			return fmt.Errorf("patches without conflicts differ\n ours: %s\n  ref: %s", a, b)
		}
	case ourC:
		return fmt.Errorf("only konverge finds a conflict: %v\npatch: %s", ourCErr, ourPJ)
	default:
		return fmt.Errorf("only the reference finds a conflict: %v\npatch: %s", refCErr, ourPJ)
	}
	return nil
}

func TestDifferential(t *testing.T) {
	n := *diffN
	if n == 0 {
		n = 2000
		if testing.Short() {
			n = 150
		}
	}
	total := &diffStats{}
	start := time.Now()
	t.Run("kinds", func(t *testing.T) {
		for ki, k := range genKinds {
			if *diffKind != "" && *diffKind != k.Name {
				continue
			}
			t.Run(k.Name, func(t *testing.T) {
				t.Parallel()
				st := &diffStats{}
				defer total.add(st)
				for i := range n {
					seed := uint64(ki)*1_000_000 + uint64(i)
					if *diffSeed >= 0 {
						if i > 0 {
							break
						}
						seed = uint64(*diffSeed)
					}
					tr := newGen(seed, nil).triple(k)
					if err := checkTriple(t, tr, st); err != nil {
						if st.failures <= 3 {
							t.Errorf("seed %d (-differential.kind=%s -differential.seed=%d):\n%s\n%v", seed, k.Name, seed, tr, err)
						}
					}
				}
				if st.failures > 3 {
					t.Errorf("%d more failures", st.failures-3)
				}
			})
		}
	})
	t.Logf("%s in %v", total, time.Since(start).Round(time.Millisecond))
	for _, ex := range total.examples {
		t.Logf("a patch that differs from kubectl's:\n%s", ex)
	}
}

// ---------------------------------------------------------------------------
// Lists whose elements share a merge key (a deliberate difference).

// collisionList is a list konverge merges by full key: where it is in its
// kind and how to make its elements.
type collisionList struct {
	kind  string
	path  []string // to the list; "containers" steps into the first container
	keys  []string
	defs  map[string]any // key field defaults
	make_ func(g *gen, id []any, live bool) map[string]any
	ids   [][]any // the identities elements are drawn from
}

var collisionLists = []collisionList{
	{
		kind: "Deployment", path: []string{"spec", "template", "spec", "containers", "ports"},
		keys: []string{"containerPort", "protocol"}, defs: map[string]any{"protocol": "TCP"},
		ids: [][]any{{int64(53), "TCP"}, {int64(53), "UDP"}, {int64(80), "TCP"}, {int64(8080), "TCP"}, {int64(8080), "UDP"}, {int64(53), "SCTP"}},
		make_: func(g *gen, id []any, live bool) map[string]any {
			m := map[string]any{"containerPort": id[0]}
			if live || id[1] != "TCP" || g.pct(50) {
				m["protocol"] = id[1]
			}
			if g.pct(50) {
				m["name"] = g.pick("dns", "dns-tcp", "http", "alt")
			}
			if g.pct(20) {
				m["hostPort"] = int64(30000 + g.intn(10))
			}
			return m
		},
	},
	{
		kind: "Deployment", path: []string{"spec", "template", "spec", "topologySpreadConstraints"},
		keys: []string{"topologyKey", "whenUnsatisfiable"},
		ids:  [][]any{{"zone", "DoNotSchedule"}, {"zone", "ScheduleAnyway"}, {"host", "DoNotSchedule"}, {"host", "ScheduleAnyway"}},
		make_: func(g *gen, id []any, live bool) map[string]any {
			m := map[string]any{"topologyKey": id[0], "whenUnsatisfiable": id[1], "maxSkew": int64(1 + g.intn(3))}
			if g.pct(50) {
				m["labelSelector"] = map[string]any{"matchLabels": map[string]any{"app": g.pick("a", "b")}}
			}
			return m
		},
	},
	{
		kind: "Service", path: []string{"spec", "ports"},
		keys: []string{"port", "protocol"}, defs: map[string]any{"protocol": "TCP"},
		ids: [][]any{{int64(53), "TCP"}, {int64(53), "UDP"}, {int64(80), "TCP"}, {int64(443), "TCP"}, {int64(443), "UDP"}},
		make_: func(g *gen, id []any, live bool) map[string]any {
			m := map[string]any{"port": id[0]}
			if live || id[1] != "TCP" || g.pct(50) {
				m["protocol"] = id[1]
			}
			if g.pct(60) {
				m["name"] = g.fresh("p")
			}
			if g.pct(50) || live {
				m["targetPort"] = id[0]
			}
			return m
		},
	},
}

// listAt returns the map holding the list at path in obj and the list's
// field name, creating the maps on the way.
func listAt(obj map[string]any, path []string) (map[string]any, string) {
	m := obj
	for _, p := range path[:len(path)-1] {
		if p == "containers" {
			cs, _ := m[p].([]any)
			m = cs[0].(map[string]any)
			continue
		}
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	return m, path[len(path)-1]
}

func (c *collisionList) keyOf(m map[string]any) string {
	var parts []string
	for _, k := range c.keys {
		v, ok := m[k]
		if !ok {
			v = c.defs[k]
		}
		parts = append(parts, keyString(v))
	}
	return strings.Join(parts, "/")
}

// subset draws a random list of distinct identities, forcing a shared
// merge key when collide is set.
func (c *collisionList) subset(g *gen, collide, live bool) []any {
	var out []any
	seen := map[int]bool{}
	if collide {
		// the first two identities share the merge key
		for _, i := range []int{0, 1} {
			seen[i] = true
			out = append(out, c.make_(g, c.ids[i], live))
		}
	}
	for n := g.intn(len(c.ids)); n > 0; n-- {
		i := g.intn(len(c.ids))
		if seen[i] {
			continue
		}
		seen[i] = true
		out = slices.Insert(out, g.intn(len(out)+1), any(c.make_(g, c.ids[i], live)))
	}
	return out
}

// TestDifferentialFullKeys checks konverge's semantics for lists whose
// elements share the patch merge key but differ in another key field:
// every element of the config is kept (with the config's fields),
// live-only elements are kept, elements only the last apply had are
// deleted, and kubectl's StrategicMergePatch applying our patch agrees.
func TestDifferentialFullKeys(t *testing.T) {
	n := 2000
	if testing.Short() {
		n = 200
	}
	for ci := range collisionLists {
		c := &collisionLists[ci]
		t.Run(c.kind+"."+strings.Join(c.path, "."), func(t *testing.T) {
			k := genKindByGVK(map[string]schema.GVK{"Deployment": genKinds[0].GVK, "Service": genKinds[2].GVK}[c.kind])
			typ := k.Type()
			collisions := 0
			defer func() { t.Logf("%d triples, %d with a shared merge key", n, collisions) }()
			for i := range n {
				seed := uint64(ci)*1_000_000 + uint64(i)
				g := newGen(seed, nil)
				tr := g.triple(k)
				if tr.Last == nil {
					tr.Last = value.DeepCopyObject(tr.Config)
					delete(tr.Last, "spec")
				}
				collideIn := g.intn(3) // which of last, config, live surely collides
				setList := func(obj map[string]any, which int, live bool) []any {
					if _, ok := obj["spec"].(map[string]any); !ok {
						obj["spec"] = map[string]any{}
					}
					if len(c.path) > 3 && c.path[3] == "containers" {
						// make sure there is a first container
						ps, _ := listAt(obj, c.path[:4])
						if cs, _ := ps["containers"].([]any); len(cs) == 0 {
							ps["containers"] = []any{map[string]any{"name": "app", "image": "x"}}
						}
					}
					m, f := listAt(obj, c.path)
					if g.pct(10) {
						delete(m, f)
						return nil
					}
					l := c.subset(g, collideIn == which, live)
					if l == nil {
						l = []any{}
					}
					m[f] = l
					return l
				}
				lastL := setList(tr.Last, 0, false)
				confL := setList(tr.Config, 1, false)
				liveL := setList(tr.Live, 2, true)
				if len(c.path) > 3 && c.path[3] == "containers" {
					// the list's container must be the same one in all three
					for _, obj := range []map[string]any{tr.Last, tr.Config, tr.Live} {
						ps, _ := listAt(obj, c.path[:4])
						cs := ps["containers"].([]any)
						cs[0].(map[string]any)["name"] = "first"
						for j := 1; j < len(cs); j++ {
							if cs[j].(map[string]any)["name"] == "first" {
								cs[j].(map[string]any)["name"] = "other-first"
							}
						}
					}
				}
				fail := func(format string, args ...any) {
					t.Helper()
					t.Fatalf("seed %d: %s\n%s", seed, fmt.Sprintf(format, args...), tr)
				}
				patch, err := ThreeWay(tr.Last, tr.Config, tr.Live, typ, Options{})
				if err != nil {
					fail("ThreeWay: %v", err)
				}
				result, err := Apply(tr.Live, patch, typ)
				if err != nil {
					fail("Apply: %v", err)
				}
				// kubectl's server side applying our patch agrees.
				viaRef, err := referenceApply(t, k.newStruct(), tr.Live, patch)
				if err != nil {
					fail("the reference cannot apply our patch %s: %v", diffEncode(t, patch), err)
				}
				ourN, _ := normalizeResult(result)
				refN, _ := normalizeResult(viaRef)
				if a, b := diffEncode(t, ourN), diffEncode(t, refN); string(a) != string(b) {
					fail("our patch applied by the reference gives another result\n ours: %s\n  ref: %s\npatch: %s", a, b, diffEncode(t, patch))
				}
				// our semantics, where some list has elements that share a
				// merge key (elsewhere they are kubectl's, which
				// TestDifferential checks)
				dup := false
				for _, l := range [][]any{lastL, confL, liveL} {
					seen := map[any]bool{}
					for _, v := range l {
						id := comparable(v.(map[string]any)[c.keys[0]])
						dup = dup || seen[id]
						seen[id] = true
					}
				}
				if !dup {
					continue
				}
				collisions++
				m, f := listAt(result, c.path)
				got, _ := m[f].([]any)
				byKey := map[string]map[string]any{}
				for _, v := range got {
					e := v.(map[string]any)
					kk := c.keyOf(e)
					if byKey[kk] != nil {
						fail("result has %s twice: %s", kk, diffEncode(t, got))
					}
					byKey[kk] = e
				}
				index := func(l []any) map[string]map[string]any {
					out := map[string]map[string]any{}
					for _, v := range l {
						out[c.keyOf(v.(map[string]any))] = v.(map[string]any)
					}
					return out
				}
				lastK, confK, liveK := index(lastL), index(confL), index(liveL)
				if confL == nil && lastL != nil {
					// the config dropped the whole field: it goes
					if _, ok := m[f]; ok {
						fail("the config dropped the list, the result has %s", diffEncode(t, got))
					}
					continue
				}
				// The server groups elements that share a merge key where the
				// first of them is: the config's order holds among the others.
				mkCount := map[any]int{}
				for _, v := range got {
					mkCount[comparable(v.(map[string]any)[c.keys[0]])]++
				}
				want := 0
				pos := -1
				for _, v := range confL {
					ce := v.(map[string]any)
					kk := c.keyOf(ce)
					re := byKey[kk]
					if re == nil {
						fail("config element %s missing from the result %s", kk, diffEncode(t, got))
					}
					for f, cv := range ce {
						if !value.Equal(re[f], cv) {
							fail("config element %s: %s is %v in the result", kk, f, re[f])
						}
					}
					if le := liveK[kk]; le != nil {
						for f, lv := range le {
							if _, inC := ce[f]; inC {
								continue
							}
							if la := lastK[kk]; la != nil {
								if _, inLast := la[f]; inLast {
									continue
								}
							}
							if !value.Equal(re[f], lv) {
								fail("element %s: live-only field %s lost", kk, f)
							}
						}
					}
					if mkCount[comparable(ce[c.keys[0]])] == 1 {
						p := slices.IndexFunc(got, func(x any) bool { return c.keyOf(x.(map[string]any)) == kk })
						if p < pos {
							fail("config order lost: %s", diffEncode(t, got))
						}
						pos = p
					}
					want++
				}
				for kk, le := range liveK {
					if confK[kk] != nil || lastK[kk] != nil {
						continue
					}
					if !value.Equal(byKey[kk], le) {
						fail("live-only element %s not kept: %s", kk, diffEncode(t, got))
					}
					want++
				}
				if len(got) != want {
					fail("result has %d elements, want %d (config, then live-only): %s", len(got), want, diffEncode(t, got))
				}
				// a second apply changes nothing
				second, err := ThreeWay(tr.Config, tr.Config, result, typ, Options{})
				if err != nil {
					fail("second ThreeWay: %v", err)
				}
				again, err := Apply(result, second, typ)
				if err != nil || !value.Equal(again, result) {
					fail("second apply changes the result (%v): %s", err, diffEncode(t, second))
				}
				if b := diffEncode(t, second); strings.Contains(string(b), `"$patch":"replace"`) {
					fail("a second apply sends the list again: %s", b)
				}
			}
		})
	}
}

// ---------------------------------------------------------------------------
// A custom resource.

const widgetCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              replicas: {type: integer}
              image: {type: string}
              paused: {type: boolean}
              size: {x-kubernetes-int-or-string: true}
              ports:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [port, protocol]
                items:
                  type: object
                  required: [port]
                  properties:
                    port: {type: integer}
                    protocol: {type: string, default: TCP}
                    name: {type: string}
              members:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items:
                  type: object
                  required: [name]
                  properties:
                    name: {type: string}
                    role: {type: string}
                    weight: {type: integer}
                    tags: {type: array, x-kubernetes-list-type: set, items: {type: string}}
                    settings: {type: object, additionalProperties: {type: string}}
              tags: {type: array, x-kubernetes-list-type: set, items: {type: string}}
              args: {type: array, x-kubernetes-list-type: atomic, items: {type: string}}
              selector: {type: object, x-kubernetes-map-type: atomic, additionalProperties: {type: string}}
              labels: {type: object, additionalProperties: {type: string}}
              extra: {type: object, x-kubernetes-preserve-unknown-fields: true}
          status:
            type: object
            properties:
              phase: {type: string}
              observed: {type: integer}
`

func widgetType(tb testing.TB) *schema.Type {
	tb.Helper()
	versions, err := schema.FromCRD(mustYAMLObject(tb, widgetCRD))
	if err != nil {
		tb.Fatal(err)
	}
	if len(versions) != 1 || versions[0].GVK != (schema.GVK{Group: "example.com", Version: "v1", Kind: "Widget"}) {
		tb.Fatalf("unexpected versions %+v", versions)
	}
	return versions[0].Type
}

// TestDifferentialJSONMerge compares ThreeWayJSONMerge and MergePatch, what
// kubectl sends custom resources, with apimachinery's
// CreateThreeWayJSONMergePatch and evanphx/json-patch (v4, as the API
// server uses it).
func TestDifferentialJSONMerge(t *testing.T) {
	typ := widgetType(t)
	n := 3000
	if testing.Short() {
		n = 300
	}
	equal, conflicts := 0, 0
	for i := range n {
		seed := uint64(7_000_000 + i)
		last, config, live := newGen(seed, nil).widgetTriple(typ)
		tr := triple{Kind: &genKind{Name: "Widget"}, Last: last, Config: config, Live: live}
		fail := func(format string, args ...any) {
			t.Helper()
			t.Fatalf("seed %d: %s\n%s", seed, fmt.Sprintf(format, args...), tr)
		}
		refPB, refErr := jsonmergepatch.CreateThreeWayJSONMergePatch(encodeOrNil(t, last), diffEncode(t, config), diffEncode(t, live))
		patch, err := ThreeWayJSONMerge(last, config, live)
		if err != nil {
			fail("ThreeWayJSONMerge: %v", err)
		}
		if refErr != nil {
			// kubectl refuses patches whose changes and deletions overlap;
			// konverge's changes win.
			if !mergepatch.IsConflict(refErr) {
				fail("reference: %v", refErr)
			}
			conflicts++
			continue
		}
		refPatch, err := value.DecodeObject(refPB)
		if err != nil {
			fail("reference patch %s: %v", refPB, err)
		}
		pj, rpj := diffEncode(t, patch), diffEncode(t, refPatch)
		if string(pj) != string(rpj) {
			fail("patches differ\n ours: %s\n  ref: %s", pj, rpj)
		}
		equal++
		result := MergePatch(live, patch)
		refRB, err := jsonpatchv4.MergePatch(diffEncode(t, live), refPB)
		if err != nil {
			fail("reference MergePatch: %v", err)
		}
		refResult, err := value.DecodeObject(refRB)
		if err != nil {
			fail("reference result %s: %v", refRB, err)
		}
		if a, b := diffEncode(t, result), diffEncode(t, refResult); string(a) != string(b) {
			fail("results differ\n ours: %s\n  ref: %s\npatch: %s", a, b, pj)
		}
		second, err := ThreeWayJSONMerge(config, config, result)
		if err != nil {
			fail("second ThreeWayJSONMerge: %v", err)
		}
		if again := MergePatch(result, second); !value.Equal(again, result) {
			fail("a second apply changes the object: %s", diffEncode(t, second))
		}
	}
	t.Logf("%d triples: %d patches byte-equal, %d the reference refuses as conflicting", n, equal, conflicts)
}

// TestDifferentialCRD checks that ThreeWay with a CRD's schema merges lists
// by their x-kubernetes-list-type: the result is what modelMerge, a
// direct statement of three-way merge semantics, says, and a second apply
// is a no-op.
func TestDifferentialCRD(t *testing.T) {
	typ := widgetType(t)
	n := 3000
	if testing.Short() {
		n = 300
	}
	checked, invalid := 0, 0
	for i := range n {
		seed := uint64(8_000_000 + i)
		last, config, live := newGen(seed, nil).widgetTriple(typ)
		tr := triple{Kind: &genKind{Name: "Widget"}, Last: last, Config: config, Live: live}
		fail := func(format string, args ...any) {
			t.Helper()
			t.Fatalf("seed %d: %s\n%s", seed, fmt.Sprintf(format, args...), tr)
		}
		// Edits may give two ports one port and protocol; such objects are
		// invalid and konverge says so.
		if Validate(config, typ) != nil || Validate(live, typ) != nil || (last != nil && Validate(last, typ) != nil) {
			if _, err := ThreeWay(last, config, live, typ, Options{}); err == nil && Validate(config, typ) != nil {
				fail("ThreeWay accepts an invalid config")
			}
			invalid++
			continue
		}
		checked++
		patch, err := ThreeWay(last, config, live, typ, Options{})
		if err != nil {
			fail("ThreeWay: %v", err)
		}
		result, err := Apply(live, patch, typ)
		if err != nil {
			fail("Apply: %v\npatch: %s", err, diffEncode(t, patch))
		}
		want := modelMerge(last, config, live, typ)
		got, wantC := canonical(result, typ), canonical(want, typ)
		if a, b := diffEncode(t, got), diffEncode(t, wantC); string(a) != string(b) {
			fail("result is not the three-way merge\n  got: %s\n want: %s\npatch: %s", a, b, diffEncode(t, patch))
		}
		second, err := ThreeWay(config, config, result, typ, Options{})
		if err != nil {
			fail("second ThreeWay: %v", err)
		}
		again, err := Apply(result, second, typ)
		if err != nil || !value.Equal(again, result) {
			fail("a second apply changes the object (%v): %s", err, diffEncode(t, second))
		}
	}
	t.Logf("%d triples: %d checked, %d with an invalid object", n, checked, invalid)
}

// modelMerge is the object client-side apply should produce, stated
// directly: a field the config sets is merged (objects) or replaced
// (scalars, atomic lists, atomic maps); a field only live has stays unless
// the last apply set it; sets are the config's values plus live's that the
// last apply did not set; lists of objects merged by key hold the config's
// elements, each merged with live's element of the same key, plus live's
// elements that neither the config nor the last apply has (the key is the
// merge key, or all key fields where two elements of one of the lists
// share the merge key: konverge's deliberate difference). Nulls in the
// config delete. Order is not modelled (see canonical).
func modelMerge(last, config, live any, t *schema.Type) any {
	switch c := config.(type) {
	case map[string]any:
		if t.Replace {
			return stripNulls(value.DeepCopy(c))
		}
		lm, _ := live.(map[string]any)
		la, _ := last.(map[string]any)
		out := map[string]any{}
		for k, v := range lm {
			_, inC := c[k]
			_, inLast := la[k]
			if !inC && !inLast {
				out[k] = v
			}
		}
		for k, cv := range c {
			if cv != nil {
				out[k] = modelMerge(la[k], cv, lm[k], t.Field(k))
			}
		}
		return out
	case []any:
		if t.KindOf() != schema.List || t.ListType == schema.Atomic {
			return stripNulls(value.DeepCopy(c))
		}
		ll, _ := live.([]any)
		la, _ := last.([]any)
		if t.ListType == schema.Set {
			out := slices.Clone(c)
			has := func(l []any, v any) bool {
				return slices.ContainsFunc(l, func(x any) bool { return value.Equal(x, v) })
			}
			for _, v := range ll {
				if !has(c, v) && !has(la, v) {
					out = append(out, v)
				}
			}
			return out
		}
		// Elements are identified by the merge key, or by all key fields
		// where some list has two elements with one merge key.
		byFull := false
		for _, l := range [][]any{c, ll, la} {
			seen := map[any]bool{}
			for _, v := range l {
				id := comparable(v.(map[string]any)[t.MergeKey])
				byFull = byFull || seen[id]
				seen[id] = true
			}
		}
		key := func(v any) string {
			if !byFull {
				return keyString(v.(map[string]any)[t.MergeKey])
			}
			k, _, err := fullKey(v, t, 0)
			if err != nil {
				panic(err)
			}
			return k
		}
		find := func(l []any, k string) any {
			for _, v := range l {
				if key(v) == k {
					return v
				}
			}
			return nil
		}
		var out []any
		for _, ce := range c {
			k := key(ce)
			out = append(out, modelMerge(find(la, k), ce, find(ll, k), t.Element()))
		}
		for _, le := range ll {
			k := key(le)
			if find(c, k) == nil && find(la, k) == nil {
				out = append(out, le)
			}
		}
		if out == nil {
			out = []any{}
		}
		return out
	}
	return config
}

// canonical sorts sets and lists merged by key, so that results compare
// without their order.
func canonical(v any, t *schema.Type) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, el := range x {
			out[k] = canonical(el, t.Field(k))
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, el := range x {
			out[i] = canonical(el, t.Element())
		}
		if listMerges(t) {
			keyOf := func(v any) string {
				if t.ListType == schema.Set {
					return keyString(v)
				}
				k, _, _ := fullKey(v, t, 0)
				return k
			}
			slices.SortStableFunc(out, func(a, b any) int { return strings.Compare(keyOf(a), keyOf(b)) })
		}
		return out
	}
	return v
}

// TestFullKeyRegressions are lists merged by full key that a second apply
// used to send again (TestDifferentialFullKeys found them): the API server
// groups elements that share a merge key, so the order konverge asked for
// never came back.
func TestFullKeyRegressions(t *testing.T) {
	svc := genKindByName("Service").Type()
	dep := genKindByName("Deployment").Type()
	for _, tc := range []struct {
		name               string
		typ                *schema.Type
		last, config, live string
		want               string // the list in the result
		path               []string
	}{
		{
			name: "service-ports-grouped-by-the-server", typ: svc, path: []string{"spec", "ports"},
			last:   `{spec: {ports: [{port: 443, protocol: UDP}]}}`,
			config: `{spec: {ports: [{port: 80}, {port: 53, protocol: UDP}]}}`,
			live:   `{spec: {ports: [{port: 53, protocol: TCP}, {port: 80, protocol: TCP}, {port: 443, protocol: UDP}, {port: 53, protocol: UDP}]}}`,
			want:   `[{port: 80, protocol: TCP}, {port: 53, protocol: UDP}, {port: 53, protocol: TCP}]`,
		},
		{
			name: "service-ports-added-whole", typ: svc, path: []string{"spec", "ports"},
			last:   `{spec: {}}`,
			config: `{spec: {ports: [{port: 53}, {port: 443}, {port: 53, protocol: UDP}]}}`,
			live:   `{spec: {type: ClusterIP}}`,
			want:   `[{port: 53}, {port: 443}, {port: 53, protocol: UDP}]`,
		},
		{
			name: "container-ports-live-only-sharing-a-key", typ: dep, path: []string{"spec", "template", "spec", "containers", "ports"},
			last:   `{spec: {template: {spec: {containers: [{name: a, ports: [{containerPort: 53, protocol: UDP}, {containerPort: 8080}, {containerPort: 80, name: http}]}]}}}}`,
			config: `{spec: {template: {spec: {containers: [{name: a, ports: [{containerPort: 53}, {containerPort: 8080}, {containerPort: 80}, {containerPort: 53, protocol: UDP}]}]}}}}`,
			live:   `{spec: {template: {spec: {containers: [{name: a, ports: [{containerPort: 80, hostPort: 30008, protocol: TCP}, {containerPort: 53, protocol: SCTP}]}]}}}}`,
			want:   `[{containerPort: 53}, {containerPort: 53, protocol: UDP}, {containerPort: 53, protocol: SCTP}, {containerPort: 8080}, {containerPort: 80, hostPort: 30008, protocol: TCP}]`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			last, config, live := mustYAMLObject(t, tc.last), mustYAMLObject(t, tc.config), mustYAMLObject(t, tc.live)
			patch, err := ThreeWay(last, config, live, tc.typ, Options{})
			if err != nil {
				t.Fatal(err)
			}
			result, err := Apply(live, patch, tc.typ)
			if err != nil {
				t.Fatal(err)
			}
			m, f := listAt(value.DeepCopyObject(result), tc.path)
			if got, want := diffEncode(t, m[f]), diffEncode(t, mustYAMLObject(t, `{l: `+tc.want+`}`)["l"]); string(got) != string(want) {
				t.Errorf("result list\n got %s\nwant %s", got, want)
			}
			second, err := ThreeWay(config, config, result, tc.typ, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(second) != 0 {
				t.Errorf("second apply patch %s, want {}", diffEncode(t, second))
			}
		})
	}
}

// TestJSONMergeRegressions are JSON merge patches that differed from
// kubectl's (TestDifferentialJSONMerge found them).
func TestJSONMergeRegressions(t *testing.T) {
	for _, tc := range []struct {
		name, last, config, live string
		want                     string
	}{
		{
			// evanphx/json-patch drops the nulls of a value it adds to
			// the deletions patch, also inside lists.
			name:   "nulls-in-a-list-dropped",
			last:   `{spec: {ports: [{port: 443, protocol: TCP}]}}`,
			config: `{spec: {args: [a], ports: [{port: 443, protocol: null}]}}`,
			live:   `{spec: {ports: [{port: 443, protocol: TCP}]}}`,
			want:   `{"spec":{"args":["a"],"ports":[{"port":443}]}}`,
		},
		{
			name:   "nulls-dropped-from-a-type-change",
			last:   `{spec: {a: {x: 1}, b: 1}}`,
			config: `{spec: {a: [{y: null}]}}`,
			live:   `{spec: {a: {x: 1}, b: 1}}`,
			want:   `{"spec":{"a":[{}],"b":null}}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			last, config, live := mustYAMLObject(t, tc.last), mustYAMLObject(t, tc.config), mustYAMLObject(t, tc.live)
			patch, err := ThreeWayJSONMerge(last, config, live)
			if err != nil {
				t.Fatal(err)
			}
			ref, err := jsonmergepatch.CreateThreeWayJSONMergePatch(diffEncode(t, last), diffEncode(t, config), diffEncode(t, live))
			if err != nil {
				t.Fatal(err)
			}
			refPatch, _ := value.DecodeObject(ref)
			if got, refJ := diffEncode(t, patch), diffEncode(t, refPatch); string(got) != tc.want || string(refJ) != tc.want {
				t.Errorf("patch\n got %s\n ref %s\nwant %s", got, refJ, tc.want)
			}
		})
	}
}

// TestThreeWayReappliedAgrees checks ThreeWayReapplied against ThreeWay on
// generated objects applied again: with lastApplied the config itself,
// and with the config carrying its last-applied annotation and
// lastApplied without it (as kubectl's apply sees an unchanged config).
func TestThreeWayReappliedAgrees(t *testing.T) {
	n := 300
	if testing.Short() {
		n = 50
	}
	for ki, k := range genKinds {
		t.Run(k.Name, func(t *testing.T) {
			typ := k.Type()
			for i := range n {
				seed := uint64(ki)*1_000_000 + uint64(i)
				tr := newGen(seed, nil).triple(k)
				if tr.Config == nil {
					continue
				}
				modified, err := lastapplied.Set(tr.Config)
				if err != nil {
					continue
				}
				for _, c := range []struct{ last, config map[string]any }{
					{tr.Config, tr.Config},
					{lastapplied.Strip(modified), modified},
				} {
					want, werr := ThreeWay(c.last, c.config, tr.Live, typ, Options{})
					got, gerr := ThreeWayReapplied(c.last, c.config, tr.Live, typ, Options{})
					if (werr != nil) != (gerr != nil) || !value.Equal(got, want) {
						t.Fatalf("seed %d: ThreeWayReapplied gives %v (%v), ThreeWay %v (%v)", seed, got, gerr, want, werr)
					}
					if werr == nil && len(want) > 0 {
						got, gerr = ThreeWayReapplied(c.last, c.config, tr.Live, typ, Options{Validated: true})
						if gerr != nil || !value.Equal(got, want) {
							t.Fatalf("seed %d: validated: %v (%v), want %v", seed, got, gerr, want)
						}
					}
				}
			}
		})
	}
}
