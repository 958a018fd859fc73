package replicaset

import (
	"reflect"
	"sync"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/controller/internal/kobj"
)

// podMemo is what a sync reads of one pod object: a function of the
// object alone, so that it is read once for as long as the object lives
// (the runner of package sim hands the same, unchanged objects from one
// sync to the next).
type podMemo struct {
	// obj is the object: it stays alive while its memo is kept, so that
	// its address (the key of the memo) names no other object.
	obj       map[string]any
	namespace string
	name      string
	ctrlUID   string
	// deleting: it has a deletionTimestamp; done: its phase is Succeeded
	// or Failed.
	deleting, done, ready bool
	labels                map[string]string
	rawLabels             map[string]any
	// forRS names the ReplicaSet (uid and generation: its selector and
	// template) that matches and fully were found for.
	forRS          string
	matches, fully bool
}

// of reports whether the ReplicaSet rsKey's selector matches the pod and
// whether the pod has every label of its template (rsKey names a
// ReplicaSet's uid and generation).
func (m *podMemo) of(rsKey string, sel interface{ Matches(map[string]string) bool }, tmplLabels map[string]string) (matches, fully bool) {
	if m.forRS != rsKey || rsKey == "" {
		m.forRS = rsKey
		m.matches = sel.Matches(m.labels)
		m.fully = hasAllLabels(m.rawLabels, tmplLabels)
	}
	return m.matches, m.fully
}

func newPodMemo(p map[string]any) *podMemo {
	md, _ := p["metadata"].(map[string]any)
	st, _ := p["status"].(map[string]any)
	dts, _ := md["deletionTimestamp"].(string)
	phase, _ := st["phase"].(string)
	raw, _ := md["labels"].(map[string]any)
	labels := make(map[string]string, len(raw))
	for k, v := range raw {
		s, _ := v.(string)
		labels[k] = s
	}
	return &podMemo{
		obj:       p,
		namespace: kobj.Namespace(p),
		name:      kobj.Name(p),
		ctrlUID:   kobj.ControllerUID(p),
		deleting:  dts != "",
		done:      phase == "Succeeded" || phase == "Failed",
		ready:     podReady(p),
		labels:    labels,
		rawLabels: raw,
	}
}

// facts are the podFacts of the pod, fully as given.
func (m *podMemo) facts(fully bool) podFacts {
	return podFacts{
		active:      !m.deleting && !m.done,
		terminating: m.deleting && !m.done,
		fully:       fully,
		ready:       m.ready,
	}
}

// memos keeps the podMemo of the pod objects of the last syncs. Objects
// handed to the controller must not change (they do not: the controller
// copies what it writes, and the runner's objects are shared, unchanged).
type memos struct {
	mu sync.Mutex
	m  map[uintptr]*podMemo
}

func (ms *memos) of(p map[string]any) *podMemo {
	if ms == nil {
		return newPodMemo(p)
	}
	k := reflect.ValueOf(p).Pointer()
	if m, ok := ms.m[k]; ok {
		return m
	}
	if ms.m == nil {
		ms.m = map[uintptr]*podMemo{}
	}
	m := newPodMemo(p)
	ms.m[k] = m
	return m
}

// prune keeps the memos of pods alone when the others (objects gone or
// replaced) are many.
func (ms *memos) prune(pods []cluster.Object) {
	if ms == nil || len(ms.m) <= 2*len(pods)+1024 {
		return
	}
	kept := make(map[uintptr]*podMemo, len(pods))
	for _, p := range pods {
		k := reflect.ValueOf(p).Pointer()
		if m, ok := ms.m[k]; ok {
			kept[k] = m
		}
	}
	ms.m = kept
}

// Reset forgets the memos (the runner of package sim calls it after a
// rollback).
func (c Controller) Reset() {
	if c.memos == nil {
		return
	}
	c.memos.mu.Lock()
	defer c.memos.mu.Unlock()
	c.memos.m = nil
}
