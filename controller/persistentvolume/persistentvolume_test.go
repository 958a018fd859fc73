package persistentvolume_test

import (
	"sort"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/konverge/konverge/controller"
	"github.com/konverge/konverge/controller/internal/ctrltest"
	"github.com/konverge/konverge/controller/persistentvolume"
	"github.com/konverge/konverge/controller/volumeprotection"
	"github.com/konverge/konverge/schema"
)

var (
	pvGVK    = schema.GVK{Version: "v1", Kind: "PersistentVolume"}
	pvcGVK   = schema.GVK{Version: "v1", Kind: "PersistentVolumeClaim"}
	eventGVK = schema.GVK{Version: "v1", Kind: "Event"}
)

type env struct {
	*ctrltest.Env
	t *testing.T
}

func newEnv(t *testing.T) *env { return &env{Env: ctrltest.New(t), t: t} }

// create creates the YAML documents in order.
func (e *env) create(docs string) {
	e.t.Helper()
	for _, d := range strings.Split(docs, "\n---\n") {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(d), &obj); err != nil {
			e.t.Fatal(err)
		}
		e.Create(obj)
	}
}

// settle syncs the binder and the protection controller until neither
// writes.
func (e *env) settle() {
	e.t.Helper()
	e.Settle([]controller.Controller{persistentvolume.Controller{}, volumeprotection.Controller{}})
}

func (e *env) get(gvk schema.GVK, ns, name string) map[string]any {
	e.t.Helper()
	return e.Get(gvk, ns, name)
}

func str(o map[string]any, path ...string) string {
	cur := any(o)
	for _, p := range path {
		m, _ := cur.(map[string]any)
		cur = m[p]
	}
	s, _ := cur.(string)
	return s
}

// events lists "Type Reason kind/name: message xCount" of the binder.
func (e *env) events() []string {
	e.t.Helper()
	var out []string
	for _, ev := range e.List(eventGVK, "") {
		if str(ev, "source", "component") != persistentvolume.Component {
			continue
		}
		n, _ := ev["count"].(int64)
		out = append(out, str(ev, "type")+" "+str(ev, "reason")+" "+strings.ToLower(str(ev, "involvedObject", "kind"))+"/"+str(ev, "involvedObject", "name")+": "+str(ev, "message")+" x"+itoa(n))
	}
	sort.Strings(out)
	return out
}

func itoa(n int64) string {
	b, _ := yaml.Marshal(n)
	return strings.TrimSpace(string(b))
}

const volumes = `apiVersion: v1
kind: PersistentVolume
metadata: {name: small, labels: {tier: a}}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Delete
  hostPath: {path: /a}
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: big}
spec:
  capacity: {storage: 5Gi}
  accessModes: [ReadWriteOnce, ReadWriteMany]
  hostPath: {path: /b}
---
apiVersion: v1
kind: Namespace
metadata: {name: t}`

