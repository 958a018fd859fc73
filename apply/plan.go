package apply

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/internal/parallel"
	"github.com/konverge/konverge/lastapplied"
	"github.com/konverge/konverge/manifest"
	"github.com/konverge/konverge/mask"
	"github.com/konverge/konverge/merge"
	"github.com/konverge/konverge/normalize"
	"github.com/konverge/konverge/objref"
	"github.com/konverge/konverge/prune"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

// Change is what applying would do to one object: one entry of a Plan.
// A Secret's values are masked in Live, Merged and Patch (see the package
// documentation); Unmasked returns them in plaintext.
type Change struct {
	// Ref names the object.
	Ref objref.Ref
	// Source is where the object was read from; zero for objects to prune.
	Source manifest.Source
	// Action is what applying does, named by the verb kubectl prints:
	// Created (the object does not exist: a create), Configured (a patch
	// is sent), Unchanged (the patch is empty: nothing is sent), Pruned
	// (a delete) or ServerSideApplied (with Options.ServerSide, a
	// server-side apply patch is always sent).
	Action Action
	// Drift reports that Live and Merged differ: applying changes the
	// object. A Configured change without Drift is a patch that changes
	// nothing on the server (a Secret's stringData, a quantity the server
	// writes in another form): kubectl prints "configured" for it, but
	// nothing differs. Created and Pruned changes always drift.
	Drift bool
	// Paths are the fields where Live and Merged differ (beyond what the
	// server writes: metadata.managedFields, resourceVersion, generation,
	// and status), sorted; nil without Drift, and for Created and Pruned.
	Paths []value.Path
	// Live is the object as it is (nil for Created); Merged is the object
	// as applying leaves it, predicted without asking the server (nil for
	// Pruned): live with the patch applied, then normalized as the API
	// server normalizes a write (quantities, defaults, Secret stringData;
	// see package normalize). Not predicted, because only the server
	// knows them: what admission webhooks change; with ServerSide, the
	// fields the server removes; and for Created, what the server's
	// registry strategies and allocators add to a new object: the
	// metadata it writes (uid, resourceVersion, generation,
	// creationTimestamp, managedFields), a Namespace's spec.finalizers
	// and status, a Service's spec.clusterIP, clusterIPs, ipFamilies and
	// ipFamilyPolicy (and node ports), a Job's generated selector and
	// labels, a ServiceAccount token's data (ExampleChange_created shows
	// them). diff (a server dry run) shows them all. Once the object
	// exists, Live carries them and Merged keeps them, so they are no
	// Drift.
	Live, Merged map[string]any
	// Patch is the patch of a Configured change (nil otherwise), of type
	// PatchType; for ServerSideApplied, the configuration sent.
	Patch     map[string]any
	PatchType cluster.PatchType
	// Warnings are kubectl's warnings about the object ("Warning: resource
	// deployments/web is missing the ... annotation ...").
	Warnings []string

	// plain holds a Secret's Live, Merged and Patch unmasked (Unmasked);
	// a pointer, so that printing a Change with %+v shows no value.
	plain *plaintext
}

// String returns the line kubectl apply prints for the change:
// "deployment.apps/web configured".
func (c Change) String() string { return c.Ref.String() + " " + string(c.Action) }

// Masked returns the change with the values of a Secret masked in Live,
// Merged and Patch (see package mask); other objects are returned as they
// are. The changes of a Plan are masked already: Masked returns them as
// they are, and is for changes a caller built or unmasked.
func (c Change) Masked() Change {
	if c.plain != nil || !isSecretRef(c.Ref) {
		return c
	}
	c.plain = &plaintext{object: c.Merged, live: c.Live, patch: c.Patch}
	switch {
	case c.Live == nil:
		c.Merged = mask.Object(c.Merged)
	case c.Merged == nil:
		c.Live = mask.Object(c.Live)
	default:
		c.Live, c.Merged = mask.Pair(c.Live, c.Merged)
	}
	c.Patch = mask.Patch(c.Patch)
	return c
}

