// Package history holds what the StatefulSet and DaemonSet controllers of
// the embedded cluster share about ControllerRevisions, after
// kube-controller-manager's pkg/controller/history: the patch a revision
// stores (the pod template, replaced whole), its hash and name, the order
// of revisions, and claiming them by owner and selector.
//
// It writes nothing itself but through the cluster.Interface it is given,
// and keeps no state.
package history

import (
	"context"
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/controller/internal/kobj"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

// HashLabel is the label a ControllerRevision carries its hash in
// (ControllerRevisionHashLabel).
const HashLabel = "controller.kubernetes.io/hash"

// Patch returns the data a revision of a parent with this pod template
// stores: {"spec":{"template":{..., "$patch":"replace"}}}, as a value and
// encoded as encoding/json encodes a map (keys sorted), which is the raw
// data upstream hashes and compares.
func Patch(template map[string]any) (map[string]any, []byte, error) {
	t := make(map[string]any, len(template)+1)
	for k, v := range template {
		t[k] = v
	}
	t["$patch"] = "replace"
	data := map[string]any{"spec": map[string]any{"template": t}}
	raw, err := value.Encode(data)
	if err != nil {
		return nil, nil, fmt.Errorf("history: encode the pod template: %w", err)
	}
	return data, raw, nil
}

// Template returns the pod template a revision stores (its data's
// spec.template without the $patch directive), or nil.
func Template(rev map[string]any) map[string]any {
	t := kobj.Map(rev, "data", "spec", "template")
	if t == nil {
		return nil
	}
	out := make(map[string]any, len(t))
	for k, v := range t {
		if k != "$patch" {
			out[k] = v
		}
	}
	return out
}

// Raw returns a stored revision's data encoded as upstream compares it.
func Raw(rev map[string]any) []byte {
	d, ok := rev["data"]
	if !ok || d == nil {
		return nil
	}
	raw, err := value.Encode(d)
	if err != nil {
		return nil
	}
	return raw
}

// Hash is HashControllerRevision: the fnv32 hash of the raw data and, when
// probe is not nil, its decimal form, safe-encoded.
func Hash(raw []byte, probe *int64) string {
	h := fnv.New32()
	h.Write(raw)
	if probe != nil {
		h.Write([]byte(strconv.FormatInt(int64(int32(*probe)), 10)))
	}
	return kobj.SafeEncode(strconv.FormatUint(uint64(h.Sum32()), 10))
}

// Name is ControllerRevisionName: the parent's name (at most 223
// characters of it), a dash and the hash.
func Name(parent, hash string) string {
	if len(parent) > 223 {
		parent = parent[:223]
	}
	return parent + "-" + hash
}

// Revision returns a ControllerRevision's revision number.
func Revision(rev map[string]any) int64 { return kobj.IntOr(rev, 0, "revision") }

// Sort orders revisions by revision number, then by creation time and
// name, as SortControllerRevisions (stably).
func Sort(revs []map[string]any) {
	sort.SliceStable(revs, func(i, j int) bool {
		a, b := revs[i], revs[j]
		if ra, rb := Revision(a), Revision(b); ra != rb {
			return ra < rb
		}
		ca := kobj.ParseTime(kobj.Str(a, "metadata", "creationTimestamp"))
		cb := kobj.ParseTime(kobj.Str(b, "metadata", "creationTimestamp"))
		if !ca.Equal(cb) {
			return ca.Before(cb)
		}
		return kobj.Name(a) < kobj.Name(b)
	})
}

// Next is the revision number after the last of sorted revs (1 when none).
func Next(revs []map[string]any) int64 {
	if len(revs) == 0 {
		return 1
	}
	return Revision(revs[len(revs)-1]) + 1
}

// New builds a ControllerRevision of owner (of kind gvk) named name, with
// labels, annotations (nil: none), the data and revision number.
func New(owner map[string]any, gvk schema.GVK, name string, labels map[string]string, annotations map[string]any, data map[string]any, revision int64) map[string]any {
	ls := make(map[string]any, len(labels))
	for k, v := range labels {
		ls[k] = v
	}
	md := map[string]any{
		"name":            name,
		"namespace":       kobj.Namespace(owner),
		"labels":          ls,
		"ownerReferences": []any{kobj.NewControllerRef(owner, gvk)},
	}
	if len(annotations) > 0 {
		md["annotations"] = value.DeepCopy(annotations)
	}
	return map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "ControllerRevision",
		"metadata":   md,
		"data":       data,
		"revision":   revision,
	}
}

// SetRevision updates a revision's number (UpdateControllerRevision) and
// returns the stored result.
func SetRevision(ctx context.Context, c cluster.Interface, rev map[string]any, n int64) (map[string]any, error) {
	if Revision(rev) == n {
		return rev, nil
	}
	next := kobj.Copy(rev)
	next["revision"] = n
	out, err := c.Update(ctx, next)
	if err != nil {
		return nil, fmt.Errorf("update controllerrevision %s: %w", kobj.Name(rev), err)
	}
	return out, nil
}
