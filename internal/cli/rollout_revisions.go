package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"text/tabwriter"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/internal/describe"
	"github.com/konverge/konverge/internal/printer"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/selector"
	"github.com/konverge/konverge/value"
)

// The rollout history of StatefulSets and DaemonSets: their
// ControllerRevisions, as kubectl's StatefulSetHistoryViewer,
// DaemonSetHistoryViewer and their rollbackers read them.

var controllerRevisionGVK = schema.GVK{Group: "apps", Version: "v1", Kind: "ControllerRevision"}

// changeCauseAnnotation is kubectl's kubernetes.io/change-cause.
const changeCauseAnnotation = "kubernetes.io/change-cause"

// ownedRevisions lists the ControllerRevisions the selector of owner
// matches and owner controls.
func ownedRevisions(ctx context.Context, c cluster.Reader, owner map[string]any) ([]map[string]any, error) {
	md := printer.Map(owner, "metadata")
	sel, err := selector.FromLabelSelector(printer.Map(owner, "spec", "selector"))
	if err != nil {
		return nil, fmt.Errorf("failed to create selector for %s %s: %w", printer.Str(owner, "kind"), printer.Str(md, "name"), err)
	}
	l, err := c.List(ctx, controllerRevisionGVK, cluster.InNamespace(printer.Str(md, "namespace")))
	if err != nil {
		return nil, fmt.Errorf("unable to find history controlled by %s %s: %w", printer.Str(owner, "kind"), printer.Str(md, "name"), err)
	}
	uid := printer.Str(md, "uid")
	var out []map[string]any
	for _, r := range l.Items {
		if !sel.Matches(printer.StringMap(r, "metadata", "labels")) {
			continue
		}
		for _, ref := range printer.List(r, "metadata", "ownerReferences") {
			if printer.Bool(ref, "controller") && printer.Str(ref, "uid") == uid {
				out = append(out, r)
				break
			}
		}
	}
	return out, nil
}

// revisionTemplate is the pod template a revision restores.
func revisionTemplate(rev map[string]any) map[string]any {
	t := printer.Map(rev, "data", "spec", "template")
	out := make(map[string]any, len(t))
	for k, v := range t {
		if k != "$patch" {
			out[k] = v
		}
	}
	return out
}

// viewRevisionHistory is printHistory over a StatefulSet's or DaemonSet's
// revisions.
func viewRevisionHistory(ctx context.Context, c cluster.Reader, owner map[string]any, revision int64) (string, error) {
	revs, err := ownedRevisions(ctx, c, owner)
	if err != nil {
		return "", err
	}
	byRev := map[int64]map[string]any{}
	for _, r := range revs {
		byRev[printer.Int(r, "revision")] = r
	}
	if len(byRev) == 0 {
		return "No rollout history found.", nil
	}
	if revision > 0 {
		r, ok := byRev[revision]
		if !ok {
			return "", errors.New("unable to find the specified revision")
		}
		return describe.PodTemplate(revisionTemplate(r)), nil
	}
	nums := make([]int64, 0, len(byRev))
	for n := range byRev {
		nums = append(nums, n)
	}
	sort.Slice(nums, func(i, j int) bool { return nums[i] < nums[j] })
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "REVISION\tCHANGE-CAUSE\n")
	for _, n := range nums {
		cause := printer.StringMap(byRev[n], "metadata", "annotations")[changeCauseAnnotation]
		if cause == "" {
			cause = "<none>"
		}
		fmt.Fprintf(tw, "%d\t%s\n", n, cause)
	}
	_ = tw.Flush()
	return buf.String(), nil
}

// errRollbackSkipped is kubectl's "skipped rollback (...)".
type errRollbackSkipped struct{ revision int64 }

func (e *errRollbackSkipped) Error() string {
	return fmt.Sprintf("skipped rollback (current template already matches revision %d)", e.revision)
}

// rollbackRevision is kubectl's StatefulSet and DaemonSet rollbacker:
// the revision's data, a strategic merge patch that replaces the pod
// template, patched onto the object (toRevision 0: the revision before the
// newest).
func rollbackRevision(ctx context.Context, c cluster.Interface, gvk schema.GVK, owner map[string]any, toRevision int64) error {
	if toRevision < 0 {
		return fmt.Errorf("unable to find specified revision %v in history", toRevision)
	}
	revs, err := ownedRevisions(ctx, c, owner)
	if err != nil {
		return err
	}
	if toRevision == 0 && len(revs) <= 1 {
		return errors.New("no last revision to roll back to")
	}
	var to map[string]any
	if toRevision == 0 {
		sort.SliceStable(revs, func(i, j int) bool { return printer.Int(revs[i], "revision") < printer.Int(revs[j], "revision") })
		to = revs[len(revs)-2]
	} else {
		for _, r := range revs {
			if printer.Int(r, "revision") == toRevision {
				to = r
				break
			}
		}
	}
	if to == nil {
		return fmt.Errorf("unable to find specified revision %v in history", toRevision)
	}
	patch, err := value.Encode(to["data"])
	if err != nil {
		return err
	}
	current := map[string]any{"spec": map[string]any{"template": withReplace(printer.Map(owner, "spec", "template"))}}
	if cur, err := value.Encode(current); err == nil && bytes.Equal(cur, patch) {
		return &errRollbackSkipped{revision: printer.Int(to, "revision")}
	}
	md := printer.Map(owner, "metadata")
	if _, err := c.Patch(ctx, gvk, printer.Str(md, "namespace"), printer.Str(md, "name"), cluster.StrategicMergePatchType, patch); err != nil {
		return fmt.Errorf("failed restoring revision %s: %v", strconv.FormatInt(printer.Int(to, "revision"), 10), err)
	}
	return nil
}

func withReplace(t map[string]any) map[string]any {
	out := make(map[string]any, len(t)+1)
	for k, v := range t {
		out[k] = v
	}
	out["$patch"] = "replace"
	return out
}
