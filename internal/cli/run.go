package cli

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
)

// imageReference is the grammar of an image reference (a name with an
// optional tag and digest), as kubectl run checks it.
var imageReference = regexp.MustCompile(`^((?:(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:(?:\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))+)?(?::[0-9]+)?/)?[a-z0-9]+(?:(?:(?:[._]|__|[-]*)[a-z0-9]+)+)?(?:(?:/[a-z0-9]+(?:(?:(?:[._]|__|[-]*)[a-z0-9]+)+)?)+)?)(?::([\w][\w.-]{0,127}))?(?:@([A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*[:][[:xdigit:]]{32,}))?$`)

// newRunCmd is kubectl run: a pod from flags, created or printed. The
// embedded cluster's containers run no processes, so there is nothing to
// attach to: -i, -t and --attach are refused.
func newRunCmd(g *Globals) *cobra.Command {
	f := &generatorFlags{g: g}
	var image, port, labels, restart, pullPolicy, overrides string
	var envs, annotations []string
	var command, expose, privileged, stdin, tty, attach, rm bool
	cmd := &cobra.Command{
		Use:   `run NAME --image=image [--env="key=value"] [--port=port] [--dry-run=server|client] [--overrides=inline-json] [--command] -- [COMMAND] [args...]`,
		Short: "Start a pod that runs an image",
		Long:  "Create a pod with one container that runs the image given, named after the pod.",
		Example: `  # A pod web running nginx
  konverge run web --image=nginx

  # The same, declaring the container port 8080
  konverge run web --image=nginx --port=8080

  # A one-off pod whose container runs a command and is not restarted
  konverge run once --image=busybox --restart=Never -- sleep 3600

  # Print the pod it would create
  konverge run nginx --image=nginx --dry-run=client -o yaml`,
		RunE: func(cmd *cobra.Command, args []string) error {
			g.complete(cmd)
			ctx := cmd.Context()
			ann := map[string]string{}
			for _, a := range annotations {
				k, v, ok := strings.Cut(a, "=")
				if !ok || k == "" {
					return failOne(g.ErrOut, fmt.Errorf("invalid annotations format: %s", a))
				}
				ann[k] = v
			}
			lbls, err := parseRunLabels(labels)
			if err != nil {
				return failOne(g.ErrOut, err)
			}
			env, err := parseRunEnvs(envs)
			if err != nil {
				return failOne(g.ErrOut, err)
			}
			rp, err := restartPolicy(restart)
			if err != nil {
				return failOne(g.ErrOut, err)
			}
			pp := corev1.PullPolicy(pullPolicy)
			switch pp {
			case corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever, "":
			default:
				return failOne(g.ErrOut, fmt.Errorf("invalid image pull policy: %s, valid values are: Always, IfNotPresent, Never", pullPolicy))
			}
			if _, _, err := f.check(); err != nil {
				return failOne(g.ErrOut, err)
			}
			switch {
			case len(args) == 0 || cmd.ArgsLenAtDash() == 0:
				return failOne(g.ErrOut, errors.New("NAME is required for run"))
			case image == "":
				return failOne(g.ErrOut, errors.New("--image is required"))
			case !imageReference.MatchString(image):
				return failOne(g.ErrOut, fmt.Errorf("invalid image name %q: invalid reference format", image))
			case tty && !stdin:
				return failOne(g.ErrOut, errors.New("-i/--stdin is required for containers with -t/--tty=true"))
			case expose && port == "":
				return failOne(g.ErrOut, errors.New("--port must be set when exposing a service"))
			}
			portNo := 0
			if port != "" {
				if portNo, err = strconv.Atoi(port); err != nil {
					return failOne(g.ErrOut, errors.New("--port must be a number"))
				}
			}
			if rm && !attach && !stdin {
				return failOne(g.ErrOut, errors.New("--rm should only be used for attached containers"))
			}
			if attach || stdin || tty {
				return failOne(g.ErrOut, errors.New("attaching to a container is not supported: the containers of the embedded cluster run no processes (run without -i, -t, --attach and --rm)"))
			}
			name := args[0]
			podLabels := lbls
			if len(podLabels) == 0 {
				podLabels = map[string]string{"run": name}
			}
			c := corev1.Container{Name: name, Image: image, Env: env, ImagePullPolicy: pp}
			if privileged {
				c.SecurityContext = &corev1.SecurityContext{Privileged: &privileged}
			}
			if rest := args[1:]; len(rest) > 0 {
				if command {
					c.Command = rest
				} else {
					c.Args = rest
				}
			}
			if port != "" {
				c.Ports = []corev1.ContainerPort{{ContainerPort: int32(portNo)}}
			}
			var annMap map[string]string
			if len(ann) > 0 {
				annMap = ann
			}
			pod := &corev1.Pod{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.namespace(), Labels: podLabels, Annotations: annMap},
				Spec: corev1.PodSpec{Containers: []corev1.Container{c}, DNSPolicy: corev1.DNSClusterFirst,
					RestartPolicy: rp},
			}
			if overrides != "" {
				if err := f.createWithOverrides(ctx, pod, overrides); err != nil {
					return err
				}
			} else if err := f.create(ctx, pod, nil); err != nil {
				return err
			}
			if expose {
				svc := &corev1.Service{
					TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
					ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.namespace(), Labels: lbls},
					Spec: corev1.ServiceSpec{Selector: podLabels, Ports: []corev1.ServicePort{{
						Port: int32(portNo), Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt(portNo),
					}}},
				}
				return f.create(ctx, svc, nil)
			}
			return nil
		},
	}
	f.addFlags(cmd, managerRun)
	fs := cmd.Flags()
	fs.StringArrayVar(&annotations, "annotations", nil, "Annotations to apply to the pod.")
	fs.StringVar(&image, "image", "", "The image for the container to run.")
	_ = cmd.MarkFlagRequired("image")
	fs.StringVar(&pullPolicy, "image-pull-policy", "", "When to pull the image (Always, IfNotPresent, Never); empty leaves it to the server's default.")
	fs.StringArrayVar(&envs, "env", nil, "A KEY=VALUE for the container's environment (repeatable).")
	fs.StringVar(&port, "port", "", "The container port to declare.")
	fs.StringVarP(&labels, "labels", "l", "", "Labels of the pod (key=value,...), in place of the default run=NAME.")
	fs.StringVar(&restart, "restart", "Always", "The pod's restartPolicy: Always, OnFailure or Never.")
	fs.BoolVar(&command, "command", false, "Use the arguments after -- as the container's command instead of its args.")
	fs.BoolVar(&expose, "expose", false, "Also create a ClusterIP service for the pod (needs --port).")
	fs.BoolVar(&privileged, "privileged", false, "If true, run the container in privileged mode.")
	fs.StringVar(&overrides, "overrides", "", "JSON to merge over the generated object before it is sent; it must carry an apiVersion.")
	fs.BoolVarP(&stdin, "stdin", "i", false, "Keep the container's standard input open.")
	fs.BoolVarP(&tty, "tty", "t", false, "Give the container a terminal.")
	fs.BoolVar(&attach, "attach", false, "If true, wait for the Pod to start running, and then attach to the Pod as if 'kubectl attach ...' were called.")
	fs.BoolVar(&rm, "rm", false, "Delete the pod when it ends; only while attached (--attach or -i).")
	return cmd
}

