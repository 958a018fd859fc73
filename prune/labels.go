package prune

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/lastapplied"
	"github.com/konverge/konverge/objref"
	"github.com/konverge/konverge/schema"
)

// Candidate is a live object that a prune deletes.
type Candidate struct {
	// Ref names the object, in the version it was listed in.
	Ref objref.Ref
	// Resource is how its kind is served.
	Resource cluster.Resource
	// Object is the object as listed.
	Object map[string]any
}

// Visited is what an apply touched: the uids of the objects it applied and
// the namespaces of its namespaced objects.
type Visited struct {
	UIDs       map[string]bool
	Namespaces map[string]bool
}

// NewVisited returns an empty Visited.
func NewVisited() *Visited {
	return &Visited{UIDs: map[string]bool{}, Namespaces: map[string]bool{}}
}

// sortedNamespaces returns the visited namespaces in order (kubectl walks
// its set in Go's map order; konverge prunes in a stable order).
func (v *Visited) sortedNamespaces() []string {
	out := make([]string, 0, len(v.Namespaces))
	for ns := range v.Namespaces {
		out = append(out, ns)
	}
	slices.Sort(out)
	return out
}

// defaultNamespaced and defaultClusterScoped are kubectl's default prune
// allowlist (k8s.io/kubectl/pkg/util/prune), in its order.
var (
	defaultNamespaced = []schema.GVK{
		{Version: "v1", Kind: "ConfigMap"},
		{Version: "v1", Kind: "Endpoints"},
		{Version: "v1", Kind: "PersistentVolumeClaim"},
		{Version: "v1", Kind: "Pod"},
		{Version: "v1", Kind: "ReplicationController"},
		{Version: "v1", Kind: "Secret"},
		{Version: "v1", Kind: "Service"},
		{Group: "batch", Version: "v1", Kind: "Job"},
		{Group: "batch", Version: "v1", Kind: "CronJob"},
		{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"},
		{Group: "apps", Version: "v1", Kind: "DaemonSet"},
		{Group: "apps", Version: "v1", Kind: "Deployment"},
		{Group: "apps", Version: "v1", Kind: "ReplicaSet"},
		{Group: "apps", Version: "v1", Kind: "StatefulSet"},
	}
	defaultClusterScoped = []schema.GVK{
		{Version: "v1", Kind: "Namespace"},
		{Version: "v1", Kind: "PersistentVolume"},
	}
)

// DefaultAllowlist returns kubectl's default prune allowlist: the namespaced
// kinds ConfigMap, Endpoints, PersistentVolumeClaim, Pod,
// ReplicationController, Secret, Service, Job, CronJob, Ingress, DaemonSet,
// Deployment, ReplicaSet and StatefulSet, and the cluster-scoped Namespace
// and PersistentVolume.
func DefaultAllowlist() []schema.GVK {
	return slices.Concat(defaultNamespaced, defaultClusterScoped)
}

// DeprecationWarning is what kubectl v1.37 logs whenever apply --prune uses
// the default allowlist (it means to stop pruning cluster-scoped kinds when
// a namespace is given, and since its namespace is never empty, it always
// says so).
const DeprecationWarning = "Deprecated: kubectl apply will no longer prune non-namespaced resources by default when used with the --namespace flag in a future release. To preserve the current behaviour, list the resources you want to target explicitly in the --prune-allowlist flag."

// ParseAllowlist reads kubectl's --prune-allowlist values,
// <group>/<version>/<kind> with "core" for the core group
// ("core/v1/ConfigMap", "apps/v1/Deployment"), and checks that the API
// serves each kind.
func ParseAllowlist(m cluster.Mapper, specs []string) ([]schema.GVK, error) {
	out := make([]schema.GVK, 0, len(specs))
	for _, spec := range specs {
		parts := strings.Split(spec, "/")
		if len(parts) != 3 {
			return nil, fmt.Errorf("invalid GroupVersionKind format: %v, please follow <group/version/kind>", spec)
		}
		if parts[0] == "core" {
			parts[0] = ""
		}
		gvk := schema.GVK{Group: parts[0], Version: parts[1], Kind: parts[2]}
		if _, err := m.ResourceFor(gvk); err != nil {
			return nil, err
		}
		out = append(out, gvk)
	}
	return out, nil
}

// Labels is kubectl's label-selector pruning (apply --prune -l, or --all):
// the live objects of the allowlisted kinds that match Selector, in the
// namespaces the apply visited (and cluster-scoped ones anywhere), that
// carry the last-applied annotation and that the apply did not touch.
type Labels struct {
	// Selector is the label selector in kubectl's syntax; "" selects every
	// object (--all).
	Selector string
	// Allowlist are the kinds to look at; nil means DefaultAllowlist.
	Allowlist []schema.GVK
	// Concurrency is how many Lists Find has in flight at once; 0 means
	// one at a time.
	Concurrency int
}

// UsesDefaultAllowlist reports whether the default allowlist applies, when
// kubectl prints DeprecationWarning.
func (l Labels) UsesDefaultAllowlist() bool { return len(l.Allowlist) == 0 }

// Find lists what to prune, namespaces in order and then the cluster-scoped
// kinds, each kind in the order of the allowlist and its objects in the
// order List returns them.
func (l Labels) Find(ctx context.Context, c cluster.Reader, m cluster.Mapper, visited *Visited) ([]Candidate, error) {
	gvks := l.Allowlist
	if len(gvks) == 0 {
		gvks = DefaultAllowlist()
	}
	var namespaced, clusterScoped []cluster.Resource
	for _, gvk := range gvks {
		res, err := m.ResourceFor(gvk)
		if err != nil {
			return nil, fmt.Errorf("error retrieving RESTMappings to prune: invalid resource %s/%s, Kind=%s, Namespaced=%v: %w",
				gvk.Group, gvk.Version, gvk.Kind, !slices.Contains(defaultClusterScoped, gvk), err)
		}
		if res.Namespaced {
			namespaced = append(namespaced, res)
		} else {
			clusterScoped = append(clusterScoped, res)
		}
	}
	// One List per visited namespace and namespaced kind, then one per
	// cluster-scoped kind, run Concurrency at a time; the candidates come
	// in that order.
	type task struct {
		res cluster.Resource
		ns  string
	}
	var tasks []task
	for _, ns := range visited.sortedNamespaces() {
		for _, res := range namespaced {
			tasks = append(tasks, task{res, ns})
		}
	}
	for _, res := range clusterScoped {
		tasks = append(tasks, task{res, ""})
	}
	found := make([][]Candidate, len(tasks))
	errs := make([]error, len(tasks))
	run := func(i int) {
		t := tasks[i]
		found[i], errs[i] = l.find(ctx, c, t.res, t.ns, visited)
		if errs[i] == nil {
			return
		}
		if t.res.Namespaced {
			errs[i] = fmt.Errorf("error pruning namespaced object %s: %w", gvkString(t.res.GVK), errs[i])
		} else {
			errs[i] = fmt.Errorf("error pruning nonNamespaced object %s: %w", gvkString(t.res.GVK), errs[i])
		}
	}
	workers := min(max(l.Concurrency, 1), len(tasks))
	var wg sync.WaitGroup
	var next atomic.Int64
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(tasks) {
					return
				}
				run(i)
			}
		}()
	}
	wg.Wait()
	var out []Candidate
	for i := range tasks {
		if errs[i] != nil {
			return nil, errs[i]
		}
		out = append(out, found[i]...)
	}
	return out, nil
}

