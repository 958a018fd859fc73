package apply

import (
	"errors"
	"fmt"
	"hash/maphash"
	"maps"
	"slices"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/internal/parallel"
	"github.com/konverge/konverge/manifest"
	"github.com/konverge/konverge/merge"
	"github.com/konverge/konverge/objref"
	"github.com/konverge/konverge/prune"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/selector"
)

// InputFile is the file name of the Source that Objects gives objects built
// in code: "input#3" is the third.
const InputFile = "input"

// Objects turns objects built in code into the input of Apply, each with a
// synthetic Source ("input#1", "input#2", ...) that errors name. The
// objects are not copied; Apply does not modify them.
func Objects(objs ...map[string]any) []manifest.Object {
	out := make([]manifest.Object, len(objs))
	for i, obj := range objs {
		out[i] = manifest.Object{Obj: obj, Source: manifest.Source{File: InputFile, Doc: i + 1}}
	}
	return out
}

var (
	crdGroup = "apiextensions.k8s.io"
)

// item is one object of the input, resolved and ready to apply.
type item struct {
	// idx is the item's position in the input (after -l): the order
	// kubectl prints results in.
	idx int
	src manifest.Source
	ref objref.Ref
	// res is shared by the items of a kind (kindCache): not to be
	// written through.
	res *cluster.Resource
	// typ is the merge schema of the kind (nil: JSON merge semantics).
	typ *schema.Type
	// config is the object to apply: the input with its namespace
	// settled and, with an ApplySet, the member label; shares values with
	// the input, which is never modified.
	config map[string]any
	// addNS, when not empty, is the namespace the object is applied in,
	// which config leaves out: resolve settles the namespace of an input
	// without one without copying it (fullConfig copies it), for an
	// object found applied as it is needs no copy (makePlan).
	addNS string
	// crd is the CustomResourceDefinition of the input that defines the
	// kind, when the API did not serve the kind before the apply.
	crd *inputCRD
	// digest is the digest of the object of the input, for a Planner
	// with memory (memo.go); digestOK when it could be computed.
	digest   uint64
	digestOK bool
	// entry is the memory's entry the item was taken from: it was
	// resolved and validated as it is.
	entry *memoEntry
	// rk is the item's rank (rankOf its ref).
	rk int8
}

// fullConfig is the config with its namespace: config, or a copy of it
// with addNS.
func (it *item) fullConfig() map[string]any {
	if it.addNS == "" {
		return it.config
	}
	return objref.WithMetadata(it.config, "namespace", it.addNS)
}

func (it *item) isSecret() bool    { return it.ref.Group == "" && it.ref.Kind == "Secret" }
func (it *item) isNamespace() bool { return it.ref.Group == "" && it.ref.Kind == "Namespace" }
func (it *item) isCRD() bool {
	return it.ref.Group == crdGroup && it.ref.Kind == "CustomResourceDefinition"
}

// rank orders items: Namespaces, then CustomResourceDefinitions, then the
// rest, each in input order.
func (it *item) rank() int { return int(it.rk) }

// rankOf is the rank of an object of that kind, set in item.rk when the
// item is made.
func rankOf(ref objref.Ref) int8 {
	switch {
	case ref.Group == "" && ref.Kind == "Namespace":
		return 0
	case ref.Group == crdGroup && ref.Kind == "CustomResourceDefinition":
		return 1
	}
	return 2
}

// unresolved is the resource of an item before resolve finds it.
var unresolved cluster.Resource

// objectKey identifies an object across versions of its kind.
type objectKey struct{ group, kind, namespace, name string }

// prepare resolves, namespaces, labels, validates and orders the input.
// It returns the objects without problems, in the order they are applied,
// and the problems of the others in errs; err is a problem of the input as
// a whole.
func prepare(objs []manifest.Object, m cluster.Mapper, opts Options, set *prune.ApplySet, errs *errorList) ([]*item, error) {
	return prepareKnown(objs, m, opts, set, errs, nil)
}

