package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/controller/deployment"
	"github.com/konverge/konverge/health"
	"github.com/konverge/konverge/internal/cli/flags"
	"github.com/konverge/konverge/internal/describe"
	"github.com/konverge/konverge/internal/printer"
	"github.com/konverge/konverge/lastapplied"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/sim"
	"github.com/konverge/konverge/wait"
)

// NewRolloutCmd returns `konverge rollout` and its subcommands.
func NewRolloutCmd(g *Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rollout SUBCOMMAND",
		Short: "Follow, pause, resume, restart or undo rollouts",
		Long: `Follow and steer the rollouts of workloads, as kubectl rollout does.

On the embedded cluster, waiting commands (rollout status) fast-forward the
cluster's virtual clock to the moments the controllers and the simulated
kubelet have work due, instead of sleeping; --timeout is cluster time.`,
		Example: `  konverge rollout status deployment/nginx-deployment
  konverge rollout history deployment/nginx-deployment --revision=2
  konverge rollout undo deployment/nginx-deployment --to-revision=2`,
	}
	return cmd
}

// rolloutTargets resolves the objects args name in the session for a
// rollout subcommand: Deployments, and for history, undo and restart also
// StatefulSets and DaemonSets (verb names the subcommand in kubectl's
// error for the others: "pausing", "resuming", ...).
func rolloutTargets(ctx context.Context, g *Globals, sess *Session, args []string, labelSel string, verb string) ([]gotObject, []error) {
	if len(args) == 0 {
		return nil, []error{errors.New("required resource not specified")}
	}
	targets, errs := selectTargets(ctx, g, sess, flags.FilenameFlags{}, args, labelSel, false)
	var out []gotObject
	for _, t := range targets {
		gk := t.res.GVK
		switch {
		case gk.Group == "apps" && gk.Kind == "Deployment":
			out = append(out, t)
		case gk.Group == "apps" && (gk.Kind == "StatefulSet" || gk.Kind == "DaemonSet") && verb != "pausing" && verb != "resuming":
			out = append(out, t)
		case verb == "history viewing":
			errs = append(errs, fmt.Errorf("no history viewer has been implemented for %q", kindGroup(gk)))
		case verb == "rollback":
			errs = append(errs, fmt.Errorf("no rollbacker has been implemented for %q", kindGroup(gk)))
		default:
			errs = append(errs, fmt.Errorf("%s %q %s is not supported", resourceString(t.res), printer.Str(t.obj, "metadata", "name"), verb))
		}
	}
	return out, errs
}

// kindGroup is "Job.batch" (or "Pod" for the core group), as kubectl
// names a kind in its errors.
func kindGroup(gvk schema.GVK) string {
	if gvk.Group == "" {
		return gvk.Kind
	}
	return gvk.Kind + "." + gvk.Group
}

// --- status -----------------------------------------------------------

// rolloutStatusTargets resolves the objects args name for rollout status:
// Deployments, StatefulSets and DaemonSets, whose status health.Rollout
// views.
func rolloutStatusTargets(ctx context.Context, g *Globals, sess *Session, args []string, labelSel string) ([]gotObject, []error) {
	if len(args) == 0 {
		return nil, []error{errors.New("required resource not specified")}
	}
	targets, errs := selectTargets(ctx, g, sess, flags.FilenameFlags{}, args, labelSel, false)
	var out []gotObject
	for _, t := range targets {
		switch gk := t.res.GVK; {
		case gk.Group == "apps" && (gk.Kind == "Deployment" || gk.Kind == "StatefulSet" || gk.Kind == "DaemonSet"):
			out = append(out, t)
		case gk.Group == "":
			errs = append(errs, fmt.Errorf("no status viewer has been implemented for %s", gk.Kind))
		default:
			errs = append(errs, fmt.Errorf("no status viewer has been implemented for %s.%s", gk.Kind, gk.Group))
		}
	}
	return out, errs
}

