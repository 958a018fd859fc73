package generate

import (
	"encoding/json"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// generatorCase is one call of a generator: the object it must build (as
// JSON) or the error it must return.
type generatorCase struct {
	name  string
	build func() (runtime.Object, error)
	want  string // the object's JSON
	err   string // a part of the error's message
}

func runGeneratorCases(t *testing.T, cases []generatorCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			obj, err := c.build()
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error = %v, want one containing %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(obj)
			if err != nil {
				t.Fatal(err)
			}
			var gotV, wantV any
			if err := json.Unmarshal(got, &gotV); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(c.want), &wantV); err != nil {
				t.Fatalf("the case's JSON: %v", err)
			}
			g, _ := json.Marshal(gotV)
			w, _ := json.Marshal(wantV)
			if string(g) != string(w) {
				t.Errorf("got  %s\nwant %s", g, w)
			}
		})
	}
}

func obj[T runtime.Object](o T) func() (runtime.Object, error) {
	return func() (runtime.Object, error) { return o, nil }
}

func objErr[T runtime.Object](f func() (T, error)) func() (runtime.Object, error) {
	return func() (runtime.Object, error) {
		o, err := f()
		if err != nil {
			return nil, err
		}
		return o, nil
	}
}

func TestWorkloads(t *testing.T) {
	cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "nightly", UID: types.UID("u1")}}
	cj.Spec.JobTemplate.Annotations = map[string]string{"team": "a"}
	cj.Spec.JobTemplate.Labels = map[string]string{"app": "n"}
	cj.Spec.JobTemplate.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
	runGeneratorCases(t, []generatorCase{
		{name: "deployment", build: objErr(func() (any2, error) {
			return Deployment(DeploymentOptions{Name: "web", Namespace: "ns", Images: []string{"registry.example.com/team/nginx:1.27@sha256:ab"}, Port: 8080, Replicas: 3})
		}), want: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"ns","labels":{"app":"web"}},
			"spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},
			"spec":{"containers":[{"name":"nginx","image":"registry.example.com/team/nginx:1.27@sha256:ab","ports":[{"containerPort":8080}],"resources":{}}]}},"strategy":{}},"status":{}}`},
		{name: "deployment command without port", build: objErr(func() (any2, error) {
			return Deployment(DeploymentOptions{Name: "w", Images: []string{"busybox"}, Command: []string{"sleep", "1"}, Port: -1, Replicas: 1})
		}), want: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"w","labels":{"app":"w"}},
			"spec":{"replicas":1,"selector":{"matchLabels":{"app":"w"}},"template":{"metadata":{"labels":{"app":"w"}},
			"spec":{"containers":[{"name":"busybox","image":"busybox","command":["sleep","1"],"resources":{}}]}},"strategy":{}},"status":{}}`},
		{name: "deployment images and command", build: objErr(func() (any2, error) {
			return Deployment(DeploymentOptions{Name: "w", Images: []string{"a", "b"}, Command: []string{"x"}})
		}), err: "cannot specify multiple --image options and command"},
		{name: "job", build: objErr(func() (any2, error) { return Job(JobOptions{Name: "once", Image: "busybox"}) }),
			want: `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"once"},
			"spec":{"template":{"metadata":{},"spec":{"containers":[{"name":"once","image":"busybox","resources":{}}],"restartPolicy":"Never"}}},"status":{}}`},
		{name: "job neither image nor from", build: objErr(func() (any2, error) { return Job(JobOptions{Name: "j"}) }),
			err: "either --image or --from must be specified"},
		{name: "job from and command", build: objErr(func() (any2, error) {
			return Job(JobOptions{Name: "j", From: "cronjob/c", Command: []string{"x"}})
		}), err: "cannot specify --from and command"},
		{name: "job from cron job", build: obj(JobFromCronJob("manual-1", "ns", cj)),
			want: `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"manual-1","namespace":"ns",
			"labels":{"app":"n"},"annotations":{"cronjob.kubernetes.io/instantiate":"manual","team":"a"},
			"ownerReferences":[{"apiVersion":"batch/v1","kind":"CronJob","name":"nightly","uid":"u1","controller":true}]},
			"spec":{"template":{"metadata":{},"spec":{"containers":null,"restartPolicy":"OnFailure"}}},"status":{}}`},
		{name: "cronjob", build: obj(CronJob(CronJobOptions{Name: "tick", Image: "busybox", Schedule: "*/5 * * * *", Command: []string{"date"}})),
			want: `{"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"tick"},
			"spec":{"schedule":"*/5 * * * *","jobTemplate":{"metadata":{"name":"tick"},"spec":{"template":{"metadata":{},
			"spec":{"containers":[{"name":"tick","image":"busybox","command":["date"],"resources":{}}],"restartPolicy":"OnFailure"}}}}},"status":{}}`},
		{name: "service nodeport", build: objErr(func() (any2, error) {
			return Service(ServiceOptions{Name: "web", Type: corev1.ServiceTypeNodePort, TCP: []string{"80:http", "443"}, NodePort: 30080})
		}), want: `{"apiVersion":"v1","kind":"Service","metadata":{"name":"web","labels":{"app":"web"}},
			"spec":{"ports":[{"name":"80-http","protocol":"TCP","port":80,"targetPort":"http","nodePort":30080},{"name":"443","protocol":"TCP","port":443,"targetPort":443,"nodePort":30080}],
			"selector":{"app":"web"},"type":"NodePort"},"status":{"loadBalancer":{}}}`},
		{name: "service headless", build: objErr(func() (any2, error) {
			return Service(ServiceOptions{Name: "db", Type: corev1.ServiceTypeClusterIP, ClusterIP: "None"})
		}), want: `{"apiVersion":"v1","kind":"Service","metadata":{"name":"db","labels":{"app":"db"}},
			"spec":{"selector":{"app":"db"},"clusterIP":"None","type":"ClusterIP"},"status":{"loadBalancer":{}}}`},
		{name: "service None not ClusterIP", build: objErr(func() (any2, error) {
			return Service(ServiceOptions{Name: "s", Type: corev1.ServiceTypeNodePort, ClusterIP: "None"})
		}), err: "ClusterIP=None can only be used with ClusterIP service type"},
		{name: "service without ports", build: objErr(func() (any2, error) {
			return Service(ServiceOptions{Name: "s", Type: corev1.ServiceTypeLoadBalancer})
		}), err: "at least one tcp port specifier must be provided"},
		{name: "service bad external name", build: objErr(func() (any2, error) {
			return Service(ServiceOptions{Name: "s", Type: corev1.ServiceTypeExternalName, ExternalName: "Not_A_Name"})
		}), err: "invalid service external name Not_A_Name"},
		{name: "service bad target port", build: objErr(func() (any2, error) {
			return Service(ServiceOptions{Name: "s", Type: corev1.ServiceTypeClusterIP, TCP: []string{"80:70000"}})
		}), err: "must be between 1 and 65535"},
	})
}

// any2 is the object type the generators' closures return.
type any2 = runtime.Object

func TestContainerName(t *testing.T) {
	for image, want := range map[string]string{
		"nginx":                         "nginx",
		"nginx:1.27":                    "nginx",
		"registry.example.com:5000/a/b": "b",
		"b@sha256:00":                   "b",
	} {
		if got := containerName(image); got != want {
			t.Errorf("containerName(%q) = %q, want %q", image, got, want)
		}
	}
	// "_" and "." make a random suffix, so that two such images differ.
	got := containerName("my_app.v2")
	if !strings.HasPrefix(got, "my-app-v2-") || len(got) != len("my-app-v2-")+5 {
		t.Errorf("containerName(my_app.v2) = %q, want my-app-v2- and 5 characters", got)
	}
}
