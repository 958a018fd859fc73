package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/konverge/konverge/apply"
	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/internal/cli/flags"
	"github.com/konverge/konverge/internal/printer"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/selector"
	"github.com/konverge/konverge/wait"
)

// drain is kubectl drain v1.37: cordon the nodes, then evict (or delete)
// the pods on each that may go, retrying every 5 s while a
// PodDisruptionBudget refuses, and wait until they are gone. The texts
// and exit codes are kubectl's, recorded against a real control plane.
// kubectl evicts a node's pods concurrently, one goroutine each; here
// they are evicted in rounds, in the order of the pod list: every pod
// still to go is tried once per round, and the refused ones again 5 s
// later. On the embedded cluster the waits move its virtual clock.

// drainRetry is how long kubectl waits before evicting a refused pod again.
const drainRetry = 5 * time.Second

// The reasons kubectl's pod filters give (kubectl/pkg/drain), as it
// prints them after "cannot delete " or as warnings.
const (
	daemonSetFatal      = "DaemonSet-managed Pods (use --ignore-daemonsets to ignore)"
	daemonSetWarning    = "ignoring DaemonSet-managed Pods"
	localStorageFatal   = "Pods with local storage (use --delete-emptydir-data to override)"
	localStorageWarn    = "deleting Pods with local storage"
	unmanagedFatal      = "Pods that declare no controller (use --force to override)"
	unmanagedWarning    = "deleting Pods that declare no controller"
	mirrorPodAnnotation = "kubernetes.io/config.mirror"
)

type drainOptions struct {
	force, ignoreDaemonSets, deleteEmptyDir, disableEviction bool
	gracePeriod                                              int
	timeout                                                  time.Duration
	podSelector, selector, dryRunFlag                        string
	dry                                                      apply.DryRun
}

func newDrainCmd(g *Globals) *cobra.Command {
	o := &drainOptions{}
	cmd := &cobra.Command{
		Use:   "drain NODE",
		Short: "Drain a node in preparation for maintenance",
		Long: `Cordon a node, then evict the pods running on it through the eviction API, which
honours PodDisruptionBudgets (a refused eviction is tried again every 5 seconds),
and wait until they are gone. DaemonSet-managed pods, pods with emptyDir volumes
and pods without a controller stop the drain unless --ignore-daemonsets,
--delete-emptydir-data or --force say otherwise. On the embedded cluster the
waits move its virtual clock.`,
		Example: `  konverge drain node-a --ignore-daemonsets
  konverge drain node-a --ignore-daemonsets --delete-emptydir-data --force --timeout=2m
  konverge drain -l pool=old --ignore-daemonsets --dry-run=server`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDrain(cmd.Context(), g, args, o)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.force, "force", false, "Also delete pods that declare no controller (not managed by a ReplicaSet, Job, StatefulSet, ...)")
	f.BoolVar(&o.ignoreDaemonSets, "ignore-daemonsets", false, "Leave DaemonSet-managed pods alone instead of failing")
	f.BoolVar(&o.deleteEmptyDir, "delete-emptydir-data", false, "Also delete pods with emptyDir volumes (their data is lost)")
	f.BoolVar(&o.disableEviction, "disable-eviction", false, "Delete pods instead of evicting them, bypassing PodDisruptionBudgets")
	f.IntVar(&o.gracePeriod, "grace-period", -1, "Seconds each pod gets to terminate; negative means the pod's own terminationGracePeriodSeconds")
	f.DurationVar(&o.timeout, "timeout", 0, "How long to go on before giving up; zero means for ever")
	f.StringVar(&o.podSelector, "pod-selector", "", "Only the pods on the node that match this label selector")
	f.StringVarP(&o.selector, "selector", "l", "", "Drain the nodes whose labels match this selector (key=value, key!=value, key in (a,b))")
	flags.DryRun(f, &o.dryRunFlag)
	return cmd
}

// drainError is the error of one node's drain: one or more texts, which
// kubectl prints as an aggregate ("[a, b]") in one line and one a line at
// the end.
type drainError []string

func (e drainError) Error() string {
	if len(e) == 1 {
		return e[0]
	}
	return "[" + strings.Join(e, ", ") + "]"
}