// Unmasked returns the change with a Secret's values in plaintext in
// Live, Merged and Patch; other changes are returned as they are.
// ApplyPlan does not need it: a plan applies its own plaintext.
func (c Change) Unmasked() Change {
	if c.plain == nil {
		return c
	}
	c.Merged, c.Live, c.Patch = c.plain.object, c.plain.live, c.plain.patch
	c.plain = nil
	return c
}

func isSecretRef(ref objref.Ref) bool {
	return ref.Group == "" && ref.Version == "v1" && ref.Kind == "Secret"
}

// Plan is what applying a set of objects would do, computed from the live
// objects without writing: one Change per object of the input, in input
// order, then the objects to prune. A Plan is data a tool can show, and
// Applier.ApplyPlan applies it as it is.
type Plan struct {
	// Changes are the changes, in the order apply reports its results.
	// A Secret's values are masked in them (Change.Unmasked).
	Changes []Change

	// st is what ApplyPlan applies, in plaintext: behind a pointer, so
	// that printing a Plan with %+v shows no Secret value.
	st *planState
}

// planState is what a Plan applies.
type planState struct {
	objs []manifest.Object
	opts Options
	// plans[i] is the plan of items[i], or nil when its memory's entry
	// holds it.
	items []*item
	plans []*plan
	prune []prune.Candidate
}

// fixed returns the plans by object, as ApplyPlan takes them.
func (st *planState) fixed() map[objectKey]plan {
	out := make(map[objectKey]plan, len(st.plans))
	for i, it := range st.items {
		var pl plan
		if st.plans[i] != nil {
			pl = *st.plans[i]
		} else {
			pl = it.entry.pl
			pl.it = it
		}
		out[it.key()] = pl
	}
	return out
}

// HasDrift reports whether applying the plan changes anything: an object
// to create or prune, or one whose Live and Merged differ.
func (p *Plan) HasDrift() bool {
	for _, c := range p.Changes {
		if c.Drift {
			return true
		}
	}
	return false
}

// Drifted returns the changes with Drift, in plan order.
func (p *Plan) Drifted() []Change {
	var out []Change
	for _, c := range p.Changes {
		if c.Drift {
			out = append(out, c)
		}
	}
	return out
}

// Masked returns a copy of the plan whose changes are masked (see
// Change.Masked); it applies as the plan does. A Plan's changes are
// masked already: Masked is for a plan a caller unmasked.
func (p *Plan) Masked() *Plan {
	out := *p
	out.Changes = make([]Change, len(p.Changes))
	for i, c := range p.Changes {
		out.Changes[i] = c.Masked()
	}
	return &out
}

// Unmasked returns a copy of the plan whose changes show a Secret's
// values in plaintext (see Change.Unmasked); it applies as the plan does.
func (p *Plan) Unmasked() *Plan {
	out := *p
	out.Changes = make([]Change, len(p.Changes))
	for i, c := range p.Changes {
		out.Changes[i] = c.Unmasked()
	}
	return &out
}

// Planner computes plans against a LiveSource: what an Applier with the
// same Options would do, without a cluster.
type Planner struct {
	src  LiveSource
	m    cluster.Mapper
	opts Options
	memo *planMemo // WithMemory
}

// NewPlanner returns a Planner that reads live objects from src and
// resolves kinds with m. A nil m means BuiltinMapper with the
// CustomResourceDefinitions src holds (listed at each Plan): the kinds of
// a default kube-apiserver and the custom resources of the snapshot. Of
// opts, the options that decide what is applied count
// (Namespace, EnforceNamespace, Selector, Prune and its options, ApplySet,
// ServerSide, NoOverwrite, Ignore); DryRun, Concurrency and the options of
// the writes are for ApplyPlan.
func NewPlanner(src LiveSource, m cluster.Mapper, opts Options) *Planner {
	return &Planner{src: src, m: m, opts: opts}
}

// Plan computes the plan of objs against the cluster, reading the live
// objects in bulk as Apply does (see NewPlanner). It writes nothing.
func (a *Applier) Plan(ctx context.Context, objs []manifest.Object) (*Plan, error) {
	return NewPlanner(a.c, a.c.Mapper(), a.opts).Plan(ctx, objs)
}