// RolloutStatusOptions are the flags of rollout status.
type RolloutStatusOptions struct {
	*Globals
	Watch    bool
	Revision int64
	Timeout  time.Duration
	Selector string
}

func newRolloutStatusCmd(g *Globals) *cobra.Command {
	o := &RolloutStatusOptions{Globals: g, Watch: true}
	cmd := &cobra.Command{
		Use:   "status (TYPE NAME | TYPE/NAME) [flags]",
		Short: "Wait for a rollout and report its progress",
		Long: `Follow the rollout of a Deployment, StatefulSet or DaemonSet, as kubectl rollout
status does: it prints a line each time the state of the rollout changes, until it
has finished.

On the embedded cluster, the command fast-forwards the virtual clock from one
moment with due work to the next instead of sleeping; --timeout counts cluster
time. When nothing is due and the rollout cannot finish, it stops with an
error rather than wait forever.`,
		Example: `  konverge rollout status deployment/nginx-deployment
  konverge rollout status deployment/nginx-deployment --timeout=5m`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.complete(cmd)
			return o.Run(cmd.Context(), args)
		},
	}
	f := cmd.Flags()
	f.BoolVarP(&o.Watch, "watch", "w", o.Watch, "Keep reporting until the rollout is finished.")
	f.Int64Var(&o.Revision, "revision", 0, "Report on this revision (0: the latest).")
	f.DurationVar(&o.Timeout, "timeout", 0, "The length of cluster time to wait before ending watch, zero means never. Any other values should contain a corresponding time unit (e.g. 1s, 2m, 3h).")
	f.StringVarP(&o.Selector, "selector", "l", "", "Selector (label query) to filter on, supports '=', '==', '!=', 'in', 'notin'.")
	return cmd
}

// errWaitTimeout is kubectl's error when --timeout passes.
var errWaitTimeout = wait.ErrTimeout

// rolloutStatus is kubectl rollout status's viewer of a Deployment,
// StatefulSet or DaemonSet (health.Rollout), with its newline.
func rolloutStatus(obj map[string]any, revision int64) (string, bool, error) {
	msg, done, err := health.Rollout(obj, revision)
	if err != nil {
		return "", done, err
	}
	return msg + "\n", done, nil
}

// Run prints the status of the rollouts args name, waiting for them.
func (o *RolloutStatusOptions) Run(ctx context.Context, args []string) error {
	if o.Revision < 0 {
		return failOne(o.ErrOut, fmt.Errorf("revision must be a positive integer: %v", o.Revision))
	}
	sess, err := o.openResourceSession(ctx)
	if err != nil {
		return failOne(o.ErrOut, err)
	}
	defer sess.Close(ctx)
	targets, errs := rolloutStatusTargets(ctx, o.Globals, sess, args, o.Selector)
	if len(errs) > 0 {
		return reportErrors(o.ErrOut, errs)
	}
	if len(targets) == 0 {
		fmt.Fprintf(o.ErrOut, "No resources found in %s namespace.\n", o.Ns())
		return nil
	}
	for _, t := range targets {
		if err := o.one(ctx, sess, t); err != nil {
			return failOne(o.ErrOut, err)
		}
	}
	return nil
}

// one follows the rollout of one Deployment.
func (o *RolloutStatusOptions) one(ctx context.Context, sess *Session, t gotObject) error {
	md := printer.Map(t.obj, "metadata")
	ns, name := printer.Str(md, "namespace"), printer.Str(md, "name")
	last := ""
	check := func() (bool, error) {
		d, err := sess.Cluster.Get(ctx, t.res.GVK, ns, name)
		if err != nil {
			if cluster.IsNotFound(err) {
				return true, errors.New("object has been deleted")
			}
			return true, err
		}
		msg, done, err := rolloutStatus(d, o.Revision)
		if err != nil {
			return true, err
		}
		if msg != last {
			fmt.Fprint(o.Out, msg)
			last = msg
		}
		return done, nil
	}
	if !o.Watch {
		_, err := check()
		return err
	}
	return waitFor(ctx, sess, o.Timeout, check, fmt.Sprintf("%s %q rollout", strings.ToLower(t.res.GVK.Kind), name))
}

