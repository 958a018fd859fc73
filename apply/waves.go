package apply

import (
	"context"
	"fmt"
	"slices"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/objref"
	"github.com/konverge/konverge/schema"
)

// groupKind names a kind across its versions.
type groupKind struct{ group, kind string }

func (it *item) groupKind() groupKind { return groupKind{it.ref.Group, it.ref.Kind} }

var (
	// gatesAll are the kinds whose objects change how the API server
	// admits every object written after them: admission webhooks and
	// policies, quotas, aggregated APIs.
	gatesAll = map[groupKind]bool{
		{"admissionregistration.k8s.io", "ValidatingWebhookConfiguration"}:   true,
		{"admissionregistration.k8s.io", "MutatingWebhookConfiguration"}:     true,
		{"admissionregistration.k8s.io", "ValidatingAdmissionPolicy"}:        true,
		{"admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"}: true,
		{"admissionregistration.k8s.io", "MutatingAdmissionPolicy"}:          true,
		{"admissionregistration.k8s.io", "MutatingAdmissionPolicyBinding"}:   true,
		{"", "ResourceQuota"}:                    true,
		{"apiregistration.k8s.io", "APIService"}: true,
	}
	// gatesPods are the kinds whose objects change how the API server
	// admits the Pods and PersistentVolumeClaims written after them (the
	// ServiceAccount, LimitRanger, Priority, RuntimeClass and
	// DefaultStorageClass admission plugins).
	gatesPods = map[groupKind]bool{
		{"", "ServiceAccount"}:                 true,
		{"", "LimitRange"}:                     true,
		{"scheduling.k8s.io", "PriorityClass"}: true,
		{"node.k8s.io", "RuntimeClass"}:        true,
		{"storage.k8s.io", "StorageClass"}:     true,
	}
	podKinds = map[groupKind]bool{{"", "Pod"}: true, {"", "PersistentVolumeClaim"}: true}
)

// gate is what an object written so far changes in the admission of the
// objects after it.
type gate struct{ all, pods bool }

// add records that p is written.
func (g *gate) add(p plan) {
	if !p.writes() {
		return
	}
	gk := p.it.groupKind()
	g.all = g.all || gatesAll[gk]
	g.pods = g.pods || gatesPods[gk]
}

// covers reports whether the admission of it depends on what was written.
func (g gate) covers(it *item) bool {
	return g.all || g.pods && podKinds[it.groupKind()]
}

// isGate reports whether writing p changes the admission of objects of
// the input.
func isGate(p plan, hasPods bool) bool {
	gk := p.it.groupKind()
	return p.writes() && (gatesAll[gk] || gatesPods[gk] && hasPods)
}

// writes reports whether the plan sends a write: a create, a non-empty
// patch or a server-side apply.
func (p plan) writes() bool {
	return p.err == nil && (p.pt == cluster.ApplyPatchType || p.live == nil || len(p.patch) > 0)
}

// doConcurrent applies the items on a cluster that is not a Batcher:
//
//  1. the live state of every object is read in bulk (readLive) and every
//     merge computed locally;
//  2. for a real apply, every object that is to be written is tried as a
//     server dry run, all at once; a problem stops the apply before
//     anything is written;
//  3. the writes go out, Options.Concurrency at a time: the Namespaces,
//     then the CustomResourceDefinitions (waiting until they are
//     Established), then the custom resources of those (read and planned
//     only now) and the rest, in waves split at the objects that change
//     how the API server admits the objects after them (webhooks, quotas,
//     ServiceAccounts, LimitRanges, ...), so that each object is admitted
//     as it would be in kubectl's one-by-one order.
//
// Only objects whose patch is not empty are sent anything.
func (r *run) doConcurrent(ctx context.Context, c cluster.Interface, mode writeMode, errs *errorList) error {
	workers := r.opts.concurrency()
	var now, late []*item
	for _, it := range r.items {
		if it.crd != nil {
			late = append(late, it)
		} else {
			now = append(now, it)
		}
	}
	plans := r.readAndPlan(ctx, c, now, workers)
	hasPods := slices.ContainsFunc(r.items, func(it *item) bool { return podKinds[it.groupKind()] })

	if mode == writeReal {
		for _, p := range plans {
			if p.err != nil {
				errs.add(p.it, p.err)
			}
		}
		r.trial(ctx, c, plans, workers, errs)
		if errs.len() > 0 {
			return nil
		}
	}
	if r.set != nil && mode != writeNone {
		// The ApplySet parent is written before the members, so that an
		// interrupted apply leaks no member.
		if err := r.set.BeforeApply(ctx, c, mode == writeDryRun); err != nil {
			return fmt.Errorf("apply: %w", err)
		}
	}

	var namespaces, crds, rest []plan
	for _, p := range plans {
		switch p.it.rank() {
		case 0:
			namespaces = append(namespaces, p)
		case 1:
			crds = append(crds, p)
		default:
			rest = append(rest, p)
		}
	}
	r.wave(ctx, c, namespaces, mode, workers, errs)
	r.wave(ctx, c, crds, mode, workers, errs)
	if mode == writeReal {
		forEach(ctx, len(crds), workers, func(i int) {
			it := crds[i].it
			res := r.slots[it.idx]
			if res == nil || (res.Action != Created && res.Action != Configured) {
				return
			}
			if err := waitEstablished(ctx, c, it.ref.Name, r.opts.crdTimeout()); err != nil {
				errs.add(it, err)
			}
		})
	}
	if len(late) > 0 {
		rest = append(rest, r.readAndPlan(ctx, c, late, workers)...)
		slices.SortStableFunc(rest, func(a, b plan) int { return a.it.idx - b.it.idx })
	}
	start := 0
	for i, p := range rest {
		if isGate(p, hasPods) {
			r.wave(ctx, c, rest[start:i], mode, workers, errs)
			r.wave(ctx, c, rest[i:i+1], mode, workers, errs)
			start = i + 1
		}
	}
	r.wave(ctx, c, rest[start:], mode, workers, errs)
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("apply: %w", err)
	}
	return nil
}

