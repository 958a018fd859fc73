package scheduler

import (
	"strings"
	"testing"
)

// volumeCluster is three nodes a, b, c and the storage objects given.
func volumeCluster(t *testing.T, objs ...string) *Cluster {
	t.Helper()
	c := New([]map[string]any{nodeObj(t, "a", ""), nodeObj(t, "b", ""), nodeObj(t, "c", "")})
	claims, vols, classes := map[string]map[string]any{}, map[string]map[string]any{}, map[string]map[string]any{}
	var all []map[string]any
	for _, s := range objs {
		o := obj(t, s)
		name := strAt(o, "metadata", "name")
		switch str(o, "kind") {
		case "PersistentVolumeClaim":
			claims[strAt(o, "metadata", "namespace")+"/"+name] = o
		case "PersistentVolume":
			vols[name] = o
			all = append(all, o)
		case "StorageClass":
			classes[name] = o
		default:
			t.Fatalf("kind of %s", s)
		}
	}
	c.SetVolumes(Volumes{
		Claim:   func(ns, name string) map[string]any { return claims[ns+"/"+name] },
		Volume:  func(name string) map[string]any { return vols[name] },
		Class:   func(name string) map[string]any { return classes[name] },
		Volumes: func() []map[string]any { return all },
	})
	return c
}

const (
	volPinnedB = `kind: PersistentVolume
metadata: {name: vb}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: local
  nodeAffinity: {required: {nodeSelectorTerms: [{matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [b]}]}]}}
status: {phase: Available}`
	classLocal = `kind: StorageClass
metadata: {name: local}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer`
	claimLocal = `kind: PersistentVolumeClaim
metadata: {name: data, namespace: d, uid: u1}
spec: {storageClassName: local, accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}`
	podData = `metadata: {name: p, namespace: d, uid: pu}
spec:
  containers: [{name: c}]
  volumes: [{name: v, persistentVolumeClaim: {claimName: data}}]`
)

func boundClaim(volume string) string {
	return `kind: PersistentVolumeClaim
metadata: {name: data, namespace: d, annotations: {pv.kubernetes.io/bind-completed: "yes"}}
spec: {storageClassName: "", volumeName: ` + volume + `}
status: {phase: Bound}`
}

// TestVolumeBinding checks VolumeBinding's decisions and messages, as
// kube-scheduler v1.37 words them (see the sched-pv* and sched-pvc*
// scenarios of internal/workloadtest, recorded from it).
func TestVolumeBinding(t *testing.T) {
	cases := []struct {
		name     string
		objs     []string
		pod      string
		node     string
		msg      string
		bindings []VolumeBinding
	}{{
		name: "missing claim",
		pod:  podData,
		msg:  `0/3 nodes are available: persistentvolumeclaim "data" not found. not found`,
	}, {
		name: "claim being deleted",
		objs: []string{`kind: PersistentVolumeClaim
metadata: {name: data, namespace: d, deletionTimestamp: "2026-01-01T00:00:00Z"}`},
		pod: podData,
		msg: `0/3 nodes are available: persistentvolumeclaim "data" is being deleted. not found`,
	}, {
		name: "claim lost",
		objs: []string{`kind: PersistentVolumeClaim
metadata: {name: data, namespace: d}
spec: {volumeName: gone}
status: {phase: Lost}`},
		pod: podData,
		msg: `0/3 nodes are available: persistentvolumeclaim "data" bound to non-existent persistentvolume "gone". not found`,
	}, {
		name: "ephemeral claim not made yet",
		pod: `metadata: {name: p, namespace: d}
spec:
  containers: [{name: c}]
  volumes: [{name: scratch, ephemeral: {volumeClaimTemplate: {spec: {}}}}]`,
		msg: `0/3 nodes are available: waiting for ephemeral volume controller to create the persistentvolumeclaim "p-scratch". not found`,
	}, {
		name: "bound volume pinned to b",
		objs: []string{boundClaim("vb"), volPinnedB},
		pod:  podData,
		node: "b",
	}, {
		name: "bound volume pinned nowhere",
		objs: []string{boundClaim("vz"), strings.ReplaceAll(strings.ReplaceAll(volPinnedB, "[b]", "[z]"), "name: vb", "name: vz")},
		pod:  podData,
		msg:  "0/3 nodes are available: 3 node(s) didn't match PersistentVolume's node affinity. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
	}, {
		name: "bound volume gone",
		objs: []string{boundClaim("vz")},
		pod:  podData,
		msg:  "0/3 nodes are available: 3 node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s). preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
	}, {
		name: "wait for first consumer, no volume, no provisioner",
		objs: []string{classLocal, claimLocal},
		pod:  podData,
		msg:  "0/3 nodes are available: 3 node(s) didn't find available persistent volumes to bind. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
	}, {
		name:     "wait for first consumer, a local volume on b",
		objs:     []string{classLocal, claimLocal, volPinnedB},
		pod:      podData,
		node:     "b",
		bindings: []VolumeBinding{{Namespace: "d", Claim: "data", Volume: "vb"}},
	}, {
		name: "wait for first consumer, the volume too small",
		objs: []string{classLocal, strings.ReplaceAll(claimLocal, "storage: 1Gi", "storage: 2Gi"), volPinnedB},
		pod:  podData,
		msg:  "0/3 nodes are available: 3 node(s) didn't find available persistent volumes to bind. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
	}, {
		name:     "wait for first consumer, a provisioner",
		objs:     []string{strings.ReplaceAll(classLocal, "kubernetes.io/no-provisioner", "example.com/csi"), claimLocal},
		pod:      podData,
		node:     "a",
		bindings: []VolumeBinding{{Namespace: "d", Claim: "data"}},
	}, {
		name: "to be provisioned on b",
		objs: []string{strings.ReplaceAll(classLocal, "kubernetes.io/no-provisioner", "example.com/csi"),
			strings.ReplaceAll(claimLocal, "uid: u1}", "uid: u1, annotations: {volume.kubernetes.io/selected-node: b}}")},
		pod:      podData,
		node:     "b",
		bindings: []VolumeBinding{{Namespace: "d", Claim: "data"}},
	}, {
		name: "no claims",
		pod:  `metadata: {name: p, namespace: d}` + "\nspec: {containers: [{name: c}]}",
		node: "a",
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := volumeCluster(t, tc.objs...)
			d := c.Schedule(obj(t, tc.pod))
			if d.Node != tc.node || d.Message != tc.msg {
				t.Fatalf("got node %q message %q\nwant node %q message %q", d.Node, d.Message, tc.node, tc.msg)
			}
			if len(d.VolumeBindings) != len(tc.bindings) {
				t.Fatalf("bindings %v, want %v", d.VolumeBindings, tc.bindings)
			}
			for i := range tc.bindings {
				if d.VolumeBindings[i] != tc.bindings[i] {
					t.Fatalf("bindings %v, want %v", d.VolumeBindings, tc.bindings)
				}
			}
		})
	}
}

// TestVolumeBindingWithoutVolumes: a cluster not given its storage
// objects places a pod without looking at its claims.
func TestVolumeBindingWithoutVolumes(t *testing.T) {
	c := New([]map[string]any{nodeObj(t, "a", "")})
	if d := c.Schedule(obj(t, podData)); d.Node != "a" {
		t.Fatalf("got %+v", d)
	}
}