// A claim binds to the smallest volume that fits, as
// kube-controller-manager binds it; a claim nothing fits stays Pending
// with FailedBinding; deleting the claim releases the volume and its
// Delete policy fails on a hostPath outside /tmp (the real outcome).
func TestBindSmallestAndRelease(t *testing.T) {
	e := newEnv(t)
	e.create(volumes + `
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: c1, namespace: t}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: ""
  resources: {requests: {storage: 500Mi}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: c2, namespace: t}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 10Gi}}`)
	e.settle()
	pv := e.get(pvGVK, "", "small")
	c1 := e.get(pvcGVK, "t", "c1")
	if str(pv, "status", "phase") != "Bound" || str(pv, "spec", "claimRef", "name") != "c1" || str(pv, "spec", "claimRef", "uid") != str(c1, "metadata", "uid") ||
		str(pv, "metadata", "annotations", persistentvolume.AnnBoundByController) != "yes" {
		t.Fatalf("volume not bound as the real binder binds it: %v", pv)
	}
	if str(c1, "status", "phase") != "Bound" || str(c1, "spec", "volumeName") != "small" || str(c1, "status", "capacity", "storage") != "1Gi" ||
		str(c1, "metadata", "annotations", persistentvolume.AnnBindCompleted) != "yes" || str(c1, "metadata", "annotations", persistentvolume.AnnBoundByController) != "yes" {
		t.Fatalf("claim not bound as the real binder binds it: %v", c1)
	}
	// The pvc-protection controller's Unused condition of a Bound claim.
	conds, _ := c1["status"].(map[string]any)["conditions"].([]any)
	if len(conds) != 1 || str(conds[0].(map[string]any), "reason") != "NoPodsUsingPVC" || str(conds[0].(map[string]any), "status") != "True" {
		t.Fatalf("c1 conditions: %v", conds)
	}
	if got := str(e.get(pvGVK, "", "big"), "status", "phase"); got != "Available" {
		t.Fatalf("big: %s, want Available", got)
	}
	if got := str(e.get(pvcGVK, "t", "c2"), "status", "phase"); got != "Pending" {
		t.Fatalf("c2: %s, want Pending", got)
	}
	want := []string{"Normal FailedBinding persistentvolumeclaim/c2: no persistent volumes available for this claim and no storage class is set x1"}
	if got := e.events(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// A resync period later the Event comes again.
	e.Clock.Set(e.Clock.Now().Add(persistentvolume.ResyncPeriod))
	e.settle()
	if got := e.events(); !strings.HasSuffix(got[0], " x2") {
		t.Fatalf("no second FailedBinding after a resync: %v", got)
	}

	if err := e.Store.Delete(e.Ctx, pvcGVK, "t", "c1"); err != nil {
		t.Fatal(err)
	}
	e.settle()
	pv = e.get(pvGVK, "", "small")
	if str(pv, "status", "phase") != "Failed" || str(pv, "status", "message") != "host_path deleter only supports /tmp/.+ but received provided /a" {
		t.Fatalf("released volume: %v", pv["status"])
	}
	if got := e.events(); len(got) != 2 || got[1] != "Warning VolumeFailedDelete persistentvolume/small: host_path deleter only supports /tmp/.+ but received provided /a x1" {
		t.Fatalf("events: %v", got)
	}
}

// Pre-binding both ways, a selector, an unknown provisioner, a
// WaitForFirstConsumer class and a claim naming a volume another claim
// holds: the outcomes of kube-controller-manager v1.37.1.
func TestPrebindingAndClasses(t *testing.T) {
	e := newEnv(t)
	e.create(`apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: ext}
provisioner: example.com/nobody
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: wffc}
provisioner: example.com/nobody
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pre}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  claimRef: {namespace: t, name: byref}
  hostPath: {path: /p}
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: named}
spec:
  capacity: {storage: 2Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: ext
  hostPath: {path: /n}
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: sel, labels: {disk: ssd}}
spec:
  capacity: {storage: 3Gi}
  accessModes: [ReadWriteMany]
  storageClassName: ext
  hostPath: {path: /s}
---
apiVersion: v1
kind: Namespace
metadata: {name: t}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: byref, namespace: t}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: ""
  resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: byname, namespace: t}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: ext
  volumeName: named
  resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: bysel, namespace: t}
spec:
  accessModes: [ReadWriteMany]
  storageClassName: ext
  selector: {matchLabels: {disk: ssd}}
  resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: prov, namespace: t}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: ext
  resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: wait, namespace: t}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: wffc
  resources: {requests: {storage: 1Gi}}`)
	e.settle()
	e.create(`apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: toobig, namespace: t}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: ext
  volumeName: named
  resources: {requests: {storage: 10Gi}}`)
	e.settle()
	for _, c := range []struct{ claim, phase, volume, byController string }{
		{"byref", "Bound", "pre", "yes"},
		{"byname", "Bound", "named", ""},
		{"bysel", "Bound", "sel", "yes"},
		{"prov", "Pending", "", ""},
		{"wait", "Pending", "", ""},
		{"toobig", "Pending", "named", ""},
	} {
		o := e.get(pvcGVK, "t", c.claim)
		if str(o, "status", "phase") != c.phase || str(o, "spec", "volumeName") != c.volume || str(o, "metadata", "annotations", persistentvolume.AnnBoundByController) != c.byController {
			t.Errorf("%s: phase %s volume %q bound-by-controller %q, want %s %q %q", c.claim, str(o, "status", "phase"), str(o, "spec", "volumeName"),
				str(o, "metadata", "annotations", persistentvolume.AnnBoundByController), c.phase, c.volume, c.byController)
		}
	}
	if a := str(e.get(pvGVK, "", "pre"), "metadata", "annotations", persistentvolume.AnnBoundByController); a != "" {
		t.Errorf("a volume pre-bound by its user got bound-by-controller %q", a)
	}
	if p := str(e.get(pvcGVK, "t", "prov"), "metadata", "annotations", persistentvolume.AnnStorageProvisioner); p != "example.com/nobody" {
		t.Errorf("provisioner annotation %q", p)
	}
	want := []string{
		"Normal ExternalProvisioning persistentvolumeclaim/prov: Waiting for a volume to be created either by the external provisioner 'example.com/nobody' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered. x2",
		"Normal WaitForFirstConsumer persistentvolumeclaim/wait: waiting for first consumer to be created before binding x1",
		"Warning FailedBinding persistentvolumeclaim/toobig: volume \"named\" already bound to a different claim. x1",
	}
	if got := e.events(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Retain: the volume is Released and stays.
	if err := e.Store.Delete(e.Ctx, pvcGVK, "t", "byref"); err != nil {
		t.Fatal(err)
	}
	e.settle()
	if ph := str(e.get(pvGVK, "", "pre"), "status", "phase"); ph != "Released" {
		t.Fatalf("pre: %s, want Released", ph)
	}
}

// A claim created before its WaitForFirstConsumer class in one go binds
// at once, as the real binder does (it syncs the claim before the class
// exists); a claim created after the class waits.
func TestClassCreatedAfterClaim(t *testing.T) {
	e := newEnv(t)
	e.create(`apiVersion: v1
kind: PersistentVolume
metadata: {name: data}
spec:
  capacity: {storage: 5Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: fast
  hostPath: {path: /data}
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: more}
spec:
  capacity: {storage: 5Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: fast
  hostPath: {path: /more}
---
apiVersion: v1
kind: Namespace
metadata: {name: t}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: early, namespace: t}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: fast
  resources: {requests: {storage: 1Gi}}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: fast}
provisioner: example.com/fast
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: late, namespace: t}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: fast
  resources: {requests: {storage: 1Gi}}`)
	e.settle()
	if ph := str(e.get(pvcGVK, "t", "early"), "status", "phase"); ph != "Bound" {
		t.Errorf("early: %s, want Bound", ph)
	}
	if ph := str(e.get(pvcGVK, "t", "late"), "status", "phase"); ph != "Pending" {
		t.Errorf("late: %s, want Pending", ph)
	}
	e.Clock.Set(e.Clock.Now().Add(time.Minute))
	e.settle()
	if ph := str(e.get(pvcGVK, "t", "late"), "status", "phase"); ph != "Pending" {
		t.Errorf("late after a minute: %s, want Pending", ph)
	}
}

// A claim that stays Pending says so at every resync, through the spam
// filter of client-go's recorder: every occurrence counts, but after 25
// writes only one per 5 minutes goes through (a real cluster's Event:
// count 26 written 6m14s after the first, then 42 at 10m14s and 62 at
// 15m15s).
func TestPendingEventsThroughSpamFilter(t *testing.T) {
	e := newEnv(t)
	e.create(`apiVersion: v1
kind: Namespace
metadata: {name: t}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: lonely, namespace: t}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}`)
	start := e.Clock.Now()
	count := func() string {
		got := e.events()
		if len(got) != 1 {
			t.Fatalf("events: %v", got)
		}
		return got[0][strings.LastIndex(got[0], " x")+2:]
	}
	want := map[time.Duration]string{
		6 * time.Minute: "25", 6*time.Minute + 15*time.Second: "26", 10 * time.Minute: "26",
		10*time.Minute + 15*time.Second: "42", 15 * time.Minute: "42", 15*time.Minute + 15*time.Second: "62",
	}
	for at := time.Duration(0); at <= 16*time.Minute; at += persistentvolume.ResyncPeriod {
		e.Clock.Set(start.Add(at))
		e.settle()
		if w, ok := want[at]; ok && count() != w {
			t.Fatalf("after %s: x%s, want x%s", at, count(), w)
		}
	}
	// A long advance at once writes the occurrences of the whole time.
	e.Clock.Set(start.Add(5 * time.Hour))
	e.settle()
	if got := count(); got != "1201" {
		t.Fatalf("after 5h: x%s, want x1201", got)
	}
}
