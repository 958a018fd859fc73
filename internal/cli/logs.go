package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/internal/printer"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/selector"
)

// logsOptions are kubectl logs' flags.
type logsOptions struct {
	container      string
	allContainers  bool
	selector       string
	follow         bool
	previous       bool
	tail           int64
	timestamps     bool
	prefix         bool
	maxLogRequests int
}

// podGVK is the core Pod kind.
var podGVK = schema.GVK{Version: "v1", Kind: "Pod"}

// newLogsCmd is `konverge logs`: the output of a pod's container. The
// embedded cluster's kubelet runs no programs, so what it can say is what
// a container's command would print when that is plain (echo); for any
// other program it says, on standard error, that there is no output to
// show. Pods, containers and the objects that select pods are found and
// refused as kubectl finds and refuses them.
func newLogsCmd(g *Globals) *cobra.Command {
	o := &logsOptions{}
	cmd := &cobra.Command{
		Use:                   "logs [-f] [-p] (POD | TYPE/NAME) [-c CONTAINER]",
		DisableFlagsInUseLine: true,
		Short:                 "Print what a container of a pod wrote to its output",
		Long: `Print what a container wrote to its output, for a pod or for a pod of a
workload (TYPE/NAME). -c names the container; a pod with one container
needs none.

On the embedded cluster, containers run no programs: a container whose command
only echoes prints what it would echo; for any other program konverge says on
standard error that there is no output.`,
		Example: `  # The output so far of pod web's only container
  konverge logs web

  # The same, each line marked with its pod and container
  konverge logs web --prefix

  # The output of every container of pod web
  konverge logs web --all-containers

  # Container app of one of the pods of deployment web
  konverge logs deployment/web -c app`,
		RunE: func(cmd *cobra.Command, args []string) error {
			g.complete(cmd)
			return runLogs(cmd.Context(), g, o, args)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.container, "container", "c", "", "The container whose output to print")
	f.BoolVar(&o.allContainers, "all-containers", false, "Print the output of every container of the pods.")
	f.StringVarP(&o.selector, "selector", "l", "", "Keep only objects whose labels match every condition, e.g. app=web,tier in (front,back),!canary.")
	f.BoolVarP(&o.follow, "follow", "f", false, "Keep printing what the container writes.")
	f.BoolVarP(&o.previous, "previous", "p", false, "Print the output of the container's previous run (before its last restart).")
	f.Int64Var(&o.tail, "tail", -1, "How many of the last lines to print (default: all, or 10 with a selector).")
	f.BoolVar(&o.timestamps, "timestamps", false, "Start each line with the time it was written")
	f.BoolVar(&o.prefix, "prefix", false, "Start each line with [pod/NAME/CONTAINER]")
	f.IntVar(&o.maxLogRequests, "max-log-requests", 5, "Specify maximum number of concurrent logs to follow when using by a selector. Defaults to 5.")
	return cmd
}

const logsUsage = "expected 'logs [-f] [-p] (POD | TYPE/NAME) [-c CONTAINER]'.\nPOD or TYPE/NAME is a required argument for the logs command\nSee 'konverge logs -h' for help and examples"

// logSource is one container whose logs are printed.
type logSource struct {
	pod       map[string]any
	container map[string]any
	init      bool
}

func runLogs(ctx context.Context, g *Globals, o *logsOptions, args []string) error {
	switch {
	case o.selector != "" && len(args) > 0:
		return failOne(g.ErrOut, errors.New("only a selector (-l) or a POD name is allowed\nSee 'konverge logs -h' for help and examples"))
	case o.selector == "" && (len(args) == 0 || len(args) > 2):
		return failOne(g.ErrOut, errors.New(logsUsage))
	case len(args) == 2:
		if o.container != "" {
			return failOne(g.ErrOut, errors.New("only one of -c or an inline [CONTAINER] arg is allowed"))
		}
		o.container = args[1]
	}
	if o.allContainers && o.container != "" {
		return failOne(g.ErrOut, fmt.Errorf("--all-containers=true should not be specified with container name %s", o.container))
	}
	s, err := g.openResourceSession(ctx)
	if err != nil {
		return fail(g.ErrOut, 1, err)
	}
	defer s.Close(ctx)
	ns := g.Ns()
	var pods []map[string]any
	allPods := false
	switch {
	case o.selector != "":
		l, err := s.Cluster.List(ctx, podGVK, cluster.InNamespace(ns), cluster.MatchingLabels(o.selector))
		if err != nil {
			return fail(g.ErrOut, 1, err)
		}
		if len(l.Items) == 0 {
			fmt.Fprintf(g.ErrOut, "No resources found in %s namespace.\n", ns)
			return nil
		}
		pods, allPods = l.Items, true
	default:
		kind, name, typed := strings.Cut(args[0], "/")
		if !typed {
			kind, name = "pods", args[0]
		}
		res, err := findResource(s.Mapper(), kind)
		if err != nil {
			return failOne(g.ErrOut, err)
		}
		obj, err := s.Cluster.Get(ctx, res.GVK, g.objectNamespace(res), name)
		if err != nil {
			if cluster.IsNotFound(err) {
				what := res.Plural
				if res.GVK.Group != "" {
					what += "." + res.GVK.Group
				}
				return failOne(g.ErrOut, fmt.Errorf("error from server (NotFound): %s %q not found in namespace %q", what, name, ns))
			}
			return fail(g.ErrOut, 1, err)
		}
		if res.GVK == podGVK {
			pods = []map[string]any{obj}
			break
		}
		pod, n, err := firstPodOf(ctx, s, res, obj)
		if err != nil {
			return failOne(g.ErrOut, err)
		}
		if n > 1 {
			fmt.Fprintf(g.ErrOut, "Found %v pods, using pod/%v\n", n, printer.Str(pod, "metadata", "name"))
		}
		pods = []map[string]any{pod}
	}
	var sources []logSource
	for _, pod := range pods {
		src, err := logSources(g.ErrOut, pod, o, allPods)
		if err != nil {
			return failOne(g.ErrOut, err)
		}
		sources = append(sources, src...)
	}
	if allPods && len(sources) > o.maxLogRequests && o.follow {
		return failOne(g.ErrOut, fmt.Errorf("you are attempting to follow %d log streams, but maximum allowed concurrency is %d, use --max-log-requests to increase the limit", len(sources), o.maxLogRequests))
	}
	for _, src := range sources {
		if err := printLogs(g, src, o); err != nil {
			return fail(g.ErrOut, 1, err)
		}
	}
	return nil
}

// firstPodOf finds the pod whose logs stand for an object that selects
// pods, as kubectl does: the first of its pods, running and ready ones
// first; n is how many there are.
func firstPodOf(ctx context.Context, s *Session, res cluster.Resource, obj map[string]any) (map[string]any, int, error) {
	sel, err := podSelectorOf(res, obj)
	if err != nil {
		return nil, 0, err
	}
	l, err := s.Cluster.List(ctx, podGVK, cluster.InNamespace(printer.Str(obj, "metadata", "namespace")), cluster.MatchingLabels(sel))
	if err != nil {
		return nil, 0, err
	}
	if len(l.Items) == 0 {
		return nil, 0, errors.New("timed out waiting for the condition")
	}
	pods := l.Items
	rank := func(p map[string]any) int {
		r := 0
		if printer.Str(p, "spec", "nodeName") == "" {
			r += 4
		}
		if printer.Str(p, "status", "phase") != "Running" {
			r += 2
		}
		if !podReady(p) {
			r++
		}
		return r
	}
	sort.SliceStable(pods, func(i, j int) bool {
		if ri, rj := rank(pods[i]), rank(pods[j]); ri != rj {
			return ri < rj
		}
		return printer.Str(pods[i], "metadata", "creationTimestamp") < printer.Str(pods[j], "metadata", "creationTimestamp")
	})
	return pods[0], len(pods), nil
}

func podReady(p map[string]any) bool {
	conds := printer.List(p, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Ready" {
			return m["status"] == "True"
		}
	}
	return false
}