// Plan computes what applying objs would do to the live objects: for each
// object the patch kubectl apply would send, the object it would leave,
// and whether that differs from the live one; and with Prune, the objects
// it would delete. It reads the live objects (Get, and List for kinds with
// several objects in one namespace and for pruning) and writes nothing.
//
// Problems of the input are reported as apply does: Errors, one per object
// and cause, and no plan.
func (p *Planner) Plan(ctx context.Context, objs []manifest.Object) (*Plan, error) {
	if err := p.opts.check(); err != nil {
		return nil, &OptionsError{Err: err}
	}
	ignore, err := compileIgnore(p.opts.Ignore)
	if err != nil {
		return nil, fmt.Errorf("apply: %w", err)
	}
	rd := readerOf(p.src)
	m := p.m
	if m == nil {
		if m, err = sourceMapper(ctx, p.src); err != nil {
			return nil, err
		}
	}
	r := &run{opts: p.opts, hooks: hooks{ignore: ignore}}
	if p.opts.ApplySet != "" {
		set, err := r.applySetFor(ctx, rd, m)
		if err != nil {
			return nil, err
		}
		r.set = set
	}
	var mem *memoRound
	if p.memo != nil {
		p.memo.mu.Lock()
		defer p.memo.mu.Unlock()
		mem = p.memo.begin(m)
	}
	var errs errorList
	items, err := prepareKnown(objs, m, p.opts, r.set, &errs, mem)
	if err == errRetry {
		mem.digestOnly = true
		errs = errorList{}
		items, err = prepareKnown(objs, m, p.opts, r.set, &errs, mem)
	}
	if err != nil {
		return nil, err
	}
	if r.set != nil {
		if err := r.set.FetchParent(ctx, rd, m); err != nil {
			return nil, fmt.Errorf("apply: %w", err)
		}
		for _, it := range items {
			r.set.AddMember(*it.res, it.ref.Namespace)
		}
	}
	snap := readLive(ctx, rd, items, p.opts.concurrency())
	r.crSchemas = crSchemas(ctx, rd, items)
	// plans[i] is the plan of items[i], computed now; nil for an object
	// whose remembered plan holds (its entry has it).
	plans := make([]*plan, len(items))
	// The changes in input order: items[i].idx is the position of the
	// object in the input (after -l), and every object has a change when
	// none has a problem (changes is cut to the last position below).
	// A remembered change is copied out as its object is met, while its
	// entry is at hand.
	changes := make([]Change, len(objs))
	var pos []*memoEntry // the entries reused, by position
	if mem != nil {
		pos = mem.positions(len(objs))
	}
	n := 0
	var todo []*item
	var todoLive []map[string]any
	var todoAt []int
	if mem == nil {
		// Every object is planned now.
		todo = make([]*item, 0, len(items))
		todoLive = make([]map[string]any, 0, len(items))
		todoAt = make([]int, 0, len(items))
	}
	for i, it := range items {
		n = max(n, it.idx+1)
		if snap.err != nil && snap.err[i] != nil {
			plans[i] = &plan{it: it, err: snap.err[i]}
			continue
		}
		var slot *snapSlot
		if snap.slots != nil {
			slot = snap.slots[i]
		}
		if it.reusable(snap.live[i], slot, r.crSchemas) {
			c := &changes[it.idx]
			*c = *it.entry.change
			c.Source = it.src
			pos[it.idx] = it.entry
			continue
		}
		todo = append(todo, it)
		todoLive = append(todoLive, snap.live[i])
		todoAt = append(todoAt, i)
	}
	changes = changes[:n:n]
	pos = pos[:min(n, len(pos))]
	computed := r.plans(todo, todoLive)
	for j := range computed {
		plans[todoAt[j]] = &computed[j]
	}
	// The changes computed now, on all CPUs; their errors in item order.
	cerrs := make([]error, len(todoAt))
	parallel.Chunks(len(todoAt), 64, func(j int) {
		pl := plans[todoAt[j]]
		if pl.err != nil {
			return
		}
		c, err := r.change(*pl)
		if err != nil {
			cerrs[j] = err
			return
		}
		if c.plain == nil && isSecretRef(c.Ref) {
			c = c.Masked()
		}
		changes[pl.it.idx] = c
	})
	j := 0
	for i, it := range items {
		if plans[i] == nil {
			continue
		}
		computedNow := j < len(todoAt) && todoAt[j] == i
		switch {
		case plans[i].err != nil:
			errs.add(it, plans[i].err)
		case computedNow && cerrs[j] != nil:
			errs.add(it, cerrs[j])
		}
		if computedNow {
			j++
		}
	}
	if err := errs.err(); err != nil {
		return nil, err
	}
	if p.memo != nil {
		p.memo.update(items, plans, changes, pos, &snap, r.crSchemas)
	}
	st := &planState{objs: objs, opts: p.opts, items: items, plans: plans}
	out := &Plan{st: st, Changes: changes}
	if p.opts.Prune {
		visited := visitedBy(p.opts, items, snap.live)
		cands, err := r.findPrunable(ctx, rd, m, visited)
		if err != nil {
			return nil, err
		}
		st.prune = cands
		for _, cand := range cands {
			out.Changes = append(out.Changes, Change{Ref: objref.Of(cand.Object), Action: Pruned, Drift: true, Live: cand.Object}.Masked())
		}
	}
	return out, nil
}

