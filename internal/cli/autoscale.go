package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/konverge/konverge/apply"
	"github.com/konverge/konverge/internal/cli/flags"
	"github.com/konverge/konverge/internal/printer"
)

// autoscaleOptions are the flags of konverge autoscale.
type autoscaleOptions struct {
	min, max, cpuPercent int32
	cpu, memory, name    string
}

// newAutoscaleCmd is kubectl autoscale: a HorizontalPodAutoscaler
// (autoscaling/v2) for a deployment, replica set, stateful set or
// replication controller.
func newAutoscaleCmd(g *Globals) *cobra.Command {
	f := &generatorFlags{g: g, verb: "autoscaled"}
	var ff flags.FilenameFlags
	o := autoscaleOptions{}
	cmd := &cobra.Command{
		Use:   "autoscale (-f FILENAME | TYPE NAME | TYPE/NAME) [--min=MINPODS] --max=MAXPODS [--cpu=CPU] [--memory=MEMORY]",
		Short: "Create a horizontal pod autoscaler for a deployment, replica set, stateful set, or replication controller",
		Long: `Create a HorizontalPodAutoscaler (autoscaling/v2) that keeps the number of
pods of a deployment, replica set, stateful set or replication controller
between --min and --max, targeting the CPU and memory use given (a
percentage of the pods' requests, or an average quantity per pod); without
a target the API server defaults it to 80% of the requested CPU. When the
autoscaling/v2 object cannot be created, a CPU utilization target alone is
tried as autoscaling/v1, as kubectl does.

The embedded cluster has no metrics API: the autoscaler's targets stay
<unknown>.`,
		Example: `  # Between 2 and 10 pods of deployment web
  konverge autoscale deployment web --min=2 --max=10

  # At most 5 pods of replication controller legacy, at 80% of their CPU requests
  konverge autoscale rc legacy --max=5 --cpu=80%

  # 500 millicores and 200Mi of memory on average per pod
  konverge autoscale deployment web --min=3 --max=6 --cpu=500m --memory=200Mi`,
		RunE: func(cmd *cobra.Command, args []string) error {
			g.complete(cmd)
			if cmd.Flags().Changed("cpu-percent") {
				fmt.Fprintln(g.ErrOut, "Flag --cpu-percent has been deprecated, Use --cpu with percentage or resource quantity format (e.g., '70%' for utilization or '500m' for milliCPU).")
			}
			if err := o.validate(); err != nil {
				return failOne(g.ErrOut, err)
			}
			return o.run(cmd.Context(), g, f, ff, args)
		},
	}
	f.addFlags(cmd, managerScale)
	fs := cmd.Flags()
	ff.AddFlags(fs, "the objects to autoscale")
	fs.Int32Var(&o.min, "min", -1, "The lower limit for the number of pods that can be set by the autoscaler. If it's not specified or negative, the server will apply a default value.")
	fs.Int32Var(&o.max, "max", -1, "The upper limit for the number of pods that can be set by the autoscaler. Required.")
	_ = cmd.MarkFlagRequired("max")
	fs.Int32Var(&o.cpuPercent, "cpu-percent", -1, "The target average CPU utilization (represented as a percent of requested CPU) over all the pods. If it's not specified or negative, a default autoscaling policy will be used.")
	// Deprecated, as kubectl's: hidden, and its warning printed on
	// standard error (cobra would print pflag's on standard output).
	_ = fs.MarkHidden("cpu-percent")
	fs.StringVar(&o.cpu, "cpu", "", `Target CPU use over all the pods: a percentage of the requested CPU ("70%": average utilization) or a quantity ("500m": average value; a number without unit is millicores, "500" is "500m").`)
	fs.StringVar(&o.memory, "memory", "", `Target memory use over all the pods: a percentage of the requested memory ("60%": average utilization) or a quantity ("200Mi": average value; a number without unit is mebibytes, "200" is "200Mi").`)
	fs.StringVar(&o.name, "name", "", "The name for the newly created object. If not specified, the name of the input resource will be used.")
	return cmd
}

// validate checks the flags as kubectl's AutoscaleOptions.Validate does.
func (o *autoscaleOptions) validate() error {
	if o.max < 1 {
		return fmt.Errorf("--max=MAXPODS is required and must be at least 1, max: %d", o.max)
	}
	if o.max < o.min {
		return fmt.Errorf("--max=MAXPODS must be larger or equal to --min=MINPODS, max: %d, min: %d", o.max, o.min)
	}
	if o.cpuPercent > 0 && o.cpu != "" {
		return errors.New("--cpu-percent and --cpu are mutually exclusive")
	}
	if o.cpu != "" {
		if _, err := parseMetricTarget(o.cpu, corev1.ResourceCPU); err != nil {
			return err
		}
	}
	if o.memory != "" {
		if _, err := parseMetricTarget(o.memory, corev1.ResourceMemory); err != nil {
			return err
		}
	}
	return nil
}