// prepareKnown is prepare that takes the objects a Planner's memory
// holds from it (mem, when not nil), as they were resolved and validated
// before. It answers errRetry when the memory cannot settle the input as
// prepare would: an object given twice, one of them remembered.
func prepareKnown(objs []manifest.Object, m cluster.Mapper, opts Options, set *prune.ApplySet, errs *errorList, mem *memoRound) ([]*item, error) {
	var sel *selector.Labels
	if opts.Selector != "" {
		s, err := selector.ParseLabels(opts.Selector)
		if err != nil {
			return nil, fmt.Errorf("apply: %w", err)
		}
		sel = &s
	}
	slab := &itemSlab{left: len(objs)}
	items := make([]*item, 0, len(objs))
	taken := 0
	for _, o := range objs {
		if sel != nil && !sel.Matches(objref.Labels(o.Obj)) {
			continue // kubectl apply -l applies only what matches
		}
		if mem != nil {
			it, d, ok := mem.take(o, len(items), slab)
			if it != nil {
				items = append(items, it)
				taken++
				continue
			}
			it = slab.next()
			ref := objref.Of(o.Obj)
			*it = item{idx: len(items), src: o.Source, ref: ref, rk: rankOf(ref), config: o.Obj, res: &unresolved, digest: d, digestOK: ok}
			items = append(items, it)
			continue
		}
		it := slab.next()
		ref := objref.Of(o.Obj)
		*it = item{idx: len(items), src: o.Source, ref: ref, rk: rankOf(ref), config: o.Obj, res: &unresolved}
		items = append(items, it)
	}
	if len(items) == 0 {
		return nil, errors.New("apply: no objects passed to apply")
	}
	crds, bad := collectCRDs(items, errs)

	// Every object taken from the memory was resolved, with a key no
	// other remembered object has; the others are resolved here, and
	// checked against each other and the remembered ones.
	seen := seenKeys{byHash: make(map[uint64]*item, len(items)-taken), seed: maphash.MakeSeed()}
	kinds := &kindCache{m: m}
	ok := items[:0] // filtered in place: ok never gets ahead of items
	for _, it := range items {
		if it.entry != nil {
			ok = append(ok, it)
			continue
		}
		if bad[it] {
			continue
		}
		if err := resolve(it, kinds, crds, opts, set); err != nil {
			errs.add(it, err)
			continue
		}
		k := it.key()
		if mem != nil && mem.takenKey(k) {
			return nil, errRetry
		}
		if first := seen.add(k, it); first != nil {
			errs.add(it, fmt.Errorf("duplicate object: %s is also defined in %s", it.ref, first.src))
			continue
		}
		ok = append(ok, it)
	}
	var verrs []error
	if !opts.ServerSide && taken < len(ok) {
		// A server-side apply is checked by the server, as kubectl leaves
		// it (the errors of the typed merge are the server's).
		verrs = make([]error, len(ok))
		parallel.Chunks(len(ok), 64, func(i int) {
			if ok[i].entry == nil {
				verrs[i] = validateItem(ok[i])
			}
		})
	}
	valid := ok[:0]
	for i, it := range ok {
		if verrs != nil && verrs[i] != nil {
			errs.add(it, verrs[i])
			continue
		}
		valid = append(valid, it)
	}
	if !slices.IsSortedFunc(valid, byRank) {
		slices.SortStableFunc(valid, byRank)
	}
	return valid, nil
}

// seenKeys are the items of an input by their keys, to find an object
// given twice: indexed by a hash of the key (a map of small entries),
// the few items whose hash an item of another key took kept by key.
type seenKeys struct {
	byHash  map[uint64]*item
	seed    maphash.Seed
	collide map[objectKey]*item
}

// add records it under k, unless an item has k already: it returns that
// item then.
func (s *seenKeys) add(k objectKey, it *item) *item {
	h := maphash.Comparable(s.seed, k)
	first, ok := s.byHash[h]
	if !ok {
		s.byHash[h] = it
		return nil
	}
	if first.key() == k {
		return first
	}
	if first = s.collide[k]; first != nil {
		return first
	}
	if s.collide == nil {
		s.collide = map[objectKey]*item{}
	}
	s.collide[k] = it
	return nil
}

func byRank(a, b *item) int { return a.rank() - b.rank() }

// kindCache resolves each kind of an input once: its resource and merge
// schema, as its Mapper gives them.
type kindCache struct {
	m     cluster.Mapper
	last  schema.GVK
	hit   *resolvedKind
	byGVK map[schema.GVK]*resolvedKind
}

type resolvedKind struct {
	res cluster.Resource
	typ *schema.Type
}

// resourceFor is the Mapper's ResourceFor and Schema of gvk, from the
// cache when gvk was resolved before. Errors are not kept.
func (c *kindCache) resourceFor(gvk schema.GVK) (*cluster.Resource, *schema.Type, error) {
	if c.hit != nil && gvk == c.last {
		return &c.hit.res, c.hit.typ, nil
	}
	r, ok := c.byGVK[gvk]
	if !ok {
		res, err := c.m.ResourceFor(gvk)
		if err != nil {
			return nil, nil, err
		}
		r = &resolvedKind{res: res, typ: c.m.Schema(gvk)}
		if c.byGVK == nil {
			c.byGVK = map[schema.GVK]*resolvedKind{}
		}
		c.byGVK[gvk] = r
	}
	c.last, c.hit = gvk, r
	return &r.res, r.typ, nil
}