func (l Labels) find(ctx context.Context, c cluster.Reader, res cluster.Resource, ns string, visited *Visited) ([]Candidate, error) {
	opts := []cluster.ListOption{cluster.MatchingLabels(l.Selector)}
	if ns != "" {
		opts = append(opts, cluster.InNamespace(ns))
	}
	list, err := c.List(ctx, res.GVK, opts...)
	if err != nil {
		return nil, err
	}
	var out []Candidate
	for _, obj := range list.Items {
		if _, ok := objref.Annotations(obj)[lastapplied.Annotation]; !ok {
			continue // not created by apply
		}
		if visited.UIDs[objref.UID(obj)] {
			continue
		}
		out = append(out, candidate(res, obj))
	}
	return out, nil
}

func candidate(res cluster.Resource, obj map[string]any) Candidate {
	return Candidate{
		Ref:      objref.Ref{GVK: res.GVK, Namespace: objref.Namespace(obj), Name: objref.Name(obj)},
		Resource: res,
		Object:   obj,
	}
}

// gvkString prints a GVK as apimachinery does: "apps/v1, Kind=Deployment".
func gvkString(gvk schema.GVK) string {
	return gvk.APIVersion() + ", Kind=" + gvk.Kind
}

// Delete deletes a candidate with background propagation, as kubectl's
// prune does; dryRun sends the deletion as a server dry run.
func Delete(ctx context.Context, c cluster.Writer, cand Candidate, dryRun bool) error {
	opts := []cluster.DeleteOption{cluster.Background}
	if dryRun {
		opts = append(opts, cluster.DryRunAll)
	}
	err := c.Delete(ctx, cand.Resource.GVK, cand.Ref.Namespace, cand.Ref.Name, opts...)
	if cluster.IsNotFound(err) {
		// Gone already (a namespace pruned before took it along).
		return nil
	}
	return err
}
