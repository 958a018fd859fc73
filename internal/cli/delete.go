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
	"github.com/konverge/konverge/manifest"
	"github.com/konverge/konverge/objref"
)

// DeleteOptions are the flags of konverge delete.
type DeleteOptions struct {
	g *Globals
	flags.FilenameFlags

	Selector       string
	All            bool
	AllNamespaces  bool
	Cascade        string
	IgnoreNotFound bool
	DryRun         string
	Output         string
	GracePeriod    int
	Now            bool
	Force          bool
	Wait           bool
	Timeout        time.Duration

	ignoreNotFoundSet bool
}

// NewDeleteCmd returns konverge delete.
func NewDeleteCmd(o *DeleteOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "delete ([-f FILENAME] | TYPE [(NAME | -l label | --all)])",
		Short: "Delete objects named on the command line, in files or by label",
		Long: `Delete objects: those of manifest files (-f, JSON or YAML), those named as
TYPE NAME or TYPE/NAME, or those of a type that match a label selector
(-l) or all of them (--all). One way at a time. TYPE "all" is kubectl's
category of the same name (pods, services, workloads, autoscalers, jobs).

As kubectl, the command then waits until the objects are gone (finalizers,
a namespace's content, dependents deleted in the foreground), --timeout at
most for each (zero: a week), or not with --wait=false. On the embedded
cluster the wait fast-forwards the virtual clock, and stops after 24h of
cluster time in which nothing changes.`,
		Example: `  # Delete the objects of a directory
  konverge delete -f ./manifests/

  # Delete a deployment, its ReplicaSets and pods
  konverge delete deployment nginx-deployment

  # Delete all config maps labelled app=web
  konverge delete cm -l app=web`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.g.complete(cmd)
			o.ignoreNotFoundSet = cmd.Flags().Changed("ignore-not-found")
			return o.Run(cmd.Context(), o.g.Out, args)
		},
	}
	f := cmd.Flags()
	o.FilenameFlags.AddFlags(f, "the objects to delete")
	f.StringVarP(&o.Selector, "selector", "l", "", "Selector (label query) to filter on, supports '=', '==', '!=', 'in', 'notin'.(e.g. -l key1=value1,key2=value2). Matching objects must satisfy all of the specified label constraints.")
	f.BoolVar(&o.All, "all", false, "Delete every object of the given types in the namespace.")
	f.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "Look in every namespace (the current one and --namespace are ignored).")
	f.StringVar(&o.Cascade, "cascade", "background", `Must be "background", "orphan", or "foreground". Selects the deletion cascading strategy for the dependents (e.g. Pods created by a ReplicationController). Defaults to background.`)
	f.Lookup("cascade").NoOptDefVal = "background"
	f.BoolVar(&o.IgnoreNotFound, "ignore-not-found", false, "Treat \"resource not found\" as a successful delete. Defaults to \"true\" when --all is specified.")
	flags.DryRun(f, &o.DryRun)
	f.StringVarP(&o.Output, "output", "o", "", "With name, print only TYPE/NAME of each deleted object.")
	f.IntVar(&o.GracePeriod, "grace-period", -1, "Seconds the objects get to shut down (negative: their own default; 1: at once; 0 only with --force).")
	f.BoolVar(&o.Now, "now", false, "Shut the objects down at once, as --grace-period=1.")
	f.BoolVar(&o.Force, "force", false, "Delete at once, skipping graceful termination; pods may go on running on their node, so this asks for confirmation.")
	f.BoolVar(&o.Wait, "wait", true, "If true, wait for resources to be gone before returning. This waits for finalizers.")
	f.DurationVar(&o.Timeout, "timeout", 0, "The length of time to wait before giving up on a delete (cluster time on the embedded cluster); zero means a week, which the embedded cluster cuts short after 24h of cluster time without a change.")
	return cmd
}

// target is one object to delete.
type target struct {
	res       cluster.Resource
	namespace string
	name      string
	// source is the file the object was read from, for kubectl's
	// `error when deleting "file"`; "" for objects named on the command line.
	source string
	// uid is the deleted object's, for the wait until it is gone.
	uid string
}

