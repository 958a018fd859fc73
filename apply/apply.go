package apply

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/manifest"
	"github.com/konverge/konverge/objref"
	"github.com/konverge/konverge/prune"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

// maxPatchRetry is how many times a patch that fails with a Conflict is
// computed again and resent, kubectl's maxPatchRetry.
const maxPatchRetry = 5

// Batcher is a cluster that runs many calls in one transaction, committed
// when fn returns nil and rolled back otherwise: cluster/local's Store.
type Batcher interface {
	Batch(ctx context.Context, fn func(c cluster.Interface) error) error
}

// Applier applies sets of objects to a cluster, as kubectl apply does.
type Applier struct {
	c    cluster.Interface
	opts Options
}

// New returns an Applier that applies to c.
func New(c cluster.Interface, opts Options) *Applier {
	return &Applier{c: c, opts: opts}
}

// planChunk is how many objects doBatched plans at a time: enough for
// every CPU to take a share.
var planChunk = 1024

// errRollback ends a batch whose writes were a server dry run.
var errRollback = errors.New("apply: rolled back")

// Apply applies objs and returns what happened to each object, in input
// order as kubectl prints them (although Namespaces and
// CustomResourceDefinitions are applied first), followed by the pruned
// objects.
//
// Nothing is written unless every object passes: an input problem, a
// schema violation, a duplicate, or a refusal by the server (each write is
// first tried as a server dry run) fails the apply with Errors, one per
// object and cause. On a cluster that is a Batcher the whole apply is one
// transaction, which commits only if everything succeeded; elsewhere a
// write that fails after every dry run passed leaves the other writes,
// and Apply returns the results of those with the error.
//
// On a cluster that is not a Batcher, Apply calls c from up to
// Options.Concurrency goroutines at once.
func (a *Applier) Apply(ctx context.Context, objs []manifest.Object) ([]Result, error) {
	return a.apply(ctx, objs, hooks{})
}

// apply is Apply with hooks (a Plan's patches).
func (a *Applier) apply(ctx context.Context, objs []manifest.Object, h hooks) ([]Result, error) {
	if err := a.opts.check(); err != nil {
		return nil, &OptionsError{Err: err}
	}
	ignore, err := compileIgnore(a.opts.Ignore)
	if err != nil {
		return nil, fmt.Errorf("apply: %w", err)
	}
	h.ignore = ignore
	r := &run{opts: a.opts, hooks: h}
	if b, ok := a.c.(Batcher); ok && a.opts.DryRun != DryRunClient {
		// The writes of a batch are the dry run: they are undone unless
		// all succeed. A server dry run is real writes rolled back, so that
		// objects see the namespaces and CRDs the input creates.
		r.batched = true
		r.rollback = a.opts.DryRun == DryRunServer
		// A server-side apply is a request per object, as kubectl sends
		// it: the objects the server refused do not undo the others.
		var refused error
		err := b.Batch(ctx, func(c cluster.Interface) error {
			if err := r.do(ctx, c, objs, writeReal); err != nil {
				var objErrs Errors
				if !a.opts.ServerSide || !errors.As(err, &objErrs) {
					return err
				}
				refused = err
			}
			if r.rollback {
				return errRollback
			}
			return nil
		})
		if err != nil && !errors.Is(err, errRollback) {
			return nil, err
		}
		return r.finish(), refused
	}
	mode := writeReal
	switch a.opts.DryRun {
	case DryRunClient:
		mode = writeNone
	case DryRunServer:
		mode = writeDryRun
	}
	if err := r.do(ctx, a.c, objs, mode); err != nil {
		return r.finish(), err
	}
	return r.finish(), nil
}

// writeMode is how a run sends writes.
type writeMode uint8

const (
	writeReal   writeMode = iota // for real (in a batch: undone on failure)
	writeDryRun                  // as server dry runs
	writeNone                    // not at all (client dry run)
)

// run is one apply.
type run struct {
	opts Options
	hooks
	// batched: the run is one transaction, undone unless it all succeeds.
	batched bool
	// rollback marks a server dry run made of real writes in a batch that
	// is rolled back: results are adjusted to look like dry-run ones.
	rollback bool

	items []*item
	set   *prune.ApplySet
	// crSchemas are the openAPIV3Schemas of the custom resources a plan
	// validates, by kind.
	crSchemas map[schema.GVK]map[string]any
	visited   *prune.Visited
	// slots are the results of the items, by their position in the input.
	slots   []*Result
	results []Result

	// progressMu guards step and done: the step under way and how many
	// of its objects are done.
	progressMu sync.Mutex
	step       string
	done       int
}

