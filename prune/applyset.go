package prune

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/objref"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

// The labels and annotations of the ApplySet specification (KEP-3659), as
// kubectl v1.37 writes and reads them.
const (
	// ToolingAnnotation names the tool that manages a parent,
	// "<tool>/<semver>".
	ToolingAnnotation = "applyset.kubernetes.io/tooling"
	// AdditionalNamespacesAnnotation lists, comma-separated and sorted,
	// the namespaces other than the parent's that hold members.
	AdditionalNamespacesAnnotation = "applyset.kubernetes.io/additional-namespaces"
	// GroupKindsAnnotation lists, comma-separated and sorted, the kinds of
	// the members as Kind.group ("ConfigMap,Deployment.apps").
	GroupKindsAnnotation = "applyset.kubernetes.io/contains-group-kinds"
	// DeprecatedGroupResourcesAnnotation is the older form of
	// GroupKindsAnnotation, with resources ("configmaps,deployments.apps"):
	// read, and removed when the parent is updated.
	DeprecatedGroupResourcesAnnotation = "applyset.kubernetes.io/contains-group-resources"
	// ParentIDLabel makes an object an ApplySet parent; its value is the
	// set's ID.
	ParentIDLabel = "applyset.kubernetes.io/id"
	// PartOfLabel makes an object a member of the set whose ID is its value.
	PartOfLabel = "applyset.kubernetes.io/part-of"
	// ParentCRDLabel on a CustomResourceDefinition allows its custom
	// resources as parents.
	ParentCRDLabel = "applyset.kubernetes.io/is-parent-type"
)

var crdGVK = schema.GVK{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}

// Tooling is the tool that manages an ApplySet.
type Tooling struct {
	Name, Version string
}

// String returns the annotation's value, "konverge/v0.1.0".
func (t Tooling) String() string { return t.Name + "/" + t.Version }

// DefaultTooling is konverge's tooling: "konverge/" and the version of the
// module konverge was built from ("v0.0.0-dev" for a development build).
func DefaultTooling() Tooling {
	version := "v0.0.0-dev"
	if bi, ok := debug.ReadBuildInfo(); ok {
		v := bi.Main.Version
		for _, dep := range bi.Deps {
			if dep.Path == "github.com/konverge/konverge" {
				v = dep.Version
			}
		}
		if strings.HasPrefix(v, "v") {
			version = v
		}
	}
	return Tooling{Name: "konverge", Version: version}
}

// Parent is the object that records an ApplySet.
type Parent struct {
	// Resource is the parent's kind: v1 Secret by default, v1 ConfigMap,
	// or a custom resource whose CRD is labelled ParentCRDLabel.
	Resource cluster.Resource
	// Namespace is the parent's namespace; "" for a cluster-scoped parent.
	Namespace string
	Name      string
}

// String prints the parent as kubectl does in its errors,
// "<resource>.<group>/<name>": "secrets./prod" for a Secret.
func (p Parent) String() string {
	return p.Resource.Plural + "." + p.Resource.GVK.Group + "/" + p.Name
}

func (p Parent) builtin() bool {
	return p.Resource.GVK.Group == "" && (p.Resource.Plural == "secrets" || p.Resource.Plural == "configmaps")
}

// ParseParent reads kubectl's --applyset value, [RESOURCE[.GROUP]/]NAME:
// "prod" is the Secret prod, "configmaps/prod" a ConfigMap. The namespace is
// the caller's to set.
func ParseParent(ref string, m cluster.Mapper) (Parent, error) {
	resource, name, typed := strings.Cut(ref, "/")
	if !typed {
		resource, name = "secrets", ref
	}
	if name == "" {
		return Parent{}, fmt.Errorf("invalid parent reference %q: name cannot be blank", ref)
	}
	res, err := m.Find(resource)
	if err != nil {
		return Parent{}, fmt.Errorf("invalid parent reference %q: %w", ref, err)
	}
	return Parent{Resource: res, Name: name}, nil
}

// groupKind is a kind without its version.
type groupKind struct{ Group, Kind string }

// String prints Kind.group, or Kind for the core group.
func (gk groupKind) String() string {
	if gk.Group == "" {
		return gk.Kind
	}
	return gk.Kind + "." + gk.Group
}

func parseGroupKind(s string) groupKind {
	kind, group, _ := strings.Cut(s, ".")
	return groupKind{Group: group, Kind: kind}
}

