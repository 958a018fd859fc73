package apply

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/internal/parallel"
	"github.com/konverge/konverge/lastapplied"
	"github.com/konverge/konverge/merge"
	"github.com/konverge/konverge/objref"
	"github.com/konverge/konverge/value"
)

// plan is what applying one object takes, computed from the live object
// without talking to the cluster: the object to create, or the patch.
type plan struct {
	it   *item
	live map[string]any // nil: create
	// modified is the config with its last-applied annotation.
	modified map[string]any
	// create is the object to create (modified without nulls).
	create map[string]any
	// patch and its encoding; an empty patch means Unchanged.
	patch map[string]any
	pt    cluster.PatchType
	data  []byte
	err   error
	// annotated and deleting are read from live's metadata while it is
	// at hand: whether it has a last-applied annotation (not null), and
	// its deletionTimestamp.
	annotated bool
	deleting  string
}

// makePlan computes what applying it to live takes: kubectl's
// applyOneObject up to the request, and patcher.go's patchSimple.
func (r *run) makePlan(it *item, live map[string]any) plan {
	p := plan{it: it, live: live}
	var liveAnnotation, liveNS string
	if live != nil {
		md := objref.Metadata(live)
		liveNS, _ = md["namespace"].(string)
		ann, _ := md["annotations"].(map[string]any)
		la := ann[lastapplied.Annotation]
		p.annotated = la != nil
		liveAnnotation, _ = la.(string)
		p.deleting, _ = md["deletionTimestamp"].(string)
	}
	if r.opts.ServerSide {
		p.pt = cluster.ApplyPatchType
		p.data, p.err = value.Encode(r.ssaConfig(it, live))
		return p
	}
	// The annotation is encoded into pooled scratch: most objects of a
	// plan carry it on live already (then live's string is the one to
	// send), and a string of it is made only for the others.
	bp := scratchPool.Get().(*[]byte)
	defer func() {
		if cap(*bp) <= 64<<10 {
			scratchPool.Put(bp)
		}
	}()
	// exact: the config decodes as itself (decodesAsItself), told by the
	// walk that encodes it.
	enc, exact, err := lastapplied.AppendEncodeIn((*bp)[:0], it.config, it.addNS)
	*bp = enc[:0]
	if err != nil {
		p.err = err
		return p
	}
	// The config was validated against the kind's schema when the input
	// was prepared (validateItem); with its annotation it is as valid.
	validated := it.crd == nil && it.typ != nil
	if live != nil && it.res.Strategic && liveAnnotation != "" && liveAnnotation == string(enc) && exact && r.reapplied(it, live, liveAnnotation) {
		// Applied again as it was: its original configuration is the
		// config, and nothing is deleted. The annotation, the same on
		// both sides, changes nothing: the config carries it only when
		// there is a patch to send. A config whose namespace is not
		// settled yet (addNS) gives the same patch without it when live
		// is in that namespace.
		config := it.config
		if it.addNS != "" && liveNS != it.addNS {
			config = it.fullConfig()
		}
		p.pt = cluster.StrategicMergePatchType
		p.patch, p.err = merge.ThreeWayReapplied(config, config, live, it.typ, merge.Options{Validated: validated})
		if p.err == nil && len(p.patch) > 0 {
			p.modified = lastapplied.SetEncoded(config, liveAnnotation)
			if it.addNS != "" {
				// SetEncoded's metadata is a copy of its own.
				p.modified["metadata"].(map[string]any)["namespace"] = it.addNS
			}
			p.data, p.err = value.Encode(p.patch)
		}
		return p
	}
	config := it.fullConfig()
	annotation := string(enc)
	p.modified = lastapplied.SetEncoded(config, annotation)
	if live == nil {
		// kubectl drops nulls after recording the annotation, which keeps
		// them, so that a create stores what an update would.
		p.create = withoutNulls(p.modified)
		return p
	}
	original, err := originalOf(live, p.modified, config)
	if err != nil {
		p.err = fmt.Errorf("retrieving original configuration: %w", err)
		return p
	}
	settled := p.modified
	original, p.modified = r.ignoreFields(it, original, p.modified, live)
	if it.res.Strategic {
		p.pt = cluster.StrategicMergePatchType
		opts := merge.Options{DetectConflicts: r.opts.NoOverwrite, Validated: validated && sameMap(settled, p.modified)}
		p.patch, p.err = merge.ThreeWay(original, p.modified, live, it.typ, opts)
	} else {
		p.pt = cluster.MergePatchType
		p.patch, p.err = merge.ThreeWayJSONMerge(original, p.modified, live)
	}
	if p.err == nil && len(p.patch) > 0 {
		p.data, p.err = value.Encode(p.patch)
	}
	return p
}

