package local

import (
	"context"
	"testing"

	"github.com/konverge/konverge/defaults"
	"github.com/konverge/konverge/value"
)

// UpdateStatus of the kinds whose status it defaults alone stores what
// defaulting the whole object gives.
func TestUpdateStatusDefaultsLikeTheWholeObject(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t)
	cases := []struct{ create, status string }{
		{`
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec:
  containers: [{name: c, image: nginx, resources: {limits: {cpu: 500m}}}]
`, `
podIP: 10.244.0.9
hostIP: ""
nominatedNodeName: null
unknownField: 1
conditions: [{type: Ready, status: "True", lastProbeTime: null}]
containerStatuses:
- name: c
  image: nginx
  imageID: ""
  ready: true
  restartCount: 0
  state: {running: {startedAt: "2026-03-01T12:00:00Z"}}
  lastState: {}
  allocatedResources: {cpu: "0.5", memory: 1Gi}
  resources: {requests: {cpu: 1000m}}
`},
		{`
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: rs, namespace: default}
spec:
  selector: {matchLabels: {a: b}}
  template:
    metadata: {labels: {a: b}}
    spec: {containers: [{name: c, image: nginx}]}
`, `
replicas: 3
readyReplicas: 0
fullyLabeledReplicas: null
conditions: []
bogus: x
`},
		{`
apiVersion: apps/v1
kind: Deployment
metadata: {name: d, namespace: default, annotations: {x: "z"}}
spec:
  selector: {matchLabels: {a: b}}
  template:
    metadata: {labels: {a: b}}
    spec: {containers: [{name: c, image: nginx}]}
`, `
replicas: 2
collisionCount: null
conditions: [{type: Available, status: "True", reason: "", lastUpdateTime: "2026-03-01T12:00:00Z"}]
`},
	}
	for _, c := range cases {
		stored := mustCreate(t, s, c.create)
		upd := value.DeepCopyObject(stored)
		upd["status"] = obj(t, c.status)
		got, err := s.UpdateStatus(ctx, upd)
		if err != nil {
			t.Fatalf("UpdateStatus %s: %v", stored["kind"], err)
		}
		want := value.DeepCopyObject(stored)
		want["status"] = obj(t, c.status)
		if err := defaults.Apply(want); err != nil {
			t.Fatal(err)
		}
		if !value.Equal(got["status"], want["status"]) || !value.Equal(got["spec"], want["spec"]) {
			t.Errorf("%s: UpdateStatus stored\n%v\nwant (whole object defaulted)\n%v", stored["kind"], got, want)
		}
		if got["status"] == nil {
			t.Errorf("%s: no status stored", stored["kind"])
		}
	}
}