// workers is how many requests the run has in flight at once: one in a
// batch (a transaction is not shared between goroutines).
func (r *run) workers() int {
	if r.batched {
		return 1
	}
	return r.opts.concurrency()
}

// progress reports one more object of a step done to Options.Progress.
func (r *run) progress(step string, total int) {
	if r.opts.Progress == nil {
		return
	}
	r.progressMu.Lock()
	defer r.progressMu.Unlock()
	if step != r.step {
		r.step, r.done = step, 0
	}
	r.done++
	r.opts.Progress(Progress{Step: step, Done: r.done, Total: total})
}

// do applies the objects through c.
func (r *run) do(ctx context.Context, c cluster.Interface, objs []manifest.Object, mode writeMode) error {
	m := c.Mapper()
	if r.opts.ApplySet != "" {
		set, err := r.newApplySet(ctx, c)
		if err != nil {
			return err
		}
		r.set = set
	}
	var errs errorList
	items, err := prepare(objs, m, r.opts, r.set, &errs)
	if err != nil {
		return err
	}
	if mode == writeNone && errs.len() > 0 {
		return errs.err()
	}
	r.items = items
	r.visited = prune.NewVisited()
	if r.opts.EnforceNamespace {
		r.visited.Namespaces[r.opts.namespace()] = true
	}
	for _, it := range items {
		if it.res.Namespaced {
			r.visited.Namespaces[it.ref.Namespace] = true
		}
	}
	if r.set != nil {
		if err := r.set.FetchParent(ctx, c, m); err != nil {
			return fmt.Errorf("apply: %w", err)
		}
		for _, it := range items {
			r.set.AddMember(*it.res, it.ref.Namespace)
		}
	}
	r.slots = make([]*Result, len(objs))
	if r.batched {
		err = r.doBatched(ctx, c, mode, &errs)
	} else {
		err = r.doConcurrent(ctx, c, mode, &errs)
	}
	// Results in input order, as kubectl prints them.
	for _, res := range r.slots {
		if res != nil {
			r.add(*res)
		}
	}
	if err != nil {
		return err
	}
	if err := errs.err(); err != nil {
		return err
	}
	if r.opts.Prune {
		if err := r.prune(ctx, c, mode); err != nil {
			return err
		}
	}
	return nil
}

// leanLive reports whether the run may read live objects without their
// managedFields: the caller said it does not read them
// (Options.LiveWithoutManagedFields), a server-side apply does not
// upgrade their client-side owners, and no ignore rule names managers.
func (r *run) leanLive() bool {
	if !r.opts.LiveWithoutManagedFields || r.opts.ServerSide {
		return false
	}
	for _, rule := range r.ignore {
		if len(rule.rule.Managers) > 0 {
			return false
		}
	}
	return true
}

// prefetch tells pf the patches of plans.
func prefetch(ctx context.Context, pf cluster.Prefetcher, plans []plan) {
	var writes []cluster.Upcoming
	for _, p := range plans {
		if p.err == nil && p.live != nil && len(p.data) > 0 {
			writes = append(writes, cluster.Upcoming{
				Key:       cluster.Key{GVK: p.it.ref.GVK, Namespace: p.it.ref.Namespace, Name: p.it.ref.Name},
				PatchType: p.pt,
				Patch:     p.data,
			})
		}
	}
	if len(writes) > 0 {
		pf.Prefetch(ctx, writes)
	}
}