// errStuck ends a wait without timeout on the embedded cluster when
// nothing is due and nothing can change any more.
type errStuck struct{ what string }

func (e *errStuck) Error() string {
	return fmt.Sprintf("%s cannot make progress: nothing is due in the embedded cluster (its clock would have to wait forever); use --timeout to bound the wait", e.what)
}

// waitFor waits until check reports done (or an error), for at most
// timeout (zero: no limit): wait.Until with the session's driver.
func waitFor(ctx context.Context, sess *Session, timeout time.Duration, check func() (bool, error), what string) error {
	return wait.Until(ctx, sessionDriver(sess, what), timeout, check)
}

// sessionDriver is how a wait moves time in the session: on a real
// cluster, polling every second of wall time; on the embedded cluster,
// fast-forwarding its clock (sim.Runner.Until), where a wait without
// timeout stops with an error when nothing is due any more, and any wait
// after sim.MaxIdle (24 h) of cluster time without a change.
func sessionDriver(sess *Session, what string) wait.Driver {
	r := sess.Sim()
	if r == nil {
		return wait.Poll{Interval: time.Second}
	}
	return wait.DriverFunc(func(ctx context.Context, cond func() (bool, error), timeout time.Duration) (bool, error) {
		met, err := r.Until(ctx, cond, timeout)
		var idle *sim.IdleError
		switch {
		case errors.Is(err, sim.ErrNothingDue):
			return false, &errStuck{what: what}
		case errors.As(err, &idle):
			// A wait of years for what never happens stops after
			// sim.MaxIdle without a change, and says so.
			return false, fmt.Errorf("%s: %w", what, err)
		}
		return met, err
	})
}

// --- history ----------------------------------------------------------

func newRolloutHistoryCmd(g *Globals) *cobra.Command {
	var revision int64
	var sel string
	cmd := &cobra.Command{
		Use:   "history (TYPE NAME | TYPE/NAME) [flags]",
		Short: "List the revisions of a workload",
		Long:  `List the revisions of a workload, or print one revision's pod template, as kubectl rollout history does.`,
		Example: `  konverge rollout history deployment/nginx-deployment
  konverge rollout history deployment/nginx-deployment --revision=3`,
		RunE: func(cmd *cobra.Command, args []string) error {
			g.complete(cmd)
			return runRolloutHistory(cmd.Context(), g, args, revision, sel)
		},
	}
	cmd.Flags().Int64Var(&revision, "revision", 0, "Print the pod template of this revision")
	cmd.Flags().StringVarP(&sel, "selector", "l", "", "Selector (label query) to filter on, supports '=', '==', '!=', 'in', 'notin'.")
	return cmd
}

// ownedReplicaSets lists the ReplicaSets the Deployment d controls.
func ownedReplicaSets(ctx context.Context, c cluster.Reader, d map[string]any) ([]map[string]any, error) {
	md := printer.Map(d, "metadata")
	l, err := c.List(ctx, schema.GVK{Group: "apps", Version: "v1", Kind: "ReplicaSet"}, cluster.InNamespace(printer.Str(md, "namespace")))
	if err != nil {
		return nil, err
	}
	uid := printer.Str(md, "uid")
	var out []map[string]any
	for _, rs := range l.Items {
		for _, ref := range printer.List(rs, "metadata", "ownerReferences") {
			if printer.Bool(ref, "controller") && printer.Str(ref, "uid") == uid {
				out = append(out, rs)
				break
			}
		}
	}
	return out, nil
}