// podSelectorOf is the label selector of the pods of an object, for the
// kinds kubectl takes logs of.
func podSelectorOf(res cluster.Resource, obj map[string]any) (string, error) {
	gk := res.GVK.Group + "/" + res.GVK.Kind
	switch gk {
	case "/ReplicationController", "/Service":
		m := printer.Map(obj, "spec", "selector")
		if len(m) == 0 {
			// kubectl waits for a pod that never comes.
			return "", errors.New("timed out waiting for the condition")
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + "=" + fmt.Sprint(m[k])
		}
		return strings.Join(parts, ","), nil
	case "apps/Deployment", "apps/ReplicaSet", "apps/StatefulSet", "apps/DaemonSet", "batch/Job":
		m := printer.Map(obj, "spec", "selector")
		sel, err := selector.FromLabelSelector(m)
		if err != nil {
			return "", fmt.Errorf("cannot get the logs from *%s.%s: %w", res.GVK.Version, res.GVK.Kind, err)
		}
		return sel.String(), nil
	}
	return "", fmt.Errorf("cannot get the logs from *%s.%s: selector for *%s.%s not implemented", res.GVK.Version, res.GVK.Kind, res.GVK.Version, res.GVK.Kind)
}

// allContainerNames lists a pod's containers as kubectl's messages do:
// "app, sidecar, setup (init)".
func allContainerNames(pod map[string]any) string {
	var names []string
	for _, c := range podContainers(pod, "containers") {
		names = append(names, printer.Str(c, "name"))
	}
	for _, c := range podContainers(pod, "ephemeralContainers") {
		names = append(names, printer.Str(c, "name")+" (ephem)")
	}
	for _, c := range podContainers(pod, "initContainers") {
		names = append(names, printer.Str(c, "name")+" (init)")
	}
	return strings.Join(names, ", ")
}

