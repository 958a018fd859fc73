package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/konverge/konverge/value"
)

// The generators of deployments, jobs, cron jobs and services (kubectl
// create deployment|job|cronjob|service).

func newCreateDeploymentCmd(g *Globals) *cobra.Command {
	f := &generatorFlags{g: g}
	var images []string
	var port, replicas int32
	cmd := &cobra.Command{
		Use:     "deployment NAME --image=image -- [COMMAND] [args...]",
		Aliases: []string{"deploy"},
		Short:   "Create a deployment",
		Example: `  # A deployment web of one nginx pod
  konverge create deployment web --image=nginx

  # Three replicas, the container port 8080 declared
  konverge create deployment web --image=nginx --replicas=3 --port=8080`,
		RunE: func(cmd *cobra.Command, args []string) error {
			g.complete(cmd)
			name, err := f.oneName(args)
			if err != nil {
				return failOne(g.ErrOut, err)
			}
			command := args[1:]
			if len(images) > 1 && len(command) > 0 {
				return failOne(g.ErrOut, errors.New("cannot specify multiple --image options and command"))
			}
			labels := map[string]string{"app": name}
			spec := corev1.PodSpec{Containers: []corev1.Container{}}
			for _, img := range images {
				parts := strings.Split(img, "/")
				cname := parts[len(parts)-1]
				cname, _, _ = strings.Cut(cname, ":")
				cname, _, _ = strings.Cut(cname, "@")
				var cmdArgs []string
				if len(command) > 0 {
					cmdArgs = command
				}
				spec.Containers = append(spec.Containers, corev1.Container{Name: sanitizeAndUniquify(cname), Image: img, Command: cmdArgs})
			}
			d := &appsv1.Deployment{
				TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
				ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Namespace: f.namespace()},
				Spec: appsv1.DeploymentSpec{
					Replicas: &replicas,
					Selector: &metav1.LabelSelector{MatchLabels: labels},
					Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec},
				},
			}
			if port >= 0 && len(spec.Containers) > 0 {
				d.Spec.Template.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: port}}
			}
			return f.create(cmd.Context(), d, wrapError("failed to create deployment: %v"))
		},
	}
	f.addFlags(cmd, managerCreate)
	fs := cmd.Flags()
	fs.StringSliceVar(&images, "image", nil, "An image to run, one container per --image (repeatable).")
	_ = cmd.MarkFlagRequired("image")
	fs.Int32Var(&port, "port", -1, "The container port to declare.")
	fs.Int32VarP(&replicas, "replicas", "r", 1, "How many pods the deployment keeps.")
	return cmd
}

// sanitizeAndUniquify makes a container name of an image name as kubectl
// does: "_" and "." become "-", and then a random suffix keeps names
// apart.
func sanitizeAndUniquify(name string) string {
	if strings.ContainsAny(name, "_.") {
		name = strings.NewReplacer("_", "-", ".", "-").Replace(name)
		const alphanums = "bcdfghjklmnpqrstvwxz2456789"
		b := make([]byte, 5)
		for i := range b {
			b[i] = alphanums[rand.IntN(len(alphanums))]
		}
		name += "-" + string(b)
	}
	return name
}

func newCreateJobCmd(g *Globals) *cobra.Command {
	f := &generatorFlags{g: g}
	var image, from string
	cmd := &cobra.Command{
		Use:   "job NAME --image=image [--from=cronjob/name] -- [COMMAND] [args...]",
		Short: "Create a job",
		Example: `  # A job whose pod runs busybox once
  konverge create job once --image=busybox

  # Run cron job nightly's job now, as job manual-1
  konverge create job manual-1 --from=cronjob/nightly`,
		RunE: func(cmd *cobra.Command, args []string) error {
			g.complete(cmd)
			name, err := f.oneName(args)
			if err != nil {
				return failOne(g.ErrOut, err)
			}
			command := args[1:]
			if (image == "" && from == "") || (image != "" && from != "") {
				return failOne(g.ErrOut, errors.New("either --image or --from must be specified"))
			}
			if len(command) != 0 && from != "" {
				return failOne(g.ErrOut, errors.New("cannot specify --from and command"))
			}
			var job *batchv1.Job
			if image != "" {
				var cmdArgs []string
				if len(command) > 0 {
					cmdArgs = command
				}
				job = &batchv1.Job{
					TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
					ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.namespace()},
					Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
						Containers:    []corev1.Container{{Name: name, Image: image, Command: cmdArgs}},
						RestartPolicy: corev1.RestartPolicyNever,
					}}},
				}
			} else {
				cj, err := f.getCronJob(cmd, from)
				if err != nil {
					return failOne(g.ErrOut, err)
				}
				annotations := map[string]string{"cronjob.kubernetes.io/instantiate": "manual"}
				for k, v := range cj.Spec.JobTemplate.Annotations {
					annotations[k] = v
				}
				ctrl := true
				job = &batchv1.Job{
					TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
					ObjectMeta: metav1.ObjectMeta{
						Name: name, Namespace: f.namespace(), Annotations: annotations, Labels: cj.Spec.JobTemplate.Labels,
						OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "CronJob", Name: cj.Name, UID: cj.UID, Controller: &ctrl}},
					},
					Spec: cj.Spec.JobTemplate.Spec,
				}
			}
			return f.create(cmd.Context(), job, wrapError("failed to create job: %v"))
		},
	}
	f.addFlags(cmd, managerCreate)
	fs := cmd.Flags()
	fs.StringVar(&image, "image", "", "Image name to run.")
	fs.StringVar(&from, "from", "", "Make the job from this cron job's template (cronjob/NAME).")
	return cmd
}

