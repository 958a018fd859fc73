package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/konverge/konverge/internal/cli/generate"
	"github.com/konverge/konverge/value"
)

// The generators of deployments, jobs, cron jobs and services (kubectl
// create deployment|job|cronjob|service).

func newCreateDeploymentCmd(g *Globals) *cobra.Command {
	var o generate.DeploymentOptions
	return newGeneratorCmd(g, generator{
		use:     "deployment NAME --image=image -- [COMMAND] [args...]",
		aliases: []string{"deploy"},
		short:   "Create a deployment",
		example: `  # A deployment web of one nginx pod
  konverge create deployment web --image=nginx

  # Three replicas, the container port 8080 declared
  konverge create deployment web --image=nginx --replicas=3 --port=8080`,
		failure: "failed to create deployment: %v",
		flags: func(cmd *cobra.Command) {
			fs := cmd.Flags()
			fs.StringSliceVar(&o.Images, "image", nil, "An image to run, one container per --image (repeatable).")
			_ = cmd.MarkFlagRequired("image")
			fs.Int32Var(&o.Port, "port", -1, "The container port to declare.")
			fs.Int32VarP(&o.Replicas, "replicas", "r", 1, "How many pods the deployment keeps.")
		},
		build: func(_ context.Context, f *generatorFlags, name string, command []string) (runtime.Object, error) {
			o.Name, o.Namespace, o.Command = name, f.namespace(), command
			return generate.Deployment(o)
		},
	})
}

func newCreateJobCmd(g *Globals) *cobra.Command {
	var o generate.JobOptions
	return newGeneratorCmd(g, generator{
		use:   "job NAME --image=image [--from=cronjob/name] -- [COMMAND] [args...]",
		short: "Create a job",
		example: `  # A job whose pod runs busybox once
  konverge create job once --image=busybox

  # Run cron job nightly's job now, as job manual-1
  konverge create job manual-1 --from=cronjob/nightly`,
		failure: "failed to create job: %v",
		flags: func(cmd *cobra.Command) {
			fs := cmd.Flags()
			fs.StringVar(&o.Image, "image", "", "Image name to run.")
			fs.StringVar(&o.From, "from", "", "Make the job from this cron job's template (cronjob/NAME).")
		},
		build: func(ctx context.Context, f *generatorFlags, name string, command []string) (runtime.Object, error) {
			o.Name, o.Namespace, o.Command = name, f.namespace(), command
			if err := o.Check(); err != nil {
				return nil, err
			}
			if o.Image != "" {
				return generate.Job(o)
			}
			cj, err := f.getCronJob(ctx, o.From)
			if err != nil {
				return nil, err
			}
			return generate.JobFromCronJob(o.Name, o.Namespace, cj), nil
		},
	})
}

// getCronJob reads the cron job of --from (TYPE/NAME).
func (f *generatorFlags) getCronJob(ctx context.Context, from string) (*batchv1.CronJob, error) {
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
	var o generate.CronJobOptions
	return newGeneratorCmd(g, generator{
		use:     "cronjob NAME --image=image --schedule='0/5 * * * ?' -- [COMMAND] [args...]",
		aliases: []string{"cj"},
		short:   "Create a cron job",
		example: `  # A job every five minutes
  konverge create cronjob tick --image=busybox --schedule="*/5 * * * *"

  # Every hour, running a command
  konverge create cronjob hourly --image=busybox --schedule="0 * * * *" -- date`,
		failure: "failed to create cronjob: %v",
		flags: func(cmd *cobra.Command) {
			fs := cmd.Flags()
			fs.StringVar(&o.Image, "image", "", "Image name to run.")
			_ = cmd.MarkFlagRequired("image")
			fs.StringVar(&o.Schedule, "schedule", "", "When to start a job, in cron syntax (\"*/5 * * * *\").")
			_ = cmd.MarkFlagRequired("schedule")
			fs.StringVar(&o.Restart, "restart", "", "What the job's pods do when a container exits: OnFailure or Never.")
		},
		build: func(_ context.Context, f *generatorFlags, name string, command []string) (runtime.Object, error) {
			o.Name, o.Namespace, o.Command = name, f.namespace(), command
			return generate.CronJob(o), nil
		},
	})
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

// serviceUse is the usage line of create service TYPE.
var serviceUse = map[corev1.ServiceType]string{
	corev1.ServiceTypeClusterIP:    "clusterip NAME [--tcp=<port>:<targetPort>] [--dry-run=server|client|none]",
	corev1.ServiceTypeNodePort:     "nodeport NAME [--tcp=port:targetPort] [--dry-run=server|client|none]",
	corev1.ServiceTypeLoadBalancer: "loadbalancer NAME [--tcp=port:targetPort] [--dry-run=server|client|none]",
	corev1.ServiceTypeExternalName: "externalname NAME --external-name external.name [--dry-run=server|client|none]",
}

func newCreateServiceTypeCmd(g *Globals, typ corev1.ServiceType) *cobra.Command {
	o := generate.ServiceOptions{Type: typ}
	return newGeneratorCmd(g, generator{
		use:     serviceUse[typ],
		short:   "Create a " + string(typ) + " service",
		failure: "failed to create " + string(typ) + " service: %v",
		flags: func(cmd *cobra.Command) {
			fs := cmd.Flags()
			fs.StringSliceVar(&o.TCP, "tcp", nil, "A port, or port:targetPort (repeatable).")
			switch typ {
			case corev1.ServiceTypeClusterIP:
				fs.StringVar(&o.ClusterIP, "clusterip", "", "Assign your own ClusterIP or set to 'None' for a 'headless' service (no loadbalancing).")
			case corev1.ServiceTypeNodePort:
				fs.IntVar(&o.NodePort, "node-port", 0, "The port to open on every node.")
			case corev1.ServiceTypeExternalName:
				fs.StringVar(&o.ExternalName, "external-name", "", "External name of service")
				_ = cmd.MarkFlagRequired("external-name")
			}
		},
		build: func(_ context.Context, f *generatorFlags, name string, _ []string) (runtime.Object, error) {
			o.Name, o.Namespace = name, f.namespace()
			return generate.Service(o)
		},
	})
}