// viewHistory is kubectl's DeploymentHistoryViewer.ViewHistory.
func viewHistory(ctx context.Context, c cluster.Reader, d map[string]any, revision int64) (string, error) {
	rss, err := ownedReplicaSets(ctx, c, d)
	if err != nil {
		return "", err
	}
	templates := map[int64]map[string]any{}
	causes := map[int64]string{}
	for _, rs := range rss {
		ann := printer.StringMap(rs, "metadata", "annotations")
		v, err := strconv.ParseInt(ann[deployment.RevisionAnnotation], 10, 64)
		if err != nil {
			continue
		}
		tmpl := printer.Map(rs, "spec", "template")
		if cause := ann[deployment.ChangeCauseAnnotation]; cause != "" {
			tmpl = copyTemplateWithAnnotation(tmpl, deployment.ChangeCauseAnnotation, cause)
			causes[v] = cause
		}
		templates[v] = tmpl
	}
	if len(templates) == 0 {
		return "No rollout history found.", nil
	}
	if revision > 0 {
		tmpl, ok := templates[revision]
		if !ok {
			return "", errors.New("unable to find the specified revision")
		}
		return describe.PodTemplate(tmpl), nil
	}
	revs := make([]int64, 0, len(templates))
	for r := range templates {
		revs = append(revs, r)
	}
	sort.Slice(revs, func(i, j int) bool { return revs[i] < revs[j] })
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "REVISION\tCHANGE-CAUSE\n")
	for _, r := range revs {
		cause := causes[r]
		if cause == "" {
			cause = "<none>"
		}
		fmt.Fprintf(tw, "%d\t%s\n", r, cause)
	}
	_ = tw.Flush()
	return buf.String(), nil
}

// copyTemplateWithAnnotation returns tmpl with annotation k=v added to
// its metadata (tmpl itself is not changed).
func copyTemplateWithAnnotation(tmpl map[string]any, k, v string) map[string]any {
	out := make(map[string]any, len(tmpl))
	for key, val := range tmpl {
		out[key] = val
	}
	md := map[string]any{}
	for key, val := range printer.Map(tmpl, "metadata") {
		md[key] = val
	}
	ann := map[string]any{}
	for key, val := range printer.Map(tmpl, "metadata", "annotations") {
		ann[key] = val
	}
	ann[k] = v
	md["annotations"] = ann
	out["metadata"] = md
	return out
}

func runRolloutHistory(ctx context.Context, g *Globals, args []string, revision int64, sel string) error {
	sess, err := g.openResourceSession(ctx)
	if err != nil {
		return failOne(g.ErrOut, err)
	}
	defer sess.Close(ctx)
	targets, errs := rolloutTargets(ctx, g, sess, args, sel, "history viewing")
	for _, t := range targets {
		view := viewHistory
		if t.res.GVK.Kind != "Deployment" {
			view = viewRevisionHistory
		}
		h, err := view(ctx, sess.Cluster, t.obj, revision)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		with := ""
		if revision > 0 {
			with = fmt.Sprintf("with revision #%d", revision)
		}
		fmt.Fprintf(g.Out, "%s %s\n%s\n", objectRef(t.res, printer.Str(t.obj, "metadata", "name")), with, h)
	}
	return reportErrors(g.ErrOut, errs)
}

// --- undo -------------------------------------------------------------

func newRolloutUndoCmd(g *Globals) *cobra.Command {
	var toRevision int64
	var sel string
	cmd := &cobra.Command{
		Use:   "undo (TYPE NAME | TYPE/NAME) [flags]",
		Short: "Go back to an earlier revision",
		Long: `Go back to an earlier revision, as kubectl rollout undo does: the Deployment's pod
template becomes that of the revision (default: the previous one), and the
controller rolls it out as a new revision.`,
		Example: `  konverge rollout undo deployment/nginx-deployment
  konverge rollout undo deployment/nginx-deployment --to-revision=2`,
		RunE: func(cmd *cobra.Command, args []string) error {
			g.complete(cmd)
			return runRolloutUndo(cmd.Context(), g, args, toRevision, sel)
		},
	}
	cmd.Flags().Int64Var(&toRevision, "to-revision", 0, "The revision to go back to (0: the one before the current).")
	cmd.Flags().StringVarP(&sel, "selector", "l", "", "Selector (label query) to filter on, supports '=', '==', '!=', 'in', 'notin'.")
	return cmd
}