// getCronJob reads the cron job of --from (TYPE/NAME).
func (f *generatorFlags) getCronJob(cmd *cobra.Command, from string) (*batchv1.CronJob, error) {
	ctx := cmd.Context()
	sess, err := f.g.openResourceSession(ctx)
	if err != nil {
		return nil, err
	}
	defer sess.Close(ctx)
	reqs, err := resolveResourceArgs(sess.Mapper(), []string{from})
	if err != nil {
		return nil, err
	}
	if len(reqs) != 1 || len(reqs[0].Names) != 1 {
		return nil, errors.New("from must be an existing cronjob")
	}
	r := reqs[0]
	obj, err := sess.Cluster.Get(ctx, r.Resource.GVK, f.g.objectNamespace(r.Resource), r.Names[0])
	if err != nil {
		return nil, err
	}
	if r.Resource.GVK.Group != "batch" || r.Resource.GVK.Kind != "CronJob" {
		return nil, fmt.Errorf("unknown object type *%s", strings.ToLower(r.Resource.GVK.Version)+"."+r.Resource.GVK.Kind)
	}
	b, err := value.Encode(obj)
	if err != nil {
		return nil, err
	}
	var cj batchv1.CronJob
	if err := json.Unmarshal(b, &cj); err != nil {
		return nil, err
	}
	return &cj, nil
}

func newCreateCronJobCmd(g *Globals) *cobra.Command {
	f := &generatorFlags{g: g}
	var image, schedule, restart string
	cmd := &cobra.Command{
		Use:     "cronjob NAME --image=image --schedule='0/5 * * * ?' -- [COMMAND] [args...]",
		Aliases: []string{"cj"},
		Short:   "Create a cron job",
		Example: `  # A job every five minutes
  konverge create cronjob tick --image=busybox --schedule="*/5 * * * *"

  # Every hour, running a command
  konverge create cronjob hourly --image=busybox --schedule="0 * * * *" -- date`,
		RunE: func(cmd *cobra.Command, args []string) error {
			g.complete(cmd)
			name, err := f.oneName(args)
			if err != nil {
				return failOne(g.ErrOut, err)
			}
			var command []string
			if len(args) > 1 {
				command = args[1:]
			}
			if restart == "" {
				restart = "OnFailure"
			}
			cj := &batchv1.CronJob{
				TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "CronJob"},
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.namespace()},
				Spec: batchv1.CronJobSpec{
					Schedule: schedule,
					JobTemplate: batchv1.JobTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{Name: name},
						Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
							Containers:    []corev1.Container{{Name: name, Image: image, Command: command}},
							RestartPolicy: corev1.RestartPolicy(restart),
						}}},
					},
				},
			}
			return f.create(cmd.Context(), cj, wrapError("failed to create cronjob: %v"))
		},
	}
	f.addFlags(cmd, managerCreate)
	fs := cmd.Flags()
	fs.StringVar(&image, "image", "", "Image name to run.")
	_ = cmd.MarkFlagRequired("image")
	fs.StringVar(&schedule, "schedule", "", "When to start a job, in cron syntax (\"*/5 * * * *\").")
	_ = cmd.MarkFlagRequired("schedule")
	fs.StringVar(&restart, "restart", "", "What the job's pods do when a container exits: OnFailure or Never.")
	return cmd
}