func runDrain(ctx context.Context, g *Globals, args []string, o *drainOptions) error {
	if len(args) == 0 && o.selector == "" {
		return failOne(g.ErrOut, errors.New("USAGE: drain NODE [flags]\nSee 'konverge drain -h' for help and examples"))
	}
	dry, err := flags.ParseDryRun(o.dryRunFlag)
	if err != nil {
		return failOne(g.ErrOut, err)
	}
	o.dry = dry
	if o.podSelector != "" {
		if _, err := selector.ParseLabels(o.podSelector); err != nil {
			return failOne(g.ErrOut, errors.New("--pod-selector=<pod_selector> must be a valid label selector"))
		}
	}
	sess, err := g.openResourceSession(ctx)
	if err != nil {
		return failOne(g.ErrOut, err)
	}
	defer sess.Close(ctx)
	nodes, errs := nodeTargets(ctx, sess, args, o.selector)
	if len(errs) > 0 {
		return reportErrors(g.ErrOut, errs)
	}
	// kubectl cordons every node first, then drains them one by one.
	var cordoned []string
	for _, n := range nodes {
		name := printer.Str(printer.Map(n, "metadata"), "name")
		if err := cordonForDrain(ctx, g.Out, sess, n, dry); err != nil {
			fmt.Fprintf(g.ErrOut, "error: unable to drain node %q due to error: %s, continuing command...\n", name, commandErrorText(err))
			continue
		}
		cordoned = append(cordoned, name)
	}
	var pending []string
	var fatal []drainError
	for _, name := range cordoned {
		err := o.drainNode(ctx, g, sess, name)
		if err == nil {
			fmt.Fprintf(g.Out, "node/%s drained%s\n", name, dryRunSuffix(dry))
			continue
		}
		fmt.Fprintf(g.ErrOut, "error: unable to drain node %q due to error: %s, continuing command...\n", name, err.Error())
		pending = append(pending, name)
		fatal = append(fatal, err)
	}
	if len(pending) == 0 {
		return nil
	}
	fmt.Fprintln(g.ErrOut, "There are pending nodes to be drained:")
	for _, n := range pending {
		fmt.Fprintf(g.ErrOut, " %s\n", n)
	}
	// kubectl exits with the last node's error, a line per text.
	for _, t := range fatal[len(fatal)-1] {
		fmt.Fprintln(g.ErrOut, t)
	}
	return &ExitError{Code: 1}
}

// cordonForDrain marks a node unschedulable, printing as cordon does.
func cordonForDrain(ctx context.Context, out io.Writer, sess *Session, n map[string]any, dry apply.DryRun) error {
	name := printer.Str(printer.Map(n, "metadata"), "name")
	if printer.Bool(n, "spec", "unschedulable") {
		fmt.Fprintf(out, "node/%s already cordoned%s\n", name, dryRunSuffix(dry))
		return nil
	}
	if dry != apply.DryRunClient {
		var opts []cluster.PatchOption
		if dry == apply.DryRunServer {
			opts = append(opts, cluster.DryRunAll)
		}
		if _, err := sess.Cluster.Patch(ctx, nodeGVK, "", name, cluster.StrategicMergePatchType, []byte(`{"spec":{"unschedulable":true}}`), opts...); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "node/%s cordoned%s\n", name, dryRunSuffix(dry))
	return nil
}

// drainPod is a pod to evict or delete.
type drainPod struct {
	namespace, name, uid string
}

func (p drainPod) ref() string { return p.namespace + "/" + p.name }

// podsToDrain lists the pods on the node (matching --pod-selector) and
// sorts them as kubectl's filters do: those to evict or delete, the
// warnings, the reasons that stop the drain (each with its pods).
func (o *drainOptions) podsToDrain(ctx context.Context, sess *Session, node string) ([]drainPod, []string, drainError, error) {
	opts := []cluster.ListOption{cluster.MatchingFields("spec.nodeName=" + node)}
	if o.podSelector != "" {
		opts = append(opts, cluster.MatchingLabels(o.podSelector))
	}
	l, err := sess.Cluster.List(ctx, podGVK, opts...)
	if err != nil {
		return nil, nil, nil, err
	}
	order := []string{daemonSetFatal, daemonSetWarning, localStorageFatal, localStorageWarn, unmanagedFatal, unmanagedWarning}
	byReason := map[string][]string{}
	var pods []drainPod
	for _, p := range l.Items {
		md := printer.Map(p, "metadata")
		dp := drainPod{namespace: printer.Str(md, "namespace"), name: printer.Str(md, "name"), uid: printer.Str(md, "uid")}
		keep, reason, err := o.filter(ctx, sess, p)
		if err != nil {
			return nil, nil, nil, err
		}
		if reason != "" {
			byReason[reason] = append(byReason[reason], dp.ref())
		}
		if keep {
			pods = append(pods, dp)
		}
	}
	var warnings []string
	var fatal drainError
	for _, r := range order {
		if len(byReason[r]) == 0 {
			continue
		}
		text := r + ": " + strings.Join(byReason[r], ", ")
		if strings.HasSuffix(r, ")") {
			fatal = append(fatal, "cannot delete "+text)
		} else {
			warnings = append(warnings, text)
		}
	}
	return pods, warnings, fatal, nil
}

