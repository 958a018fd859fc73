package generate

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
)

// DeploymentOptions are create deployment's.
type DeploymentOptions struct {
	Name, Namespace string
	// Images has one container each.
	Images []string
	// Command is what follows "--": the containers' command.
	Command []string
	// Port is the first container's declared port; negative for none.
	Port     int32
	Replicas int32
}

// Deployment is the Deployment of o: its pods labelled app=NAME, one
// container per image, named after the image.
func Deployment(o DeploymentOptions) (*appsv1.Deployment, error) {
	if len(o.Images) > 1 && len(o.Command) > 0 {
		return nil, errors.New("cannot specify multiple --image options and command")
	}
	labels := map[string]string{"app": o.Name}
	spec := corev1.PodSpec{Containers: []corev1.Container{}}
	for _, img := range o.Images {
		spec.Containers = append(spec.Containers, corev1.Container{Name: containerName(img), Image: img, Command: nilIfEmpty(o.Command)})
	}
	replicas := o.Replicas
	d := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: o.Name, Labels: labels, Namespace: o.Namespace},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec},
		},
	}
	if o.Port >= 0 && len(spec.Containers) > 0 {
		d.Spec.Template.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: o.Port}}
	}
	return d, nil
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

// containerName is the container name kubectl makes of an image: its last
// path element without tag or digest, "_" and "." replaced by "-" and
// then a random suffix added to keep names apart.
func containerName(image string) string {
	parts := strings.Split(image, "/")
	name := parts[len(parts)-1]
	name, _, _ = strings.Cut(name, ":")
	name, _, _ = strings.Cut(name, "@")
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

// JobOptions are create job's: a Job of Image, or of the cron job From
// names (which the command reads, see JobFromCronJob).
type JobOptions struct {
	Name, Namespace string
	Image, From     string
	Command         []string
}

// Check refuses options that name neither or both of an image and a cron
// job, or a command with a cron job.
func (o JobOptions) Check() error {
	if (o.Image == "") == (o.From == "") {
		return errors.New("either --image or --from must be specified")
	}
	if len(o.Command) != 0 && o.From != "" {
		return errors.New("cannot specify --from and command")
	}
	return nil
}

// Job is the Job of o's image: one container named after the job, never
// restarted.
func Job(o JobOptions) (*batchv1.Job, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	if o.Image == "" {
		return nil, errors.New("a job from a cron job is made with JobFromCronJob")
	}
	return &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: o.Name, Namespace: o.Namespace},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers:    []corev1.Container{{Name: o.Name, Image: o.Image, Command: nilIfEmpty(o.Command)}},
			RestartPolicy: corev1.RestartPolicyNever,
		}}},
	}, nil
}

// JobFromCronJob is the Job of create job --from=cronjob/NAME: the cron
// job's template, owned by it and annotated as started by hand.
func JobFromCronJob(name, namespace string, cj *batchv1.CronJob) *batchv1.Job {
	annotations := map[string]string{"cronjob.kubernetes.io/instantiate": "manual"}
	for k, v := range cj.Spec.JobTemplate.Annotations {
		annotations[k] = v
	}
	ctrl := true
	return &batchv1.Job{
		TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: namespace, Annotations: annotations, Labels: cj.Spec.JobTemplate.Labels,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "CronJob", Name: cj.Name, UID: cj.UID, Controller: &ctrl}},
		},
		Spec: cj.Spec.JobTemplate.Spec,
	}
}

// CronJobOptions are create cronjob's.
type CronJobOptions struct {
	Name, Namespace string
	Image, Schedule string
	// Restart is the pods' restart policy; "" is OnFailure.
	Restart string
	Command []string
}

// CronJob is the CronJob of o: one container named after it.
func CronJob(o CronJobOptions) *batchv1.CronJob {
	restart := o.Restart
	if restart == "" {
		restart = "OnFailure"
	}
	return &batchv1.CronJob{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "CronJob"},
		ObjectMeta: metav1.ObjectMeta{Name: o.Name, Namespace: o.Namespace},
		Spec: batchv1.CronJobSpec{
			Schedule: o.Schedule,
			JobTemplate: batchv1.JobTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Name: o.Name},
				Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					Containers:    []corev1.Container{{Name: o.Name, Image: o.Image, Command: nilIfEmpty(o.Command)}},
					RestartPolicy: corev1.RestartPolicy(restart),
				}}},
			},
		},
	}
}

// ServiceOptions are create service TYPE's.
type ServiceOptions struct {
	Name, Namespace string
	Type            corev1.ServiceType
	// TCP are the ports, as "port" or "port:targetPort".
	TCP          []string
	ClusterIP    string
	ExternalName string
	NodePort     int
}

// Service is the Service of o, selecting the pods labelled app=NAME.
func Service(o ServiceOptions) (*corev1.Service, error) {
	switch {
	case o.ClusterIP == corev1.ClusterIPNone && o.Type != corev1.ServiceTypeClusterIP:
		return nil, errors.New("ClusterIP=None can only be used with ClusterIP service type")
	case o.ClusterIP != corev1.ClusterIPNone && len(o.TCP) == 0 && o.Type != corev1.ServiceTypeExternalName:
		return nil, errors.New("at least one tcp port specifier must be provided")
	case o.Type == corev1.ServiceTypeExternalName && len(validation.IsDNS1123Subdomain(o.ExternalName)) != 0:
		return nil, fmt.Errorf("invalid service external name %s", o.ExternalName)
	}
	ports := []corev1.ServicePort{}
	for _, s := range o.TCP {
		port, target, err := ParsePorts(s)
		if err != nil {
			return nil, err
		}
		ports = append(ports, corev1.ServicePort{Name: strings.ReplaceAll(s, ":", "-"), Port: port, TargetPort: target,
			Protocol: corev1.ProtocolTCP, NodePort: int32(o.NodePort)})
	}
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: o.Name, Labels: map[string]string{"app": o.Name}, Namespace: o.Namespace},
		Spec: corev1.ServiceSpec{Type: o.Type, Selector: map[string]string{"app": o.Name}, Ports: ports,
			ExternalName: o.ExternalName, ClusterIP: o.ClusterIP},
	}, nil
}

// ParsePorts reads "port[:targetPort]" as kubectl does; a target that is
// not a number is a port name.
func ParsePorts(s string) (int32, intstr.IntOrString, error) {
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