// parseMetricTarget reads --cpu or --memory: "70%" is an average
// utilization, a quantity ("500m", "2Gi") an average value, and a bare
// number a quantity in millicores (cpu) or mebibytes (memory).
func parseMetricTarget(in string, name corev1.ResourceName) (autoscalingv2.MetricTarget, error) {
	in = strings.TrimSpace(in)
	if in == "" {
		return autoscalingv2.MetricTarget{}, errors.New("empty input")
	}
	if pct, ok := strings.CutSuffix(in, "%"); ok {
		n, err := strconv.ParseInt(pct, 10, 32)
		if err != nil || n < 0 {
			return autoscalingv2.MetricTarget{}, fmt.Errorf("invalid percentage value: %s", pct)
		}
		v := int32(n)
		return autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &v}, nil
	}
	if f, err := strconv.ParseFloat(in, 64); err == nil {
		unit := "m"
		if name == corev1.ResourceMemory {
			unit = "Mi"
		}
		q, err := resource.ParseQuantity(fmt.Sprintf("%g%s", f, unit))
		if err != nil {
			return autoscalingv2.MetricTarget{}, err
		}
		return autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: &q}, nil
	}
	q, err := resource.ParseQuantity(in)
	if err != nil {
		return autoscalingv2.MetricTarget{}, fmt.Errorf("invalid resource %s value: %s", name, in)
	}
	return autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: &q}, nil
}

// hpaV2 is the autoscaling/v2 object kubectl builds for the workload ref.
func (o *autoscaleOptions) hpaV2(ref autoscalingv2.CrossVersionObjectReference, namespace string) (*autoscalingv2.HorizontalPodAutoscaler, error) {
	name := o.name
	if name == "" {
		name = ref.Name
	}
	h := &autoscalingv2.HorizontalPodAutoscaler{
		TypeMeta:   metav1.TypeMeta{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec:       autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: ref, MaxReplicas: o.max},
	}
	if o.min > 0 {
		m := o.min
		h.Spec.MinReplicas = &m
	}
	resourceMetric := func(name corev1.ResourceName, t autoscalingv2.MetricTarget) autoscalingv2.MetricSpec {
		return autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricSource{Name: name, Target: t}}
	}
	if o.cpuPercent > 0 {
		v := o.cpuPercent
		h.Spec.Metrics = append(h.Spec.Metrics, resourceMetric(corev1.ResourceCPU,
			autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &v}))
	}
	for _, m := range []struct {
		in   string
		name corev1.ResourceName
	}{{o.cpu, corev1.ResourceCPU}, {o.memory, corev1.ResourceMemory}} {
		if m.in == "" {
			continue
		}
		t, err := parseMetricTarget(m.in, m.name)
		if err != nil {
			return nil, err
		}
		h.Spec.Metrics = append(h.Spec.Metrics, resourceMetric(m.name, t))
	}
	return h, nil
}

// v1Compatible is kubectl's test of whether an autoscaler whose
// autoscaling/v2 creation failed may be created as autoscaling/v1: a CPU
// target that parses and no memory target, with a utilization or the
// deprecated --cpu-percent. Without --cpu the parse fails ("empty
// input"), which is the error kubectl reports.
func (o *autoscaleOptions) v1Compatible() (bool, error) {
	t, err := parseMetricTarget(o.cpu, corev1.ResourceCPU)
	if err != nil {
		return false, err
	}
	return o.memory == "" && (o.cpuPercent >= 0 || t.Type == autoscalingv2.UtilizationMetricType), nil
}