// filter is kubectl's chain of pod filters for one pod: whether it goes,
// and the reason (fatal or warning) that the last filter run gives.
func (o *drainOptions) filter(ctx context.Context, sess *Session, p map[string]any) (keep bool, reason string, err error) {
	phase := printer.Str(p, "status", "phase")
	finished := phase == "Succeeded" || phase == "Failed"
	var ref map[string]any
	for _, x := range printer.List(p, "metadata", "ownerReferences") {
		if r, _ := x.(map[string]any); printer.Bool(r, "controller") {
			ref = r
		}
	}
	// DaemonSet-managed pods.
	if ref != nil && printer.Str(ref, "kind") == "DaemonSet" && !finished {
		_, err := sess.Cluster.Get(ctx, schema.GVK{Group: "apps", Version: "v1", Kind: "DaemonSet"}, printer.Str(p, "metadata", "namespace"), printer.Str(ref, "name"))
		switch {
		case cluster.IsNotFound(err) && o.force:
			keep, reason = true, err.Error()
		case err != nil:
			return false, "", err
		case !o.ignoreDaemonSets:
			return false, daemonSetFatal, nil
		default:
			return false, daemonSetWarning, nil
		}
	} else {
		keep = true
	}
	// Mirror pods (of static pods) stay, silently.
	if _, ok := printer.Map(p, "metadata", "annotations")[mirrorPodAnnotation]; ok {
		return false, "", nil
	}
	// Pods with emptyDir volumes.
	if !finished {
		for _, v := range printer.List(p, "spec", "volumes") {
			if printer.Map(v, "emptyDir") == nil {
				continue
			}
			if !o.deleteEmptyDir {
				return false, localStorageFatal, nil
			}
			reason = localStorageWarn
			break
		}
	}
	// Pods without a controller.
	if !finished && ref == nil {
		if !o.force {
			return false, unmanagedFatal, nil
		}
		reason = unmanagedWarning
	}
	return keep, reason, nil
}

// drainNode evicts or deletes the pods of one node.
func (o *drainOptions) drainNode(ctx context.Context, g *Globals, sess *Session, node string) drainError {
	pods, warnings, fatal, err := o.podsToDrain(ctx, sess, node)
	if err != nil {
		return drainError{commandErrorText(err)}
	}
	if len(fatal) > 0 {
		return fatal
	}
	if len(warnings) > 0 {
		fmt.Fprintf(g.ErrOut, "Warning: %s\n", strings.Join(warnings, "; "))
	}
	if len(pods) == 0 {
		return nil
	}
	if o.dry == apply.DryRunClient {
		for _, p := range pods {
			fmt.Fprintf(g.Out, "evicting pod %s%s\n", p.ref(), dryRunSuffix(o.dry))
		}
		return nil
	}
	var errs drainError
	if o.disableEviction {
		errs = o.deletePods(ctx, g, sess, pods)
	} else {
		errs = o.evictPods(ctx, g, sess, pods)
	}
	if len(errs) == 0 {
		return nil
	}
	if left, _, _, err := o.podsToDrain(ctx, sess, node); err == nil && len(left) > 0 {
		fmt.Fprintf(g.ErrOut, "There are pending pods in node %q when an error occurred: %s\n", node, errs.Error())
		for _, p := range left {
			fmt.Fprintf(g.ErrOut, "pod/%s\n", p.name)
		}
	}
	return errs
}

func (o *drainOptions) deleteOpts() []cluster.DeleteOption {
	var opts []cluster.DeleteOption
	if o.gracePeriod >= 0 {
		opts = append(opts, cluster.GracePeriod(int64(o.gracePeriod)))
	}
	if o.dry == apply.DryRunServer {
		opts = append(opts, cluster.DryRunAll)
	}
	return opts
}