// Run deletes what the arguments name and prints a line per object.
func (o *DeleteOptions) Run(ctx context.Context, out io.Writer, args []string) error {
	errOut := o.g.ErrOut
	policy, err := o.complete()
	if err != nil {
		return fail(errOut, 1, err)
	}
	dry, err := flags.ParseDryRun(o.DryRun)
	if err != nil {
		return fail(errOut, 1, err)
	}
	if err := o.validate(args); err != nil {
		return fail(errOut, 1, err)
	}
	var fileObjs []manifest.Object
	if o.FilenameFlags.Given() {
		o.Warnings = o.g.ErrOut
		if fileObjs, err = o.Read(ctx, o.g.In); err != nil {
			return fail(errOut, 1, err)
		}
	}

	sess, err := o.g.openSession(ctx)
	if err != nil {
		return fail(errOut, 1, err)
	}
	defer sess.Close(ctx)
	targets, err := o.targets(ctx, sess, args, fileObjs)
	if err != nil {
		return fail(errOut, 1, err)
	}

	d := o.newDeletion(ctx, sess, out, targets, policy, dry)
	if b, ok := sess.Cluster.(apply.Batcher); ok && dry == apply.DryRunNone && len(targets) > 1 {
		// One transaction for all deletions: the errors of single objects
		// (NotFound, ...) are reported and do not roll back the others.
		if err := b.Batch(ctx, func(c cluster.Interface) error { return d.run(ctx, c) }); err != nil {
			return fail(errOut, 1, err)
		}
	} else {
		_ = d.run(ctx, sess.Cluster)
	}
	if errs := o.finish(ctx, sess, d); len(errs) > 0 {
		for _, e := range errs {
			for _, line := range errorLines(e) {
				fmt.Fprintln(errOut, line)
			}
		}
		return &ExitError{Code: 1}
	}
	if d.found == 0 && !o.FilenameFlags.Given() {
		fmt.Fprintln(out, "No resources found")
	}
	return nil
}