func restartPolicy(s string) (corev1.RestartPolicy, error) {
	if s == "" {
		return corev1.RestartPolicyAlways, nil
	}
	switch p := corev1.RestartPolicy(s); p {
	case corev1.RestartPolicyAlways, corev1.RestartPolicyNever, corev1.RestartPolicyOnFailure:
		return p, nil
	}
	return "", fmt.Errorf("invalid restart policy: %s, valid values are: Always, OnFailure, Never", s)
}

// parseRunLabels reads run's and expose's "k=v,k2=v2".
func parseRunLabels(s string) (map[string]string, error) {
	if s == "" {
		return nil, nil
	}
	out := map[string]string{}
	for _, spec := range strings.Split(s, ",") {
		parts := strings.Split(spec, "=")
		if len(parts) != 2 {
			return nil, fmt.Errorf("unexpected label spec: %s", spec)
		}
		if parts[0] == "" {
			return nil, errors.New("unexpected empty label key")
		}
		out[parts[0]] = parts[1]
	}
	return out, nil
}

func parseRunEnvs(envs []string) ([]corev1.EnvVar, error) {
	out := make([]corev1.EnvVar, 0, len(envs))
	for _, e := range envs {
		name, v, ok := strings.Cut(e, "=")
		if !ok || name == "" || len(validation.IsEnvVarName(name)) != 0 {
			return nil, fmt.Errorf("invalid env: %v", e)
		}
		out = append(out, corev1.EnvVar{Name: name, Value: v})
	}
	return out, nil
}