// visitedBy returns what an apply of items visits: their namespaces (and
// the enforced one) and the UIDs of their live objects.
func visitedBy(opts Options, items []*item, live []map[string]any) *prune.Visited {
	v := prune.NewVisited()
	if opts.EnforceNamespace {
		v.Namespaces[opts.namespace()] = true
	}
	for _, it := range items {
		if it.res.Namespaced {
			v.Namespaces[it.ref.Namespace] = true
		}
	}
	for _, l := range live {
		if uid := objref.UID(l); uid != "" {
			v.UIDs[uid] = true
		}
	}
	return v
}

// findPrunable returns the objects an apply --prune deletes.
func (r *run) findPrunable(ctx context.Context, c cluster.Reader, m cluster.Mapper, visited *prune.Visited) ([]prune.Candidate, error) {
	var cands []prune.Candidate
	var err error
	if r.set != nil {
		cands, err = r.set.FindPrunable(ctx, c, visited)
	} else {
		l := prune.Labels{Selector: r.opts.Selector, Allowlist: r.opts.PruneAllowlist, Concurrency: r.workers()}
		cands, err = l.Find(ctx, c, m, visited)
	}
	if err != nil {
		return nil, fmt.Errorf("apply: prune: %w", err)
	}
	return cands, nil
}

// applySetFor resolves the ApplySet parent with m and checks it in c.
func (r *run) applySetFor(ctx context.Context, c cluster.Reader, m cluster.Mapper) (*prune.ApplySet, error) {
	parent, err := prune.ParseParent(r.opts.ApplySet, m)
	if err != nil {
		return nil, fmt.Errorf("apply: %w", err)
	}
	// As kubectl: the namespace comes from the flag only, not from a
	// default.
	if parent.Resource.Namespaced && r.opts.EnforceNamespace {
		parent.Namespace = r.opts.namespace()
	}
	tooling := prune.DefaultTooling()
	if r.opts.ToolingVersion != "" {
		tooling.Version = r.opts.ToolingVersion
	}
	set := prune.NewApplySet(parent, tooling)
	if err := set.Validate(ctx, c); err != nil {
		return nil, fmt.Errorf("apply: %w", err)
	}
	return set, nil
}

func (it *item) key() objectKey {
	return objectKey{it.ref.Group, it.ref.Kind, it.ref.Namespace, it.ref.Name}
}