// ApplySet is one ApplySet of an apply: the set as its parent recorded it
// before (what may be pruned) and the set the apply makes (what the parent
// records after).
type ApplySet struct {
	parent  Parent
	tooling Tooling

	exists bool
	// parentTooling is the tooling annotation of an existing parent, kept
	// when the parent is updated (kubectl's parents stay kubectl's).
	parentTooling string

	current           map[groupKind]cluster.Resource
	currentNamespaces map[string]bool
	updated           map[groupKind]cluster.Resource
	updatedNamespaces map[string]bool
}

// NewApplySet returns the ApplySet of parent, managed by tooling.
func NewApplySet(parent Parent, tooling Tooling) *ApplySet {
	return &ApplySet{
		parent:            parent,
		tooling:           tooling,
		current:           map[groupKind]cluster.Resource{},
		currentNamespaces: map[string]bool{},
		updated:           map[groupKind]cluster.Resource{},
		updatedNamespaces: map[string]bool{},
	}
}

// Parent returns the set's parent.
func (a *ApplySet) Parent() Parent { return a.parent }

// ID is the set's identity, the value of ParentIDLabel and PartOfLabel:
// "applyset-" + base64url(sha256(<name>.<namespace>.<Kind>.<group>)) + "-v1".
func (a *ApplySet) ID() string {
	unencoded := strings.Join([]string{a.parent.Name, a.parent.Namespace, a.parent.Resource.GVK.Kind, a.parent.Resource.GVK.Group}, ".")
	sum := sha256.Sum256([]byte(unencoded))
	return "applyset-" + base64.RawURLEncoding.EncodeToString(sum[:]) + "-v1"
}

// Validate checks the parent as kubectl does: a namespaced parent needs a
// namespace, and a custom resource parent needs its CRD to carry
// ParentCRDLabel.
func (a *ApplySet) Validate(ctx context.Context, c cluster.Reader) error {
	var errs []error
	if a.parent.Resource.Namespaced && a.parent.Namespace == "" {
		errs = append(errs, errors.New("namespace is required to use namespace-scoped ApplySet"))
	}
	if !a.parent.builtin() {
		permitted := map[string]bool{}
		list, err := c.List(ctx, crdGVK, cluster.MatchingLabels(ParentCRDLabel))
		if err != nil {
			errs = append(errs, fmt.Errorf("identifying allowed custom resource parent types: %w", err))
		} else {
			for _, crd := range list.Items {
				permitted[objref.Name(crd)] = true
			}
		}
		r := a.parent.Resource
		if !permitted[r.Plural+"."+r.GVK.Group] {
			errs = append(errs, fmt.Errorf("resource %q is not permitted as an ApplySet parent",
				r.GVK.Group+"/"+r.GVK.Version+", Resource="+r.Plural))
		}
	}
	return errors.Join(errs...)
}

// MemberLabels are the labels every member carries.
func (a *ApplySet) MemberLabels() map[string]string {
	return map[string]string{PartOfLabel: a.ID()}
}

// AddLabels returns obj labelled as a member (a copy of its top level,
// metadata and labels). An object that sets PartOfLabel itself is kubectl's
// error.
func (a *ApplySet) AddLabels(obj map[string]any) (map[string]any, error) {
	labels, _ := objref.Metadata(obj)["labels"].(map[string]any)
	if _, ok := labels[PartOfLabel]; ok {
		return nil, fmt.Errorf("ApplySet label %q already set in input data", PartOfLabel)
	}
	next := make(map[string]any, len(labels)+1)
	maps.Copy(next, labels)
	next[PartOfLabel] = a.ID()
	return objref.WithMetadata(obj, "labels", next), nil
}