func runRolloutUndo(ctx context.Context, g *Globals, args []string, toRevision int64, sel string) error {
	sess, err := g.openResourceSession(ctx)
	if err != nil {
		return failOne(g.ErrOut, err)
	}
	defer sess.Close(ctx)
	targets, errs := rolloutTargets(ctx, g, sess, args, sel, "rollback")
	for _, t := range targets {
		md := printer.Map(t.obj, "metadata")
		ref := objectRef(t.res, printer.Str(md, "name"))
		if _, ok := printer.StringMap(md, "annotations")[lastapplied.Annotation]; ok {
			fmt.Fprintf(g.ErrOut, "Warning: resource %s was previously managed with 'konverge apply'. Rolling back will not update the %s annotation, which may cause unexpected behavior on future 'konverge apply' operations. Consider using 'konverge apply' with your previous configuration file instead.\n",
				t.res.Plural+"/"+printer.Str(md, "name"), lastapplied.Annotation)
		}
		var err error
		if t.res.GVK.Kind == "Deployment" {
			err = deployment.Rollback(ctx, sess.Cluster, printer.Str(md, "namespace"), printer.Str(md, "name"), toRevision, sess.now())
		} else {
			err = rollbackRevision(ctx, sess.Cluster, t.res.GVK, t.obj, toRevision)
		}
		var skipped *deployment.SkippedError
		var skippedRev *errRollbackSkipped
		switch {
		case errors.As(err, &skippedRev):
			fmt.Fprintf(g.Out, "%s %s\n", ref, skippedRev.Error())
		case errors.As(err, &skipped):
			fmt.Fprintf(g.Out, "%s %s\n", ref, skipped.Error())
		case err != nil:
			errs = append(errs, err)
		default:
			fmt.Fprintf(g.Out, "%s rolled back\n", ref)
		}
	}
	return reportErrors(g.ErrOut, errs)
}

// --- pause, resume ----------------------------------------------------

func newRolloutPauseResumeCmd(g *Globals, pause bool) *cobra.Command {
	var sel, manager string
	use, short, long := "resume", "Resume a paused resource", `Resume a paused Deployment, as kubectl rollout resume does: the controller rolls out
the changes made while it was paused, as one new revision.`
	if pause {
		use, short, long = "pause", "Mark the provided resource as paused", `Mark the provided Deployment as paused, as kubectl rollout pause does: changes to its
pod template are not rolled out until it is resumed.`
	}
	cmd := &cobra.Command{
		Use:     use + " RESOURCE",
		Short:   short,
		Long:    long,
		Example: "  konverge rollout " + use + " deployment/nginx-deployment",
		RunE: func(cmd *cobra.Command, args []string) error {
			g.complete(cmd)
			return runRolloutPause(cmd.Context(), g, args, sel, pause, manager)
		},
	}
	cmd.Flags().StringVarP(&sel, "selector", "l", "", "Selector (label query) to filter on, supports '=', '==', '!=', 'in', 'notin'.")
	flags.FieldManager(cmd.Flags(), &manager, managerRollout)
	return cmd
}

// resourceString is kubectl's "deployments.apps" of errors.
func resourceString(res cluster.Resource) string {
	if res.GVK.Group == "" {
		return res.Plural
	}
	return res.Plural + "." + res.GVK.Group
}

