package apply_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/konverge/konverge/apply"
	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/cluster/kube"
	"github.com/konverge/konverge/internal/realcluster"
	"github.com/konverge/konverge/mask"
	"github.com/konverge/konverge/normalize"
	"github.com/konverge/konverge/value"
)

const realPlanApp = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, labels: {app: web}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: IMAGE
        ports: [{containerPort: 80}]
        resources: {requests: {cpu: "0.5", memory: 1024Mi}}
---
apiVersion: v1
kind: Secret
metadata: {name: creds}
stringData: {password: PASSWORD}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {color: COLOR}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{port: PORT, targetPort: 80}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  serviceName: db
  replicas: 1
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers:
      - name: db
        image: IMAGE
        resources: {limits: {memory: 0.5Gi}}
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: backup}
spec:
  schedule: "0 3 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers:
          - name: backup
            image: IMAGE
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: PORT
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 70}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web}
spec:
  rules:
  - host: COLOR.example.com
    http:
      paths:
      - path: /
        pathType: Prefix
        backend: {service: {name: web, port: {number: 80}}}
`

// TestRealPlanPredictsServer: against kube-apiserver v1.37.1, a re-plan
// after an apply has no drift (although kubectl would say "configured" for
// the Secret written with stringData and the Deployment with non-canonical
// quantities), and the merged objects a plan predicts for changed objects
// are what the server stores once ApplyPlan has sent them, field by field
// (less what only the server and its controllers write).
func TestRealPlanPredictsServer(t *testing.T) {
	c, err := kube.FromKubeconfig(realcluster.Kubeconfig(t), "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ns := fmt.Sprintf("konverge-plan-%d", time.Now().UnixNano()%1e9)
	if _, err := c.Create(ctx, map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}); err != nil {
		t.Fatal(err)
	}
	defer c.Delete(context.Background(), gvkNamespace, "", ns)

	input := func(image, password, color, port string) string {
		return strings.NewReplacer("IMAGE", image, "PASSWORD", password, "COLOR", color, "PORT", port).Replace(realPlanApp)
	}
	opts := apply.Options{Namespace: ns}
	a := apply.New(c, opts)
	first := parse(t, input("nginx:1.26", "s3cr3t", "blue", "80"))
	if _, err := a.Apply(ctx, first); err != nil {
		t.Fatal(err)
	}
	p, err := a.Plan(ctx, first)
	if err != nil {
		t.Fatal(err)
	}
	if p.HasDrift() {
		t.Fatalf("re-plan:\n%s", changesLine(p))
	}
	// kubectl's verb: a patch is sent for these, which changes nothing.
	for _, c := range p.Changes[:2] {
		if c.Action != apply.Configured {
			t.Errorf("%s: want configured, kubectl's verb", c)
		}
	}

	p, err = a.Plan(ctx, parse(t, input("nginx:1.27", "n3w-s3cr3t", "green", "8080")))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(strings.SplitAfter(changesLine(p), "\n")[:4], ""), "deployment.apps/web configured drift=true metadata.annotations[kubectl.kubernetes.io/last-applied-configuration] spec.template.spec.containers[name=\"web\"].image\n"+
		"secret/creds configured drift=true data.password metadata.annotations[kubectl.kubernetes.io/last-applied-configuration]\n"+
		"configmap/settings configured drift=true data.color metadata.annotations[kubectl.kubernetes.io/last-applied-configuration]\n"+
		"service/web configured drift=true metadata.annotations[kubectl.kubernetes.io/last-applied-configuration] spec.ports[port=8080] spec.ports[port=80]\n"; got != want {
		t.Fatalf("plan of the change:\n%s\nwant:\n%s", got, want)
	}
	if n := len(p.Drifted()); n != len(p.Changes) {
		t.Fatalf("%d of %d changes drift:\n%s", n, len(p.Changes), changesLine(p))
	}
	if _, err := a.ApplyPlan(ctx, p); err != nil {
		t.Fatal(err)
	}
	for _, ch := range p.Changes {
		live, err := c.Get(ctx, ch.Ref.GVK, ch.Ref.Namespace, ch.Ref.Name)
		if err != nil {
			t.Fatal(err)
		}
		// Plans mask Secret values; the comparison needs the plaintext,
		// the message shows both sides masked.
		got, want := comparable(live), comparable(ch.Unmasked().Merged)
		if !value.Equal(got, want) {
			gb, _ := value.Encode(mask.Object(got))
			wb, _ := value.Encode(mask.Object(want))
			t.Errorf("%s: the server stored\n%s\nthe plan predicted\n%s", ch.Ref, gb, wb)
		}
	}
}

// comparable leaves out of obj what the server and its controllers write
// on their own: server metadata, status, a Deployment's revision.
func comparable(obj map[string]any) map[string]any {
	out, _ := normalize.Object(obj, normalize.Options{})
	ann := objrefAnnotations(out)
	if _, ok := ann["deployment.kubernetes.io/revision"]; ok {
		out = value.DeepCopyObject(out)
		delete(out["metadata"].(map[string]any)["annotations"].(map[string]any), "deployment.kubernetes.io/revision")
	}
	return out
}

func objrefAnnotations(obj map[string]any) map[string]any {
	md, _ := obj["metadata"].(map[string]any)
	a, _ := md["annotations"].(map[string]any)
	return a
}

var _ cluster.Interface = (*kube.Cluster)(nil)