// change turns a plan into a Change: the action, the predicted result and
// whether it differs from live.
func (r *run) change(p plan) (Change, error) {
	it := p.it
	c := Change{Ref: it.ref, Source: it.src, Live: p.live, PatchType: p.pt}
	switch {
	case r.opts.ServerSide:
		c.Action, c.Patch = ServerSideApplied, it.config
		var merged map[string]any
		if p.live == nil {
			merged = withoutNulls(it.config)
		} else {
			var err error
			if merged, err = merge.Apply(p.live, withoutNulls(r.ssaConfig(it, p.live)), it.typ); err != nil {
				return c, fmt.Errorf("predicting the result: %w", err)
			}
		}
		return r.predict(c, it, merged)
	case p.live == nil:
		c.Action = Created
		return r.predict(c, it, p.create)
	case len(p.patch) == 0:
		c.Action, c.Merged = Unchanged, p.live
	default:
		c.Action, c.Patch = Configured, p.patch
		merged, err := applyLocally(p)
		if err != nil {
			return c, fmt.Errorf("applying patch locally: %w", err)
		}
		if c, err = r.predict(c, it, merged); err != nil {
			return c, err
		}
	}
	if p.live != nil {
		if !p.annotated && !r.opts.ServerSide {
			c.Warnings = append(c.Warnings, missingAnnotationWarning(it))
		}
		if p.deleting != "" && c.Action != Unchanged {
			c.Warnings = append(c.Warnings, fmt.Sprintf("Warning: Detected changes to resource %s which is currently being deleted.", it.ref.Name))
		}
	}
	return c, nil
}

// predict sets c.Merged to what the server makes of merged (normalized as
// a write is), and c.Drift and c.Paths from the comparison with c.Live.
func (r *run) predict(c Change, it *item, merged map[string]any) (Change, error) {
	m, err := normalize.Server(merged)
	if err != nil {
		return c, serverError(it, err)
	}
	if err := validatePredicted(it, m, c.Live, r.crSchemas[it.ref.GVK]); err != nil {
		return c, err
	}
	if c.Live != nil && it.res.Status {
		// Writes to the main resource leave status alone.
		if st, ok := c.Live["status"]; ok {
			m["status"] = st
		} else {
			delete(m, "status")
		}
	}
	c.Merged = m
	if c.Live == nil {
		c.Drift = true
		return c, nil
	}
	diffStored(c.Live, m, it.typ, &c.Paths)
	if len(c.Paths) > 0 {
		// Live normalized as the server would changes nothing in an
		// object the server returned, but keeps a cache that holds
		// objects as they were written (without the server's defaults)
		// from seeing drift in them.
		if d, err := normalize.Server(c.Live); err == nil {
			c.Paths = c.Paths[:0]
			diffStored(d, m, it.typ, &c.Paths)
		}
	}
	c.Drift = len(c.Paths) > 0
	slices.SortFunc(c.Paths, func(x, y value.Path) int { return strings.Compare(x.String(), y.String()) })
	return c, nil
}

// missingAnnotationWarning is kubectl's warning for a live object without
// the last-applied annotation.
func missingAnnotationWarning(it *item) string {
	return fmt.Sprintf("Warning: resource %s/%s is missing the %s annotation which is required by kubectl apply. kubectl apply should only be used on resources created declaratively by either kubectl create --save-config or kubectl apply. The missing annotation will be patched automatically.",
		it.res.Plural, it.ref.Name, lastapplied.Annotation)
}

// diffStored appends to out the paths where two objects differ (diffAt) as normalize.Object (with its
// zero Options) compares them, without copying them: status and the
// metadata only the server writes (normalize.ServerMetadata) are left
// out of the comparison.
func diffStored(a, b map[string]any, t *schema.Type, out *[]value.Path) {
	var p value.Path
	for k, av := range a {
		if k == "status" {
			continue
		}
		bv, ok := b[k]
		if !ok {
			*out = append(*out, value.Path{value.FieldElement(k)})
			continue
		}
		p = append(p[:0], value.FieldElement(k))
		am, aIsMap := av.(map[string]any)
		bm, bIsMap := bv.(map[string]any)
		if k == "metadata" && aIsMap && bIsMap {
			diffMetadata(am, bm, t.Field(k), &p, out)
			continue
		}
		diffAt(av, bv, t.Field(k), &p, out)
	}
	for k := range b {
		if _, ok := a[k]; !ok && k != "status" {
			*out = append(*out, value.Path{value.FieldElement(k)})
		}
	}
}