// evictPods evicts the pods through the eviction API, in rounds 5 s
// apart while a disruption budget refuses some, and waits for each
// evicted pod to be gone.
func (o *drainOptions) evictPods(ctx context.Context, g *Globals, sess *Session, pods []drainPod) drainError {
	ev, ok := sess.Cluster.(cluster.Evicter)
	if !ok {
		return drainError{"the cluster does not serve the eviction API (use --disable-eviction)"}
	}
	start := sess.now()
	var errs drainError
	for len(pods) > 0 {
		roundStart := sess.now()
		var evicted, retry []drainPod
		for _, p := range pods {
			fmt.Fprintf(g.Out, "evicting pod %s%s\n", p.ref(), dryRunSuffix(o.dry))
			if o.timeout > 0 && !sess.now().Before(start.Add(o.timeout)) {
				errs = append(errs, fmt.Sprintf("error when evicting pods/%q -n %q: global timeout reached: %v", p.name, p.namespace, o.timeout))
				continue
			}
			err := ev.Evict(ctx, p.namespace, p.name, o.deleteOpts()...)
			switch {
			case err == nil:
				evicted = append(evicted, p)
			case cluster.IsNotFound(err):
			case cluster.IsTooManyRequests(err):
				fmt.Fprintf(g.ErrOut, "error when evicting pods/%q -n %q (will retry after 5s): %s\n", p.name, p.namespace, apiMessage(err))
				retry = append(retry, p)
			default:
				errs = append(errs, fmt.Sprintf("error when evicting pods/%q -n %q: %s", p.name, p.namespace, apiMessage(err)))
			}
		}
		if o.dry != apply.DryRunServer && len(evicted) > 0 {
			errs = append(errs, o.waitGone(ctx, g, sess, evicted, start, "evicted")...)
		}
		pods = retry
		if len(pods) > 0 {
			if err := sleepCluster(ctx, sess, roundStart.Add(drainRetry).Sub(sess.now())); err != nil {
				return append(errs, err.Error())
			}
		}
	}
	return errs
}

// deletePods deletes the pods (--disable-eviction), then waits for them
// to be gone.
func (o *drainOptions) deletePods(ctx context.Context, g *Globals, sess *Session, pods []drainPod) drainError {
	start := sess.now()
	var deleted []drainPod
	for _, p := range pods {
		err := sess.Cluster.Delete(ctx, podGVK, p.namespace, p.name, o.deleteOpts()...)
		switch {
		case err == nil:
			deleted = append(deleted, p)
		case cluster.IsNotFound(err):
		default:
			return drainError{apiMessage(err)}
		}
	}
	if o.dry == apply.DryRunServer {
		return nil
	}
	return o.waitGone(ctx, g, sess, deleted, start, "deleted")
}

// waitGone waits until every pod is gone (or replaced by one of another
// uid), printing "pod/NAME <verb>" for each as it goes, within the drain's
// timeout.
func (o *drainOptions) waitGone(ctx context.Context, g *Globals, sess *Session, pods []drainPod, start time.Time, verb string) drainError {
	gone := make([]bool, len(pods))
	left := len(pods)
	check := func() (bool, error) {
		for i, p := range pods {
			if gone[i] {
				continue
			}
			obj, err := sess.Cluster.Get(ctx, podGVK, p.namespace, p.name)
			if err != nil && !cluster.IsNotFound(err) {
				return false, err
			}
			if err == nil && printer.Str(obj, "metadata", "uid") == p.uid {
				continue
			}
			gone[i] = true
			left--
			fmt.Fprintf(g.Out, "pod/%s %s\n", p.name, verb)
		}
		return left == 0, nil
	}
	timeout := time.Duration(0)
	if o.timeout > 0 {
		timeout = start.Add(o.timeout).Sub(sess.now())
		if timeout <= 0 {
			timeout = time.Nanosecond
		}
	}
	err := waitFor(ctx, sess, timeout, check, "waiting for the drained pods to be deleted")
	if err == nil {
		return nil
	}
	var errs drainError
	for i, p := range pods {
		if !gone[i] {
			errs = append(errs, fmt.Sprintf("error when waiting for pod %q in namespace %q to terminate: %v", p.name, p.namespace, err))
		}
	}
	return errs
}

// sleepCluster lets d pass: cluster time on the embedded cluster (its
// controllers run meanwhile), wall time on a real one.
func sleepCluster(ctx context.Context, sess *Session, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	err := waitFor(ctx, sess, d, func() (bool, error) { return false, nil }, "waiting to evict again")
	if err == nil || errors.Is(err, wait.ErrTimeout) {
		return nil
	}
	return err
}

// apiMessage is an API error's message alone, as kubectl prints it
// inside its own sentences.
func apiMessage(err error) string {
	var se *cluster.StatusError
	if errors.As(err, &se) {
		return se.Message
	}
	return err.Error()
}
