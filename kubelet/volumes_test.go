package kubelet_test

import (
	"context"
	"testing"
	"time"

	"github.com/konverge/konverge/clock"
	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/kubelet"
	"github.com/konverge/konverge/sim"
)

const claimedPod = `  containers:
  - {name: c, image: nginx:1.14.2}
  volumes:
  - {name: d, persistentVolumeClaim: {claimName: data}}
`

// boundClaim is a claim the binder has bound to volume vol.
const boundClaim = `apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: default, annotations: {pv.kubernetes.io/bind-completed: "yes"}}
spec: {storageClassName: "", volumeName: vol, accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
`

const volume = `apiVersion: v1
kind: PersistentVolume
metadata: {name: vol}
spec: {capacity: {storage: 1Gi}, accessModes: [ReadWriteOnce], hostPath: {path: /vol}}
`

// TestClaimMadeByAController: a pod whose claim does not exist waits with
// VolumeBinding's message, and is placed as soon as another controller
// creates the claim (a write the kubelet learns of through SyncChanged),
// as kube-scheduler requeues it on the claim's creation.
func TestClaimMadeByAController(t *testing.T) {
	clk := clock.New(clock.Manual, clock.Epoch)
	st, err := local.Open(t.TempDir(), local.Options{Clock: clk, LockTimeout: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	mk := makeAt{at: clock.Epoch.Add(30 * time.Second), obj: boundClaim}
	e := &env{t: t, ctx: context.Background(), st: st, clk: clk, r: sim.New(st, clk, kubelet.New(nil), mk)}
	e.create(volume)
	e.create(podYAML("app", claimedPod))
	e.at(0)
	e.at(29 * time.Second)
	e.expect("app", map[string]any{
		"status.phase":      "Pending",
		"cond:PodScheduled": "False",
		"spec.nodeName":     nil,
	})
	if msg := get(e.pod("app"), "status.conditions.0.message"); msg != `0/1 nodes are available: persistentvolumeclaim "data" not found. not found` {
		t.Errorf("message %v", msg)
	}
	e.at(30 * time.Second)
	e.expect("app", map[string]any{
		"spec.nodeName":     kubelet.NodeName,
		"cond:PodScheduled": "True",
		"status.startTime":  "2026-01-01T00:00:30Z",
	})
}

// TestSkipVolumeBinding: the profile that replays the stand-in kubelet's
// recordings places a pod whatever its claims.
func TestSkipVolumeBinding(t *testing.T) {
	clk := clock.New(clock.Manual, clock.Epoch)
	st, err := local.Open(t.TempDir(), local.Options{Clock: clk, LockTimeout: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	p := kubelet.DefaultProfile()
	p.SkipVolumeBinding = true
	e := &env{t: t, ctx: context.Background(), st: st, clk: clk, r: sim.New(st, clk, kubelet.New(p))}
	e.create(podYAML("app", claimedPod))
	e.at(0)
	e.expect("app", map[string]any{"spec.nodeName": kubelet.NodeName, "cond:PodScheduled": "True"})
}