func runRolloutPause(ctx context.Context, g *Globals, args []string, sel string, pause bool, manager string) error {
	sess, err := g.openResourceSession(ctx)
	if err != nil {
		return failOne(g.ErrOut, err)
	}
	defer sess.Close(ctx)
	verb := "resuming"
	if pause {
		verb = "pausing"
	}
	targets, errs := rolloutTargets(ctx, g, sess, args, sel, verb)
	for _, t := range targets {
		md := printer.Map(t.obj, "metadata")
		name := printer.Str(md, "name")
		if printer.Bool(t.obj, "spec", "paused") == pause {
			state := "is already paused"
			if !pause {
				state = "is not paused"
			}
			errs = append(errs, fmt.Errorf("%s %q %s", resourceString(t.res), name, state))
			continue
		}
		b, _ := json.Marshal(map[string]any{"spec": map[string]any{"paused": pause}})
		if _, err := sess.Cluster.Patch(ctx, t.res.GVK, printer.Str(md, "namespace"), name, cluster.StrategicMergePatchType, b, cluster.FieldOwner(manager)); err != nil {
			errs = append(errs, fmt.Errorf("failed to patch: %v", err))
			continue
		}
		op := "resumed"
		if pause {
			op = "paused"
		}
		fmt.Fprintf(g.Out, "%s %s\n", objectRef(t.res, name), op)
	}
	return reportErrors(g.ErrOut, errs)
}

// --- restart ----------------------------------------------------------

// RestartedAtAnnotation is the pod template annotation rollout restart sets.
const RestartedAtAnnotation = "kubectl.kubernetes.io/restartedAt"

func newRolloutRestartCmd(g *Globals) *cobra.Command {
	var sel, manager string
	cmd := &cobra.Command{
		Use:   "restart RESOURCE",
		Short: "Restart a resource",
		Long: `Replace the pods of a Deployment, as kubectl rollout restart does: its pod template gets the
annotation kubectl.kubernetes.io/restartedAt with the cluster time (RFC 3339),
so that the controller rolls out new pods.`,
		Example: "  konverge rollout restart deployment/nginx-deployment",
		RunE: func(cmd *cobra.Command, args []string) error {
			g.complete(cmd)
			return runRolloutRestart(cmd.Context(), g, args, sel, manager)
		},
	}
	cmd.Flags().StringVarP(&sel, "selector", "l", "", "Selector (label query) to filter on, supports '=', '==', '!=', 'in', 'notin'.")
	flags.FieldManager(cmd.Flags(), &manager, managerRollout)
	return cmd
}

func runRolloutRestart(ctx context.Context, g *Globals, args []string, sel, manager string) error {
	sess, err := g.openResourceSession(ctx)
	if err != nil {
		return failOne(g.ErrOut, err)
	}
	defer sess.Close(ctx)
	targets, errs := rolloutTargets(ctx, g, sess, args, sel, "restarting")
	now := sess.now().Format(time.RFC3339)
	for _, t := range targets {
		md := printer.Map(t.obj, "metadata")
		name := printer.Str(md, "name")
		if t.res.GVK.Kind == "Deployment" && printer.Bool(t.obj, "spec", "paused") {
			errs = append(errs, fmt.Errorf("%s %q can't restart paused deployment (run rollout resume first)", resourceString(t.res), name))
			continue
		}
		if printer.StringMap(t.obj, "spec", "template", "metadata", "annotations")[RestartedAtAnnotation] == now {
			errs = append(errs, fmt.Errorf("failed to create patch for %v: if restart has already been triggered within the past second, please wait before attempting to trigger another", name))
			continue
		}
		b, _ := json.Marshal(map[string]any{"spec": map[string]any{"template": map[string]any{"metadata": map[string]any{
			"annotations": map[string]any{RestartedAtAnnotation: now}}}}})
		if _, err := sess.Cluster.Patch(ctx, t.res.GVK, printer.Str(md, "namespace"), name, cluster.StrategicMergePatchType, b, cluster.FieldOwner(manager)); err != nil {
			errs = append(errs, fmt.Errorf("failed to patch: %v", err))
			continue
		}
		fmt.Fprintf(g.Out, "%s restarted\n", objectRef(t.res, name))
	}
	return reportErrors(g.ErrOut, errs)
}