// hpaV1 is the autoscaling/v1 object of the fallback.
func (o *autoscaleOptions) hpaV1(ref autoscalingv2.CrossVersionObjectReference, namespace string) *autoscalingv1.HorizontalPodAutoscaler {
	name := o.name
	if name == "" {
		name = ref.Name
	}
	h := &autoscalingv1.HorizontalPodAutoscaler{
		TypeMeta:   metav1.TypeMeta{APIVersion: "autoscaling/v1", Kind: "HorizontalPodAutoscaler"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: autoscalingv1.HorizontalPodAutoscalerSpec{MaxReplicas: o.max,
			ScaleTargetRef: autoscalingv1.CrossVersionObjectReference{APIVersion: ref.APIVersion, Kind: ref.Kind, Name: ref.Name}},
	}
	if o.min > 0 {
		m := o.min
		h.Spec.MinReplicas = &m
	}
	if o.cpuPercent >= 0 {
		c := o.cpuPercent
		h.Spec.TargetCPUUtilizationPercentage = &c
	}
	return h
}

// run makes an autoscaler for every object args or the files name; the
// failures of single objects are reported at the end, as kubectl's
// builder continues on errors.
func (o *autoscaleOptions) run(ctx context.Context, g *Globals, f *generatorFlags, ff flags.FilenameFlags, args []string) error {
	dry, _, err := f.check()
	if err != nil {
		return failOne(g.ErrOut, err)
	}
	if dry == apply.DryRunClient {
		f.verb = "created"
	}
	_, p, err := f.check()
	if err != nil {
		return failOne(g.ErrOut, err)
	}
	sess, err := g.openResourceSession(ctx)
	if err != nil {
		return failOne(g.ErrOut, err)
	}
	defer sess.Close(ctx)
	ff.Warnings = g.ErrOut
	var targets []gotObject
	var errs []error
	if ff.Given() {
		// As kubectl: the objects of the files, not read from the cluster.
		targets, errs = fileObjects(ctx, g, sess, ff)
	} else {
		targets, errs = selectTargets(ctx, g, sess, ff, args, "", false)
	}
	count := 0
	for _, t := range targets {
		gvk := t.res.GVK
		if !scalable[gvk.Group+"/"+gvk.Kind] && !isCustomResource(ctx, sess.Cluster, t.res) {
			gv := gvk.Group + "/" + gvk.Version
			errs = append(errs, fmt.Errorf("cannot autoscale a %s: could not find scale subresource for %s, Resource=%s in discovery information", gvk.Kind, gv, t.res.Plural))
			continue
		}
		apiVersion := gvk.Version
		if gvk.Group != "" {
			apiVersion = gvk.Group + "/" + gvk.Version
		}
		ref := autoscalingv2.CrossVersionObjectReference{APIVersion: apiVersion, Kind: gvk.Kind, Name: printer.Str(t.obj, "metadata", "name")}
		h, err := o.hpaV2(ref, f.namespace())
		if err != nil {
			errs = append(errs, fmt.Errorf("failed to create HorizontalPodAutoscaler using autoscaling/v2 API: %w", err))
			continue
		}
		if err := o.handle(ctx, g, f, sess, p, dry, h); err != nil {
			// kubectl falls back to autoscaling/v1 when the v2 object
			// is refused, if the flags fit that version.
			if ok, err := o.v1Compatible(); !ok {
				errs = append(errs, fmt.Errorf("failed to create autoscaling/v2 HPA and the configuration is incompatible with autoscaling/v1: %w", err))
				continue
			}
			if err := o.handle(ctx, g, f, sess, p, dry, o.hpaV1(ref, f.namespace())); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		count++
	}
	if len(errs) > 1 {
		// kubectl prints several errors one a line, the plain ones
		// without their "error: ".
		for _, e := range errs {
			fmt.Fprintln(g.ErrOut, strings.TrimPrefix(errorText(e), "error: "))
		}
		return &ExitError{Code: 1}
	}
	if len(errs) > 0 {
		return reportErrors(g.ErrOut, errs)
	}
	if count == 0 {
		return failOne(g.ErrOut, errors.New("no objects passed to autoscale"))
	}
	if err := sess.Close(ctx); err != nil {
		return failOne(g.ErrOut, err)
	}
	return nil
}

// handle prints the autoscaler (client dry run) or creates it and prints
// what the cluster stored.
func (o *autoscaleOptions) handle(ctx context.Context, g *Globals, f *generatorFlags, sess *Session, p printer.ObjectPrinter, dry apply.DryRun, h runtime.Object) error {
	if f.SaveConfig {
		if err := setTypedLastApplied(h); err != nil {
			return err
		}
	}
	m, err := toValue(h)
	if err != nil {
		return err
	}
	if dry == apply.DryRunClient {
		return p.PrintObject(g.Out, asTyped(m))
	}
	stored, err := f.write(ctx, sess, m, dry)
	if err != nil {
		return err
	}
	if flags.StripsManagedFields(p) {
		stored, _ = flags.StripManagedFields(stored).(map[string]any)
	}
	return p.PrintObject(g.Out, asTyped(stored))
}