// doBatched applies the items one after the other in one transaction, in
// the order of rank, planChunk objects at a time (so that the plans of the
// whole input are not all held at once): a chunk's live objects are read
// before it is written, and its patches computed on all CPUs while the
// chunk before it is written (a plan depends on its own item and live
// object alone; no object of the input is another one). A cluster that is
// a Prefetcher is told, chunk by chunk, the objects about to be patched.
// Objects that fail are left out, and the others are still tried so that
// their problems are reported too; nothing is committed then.
func (r *run) doBatched(ctx context.Context, c cluster.Interface, mode writeMode, errs *errorList) error {
	items := r.items
	var plans []plan
	planned := len(items)
	if r.fixed != nil {
		plans = r.fixedPlans(items)
	} else {
		plans = make([]plan, len(items))
		planned = 0
	}
	// The ApplySet parent waits for the namespaces the input creates (its
	// own among them, for a namespaced parent): in one transaction nothing
	// can be interrupted half-way.
	parentPending := r.set != nil && mode != writeNone
	lean := r.leanLive()
	// next reads the live objects of items[lo:hi] now and plans them on
	// other goroutines; its channel is closed when they are in plans.
	next := func(lo, hi int) chan struct{} {
		read := startRead(ctx, c, items[lo:hi], lean)
		done := make(chan struct{})
		go func() {
			defer close(done)
			lives, readErrs := read()
			copy(plans[lo:hi], r.plans(items[lo:hi], lives))
			for j, err := range readErrs {
				if err != nil {
					plans[lo+j].err = err
				}
			}
		}()
		return done
	}
	var ahead chan struct{}
	if planned == 0 && len(items) > 0 {
		ahead = next(0, min(planChunk, len(items)))
	}
	defer func() {
		if ahead != nil {
			<-ahead
		}
	}()
	pf, _ := c.(cluster.Prefetcher)
	if mode == writeNone {
		pf = nil
	}
	// told: the patches of the chunk ahead were told to pf, as soon as
	// they were planned (checked after each write), so that pf prepares
	// them while this chunk is written.
	told := false
	for i, it := range items {
		if i == planned {
			<-ahead
			lo := i
			planned = min(i+planChunk, len(items))
			ahead = nil
			if planned < len(items) {
				ahead = next(planned, min(planned+planChunk, len(items)))
			}
			if pf != nil && !told {
				prefetch(ctx, pf, plans[lo:planned])
			}
			told = false
		}
		if pf != nil && !told && ahead != nil {
			select {
			case <-ahead:
				prefetch(ctx, pf, plans[planned:min(planned+planChunk, len(items))])
				told = true
			default:
			}
		}
		if parentPending && !it.isNamespace() {
			parentPending = false
			if err := r.set.BeforeApply(ctx, c, mode == writeDryRun); err != nil {
				return fmt.Errorf("apply: %w", err)
			}
		}
		res, err := r.execute(ctx, c, plans[i], mode)
		if err != nil {
			errs.add(it, err)
			continue
		}
		if it.isCRD() && mode == writeReal && (res.Action == Created || res.Action == Configured) {
			if err := waitEstablished(ctx, c, it.ref.Name, r.opts.crdTimeout()); err != nil {
				errs.add(it, err)
			}
		}
		// The plan is done with; with OnResult the result is handed over
		// at once, and nothing of the object stays for the rest of the run.
		plans[i] = plan{}
		if r.opts.OnResult != nil {
			r.add(res)
		} else {
			r.slots[it.idx] = &res
		}
		r.progress(StepApply, len(items))
	}
	if errs.len() > 0 {
		return nil
	}
	if parentPending {
		if err := r.set.BeforeApply(ctx, c, mode == writeDryRun); err != nil {
			return fmt.Errorf("apply: %w", err)
		}
	}
	return nil
}

// newApplySet resolves the ApplySet parent and checks it.
func (r *run) newApplySet(ctx context.Context, c cluster.Interface) (*prune.ApplySet, error) {
	return r.applySetFor(ctx, c, c.Mapper())
}

// options of the writes of a mode.
func (r *run) createOptions(mode writeMode) []cluster.CreateOption {
	opts := []cluster.CreateOption{cluster.FieldOwner(r.opts.fieldManager())}
	if mode == writeDryRun {
		opts = append(opts, cluster.DryRunAll)
	}
	if r.opts.MetadataOnly && !r.opts.ServerSide {
		opts = append(opts, cluster.MetadataOnly)
	}
	if r.opts.FieldValidation != "" {
		opts = append(opts, r.opts.FieldValidation)
	}
	return opts
}

func (r *run) patchOptions(mode writeMode) []cluster.PatchOption {
	opts := []cluster.PatchOption{cluster.FieldOwner(r.opts.fieldManager())}
	if mode == writeDryRun {
		opts = append(opts, cluster.DryRunAll)
	}
	if r.opts.MetadataOnly && !r.opts.ServerSide {
		opts = append(opts, cluster.MetadataOnly)
	}
	if r.opts.FieldValidation != "" {
		opts = append(opts, r.opts.FieldValidation)
	}
	if r.opts.ServerSide && r.opts.ForceConflicts {
		opts = append(opts, cluster.ForceOwnership)
	}
	return opts
}

const conflictHelp = `Please review the fields above--they currently have other managers. Here
are the ways you can resolve this warning:
* If you intend to manage all of these fields, please re-run the apply
  command with the ` + "`--force-conflicts`" + ` flag.
* If you do not intend to manage all of the fields, please edit your
  manifest to remove references to the fields that should keep their
  current managers.
* You may co-own fields by updating your manifest to match the existing
  value; in this case, you'll become the manager if the other manager(s)
  stop managing the field (remove it from their configuration).
See https://kubernetes.io/docs/reference/using-api/server-side-apply/#conflicts`