func newCreateServiceCmd(g *Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "service",
		Aliases: []string{"svc"},
		Short:   "Create a service of one of the types below",
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmd.Help()
		},
	}
	return cmd
}

func newCreateServiceTypeCmd(g *Globals, typ corev1.ServiceType) *cobra.Command {
	f := &generatorFlags{g: g}
	var tcp []string
	var clusterIP, externalName string
	var nodePort int
	use := map[corev1.ServiceType]string{
		corev1.ServiceTypeClusterIP:    "clusterip NAME [--tcp=<port>:<targetPort>] [--dry-run=server|client|none]",
		corev1.ServiceTypeNodePort:     "nodeport NAME [--tcp=port:targetPort] [--dry-run=server|client|none]",
		corev1.ServiceTypeLoadBalancer: "loadbalancer NAME [--tcp=port:targetPort] [--dry-run=server|client|none]",
		corev1.ServiceTypeExternalName: "externalname NAME --external-name external.name [--dry-run=server|client|none]",
	}[typ]
	cmd := &cobra.Command{
		Use:   use,
		Short: "Create a " + string(typ) + " service",
		RunE: func(cmd *cobra.Command, args []string) error {
			g.complete(cmd)
			name, err := f.oneName(args)
			if err != nil {
				return failOne(g.ErrOut, err)
			}
			switch {
			case clusterIP == corev1.ClusterIPNone && typ != corev1.ServiceTypeClusterIP:
				return failOne(g.ErrOut, errors.New("ClusterIP=None can only be used with ClusterIP service type"))
			case clusterIP != corev1.ClusterIPNone && len(tcp) == 0 && typ != corev1.ServiceTypeExternalName:
				return failOne(g.ErrOut, errors.New("at least one tcp port specifier must be provided"))
			case typ == corev1.ServiceTypeExternalName && len(validation.IsDNS1123Subdomain(externalName)) != 0:
				return failOne(g.ErrOut, fmt.Errorf("invalid service external name %s", externalName))
			}
			ports := []corev1.ServicePort{}
			for _, s := range tcp {
				port, target, err := parsePorts(s)
				if err != nil {
					return failOne(g.ErrOut, err)
				}
				ports = append(ports, corev1.ServicePort{Name: strings.ReplaceAll(s, ":", "-"), Port: port, TargetPort: target,
					Protocol: corev1.ProtocolTCP, NodePort: int32(nodePort)})
			}
			svc := &corev1.Service{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
				ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": name}, Namespace: f.namespace()},
				Spec: corev1.ServiceSpec{Type: typ, Selector: map[string]string{"app": name}, Ports: ports,
					ExternalName: externalName, ClusterIP: clusterIP},
			}
			return f.create(cmd.Context(), svc, wrapError("failed to create "+string(typ)+" service: %v"))
		},
	}
	f.addFlags(cmd, managerCreate)
	fs := cmd.Flags()
	fs.StringSliceVar(&tcp, "tcp", nil, "A port, or port:targetPort (repeatable).")
	switch typ {
	case corev1.ServiceTypeClusterIP:
		fs.StringVar(&clusterIP, "clusterip", "", "Assign your own ClusterIP or set to 'None' for a 'headless' service (no loadbalancing).")
	case corev1.ServiceTypeNodePort:
		fs.IntVar(&nodePort, "node-port", 0, "The port to open on every node.")
	case corev1.ServiceTypeExternalName:
		fs.StringVar(&externalName, "external-name", "", "External name of service")
		_ = cmd.MarkFlagRequired("external-name")
	}
	return cmd
}

// parsePorts reads "port[:targetPort]" as kubectl does; a target that is
// not a number is a port name.
func parsePorts(s string) (int32, intstr.IntOrString, error) {
	parts := strings.Split(s, ":")
	port, err := strconv.ParseUint(parts[0], 10, 16)
	if err != nil {
		return 0, intstr.FromInt32(0), err
	}
	if len(parts) == 1 {
		return int32(port), intstr.FromInt32(int32(port)), nil
	}
	if n, err := strconv.Atoi(parts[1]); err == nil {
		if errs := validation.IsValidPortNum(n); len(errs) != 0 {
			return 0, intstr.FromInt32(0), errors.New(strings.Join(errs, ","))
		}
		return int32(port), intstr.FromInt32(int32(n)), nil
	}
	if errs := validation.IsValidPortName(parts[1]); len(errs) != 0 {
		return 0, intstr.FromInt32(0), errors.New(strings.Join(errs, ","))
	}
	return int32(port), intstr.FromString(parts[1]), nil
}