// diffMetadata is diffAt of two metadata maps without the fields only
// the server writes; p is the path of metadata.
func diffMetadata(a, b map[string]any, t *schema.Type, p *value.Path, out *[]value.Path) {
	for k, av := range a {
		if isServerMetadata(k) {
			continue
		}
		bv, ok := b[k]
		if !ok {
			*out = append(*out, pathTo(*p, value.FieldElement(k)))
			continue
		}
		*p = append(*p, value.FieldElement(k))
		diffAt(av, bv, t.Field(k), p, out)
		*p = (*p)[:len(*p)-1]
	}
	for k := range b {
		if _, ok := a[k]; !ok && !isServerMetadata(k) {
			*out = append(*out, pathTo(*p, value.FieldElement(k)))
		}
	}
}

// pathTo returns a new path: p followed by e, in one allocation.
func pathTo(p value.Path, e value.Element) value.Path {
	out := make(value.Path, len(p)+1)
	copy(out, p)
	out[len(p)] = e
	return out
}

func isServerMetadata(field string) bool {
	return slices.Contains(normalize.ServerMetadata, field)
}

// diffAt appends to out the paths where a and b differ: fields of
// objects one by one, elements of lists merged by key matched by their
// keys, other lists whole. p is the path of a and b, a stack that grows
// and shrinks along the walk; it is copied only where they differ.
func diffAt(a, b any, t *schema.Type, p *value.Path, out *[]value.Path) {
	found := func(e value.Element) {
		*out = append(*out, pathTo(*p, e))
	}
	push := func(e value.Element) { *p = append(*p, e) }
	pop := func() { *p = (*p)[:len(*p)-1] }
	am, aIsMap := a.(map[string]any)
	bm, bIsMap := b.(map[string]any)
	if aIsMap && bIsMap {
		for k, av := range am {
			bv, ok := bm[k]
			if !ok {
				found(value.FieldElement(k))
				continue
			}
			push(value.FieldElement(k))
			diffAt(av, bv, t.Field(k), p, out)
			pop()
		}
		for k := range bm {
			if _, ok := am[k]; !ok {
				found(value.FieldElement(k))
			}
		}
		return
	}
	al, aIsList := a.([]any)
	bl, bIsList := b.([]any)
	if aIsList && bIsList && t.KindOf() == schema.List && t.ListType == schema.MergeByKey && t.MergeKey != "" {
		keyOf := func(e any) (value.Element, bool) {
			m, ok := e.(map[string]any)
			if !ok {
				return value.Element{}, false
			}
			k, ok := m[t.MergeKey]
			if !ok {
				return value.Element{}, false
			}
			return value.KeyElement(value.KeyField{Name: t.MergeKey, Value: k}), true
		}
		type entry struct {
			el value.Element
			v  any
		}
		index := func(l []any) (map[string]entry, []string, bool) {
			m := make(map[string]entry, len(l))
			var order []string
			for _, e := range l {
				el, ok := keyOf(e)
				if !ok {
					return nil, nil, false
				}
				s := el.String()
				if _, dup := m[s]; dup {
					return nil, nil, false
				}
				m[s] = entry{el, e}
				order = append(order, s)
			}
			return m, order, true
		}
		ai, aOrder, ok1 := index(al)
		bi, bOrder, ok2 := index(bl)
		if ok1 && ok2 {
			if !slices.Equal(aOrder, bOrder) && len(aOrder) == len(bOrder) && sameKeys(ai, bi) {
				*out = append(*out, slices.Clone(*p)) // reordered
				return
			}
			for _, s := range aOrder {
				ae := ai[s]
				be, ok := bi[s]
				if !ok {
					found(ae.el)
					continue
				}
				push(ae.el)
				diffAt(ae.v, be.v, t.Element(), p, out)
				pop()
			}
			for _, s := range bOrder {
				if _, ok := ai[s]; !ok {
					found(bi[s].el)
				}
			}
			return
		}
	}
	if !value.Equal(a, b) {
		*out = append(*out, slices.Clone(*p))
	}
}