// replace deletes the object and creates it anew (kubectl apply --force),
// restoring the old one if the new one is refused.
func (r *run) replace(ctx context.Context, c cluster.Interface, it *item, live, modified map[string]any) (map[string]any, error) {
	gvk, ns, name := it.ref.GVK, it.ref.Namespace, it.ref.Name
	if err := c.Delete(ctx, gvk, ns, name, cluster.Background); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(r.opts.ForceTimeout)
	for {
		_, err := c.Get(ctx, gvk, ns, name)
		if cluster.IsNotFound(err) {
			break
		}
		if err != nil {
			return nil, err
		}
		if !time.Now().Before(deadline) {
			return nil, fmt.Errorf("timed out waiting for %s to be deleted", it.ref)
		}
		if err := sleep(ctx, min(time.Second, time.Until(deadline))); err != nil {
			return nil, err
		}
	}
	out, err := c.Create(ctx, withoutResourceVersion(withoutNulls(modified)), r.createOptions(writeReal)...)
	if err == nil {
		return out, nil
	}
	old := value.DeepCopyObject(live)
	md := objref.Metadata(old)
	for _, f := range []string{"resourceVersion", "uid", "creationTimestamp", "deletionTimestamp", "generation", "managedFields"} {
		delete(md, f)
	}
	if restored, rerr := c.Create(ctx, old, r.createOptions(writeReal)...); rerr != nil {
		//lint:ignore ST1005 kubectl apply --force's message, word for word
		return nil, fmt.Errorf("An error occurred force-replacing the existing object with the newly provided one:\n\n%v.\n\nAdditionally, an error occurred attempting to restore the original object:\n\n%v", err, rerr)
	} else {
		return restored, err
	}
}

// prune deletes what the input no longer holds, and with an ApplySet
// records the set in its parent.
func (r *run) prune(ctx context.Context, c cluster.Interface, mode writeMode) error {
	if r.set == nil && len(r.opts.PruneAllowlist) == 0 && r.opts.Warn != nil {
		r.opts.Warn(prune.DeprecationWarning)
	}
	cands := r.fixedPrune
	if cands == nil {
		var err error
		if cands, err = r.findPrunable(ctx, c, c.Mapper(), r.visited); err != nil {
			return err
		}
	}
	for _, cand := range cands {
		if !cand.Resource.Namespaced && r.opts.Warn != nil {
			r.opts.Warn(clusterScopedPruneWarning(cand))
		}
	}
	// Deletions go out Concurrency at a time (one at a time in a batch);
	// the results keep the order of the candidates.
	errs := make([]error, len(cands))
	if mode != writeNone {
		forEach(ctx, len(cands), r.workers(), func(i int) {
			if err := prune.Delete(ctx, c, cands[i], mode == writeDryRun); err != nil {
				errs[i] = fmt.Errorf("apply: pruning %s: %w", pruneName(cands[i]), err)
			}
		})
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("apply: %w", err)
	}
	for i, cand := range cands {
		if errs[i] != nil {
			continue
		}
		r.emit(Result{
			Ref:    objref.Of(cand.Object),
			Action: Pruned,
			DryRun: r.opts.DryRun,
			Object: cand.Object,
			Live:   cand.Object,
		})
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if r.set != nil && mode != writeNone {
		if err := r.set.AfterPrune(ctx, c, mode == writeDryRun); err != nil {
			return fmt.Errorf("apply: %w", err)
		}
	}
	return nil
}

// pruneName prints a candidate as kubectl's prune errors do:
// "Deployment.apps default/web".
// clusterScopedPruneWarning is the warning for pruning an object that is
// not in a namespace: a Namespace takes everything in it along, and other
// cluster-scoped objects are shared by every namespace.
func clusterScopedPruneWarning(c prune.Candidate) string {
	ref := objref.KindGroup(c.Resource.GVK) + "/" + c.Ref.Name
	if c.Ref.Group == "" && c.Ref.Kind == "Namespace" {
		return "pruning " + ref + ": deleting a namespace deletes every object in it"
	}
	return "pruning " + ref + ": it is cluster-scoped, shared by every namespace"
}

func pruneName(c prune.Candidate) string {
	var b strings.Builder
	b.WriteString(c.Ref.Kind)
	if c.Ref.Group != "" {
		b.WriteString("." + c.Ref.Group)
	}
	b.WriteByte(' ')
	if c.Ref.Namespace != "" {
		b.WriteString(c.Ref.Namespace + "/")
	}
	b.WriteString(c.Ref.Name)
	return b.String()
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