// resolve finds the kind of an item and settles its namespace and labels.
func resolve(it *item, m *kindCache, crds map[schema.GVK]*inputCRD, opts Options, set *prune.ApplySet) error {
	md := objref.Metadata(it.config)
	if it.ref.Kind == "" {
		//lint:ignore ST1005 the message of apimachinery's decoder, as kubectl prints it
		return errors.New("Object 'Kind' is missing")
	}
	if it.ref.Version == "" {
		//lint:ignore ST1005 the message of apimachinery's decoder, as kubectl prints it
		return errors.New("Object 'apiVersion' is missing")
	}
	if md == nil {
		return errors.New("object has no metadata")
	}
	if it.ref.Name == "" {
		if gen, _ := md["generateName"].(string); gen != "" {
			return fmt.Errorf("from %s: cannot use generate name with apply", gen)
		}
		return errors.New("resource name may not be empty")
	}

	res, typ, err := m.resourceFor(it.ref.GVK)
	switch {
	case err == nil:
		it.res, it.typ = res, typ
	case crds[it.ref.GVK] != nil:
		crd := crds[it.ref.GVK]
		it.crd = crd
		it.res = &cluster.Resource{
			GVK:        crd.version.GVK,
			Plural:     crd.version.Plural,
			Singular:   crd.version.Singular,
			ShortNames: crd.version.ShortNames,
			Namespaced: crd.version.Scope != "Cluster",
		}
		it.typ = crd.version.Type
	default:
		return fmt.Errorf("resource mapping not found: %w; ensure CRDs are installed first", err)
	}

	ns := objref.Namespace(it.config)
	switch {
	case !it.res.Namespaced:
		if _, ok := md["namespace"]; ok {
			it.config = objref.WithMetadata(it.config, "namespace", nil)
		}
		ns = ""
	case ns == "":
		ns = opts.namespace()
		if _, has := md["namespace"]; !has && !opts.ServerSide && set == nil && it.crd == nil && it.res.Strategic {
			// Settled without a copy: makePlan encodes the config in
			// its namespace, and copies it with it when it needs to.
			// Validated without it against the kind's schema, the
			// config is as valid (the namespace is a string).
			it.addNS = ns
			break
		}
		it.config = objref.WithMetadata(it.config, "namespace", ns)
	case opts.EnforceNamespace && ns != opts.namespace():
		//lint:ignore ST1005 kubectl's message (cli-runtime's), word for word
		return fmt.Errorf("the namespace from the provided object %q does not match the namespace %q. You must pass '--namespace=%s' to perform this operation.", ns, opts.namespace(), ns)
	}
	it.ref.Namespace = ns

	if set != nil {
		labelled, err := set.AddLabels(it.config)
		if err != nil {
			return err
		}
		it.config = labelled
	}
	return nil
}

// validateItem checks the config against its kind's schema.
func validateItem(it *item) error {
	if it.crd != nil {
		return it.crd.validate(it.config, it.res.Namespaced)
	}
	if it.typ == nil {
		return nil
	}
	return merge.Validate(it.config, it.typ)
}

// withoutNulls returns obj without the fields set to null, copying the maps
// and lists on the way to them: what kubectl creates (it prunes nulls after
// recording the last-applied annotation, which keeps them).
func withoutNulls(obj map[string]any) map[string]any {
	v, _ := dropNulls(obj)
	return v.(map[string]any)
}

// dropNulls returns v without nulls in its maps, and whether it changed.
func dropNulls(v any) (any, bool) {
	switch x := v.(type) {
	case map[string]any:
		var out map[string]any
		for k, e := range x {
			if e == nil {
				if out == nil {
					out = maps.Clone(x)
				}
				delete(out, k)
				continue
			}
			if ne, changed := dropNulls(e); changed {
				if out == nil {
					out = maps.Clone(x)
				}
				out[k] = ne
			}
		}
		if out == nil {
			return x, false
		}
		return out, true
	case []any:
		var out []any
		for i, e := range x {
			if ne, changed := dropNulls(e); changed {
				if out == nil {
					out = slices.Clone(x)
				}
				out[i] = ne
			}
		}
		if out == nil {
			return x, false
		}
		return out, true
	}
	return v, false
}