// finish waits, as kubectl, once every object is deleted, until each is
// gone (finalizers, a namespace's content, dependents deleted in the
// foreground, a pod's termination), and saves the session. It returns the
// errors of the deletion, of the first object not gone in time, and of
// saving.
func (o *DeleteOptions) finish(ctx context.Context, sess *Session, d *deletion) []error {
	errs := d.errs
	if len(errs) == 0 && d.found > 0 && d.waiting {
		if err := o.waitGone(ctx, sess, d.deleted); err != nil {
			errs = append(errs, err)
		}
	}
	if err := sess.Close(ctx); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// targets resolves the objects of the files, or else those args name.
func (o *DeleteOptions) targets(ctx context.Context, sess *Session, args []string, fileObjs []manifest.Object) ([]target, error) {
	if !o.FilenameFlags.Given() {
		return o.argTargets(ctx, sess.Cluster, args)
	}
	var targets []target
	var errs []error
	for _, obj := range fileObjs {
		t, err := o.fileTarget(sess.Mapper(), obj.Obj, obj.Source.File)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		targets = append(targets, t)
	}
	// As kubectl's builder: objects that cannot be resolved stop the
	// command before anything is deleted.
	return targets, errors.Join(errs...)
}

// deletion is one run of delete over its targets: what it deletes with,
// and what it deleted, found and failed to delete so far.
type deletion struct {
	out       io.Writer
	errOut    io.Writer
	outputFmt string
	targets   []target
	opts      []cluster.DeleteOption
	dry       apply.DryRun
	// operation is the verb printed for each object ("deleted (dry run)").
	operation        string
	ignoreNotFound   bool
	warnClusterScope bool
	// waiting: the command waits until the deleted objects are gone, so
	// each one's uid is read before it is deleted.
	waiting bool
	// existed are the targets (by deletionKey) after the first that
	// exist before anything is deleted (see noteExisting).
	existed map[string]bool

	deleted []target
	found   int
	errs    []error
}

func (o *DeleteOptions) newDeletion(ctx context.Context, sess *Session, out io.Writer, targets []target, policy cluster.Propagation, dry apply.DryRun) *deletion {
	d := &deletion{
		out: out, errOut: o.g.ErrOut, outputFmt: o.Output,
		targets: targets, dry: dry,
		opts:             []cluster.DeleteOption{policy},
		operation:        "deleted",
		ignoreNotFound:   o.IgnoreNotFound,
		warnClusterScope: o.g.NamespaceSet && !o.AllNamespaces,
		waiting:          o.Wait && dry == apply.DryRunNone,
		existed:          map[string]bool{},
	}
	if dry == apply.DryRunServer {
		d.opts = append(d.opts, cluster.DryRunAll)
	}
	if o.GracePeriod >= 0 {
		d.opts = append(d.opts, cluster.GracePeriod(int64(o.GracePeriod)))
	}
	if o.GracePeriod == 0 {
		d.operation = "force deleted"
	}
	switch dry {
	case apply.DryRunClient:
		d.operation += " (dry run)"
	case apply.DryRunServer:
		d.operation += " (server dry run)"
	}
	if !o.ignoreNotFoundSet && (o.All || o.Selector != "") {
		d.ignoreNotFound = true
	}
	if dry == apply.DryRunNone && sess.Store != nil && len(targets) > 1 {
		d.noteExisting(ctx, sess.Cluster)
	}
	return d
}

func deletionKey(t target) string { return t.res.GVK.String() + "/" + t.namespace + "/" + t.name }

// noteExisting records the targets after the first that exist. The
// embedded cluster deletes a namespace's content, and the dependents of
// an owner deleted in the background, with it, where a real one's
// controllers take them away after kubectl has deleted them itself; they
// were there, so they are reported deleted as kubectl reports them.
func (d *deletion) noteExisting(ctx context.Context, c cluster.Reader) {
	for _, t := range d.targets[1:] {
		if _, err := c.Get(ctx, t.res.GVK, t.namespace, t.name); err == nil {
			d.existed[deletionKey(t)] = true
		}
	}
}

// run deletes every target through c, printing a line for each one
// deleted and keeping the errors.
func (d *deletion) run(ctx context.Context, c cluster.Interface) error {
	for _, t := range d.targets {
		if d.warnClusterScope && !t.res.Namespaced {
			printWarning(d.errOut, "deleting cluster-scoped resources, not scoped to the provided namespace")
			d.warnClusterScope = false
		}
		if d.dry != apply.DryRunClient {
			if err := d.deleteOne(ctx, c, t); err != nil {
				if !(d.ignoreNotFound && cluster.IsNotFound(err)) {
					d.errs = append(d.errs, err)
				}
				continue
			}
		}
		d.found++
		d.print(t)
	}
	return nil
}

// deleteOne deletes t. An object gone with its namespace or owner earlier
// in the run counts as deleted.
func (d *deletion) deleteOne(ctx context.Context, c cluster.Interface, t target) error {
	if d.waiting {
		// The uid of what is deleted: a new object of the same name (the
		// control plane's kube-root-ca.crt) is not waited for, as
		// kubectl's uid map does.
		if obj, err := c.Get(ctx, t.res.GVK, t.namespace, t.name); err == nil {
			t.uid = objref.UID(obj)
		}
	}
	err := c.Delete(ctx, t.res.GVK, t.namespace, t.name, d.opts...)
	if err != nil && cluster.IsNotFound(err) && d.existed[deletionKey(t)] && len(d.deleted) > 0 {
		err = nil
	}
	switch {
	case err == nil:
		d.deleted = append(d.deleted, t)
		return nil
	case cluster.IsNotFound(err) && d.ignoreNotFound:
		return err
	case t.source != "":
		return sourceError{verb: "deleting", source: t.source, err: err}
	}
	return err
}

// print is kubectl's line for a deleted object.
func (d *deletion) print(t target) {
	kindString := objref.KindGroup(t.res.GVK)
	if d.outputFmt == "name" {
		fmt.Fprintf(d.out, "%s/%s\n", kindString, t.name)
		return
	}
	op := d.operation
	if t.res.Namespaced {
		op = strings.Replace(op, "deleted", "deleted from "+t.namespace+" namespace", 1)
	}
	fmt.Fprintf(d.out, "%s %q %s\n", kindString, t.name, op)
}

// waitGone waits until every deleted object is gone: not found, or found
// with another uid (a new object of the same name). --timeout applies to
// each object; zero means a week, negative checks once. On the embedded
// cluster the wait fast-forwards the virtual clock (sessionDriver).
func (o *DeleteOptions) waitGone(ctx context.Context, sess *Session, deleted []target) error {
	timeout := o.Timeout
	if timeout == 0 {
		timeout = 168 * time.Hour
	}
	for _, t := range deleted {
		if t.uid == "" {
			// Gone before its own deletion (with its namespace or owner).
			continue
		}
		uid := t.uid
		gone := func() (bool, error) {
			obj, err := sess.Cluster.Get(ctx, t.res.GVK, t.namespace, t.name)
			if cluster.IsNotFound(err) {
				return true, nil
			}
			if err != nil {
				return false, err
			}
			return objref.UID(obj) != uid, nil
		}
		var werr error
		if timeout < 0 {
			ok, err := gone()
			if err == nil && !ok {
				err = errWaitTimeout
			}
			werr = err
		} else {
			werr = waitFor(ctx, sess, timeout, gone, fmt.Sprintf("waiting on %s/%s", t.res.Plural, t.name))
		}
		if errors.Is(werr, errWaitTimeout) {
			werr = fmt.Errorf("%w on %s/%s", werr, t.res.Plural, t.name)
		}
		if werr != nil {
			return werr
		}
	}
	return nil
}

// complete checks the flags as kubectl's DeleteOptions.Complete does and
// returns the propagation policy.
func (o *DeleteOptions) complete() (cluster.Propagation, error) {
	if o.Now {
		if o.GracePeriod != -1 {
			return "", errors.New("--now and --grace-period cannot be specified together")
		}
		o.GracePeriod = 1
	}
	if o.GracePeriod == 0 && !o.Force {
		o.GracePeriod = 1
	}
	if o.Force && o.GracePeriod < 0 {
		o.GracePeriod = 0
	}
	if o.GracePeriod > 0 && o.Force {
		return "", errors.New("--force and --grace-period greater than 0 cannot be specified together")
	}
	if o.Force && o.GracePeriod == 0 {
		printWarning(o.g.ErrOut, "Immediate deletion does not wait for confirmation that the running resource has been terminated. The resource may continue to run on the cluster indefinitely.")
	}
	switch o.Cascade {
	case "background", "":
		return cluster.Background, nil
	case "foreground":
		return cluster.Foreground, nil
	case "orphan":
		return cluster.Orphan, nil
	case "true":
		printWarning(o.g.ErrOut, "--cascade=true is deprecated (boolean value) and can be replaced with --cascade=background.")
		return cluster.Background, nil
	case "false":
		printWarning(o.g.ErrOut, "--cascade=false is deprecated (boolean value) and can be replaced with --cascade=orphan.")
		return cluster.Orphan, nil
	}
	//lint:ignore ST1005 kubectl's message, word for word (users and scripts match it)
	return "", fmt.Errorf(`invalid cascade value (%v). Must be "background", "foreground", or "orphan".`, o.Cascade)
}

// validate checks the arguments as kubectl's builder does.
func (o *DeleteOptions) validate(args []string) error {
	if o.Output != "" && o.Output != "name" {
		return fmt.Errorf("unexpected -o output mode: %v. We only support '-o name'", o.Output)
	}
	if o.All && o.Selector != "" {
		return errors.New("cannot set --all and --selector at the same time")
	}
	if err := flags.CheckSelector(o.Selector); err != nil {
		return err
	}
	if o.FilenameFlags.Given() {
		if len(args) > 0 {
			return errors.New("Unexpected args: " + fmt.Sprint(args) + "\nSee 'konverge delete -h' for help and examples")
		}
		return nil
	}
	if len(args) == 0 {
		//lint:ignore ST1005 kubectl's message, word for word (users and scripts match it)
		return errors.New("You must provide one or more resources by argument or filename.\nExample resource specifications include:\n   '-f rsrc.yaml'\n   '--filename=rsrc.json'\n   '<resource> <name>'\n   '<resource>'")
	}
	return nil
}

// fileTarget resolves an object read from a file.
func (o *DeleteOptions) fileTarget(m cluster.Mapper, obj map[string]any, source string) (target, error) {
	ref := objref.Of(obj)
	res, err := m.ResourceFor(ref.GVK)
	if err != nil {
		return target{}, fmt.Errorf("resource mapping not found for name: %q namespace: %q from %q: %w\nensure CRDs are installed first", ref.Name, ref.Namespace, source, plainError(err))
	}
	t := target{res: res, name: ref.Name, source: source}
	if res.Namespaced {
		t.namespace = ref.Namespace
		switch {
		case t.namespace == "":
			t.namespace = o.g.Ns()
		case o.g.NamespaceSet && t.namespace != o.g.Ns():
			//lint:ignore ST1005 kubectl's message, word for word (users and scripts match it)
			return target{}, fmt.Errorf("the namespace from the provided object %q does not match the namespace %q. You must pass '--namespace=%s' to perform this operation.", t.namespace, o.g.Ns(), t.namespace)
		}
	}
	return t, nil
}

// argTargets resolves KIND NAME..., KIND/NAME... and KIND[,KIND] with -l or
// --all.
func (o *DeleteOptions) argTargets(ctx context.Context, c cluster.Interface, args []string) ([]target, error) {
	m := c.Mapper()
	ns := o.g.Ns()
	namespaceOf := func(res cluster.Resource) string {
		if !res.Namespaced {
			return ""
		}
		return ns
	}
	if strings.Contains(args[0], "/") {
		// KIND/NAME form: every argument must have it.
		var out []target
		for _, a := range args {
			kind, name, ok := strings.Cut(a, "/")
			if !ok {
				return nil, errors.New("there is no need to specify a resource type as a separate argument when passing arguments in resource/name form (e.g. 'konverge get resource/<resource_name>' instead of 'konverge get resource resource/<resource_name>'")
			}
			if kind == "" || name == "" {
				return nil, fmt.Errorf("arguments in resource/name form must have a single resource and name")
			}
			res, err := m.Find(kind)
			if err != nil {
				return nil, plainError(err)
			}
			out = append(out, target{res: res, namespace: namespaceOf(res), name: name})
		}
		if o.All || o.Selector != "" {
			return nil, errors.New("name cannot be provided when a selector is specified")
		}
		return out, nil
	}
	names := args[1:]
	if args[0] == "all" && len(names) > 0 {
		return nil, errors.New("you must specify only one resource")
	}
	var kinds []cluster.Resource
	for _, k := range strings.Split(args[0], ",") {
		if k == "" {
			continue
		}
		if k == "all" && len(names) == 0 {
			// kubectl's "all" category: the kinds of get all, those the
			// cluster serves (with names, "all" is no kind).
			for _, a := range allKinds {
				if res, err := m.Find(a); err == nil {
					kinds = append(kinds, res)
				}
			}
			continue
		}
		res, err := m.Find(k)
		if err != nil {
			return nil, plainError(err)
		}
		kinds = append(kinds, res)
	}
	for _, n := range names {
		if strings.Contains(n, "/") {
			return nil, errors.New("there is no need to specify a resource type as a separate argument when passing arguments in resource/name form (e.g. 'konverge get resource/<resource_name>' instead of 'konverge get resource resource/<resource_name>'")
		}
	}
	var out []target
	if len(names) > 0 {
		if o.All || o.Selector != "" {
			return nil, errors.New("name cannot be provided when a selector is specified")
		}
		for _, res := range kinds {
			for _, n := range names {
				out = append(out, target{res: res, namespace: namespaceOf(res), name: n})
			}
		}
		return out, nil
	}
	if !o.All && o.Selector == "" {
		return nil, errors.New("resource(s) were provided, but no name was specified")
	}
	for _, res := range kinds {
		var lopts []cluster.ListOption
		if res.Namespaced && !o.AllNamespaces {
			lopts = append(lopts, cluster.InNamespace(ns))
		}
		if o.Selector != "" {
			lopts = append(lopts, cluster.MatchingLabels(o.Selector))
		}
		list, err := c.List(ctx, res.GVK, lopts...)
		if err != nil {
			return nil, err
		}
		for _, obj := range list.Items {
			out = append(out, target{res: res, namespace: objref.Namespace(obj), name: objref.Name(obj)})
		}
	}
	return out, nil
}

// plainError turns a mapper's NotFound into a plain error, which kubectl
// prints as "error: the server doesn't have a resource type ...".
func plainError(err error) error {
	var se *cluster.StatusError
	if errors.As(err, &se) {
		return errors.New(err.Error())
	}
	return err
}

// sourceError is kubectl's AddSourceToErr: an API error about an object
// read from a file, `error when deleting "file.yaml": ...`.
type sourceError struct {
	verb, source string
	err          error
}

func (e sourceError) Error() string {
	return fmt.Sprintf("error when %s %q: %v", e.verb, e.source, e.err)
}

func (e sourceError) Unwrap() error { return e.err }