// reapplied reports, for a live object whose last-applied annotation is
// the one the config's annotation (lastapplied.Encode's) would be, and a
// config whose encoding decodes as itself (lastapplied.AppendEncodeExact:
// originalOf's decodesAsItself), whether merge.ThreeWayReapplied(config,
// config, live) computes its patch: for a config whose annotations hold
// no null and that carries no last-applied annotation of its own (it differs from what kubectl sends by that annotation only,
// which live has); not with --overwrite=false (which compares live with
// the original configuration), ignore rules that apply to the object, or
// a $patch directive in the config (which ThreeWay checks against
// itself).
func (r *run) reapplied(it *item, live map[string]any, annotation string) bool {
	if r.opts.NoOverwrite || strings.Contains(annotation, `"$patch"`) {
		return false
	}
	if md, ok := it.config["metadata"].(map[string]any); !ok {
		return false
	} else if a, present := md["annotations"]; present {
		ann, ok := a.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range ann {
			if v == nil || k == lastapplied.Annotation {
				return false
			}
		}
	}
	return len(r.ignore) == 0 || len(ignoredPaths(r.ignore, it.ref, live)) == 0
}

// scratchPool holds the buffers makePlan encodes annotations into.
var scratchPool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// sameMap reports whether a and b are the same map.
func sameMap(a, b map[string]any) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// plans computes the plans of many objects on all CPUs.
func (r *run) plans(items []*item, lives []map[string]any) []plan {
	out := make([]plan, len(items))
	parallel.Chunks(len(items), 64, func(i int) { out[i] = r.makePlan(items[i], lives[i]) })
	return out
}

// get returns the live object, nil when there is none (or its kind is not
// served yet: its CRD comes with the input).
func get(ctx context.Context, c cluster.Reader, it *item) (map[string]any, error) {
	live, err := c.Get(ctx, it.ref.GVK, it.ref.Namespace, it.ref.Name)
	if cluster.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("retrieving current configuration: %w", err)
	}
	return live, nil
}

// startRead reads the live objects of items as get does: at once, or,
// when c is a cluster.ManyGetter, as they are now, decoded while the
// caller goes on (without their managedFields when lean). wait returns
// them; any goroutine may call it, once.
func startRead(ctx context.Context, c cluster.Interface, items []*item, lean bool) (wait func() ([]map[string]any, []error)) {
	lives := make([]map[string]any, len(items))
	errs := make([]error, len(items))
	mg, ok := c.(cluster.ManyGetter)
	if !ok {
		for i, it := range items {
			lives[i], errs[i] = get(ctx, c, it)
		}
		return func() ([]map[string]any, []error) { return lives, errs }
	}
	keys := make([]cluster.Key, len(items))
	for i, it := range items {
		keys[i] = cluster.Key{GVK: it.ref.GVK, Namespace: it.ref.Namespace, Name: it.ref.Name}
	}
	var opts []cluster.ListOption
	if lean {
		opts = append(opts, cluster.WithoutManagedFields)
	}
	read := mg.GetMany(ctx, keys, opts...)
	return func() ([]map[string]any, []error) {
		objs, gerrs := read()
		for i, err := range gerrs {
			switch {
			case cluster.IsNotFound(err):
			case err != nil:
				errs[i] = fmt.Errorf("retrieving current configuration: %w", err)
			default:
				lives[i] = objs[i]
			}
		}
		return lives, errs
	}
}