// FetchParent reads the parent, when it exists, and with it the set as
// recorded: its kinds and namespaces. A parent that another tool manages,
// or without the set's ID, is an error worded as kubectl's. Parents made by
// kubectl are accepted.
func (a *ApplySet) FetchParent(ctx context.Context, c cluster.Reader, m cluster.Mapper) error {
	obj, err := c.Get(ctx, a.parent.Resource.GVK, a.parent.Namespace, a.parent.Name)
	if cluster.IsNotFound(err) {
		if !a.parent.builtin() {
			return errors.New("custom resource ApplySet parents cannot be created automatically")
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("failed to fetch ApplySet parent object %q: %w", a.parent, err)
	}
	labels, annotations := objref.Labels(obj), objref.Annotations(obj)
	tooling, ok := annotations[ToolingAnnotation]
	if !ok {
		return fmt.Errorf("ApplySet parent object %q already exists and is missing required annotation %q", a.parent, ToolingAnnotation)
	}
	if name := toolingBaseName(tooling); name != a.tooling.Name && name != "kubectl" {
		return fmt.Errorf("ApplySet parent object %q already exists and is managed by tooling %q instead of %q", a.parent, name, a.tooling.Name)
	}
	id, ok := labels[ParentIDLabel]
	if !ok {
		return fmt.Errorf("ApplySet parent object %q exists and does not have required label %s", a.parent, ParentIDLabel)
	}
	if id != a.ID() {
		return fmt.Errorf("ApplySet parent object %q exists and has incorrect value for label %q (got: %s, want: %s)", a.parent, ParentIDLabel, id, a.ID())
	}
	kinds, err := parseKinds(annotations, m)
	if err != nil {
		return fmt.Errorf("parsing ApplySet annotation on %q: %w", a.parent, err)
	}
	a.exists = true
	a.parentTooling = tooling
	a.current = kinds
	a.currentNamespaces = map[string]bool{}
	if s := annotations[AdditionalNamespacesAnnotation]; s != "" {
		for _, ns := range strings.Split(s, ",") {
			a.currentNamespaces[ns] = true
		}
	}
	if a.parent.Resource.Namespaced {
		a.currentNamespaces[a.parent.Namespace] = true
	}
	return nil
}

func toolingBaseName(tooling string) string {
	parts := strings.Split(tooling, "/")
	if len(parts) >= 2 {
		return strings.Join(parts[:len(parts)-1], "/")
	}
	return tooling
}

// parseKinds reads the kinds a parent records.
func parseKinds(annotations map[string]string, m cluster.Mapper) (map[groupKind]cluster.Resource, error) {
	out := map[groupKind]cluster.Resource{}
	s, ok := annotations[GroupKindsAnnotation]
	if !ok {
		grs, ok := annotations[DeprecatedGroupResourcesAnnotation]
		if !ok || grs == "" {
			if ok {
				return out, nil
			}
			return nil, fmt.Errorf("kubectl requires the %q annotation to be set on all ApplySet parent objects", GroupKindsAnnotation)
		}
		for _, gr := range strings.Split(grs, ",") {
			res, err := m.Find(gr)
			if err != nil {
				return nil, fmt.Errorf("invalid group resource in %q annotation: %w", DeprecatedGroupResourcesAnnotation, err)
			}
			out[groupKind{res.GVK.Group, res.GVK.Kind}] = res
		}
		return out, nil
	}
	if s == "" {
		return out, nil
	}
	for _, part := range strings.Split(s, ",") {
		gk := parseGroupKind(part)
		res, ok := resourceFor(m, gk)
		if !ok {
			return nil, fmt.Errorf("could not find mapping for kind in %q annotation: no matches for kind %q in group %q", GroupKindsAnnotation, gk.Kind, gk.Group)
		}
		out[gk] = res
	}
	return out, nil
}

// resourceFor finds the preferred version of a kind.
func resourceFor(m cluster.Mapper, gk groupKind) (cluster.Resource, bool) {
	for _, r := range m.Resources() {
		if r.GVK.Group == gk.Group && r.GVK.Kind == gk.Kind {
			return r, true
		}
	}
	return cluster.Resource{}, false
}

// AddMember records that the apply applies an object of res in namespace.
func (a *ApplySet) AddMember(res cluster.Resource, namespace string) {
	gk := groupKind{res.GVK.Group, res.GVK.Kind}
	if _, ok := a.updated[gk]; !ok {
		a.updated[gk] = res
	}
	if res.Namespaced && namespace != "" {
		a.updatedNamespaces[namespace] = true
	}
}

// BeforeApply records in the parent the union of the set before and after
// the apply, creating the parent if needed, so that an interrupted apply
// leaks no object from the set. dryRun sends the write as a server dry run.
func (a *ApplySet) BeforeApply(ctx context.Context, c cluster.Writer, dryRun bool) error {
	kinds := maps.Clone(a.current)
	maps.Copy(kinds, a.updated)
	namespaces := maps.Clone(a.currentNamespaces)
	maps.Copy(namespaces, a.updatedNamespaces)
	if err := a.writeParent(ctx, c, kinds, namespaces, dryRun); err != nil {
		return fmt.Errorf("failed to update ApplySet: %w", err)
	}
	return nil
}

// AfterPrune records in the parent the set as the apply left it.
func (a *ApplySet) AfterPrune(ctx context.Context, c cluster.Writer, dryRun bool) error {
	if err := a.writeParent(ctx, c, a.updated, a.updatedNamespaces, dryRun); err != nil {
		return fmt.Errorf("apply and prune succeeded, but ApplySet update failed: failed to update ApplySet: %w", err)
	}
	return nil
}

// Annotations returns the parent's annotations for a set of kinds and
// namespaces, as kubectl writes them.
func (a *ApplySet) annotations(kinds map[groupKind]cluster.Resource, namespaces map[string]bool) map[string]any {
	gks := make([]string, 0, len(kinds))
	for gk := range kinds {
		gks = append(gks, gk.String())
	}
	slices.Sort(gks)
	nss := make([]string, 0, len(namespaces))
	for ns := range namespaces {
		if ns != a.parent.Namespace {
			nss = append(nss, ns)
		}
	}
	slices.Sort(nss)
	tooling := a.tooling.String()
	if a.parentTooling != "" {
		tooling = a.parentTooling
	}
	return map[string]any{
		ToolingAnnotation:              tooling,
		GroupKindsAnnotation:           strings.Join(gks, ","),
		AdditionalNamespacesAnnotation: strings.Join(nss, ","),
	}
}

// writeParent creates the parent or patches its labels and annotations.
// kubectl sends a server-side apply patch, which also drops the deprecated
// annotation; konverge sends the equivalent JSON merge patch, which the
// embedded cluster takes too.
func (a *ApplySet) writeParent(ctx context.Context, c cluster.Writer, kinds map[groupKind]cluster.Resource, namespaces map[string]bool, dryRun bool) error {
	annotations := a.annotations(kinds, namespaces)
	labels := map[string]any{ParentIDLabel: a.ID()}
	gvk := a.parent.Resource.GVK
	if !a.exists {
		md := map[string]any{"name": a.parent.Name, "labels": labels, "annotations": annotations}
		if a.parent.Namespace != "" {
			md["namespace"] = a.parent.Namespace
		}
		obj := map[string]any{"apiVersion": gvk.APIVersion(), "kind": gvk.Kind, "metadata": md}
		opts := []cluster.CreateOption{cluster.FieldOwner(a.tooling.Name + "-applyset")}
		if dryRun {
			opts = append(opts, cluster.DryRunAll)
		}
		if _, err := c.Create(ctx, obj, opts...); err != nil {
			return err
		}
		a.exists = !dryRun
		return nil
	}
	annotations[DeprecatedGroupResourcesAnnotation] = nil
	patch := map[string]any{"metadata": map[string]any{"labels": labels, "annotations": annotations}}
	data, err := value.Encode(patch)
	if err != nil {
		return err
	}
	opts := []cluster.PatchOption{cluster.FieldOwner(a.tooling.Name + "-applyset")}
	if dryRun {
		opts = append(opts, cluster.DryRunAll)
	}
	_, err = c.Patch(ctx, gvk, a.parent.Namespace, a.parent.Name, cluster.MergePatchType, data, opts...)
	return err
}

// FindPrunable lists the members of the set as the parent recorded it,
// in its kinds and namespaces, that the apply did not touch: kinds in the
// order of their Kind.group, namespaces in order.
func (a *ApplySet) FindPrunable(ctx context.Context, c cluster.Reader, visited *Visited) ([]Candidate, error) {
	gks := slices.SortedFunc(maps.Keys(a.current), func(x, y groupKind) int { return cmp.Compare(x.String(), y.String()) })
	namespaces := slices.Sorted(maps.Keys(a.currentNamespaces))
	selector := PartOfLabel + "=" + a.ID()
	var out []Candidate
	for _, gk := range gks {
		res := a.current[gk]
		scopes := []string{""}
		if res.Namespaced {
			scopes = namespaces
		}
		for _, ns := range scopes {
			if res.Namespaced && ns == "" {
				return nil, fmt.Errorf("unexpectedly encountered empty namespace during prune of namespace-scoped resource %v", gk)
			}
			opts := []cluster.ListOption{cluster.MatchingLabels(selector)}
			if ns != "" {
				opts = append(opts, cluster.InNamespace(ns))
			}
			list, err := c.List(ctx, res.GVK, opts...)
			if err != nil {
				return nil, fmt.Errorf("listing %s objects for pruning: %w", gvkString(res.GVK), err)
			}
			for _, obj := range list.Items {
				if !visited.UIDs[objref.UID(obj)] {
					out = append(out, candidate(res, obj))
				}
			}
		}
	}
	return out, nil
}