func sameKeys[V any](a, b map[string]V) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			return false
		}
	}
	return true
}

// ApplyPlan applies a plan as it was computed: it sends the plan's
// creates, patches and deletions, and does not read the live objects
// again or compute other patches. Changes made to the objects since the
// plan was computed are kept where the patch does not touch them; an
// object created since is an AlreadyExists error, one deleted since a
// NotFound error.
//
// The plan's options decide what is applied (see NewPlanner); the
// Applier's decide how (DryRun, FieldManager, FieldValidation, Force,
// Concurrency, Progress, Warn, CRDTimeout). Everything else is as Apply:
// validation before writing, the order of writes, one transaction on a
// Batcher, results in input order followed by the pruned objects.
func (a *Applier) ApplyPlan(ctx context.Context, p *Plan) ([]Result, error) {
	if p == nil || p.st == nil {
		return nil, errors.New("apply: nil plan")
	}
	opts := a.opts
	po := p.st.opts
	opts.Namespace, opts.EnforceNamespace = po.Namespace, po.EnforceNamespace
	opts.Selector, opts.Prune, opts.PruneAll, opts.PruneAllowlist = po.Selector, po.Prune, po.PruneAll, po.PruneAllowlist
	opts.ApplySet, opts.ToolingVersion = po.ApplySet, po.ToolingVersion
	opts.ServerSide, opts.ForceConflicts, opts.NoOverwrite = po.ServerSide, po.ForceConflicts, po.NoOverwrite
	opts.Ignore = po.Ignore
	prunes := p.st.prune
	if prunes == nil {
		prunes = []prune.Candidate{}
	}
	return New(a.c, opts).apply(ctx, p.st.objs, hooks{fixed: p.st.fixed(), fixedPrune: prunes})
}

// hooks are what a run does differently from a plain apply: ignore rules,
// and when it applies a Plan, the plan's patches and prune candidates.
type hooks struct {
	ignore []compiledRule
	// fixed are the plans of a Plan by object: used instead of reading and
	// planning, and never computed again.
	fixed map[objectKey]plan
	// fixedPrune, when not nil, are the objects to prune.
	fixedPrune []prune.Candidate
}

// fixedPlans returns the plans of a Plan for items.
func (r *run) fixedPlans(items []*item) []plan {
	out := make([]plan, len(items))
	for i, it := range items {
		p, ok := r.fixed[it.key()]
		if !ok {
			out[i] = plan{it: it, err: errors.New("the object is not in the plan")}
			continue
		}
		p.it = it
		out[i] = p
	}
	return out
}

// ignoreFields settles the ignored fields of an object that exists in
// original and modified (see IgnoreRule).
func (r *run) ignoreFields(it *item, original, modified, live map[string]any) (map[string]any, map[string]any) {
	if len(r.ignore) == 0 || live == nil {
		return original, modified
	}
	paths := ignoredPaths(r.ignore, it.ref, live)
	if len(paths) == 0 {
		return original, modified
	}
	if original != nil {
		original = settleIgnored(original, live, it.typ, paths)
	}
	return original, settleIgnored(modified, live, it.typ, paths)
}

// ssaConfig returns the configuration a server-side apply sends: without
// the ignored fields.
func (r *run) ssaConfig(it *item, live map[string]any) map[string]any {
	if len(r.ignore) == 0 || live == nil {
		return it.config
	}
	paths := ignoredPaths(r.ignore, it.ref, live)
	if len(paths) == 0 {
		return it.config
	}
	return settleIgnored(it.config, nil, it.typ, paths)
}

// Masked returns the result with the values of a Secret masked in Object,
// Live and Patch (see package mask); other objects are returned as they
// are. Results of Apply and ApplyPlan are masked already: Masked returns
// them as they are, and is for results a caller built or unmasked.
func (r Result) Masked() Result { return maskResult(r) }