// execute sends a plan: a create, a patch (computed again from a fresh
// read when the server answers Conflict, up to maxPatchRetry times), or
// nothing for an empty patch.
func (r *run) execute(ctx context.Context, c cluster.Interface, p plan, mode writeMode) (Result, error) {
	it := p.it
	res := Result{Ref: it.ref, Source: it.src, DryRun: r.opts.DryRun, Live: p.live}
	if p.err != nil {
		return res, p.err
	}
	if r.opts.ServerSide {
		return r.serverSide(ctx, c, p, mode, res)
	}
	if p.live == nil {
		return r.create(ctx, c, p, mode, res)
	}
	if _, ok := objref.Annotations(p.live)[lastapplied.Annotation]; !ok {
		res.Warnings = append(res.Warnings, missingAnnotationWarning(it))
	}
	for attempt := 0; ; attempt++ {
		if p.err != nil {
			return res, p.err
		}
		res.Live = p.live
		if len(p.patch) == 0 {
			res.Action, res.Object = Unchanged, p.live
			r.warnIfDeleting(&res)
			return res, nil
		}
		res.Patch, res.PatchType = p.patch, p.pt
		if mode == writeNone {
			obj, err := applyLocally(p)
			if err != nil {
				return res, fmt.Errorf("applying patch locally: %w", err)
			}
			res.Action, res.Object = Configured, obj
			r.warnIfDeleting(&res)
			return res, nil
		}
		out, err := c.Patch(ctx, it.ref.GVK, it.ref.Namespace, it.ref.Name, p.pt, p.data, r.patchOptions(mode)...)
		if cluster.IsConflict(err) && attempt < maxPatchRetry && r.fixed == nil {
			if attempt >= 1 {
				if err := sleep(ctx, r.opts.retryBackoff()); err != nil {
					return res, err
				}
			}
			live, err := c.Get(ctx, it.ref.GVK, it.ref.Namespace, it.ref.Name)
			if err != nil {
				return res, err
			}
			p = r.makePlan(it, live)
			continue
		}
		if err != nil && r.opts.Force && (cluster.IsConflict(err) || cluster.IsInvalid(err)) {
			if mode == writeDryRun {
				// The trial before the writes: the replacement cannot be
				// tried, the writes will make it.
				res.Action, res.Object = Configured, p.live
				return res, nil
			}
			out, err = r.replace(ctx, c, it, p.live, p.modified)
		}
		if err != nil {
			return res, err
		}
		res.Action, res.Object = Configured, out
		if r.rollback {
			res.Object = objref.WithMetadata(out, "resourceVersion", objref.ResourceVersion(p.live))
		}
		r.warnIfDeleting(&res)
		return res, nil
	}
}

// create creates an object with its last-applied annotation.
func (r *run) create(ctx context.Context, c cluster.Interface, p plan, mode writeMode, res Result) (Result, error) {
	res.Action = Created
	if mode == writeNone {
		res.Object = p.create
		return res, nil
	}
	opts := r.createOptions(mode)
	if r.handsOver(p.it, mode) {
		opts = append(opts, cluster.HandOver)
	}
	out, err := c.Create(ctx, withoutResourceVersion(p.create), opts...)
	if err != nil {
		return res, err
	}
	if r.rollback {
		out = objref.WithMetadata(out, "resourceVersion", nil)
	}
	res.Object = out
	return res, nil
}

// handsOver reports whether a create of it gives the cluster its object
// (Options.GiveObjects): in a batch of real writes planned by this run
// (a Plan's objects are the Planner's), which reads neither the object
// nor the config it shares after the create; not for a Secret, whose
// config masks the values in its errors.
func (r *run) handsOver(it *item, mode writeMode) bool {
	return r.opts.GiveObjects && r.batched && !r.rollback && r.fixed == nil && mode == writeReal && !it.isSecret()
}

// withoutResourceVersion is obj without metadata.resourceVersion, as
// kubectl sends an object it creates (kube-apiserver refuses a create
// that sets it): a manifest exported from another cluster carries the
// version it had there. The last-applied annotation keeps it, as
// kubectl's does.
func withoutResourceVersion(obj map[string]any) map[string]any {
	if _, ok := objref.Metadata(obj)["resourceVersion"]; !ok {
		return obj
	}
	return objref.WithMetadata(obj, "resourceVersion", nil)
}

// applyLocally is what the server would make of live with the patch.
func applyLocally(p plan) (map[string]any, error) {
	if p.pt == cluster.StrategicMergePatchType {
		return merge.Apply(p.live, p.patch, p.it.typ)
	}
	return merge.MergePatch(p.live, p.patch), nil
}

func (r *run) warnIfDeleting(res *Result) {
	if dt, _ := objref.Metadata(res.Object)["deletionTimestamp"].(string); dt != "" {
		res.Warnings = append(res.Warnings, fmt.Sprintf("Warning: Detected changes to resource %s which is currently being deleted.", res.Ref.Name))
	}
}
