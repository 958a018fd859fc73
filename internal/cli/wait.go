package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/internal/cli/flags"
	"github.com/konverge/konverge/internal/printer"
	"github.com/konverge/konverge/wait"
)

// WaitOptions are the flags of konverge wait.
type WaitOptions struct {
	*Globals
	flags.FilenameFlags
	For      []string
	Timeout  time.Duration
	Selector string
	All      bool
}

// NewWaitCmd returns the wait command.
func NewWaitCmd(o *WaitOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "wait ([-f FILENAME] | resource.group/resource.name | resource.group [(-l label | --all)]) [--for=delete|--for condition=available|--for=jsonpath='{.status.x}'=value]",
		Short: "Wait until objects are deleted, meet a condition or match a JSONPath",
		Long: `Block until objects are deleted, have a condition or match a JSONPath value,
as kubectl wait does.

On the embedded cluster the command fast-forwards the virtual clock from one
moment with due work to the next instead of sleeping: --timeout is cluster time
(default 30s; zero checks once, negative means a week).

--for=jsonpath takes a simple path of fields ({.status.readyReplicas}=3);
filters and wildcards are not supported.`,
		Example: `  # Until deployment web is Available
  konverge wait --for=condition=Available deployment/web

  # Until pod job-1 is gone, for a minute at most
  konverge wait --for=delete pod/job-1 --timeout=60s

  # Until three replicas of web are ready
  konverge wait --for=jsonpath='{.status.readyReplicas}'=3 deployment/web`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.complete(cmd)
			return o.Run(cmd.Context(), args)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&o.For, "for", nil, "The condition to wait on: [delete|condition=condition-name[=condition-value]|jsonpath='{JSONPath expression}'=[JSONPath value]]. The default condition-value is true. Multiple conditions are AND'ed.")
	f.DurationVar(&o.Timeout, "timeout", o.Timeout, "The length of cluster time to wait before giving up. Zero means check once and don't wait, negative means wait for a week.")
	f.StringVarP(&o.Selector, "selector", "l", "", "Selector (label query) to filter on, supports '=', '==', '!=', 'in', 'notin'.")
	f.BoolVar(&o.All, "all", false, "Act on every object of the given types in the namespace")
	o.FilenameFlags.AddFlags(f, "identifying the resource")
	return cmd
}

// waitCond is one --for condition on an object (nil: deleted).
type waitCond struct {
	deleteWait bool
	check      func(obj map[string]any) bool
}

// parseWaitFor reads one --for value.
func parseWaitFor(s string) (waitCond, error) {
	low := strings.ToLower(s)
	switch {
	case low == "delete":
		return waitCond{deleteWait: true}, nil
	case strings.HasPrefix(low, "condition="):
		spec := s[len("condition="):]
		name, want, ok := strings.Cut(spec, "=")
		if !ok {
			want = "true"
		}
		if name == "" {
			return waitCond{}, fmt.Errorf("unrecognized condition: %q", s)
		}
		return waitCond{check: func(obj map[string]any) bool { return conditionMet(obj, name, want) }}, nil
	case strings.HasPrefix(low, "jsonpath="):
		spec := s[len("jsonpath="):]
		expr, want, hasValue := strings.Cut(spec, "}=")
		if hasValue {
			expr += "}"
		}
		expr = strings.Trim(expr, "'\"")
		if !strings.HasPrefix(expr, "{.") || !strings.HasSuffix(expr, "}") || strings.ContainsAny(expr, "[]*?@") {
			return waitCond{}, fmt.Errorf("jsonpath wait format must be --for=jsonpath='{.status.readyReplicas}'=3 or --for=jsonpath='{.status.readyReplicas}' (konverge supports simple field paths only)")
		}
		if hasValue && want == "" {
			return waitCond{}, errors.New("jsonpath wait has to have a value after equal sign, like --for=jsonpath='{.status.readyReplicas}'=3")
		}
		fields := strings.Split(expr[2:len(expr)-1], ".")
		return waitCond{check: func(obj map[string]any) bool {
			if !printer.Has(obj, fields...) {
				return false
			}
			if !hasValue {
				return true
			}
			var cur any = obj
			for _, f := range fields {
				m, _ := cur.(map[string]any)
				cur = m[f]
			}
			return printer.Scalar(cur) == want
		}}, nil
	}
	return waitCond{}, fmt.Errorf("unrecognized condition: %q", s)
}

// conditionMet is kubectl's ConditionalWait.checkCondition.
func conditionMet(obj map[string]any, name, want string) bool {
	return wait.ConditionMet(obj, name, want)
}

// Run waits for the conditions on the objects args name.
func (o *WaitOptions) Run(ctx context.Context, args []string) error {
	if len(o.For) == 0 {
		return failOne(o.ErrOut, errors.New("--for must be specified"))
	}
	var conds []waitCond
	for _, f := range o.For {
		c, err := parseWaitFor(f)
		if err != nil {
			return failOne(o.ErrOut, err)
		}
		conds = append(conds, c)
	}
	timeout := o.Timeout
	if timeout < 0 {
		timeout = 168 * time.Hour
	}
	sess, err := o.openResourceSession(ctx)
	if err != nil {
		return failOne(o.ErrOut, err)
	}
	defer sess.Close(ctx)
	targets, errs := selectTargets(ctx, o.Globals, sess, o.FilenameFlags, args, o.Selector, o.All)
	onlyDelete := true
	for _, c := range conds {
		onlyDelete = onlyDelete && c.deleteWait
	}
	if onlyDelete {
		// An object that is already gone is what --for=delete waits for.
		kept := errs[:0]
		for _, e := range errs {
			if !cluster.IsNotFound(e) {
				kept = append(kept, e)
			}
		}
		errs = kept
	}
	if len(errs) > 0 {
		return reportErrors(o.ErrOut, errs)
	}
	if len(targets) == 0 && !onlyDelete {
		return failOne(o.ErrOut, errors.New("no matching resources found"))
	}
	for _, t := range targets {
		md := printer.Map(t.obj, "metadata")
		ns, name := printer.Str(md, "namespace"), printer.Str(md, "name")
		check := func() (bool, error) {
			obj, err := sess.Cluster.Get(ctx, t.res.GVK, ns, name)
			if err != nil && !cluster.IsNotFound(err) {
				return false, err
			}
			for _, c := range conds {
				if c.deleteWait {
					if err == nil && printer.Str(obj, "metadata", "uid") == printer.Str(md, "uid") {
						return false, nil
					}
					continue
				}
				if err != nil || !c.check(obj) {
					return false, nil
				}
			}
			return true, nil
		}
		var werr error
		if timeout == 0 {
			ok, err := check()
			if err == nil && !ok {
				err = errWaitTimeout
			}
			werr = err
		} else {
			werr = waitFor(ctx, sess, timeout, check, fmt.Sprintf("waiting on %s/%s", t.res.Plural, name))
		}
		if errors.Is(werr, errWaitTimeout) {
			werr = fmt.Errorf("%w on %s/%s", werr, t.res.Plural, name)
		}
		if werr != nil {
			return failOne(o.ErrOut, werr)
		}
		fmt.Fprintf(o.Out, "%s condition met\n", objectRef(t.res, name))
	}
	return nil
}