func podContainers(pod map[string]any, field string) []map[string]any {
	list := printer.List(pod, "spec", field)
	var out []map[string]any
	for _, c := range list {
		if m, ok := c.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// logSources picks the containers of a pod whose logs are printed: -c,
// --all-containers, the default-container annotation, else the first
// container (saying so when the pod has others, unless all pods of a
// selector are printed).
func logSources(errOut io.Writer, pod map[string]any, o *logsOptions, allPods bool) ([]logSource, error) {
	if o.allContainers {
		var out []logSource
		for _, c := range podContainers(pod, "initContainers") {
			out = append(out, logSource{pod: pod, container: c, init: true})
		}
		for _, c := range podContainers(pod, "containers") {
			out = append(out, logSource{pod: pod, container: c})
		}
		for _, c := range podContainers(pod, "ephemeralContainers") {
			out = append(out, logSource{pod: pod, container: c})
		}
		return out, nil
	}
	name := o.container
	podName := printer.Str(pod, "metadata", "name")
	if name == "" {
		if d := printer.Str(pod, "metadata", "annotations", "kubectl.kubernetes.io/default-container"); d != "" {
			if findContainer(pod, d) == nil {
				fmt.Fprintf(errOut, "Default container name %q not found in pod %s\n", d, podName)
			} else {
				name = d
			}
		}
	}
	if name == "" {
		cs := podContainers(pod, "containers")
		if len(cs) == 0 {
			return nil, fmt.Errorf("pod %s has no containers", podName)
		}
		name = printer.Str(cs[0], "name")
		if (len(cs) > 1 || len(podContainers(pod, "initContainers")) > 0 || len(podContainers(pod, "ephemeralContainers")) > 0) && !allPods {
			fmt.Fprintf(errOut, "Defaulted container %q out of: %s\n", name, allContainerNames(pod))
		}
	}
	c := findContainer(pod, name)
	if c == nil {
		return nil, fmt.Errorf("container %s is not valid for pod %s out of: %s", name, podName, allContainerNames(pod))
	}
	return []logSource{{pod: pod, container: c.container, init: c.init}}, nil
}

type foundContainer struct {
	container map[string]any
	init      bool
}

func findContainer(pod map[string]any, name string) *foundContainer {
	for _, f := range []string{"containers", "initContainers", "ephemeralContainers"} {
		for _, c := range podContainers(pod, f) {
			if printer.Str(c, "name") == name {
				return &foundContainer{container: c, init: f == "initContainers"}
			}
		}
	}
	return nil
}

// containerStatus is the status of a pod's container, nil if none.
func containerStatus(pod map[string]any, name string, init bool) map[string]any {
	field := "containerStatuses"
	if init {
		field = "initContainerStatuses"
	}
	list := printer.List(pod, "status", field)
	for _, s := range list {
		if m, ok := s.(map[string]any); ok && m["name"] == name {
			return m
		}
	}
	return nil
}

// printLogs prints what one container would have logged.
func printLogs(g *Globals, src logSource, o *logsOptions) error {
	podName := printer.Str(src.pod, "metadata", "name")
	name := printer.Str(src.container, "name")
	if printer.Str(src.pod, "spec", "nodeName") == "" {
		// Not scheduled: the API server has no kubelet to ask, and
		// answers with nothing, as for kubectl.
		return nil
	}
	st := containerStatus(src.pod, name, src.init)
	if st == nil {
		return cluster.NewBadRequest(fmt.Sprintf("container %q in pod %q is waiting to start: ContainerCreating", name, podName))
	}
	if w := printer.Map(st, "state", "waiting"); w != nil {
		reason := printer.Str(w, "reason")
		if reason == "" {
			reason = "ContainerCreating"
		}
		return cluster.NewBadRequest(fmt.Sprintf("container %q in pod %q is waiting to start: %s", name, podName, reason))
	}
	if o.previous {
		if !printer.Has(st, "lastState", "terminated") {
			return cluster.NewBadRequest(fmt.Sprintf("previous terminated container %q in pod %q not found", name, podName))
		}
	}
	var cmd []string
	for _, f := range []string{"command", "args"} {
		list, _ := src.container[f].([]any)
		for _, a := range list {
			cmd = append(cmd, fmt.Sprint(a))
		}
	}
	lines, known := echoOutput(cmd)
	if !known {
		fmt.Fprintf(g.ErrOut, "konverge: container %q of pod %s/%s runs in the embedded cluster's simulated kubelet, which runs no program: no output to show\n",
			name, printer.Str(src.pod, "metadata", "namespace"), podName)
		return nil
	}
	if o.tail >= 0 && int64(len(lines)) > o.tail {
		lines = lines[int64(len(lines))-o.tail:]
	}
	prefix := ""
	if o.prefix {
		prefix = "[pod/" + podName + "/" + name + "] "
	}
	for _, l := range lines {
		fmt.Fprintln(g.Out, prefix+l)
	}
	return nil
}

// echoOutput returns what a command prints when it only echoes (echo
// ARGS, or a shell script of echo, sleep, true and exit statements);
// known is false for any other program.
func echoOutput(cmd []string) (lines []string, known bool) {
	if len(cmd) == 0 {
		return nil, false
	}
	prog := cmd[0][strings.LastIndex(cmd[0], "/")+1:]
	switch prog {
	case "echo":
		return []string{echoLine(cmd[1:])}, true
	case "sh", "bash", "ash":
		if len(cmd) < 3 || cmd[1] != "-c" {
			return nil, false
		}
		return scriptEchoes(cmd[2])
	}
	return nil, false
}

// echoLine is what echo prints for its arguments (-n and -e are read as
// arguments would be by a plain echo, but -n drops nothing here).
func echoLine(args []string) string {
	if len(args) > 0 && args[0] == "-n" {
		args = args[1:]
	}
	return strings.Join(args, " ")
}

// scriptEchoes reads a shell script of simple statements separated by
// ";", "&&" or new lines.
func scriptEchoes(script string) ([]string, bool) {
	var lines []string
	r := strings.NewReplacer("&&", "\n", ";", "\n")
	for _, stmt := range strings.Split(r.Replace(script), "\n") {
		words, ok := shellWords(strings.TrimSpace(stmt))
		if !ok {
			return nil, false
		}
		if len(words) == 0 {
			continue
		}
		switch words[0] {
		case "echo":
			lines = append(lines, echoLine(words[1:]))
		case "sleep", "true", "exit", ":":
		default:
			return nil, false
		}
	}
	return lines, true
}

// shellWords splits a simple statement into words, with single and
// double quotes; ok is false for what it does not read (variables,
// substitutions, redirections, pipes).
func shellWords(s string) (words []string, ok bool) {
	if strings.ContainsAny(s, "$`|<>()*?\\") {
		return nil, false
	}
	var cur strings.Builder
	inWord := false
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, false
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, true
}