// readAndPlan reads the live versions of items and plans them.
func (r *run) readAndPlan(ctx context.Context, c cluster.Reader, items []*item, workers int) []plan {
	if r.fixed != nil {
		return r.fixedPlans(items)
	}
	snap := readLive(ctx, c, items, workers)
	plans := r.plans(items, snap.live)
	for i, err := range snap.err {
		if err != nil {
			plans[i].err = err
		}
	}
	return plans
}

// trial sends, as server dry runs, the writes of the plans that the
// server can judge before anything is written: not those in a namespace
// the input creates, nor those whose admission depends on an object of the
// input written before them (see doConcurrent), which were checked only
// locally. A plan whose dry run met a Conflict, and so was made again from
// a fresh read, is replaced by the fresh one.
func (r *run) trial(ctx context.Context, c cluster.Interface, plans []plan, workers int, errs *errorList) {
	newNamespaces := map[string]bool{}
	var g gate
	var tried []int
	for i, p := range plans {
		it := p.it
		if it.isNamespace() && p.live == nil {
			newNamespaces[it.ref.Name] = true
		}
		skip := !p.writes() || newNamespaces[it.ref.Namespace] || g.covers(it)
		if it.rank() == 2 {
			g.add(p)
		}
		if !skip {
			tried = append(tried, i)
		}
	}
	check := c
	if !r.opts.ServerSide {
		// A check reads only the resourceVersion of what it would write.
		check = metadataOnly{c}
	}
	forEach(ctx, len(tried), workers, func(k int) {
		p := plans[tried[k]]
		res, err := r.execute(ctx, check, p, writeDryRun)
		switch {
		case err != nil:
			errs.add(p.it, err)
		case r.fixed == nil && p.live != nil && objref.ResourceVersion(res.Live) != objref.ResourceVersion(p.live):
			plans[tried[k]] = r.makePlan(p.it, res.Live)
		}
		r.progress(StepCheck, len(tried))
	})
}

// wave executes plans, workers at a time, and records their results.
func (r *run) wave(ctx context.Context, c cluster.Interface, plans []plan, mode writeMode, workers int, errs *errorList) {
	forEach(ctx, len(plans), workers, func(i int) {
		p := plans[i]
		res, err := r.execute(ctx, c, p, mode)
		if err != nil {
			errs.add(p.it, err)
		} else {
			r.slots[p.it.idx] = &res
		}
		r.progress(StepApply, len(r.items))
	})
}

// metadataOnly is a cluster whose creates and patches tell the server that
// only the metadata of their result is read (cluster.MetadataOnly): the
// dry runs of a check, which costs the API server less to answer.
type metadataOnly struct{ cluster.Interface }

func (c metadataOnly) Create(ctx context.Context, obj cluster.Object, opts ...cluster.CreateOption) (cluster.Object, error) {
	return c.Interface.Create(ctx, obj, append(opts, cluster.MetadataOnly)...)
}

func (c metadataOnly) Patch(ctx context.Context, gvk schema.GVK, namespace, name string, pt cluster.PatchType, data []byte, opts ...cluster.PatchOption) (cluster.Object, error) {
	return c.Interface.Patch(ctx, gvk, namespace, name, pt, data, append(opts, cluster.MetadataOnly)...)
}
