package kubelet

import (
	"context"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/controller/event"
)

// The kubelet's Events, with the reasons and messages of kubelet v1.37
// (pkg/kubelet/events, images/image_manager.go, kuberuntime,
// prober), and the scheduler's. They are derived from what changed between
// the status a pod had and the one the kubelet writes, so that the kubelet
// keeps no state: a container that started since gets Pulling, Pulled,
// Created and Started; one that crashed, BackOff; one a probe killed,
// Unhealthy and Killing; a pull that failed, Failed and BackOff. The spam
// filter of client-go's recorder (25, then one per 5 minutes per pod and
// type) bounds what a crash loop writes.

// Component is the source of the kubelet's Events; SchedulerComponent of
// the scheduler's (Scheduled, FailedScheduling).
const (
	Component          = "kubelet"
	SchedulerComponent = "default-scheduler"
)

// ctrInfo is one container's new state, for its Events.
type ctrInfo struct {
	// mount, when set, is the FailedMount message of a pod whose volumes
	// are not mounted (the only ctrInfo of such a pod).
	mount string
	cm    map[string]any
	init  bool
	in    *ctrInput // nil: not started yet (PodInitializing)
	state ctrState
}

// emit records the events, through the spam filter.
func (k *Kubelet) emit(ctx context.Context, c cluster.Interface, evs []event.Event) error {
	for _, ev := range evs {
		k.mu.Lock()
		ok := k.spam.Allow(ev)
		k.mu.Unlock()
		if !ok {
			continue
		}
		if _, err := event.Emit(ctx, c, ev); err != nil {
			return err
		}
	}
	return nil
}

// podEvents are the Events of a pod whose status goes from old to the one
// made of ctrs, at now.
func podEvents(pod, old map[string]any, ctrs []ctrInfo, now time.Time) []event.Event {
	md := mapOf(pod, "metadata")
	deleting := str(md, "deletionTimestamp") != ""
	wasReady := false
	if c := findCondition(old, "Ready"); c != nil && str(c, "status") == "True" {
		wasReady = true
	}
	var out []event.Event
	for _, ci := range ctrs {
		if ci.mount != "" {
			if c := findCondition(old, "PodReadyToStartContainers"); c == nil || str(c, "status") != "False" {
				out = append(out, event.Event{Involved: pod, Type: event.Warning, Reason: "FailedMount", Message: ci.mount,
					Component: Component, Host: str(mapOf(pod, "spec"), "nodeName"), Time: now})
			}
			continue
		}
		name := str(ci.cm, "name")
		field := "spec.containers{" + name + "}"
		list := "containerStatuses"
		if ci.init {
			field, list = "spec.initContainers{"+name+"}", "initContainerStatuses"
		}
		add := func(typ, reason, msg string) {
			out = append(out, event.Event{Involved: pod, FieldPath: field, Type: typ, Reason: reason, Message: msg,
				Component: Component, Host: str(mapOf(pod, "spec"), "nodeName"), Time: now})
		}
		var was map[string]any
		for _, x := range listOf(old, list) {
			if m, _ := x.(map[string]any); str(m, "name") == name {
				was = m
			}
		}
		wasState := mapOf(was, "state")
		wasWaiting := str(mapOf(wasState, "waiting"), "reason")
		wasRunning := mapOf(wasState, "running")
		wasRestarts, _ := was["restartCount"].(int64)
		wasRan := str(was, "containerID") != ""
		s := ci.state
		image := defaultTag(str(ci.cm, "image"))

		if deleting {
			if wasRunning != nil && wasReady {
				add(event.Normal, "Killing", "Stopping container "+name)
			}
			continue
		}
		if ci.in == nil {
			continue
		}
		if was == nil && !s.ran && s.waitingReason == "ContainerCreating" && ci.in.b.invalidImage == "" {
			add(event.Normal, "Pulling", fmt.Sprintf("Pulling image %q", image))
		}
		switch s.waitingReason {
		case "InvalidImageName":
			if wasWaiting != "InvalidImageName" {
				add(event.Warning, "InspectFailed", s.waitingMessage)
				add(event.Warning, "Failed", "Error: InvalidImageName")
			}
		case "ErrImagePull":
			if wasWaiting != "ErrImagePull" {
				add(event.Normal, "Pulling", fmt.Sprintf("Pulling image %q", image))
				add(event.Warning, "Failed", fmt.Sprintf("Failed to pull image %q: %s", image, pullErrorMessage(str(ci.cm, "image"))))
				add(event.Warning, "Failed", "Error: ErrImagePull")
			}
		case "CreateContainerConfigError":
			if wasWaiting != s.waitingReason || str(mapOf(wasState, "waiting"), "message") != s.waitingMessage {
				if !wasRan && wasWaiting != "CreateContainerConfigError" {
					if was == nil {
						add(event.Normal, "Pulling", fmt.Sprintf("Pulling image %q", image))
					}
					pull := ci.in.b.pull.Truncate(time.Millisecond)
					add(event.Normal, "Pulled", fmt.Sprintf("Successfully pulled image %q in %v (%v including waiting). Image size: %d bytes.",
						image, pull, pull, imageSize(str(ci.cm, "image"))))
				}
				add(event.Warning, "Failed", "Error: "+s.waitingMessage)
			}
		case "ImagePullBackOff":
			if wasWaiting != "ImagePullBackOff" {
				add(event.Normal, "BackOff", fmt.Sprintf("Back-off pulling image %q", image))
				add(event.Warning, "Failed", "Error: ImagePullBackOff")
			}
		}
		restarted := s.restarts > wasRestarts
		if restarted && s.last != nil && s.last.killedBy != "" {
			add(event.Warning, "Unhealthy", s.last.killedBy+" probe failed: "+probeOutput(ci.cm, s.last.killedBy, pod))
			add(event.Normal, "Killing", fmt.Sprintf("Container %s failed %s probe, will be restarted", name, lower(s.last.killedBy)))
		}
		if s.waitingReason == "CrashLoopBackOff" && (wasWaiting != "CrashLoopBackOff" || restarted) {
			add(event.Warning, "BackOff", fmt.Sprintf("Back-off restarting failed container %s in pod %s_%s(%s)",
				name, str(md, "name"), str(md, "namespace"), str(md, "uid")))
		}
		started := s.ran && (s.running || s.terminated != nil) &&
			(!wasRan || restarted || (s.running && wasRunning != nil && str(wasRunning, "startedAt") != kobjTime(s.startedAt)) ||
				(s.running && wasRunning == nil))
		if started {
			if !wasRan && ci.in.gate != nil && ci.in.gate.held {
				add(event.Normal, "Pulled", fmt.Sprintf("Container image %q already present on machine", str(ci.cm, "image")))
			} else if !wasRan {
				if was == nil {
					add(event.Normal, "Pulling", fmt.Sprintf("Pulling image %q", image))
				}
				pull := ci.in.b.pull.Truncate(time.Millisecond)
				add(event.Normal, "Pulled", fmt.Sprintf("Successfully pulled image %q in %v (%v including waiting). Image size: %d bytes.",
					image, pull, pull, imageSize(str(ci.cm, "image"))))
			} else if str(ci.cm, "imagePullPolicy") == "Always" {
				pull := ci.in.b.pull.Truncate(time.Millisecond)
				add(event.Normal, "Pulling", fmt.Sprintf("Pulling image %q", image))
				add(event.Normal, "Pulled", fmt.Sprintf("Successfully pulled image %q in %v (%v including waiting). Image size: %d bytes.",
					image, pull, pull, imageSize(str(ci.cm, "image"))))
			} else {
				add(event.Normal, "Pulled", fmt.Sprintf("Container image %q already present on machine", str(ci.cm, "image")))
			}
			add(event.Normal, "Created", "Container created")
			add(event.Normal, "Started", "Container started")
		}
		if s.running && !s.ready && ci.in.readiness != nil && s.started && !restarted {
			if wr, _ := was["ready"].(bool); wr {
				add(event.Warning, "Unhealthy", "Readiness probe failed: "+probeOutput(ci.cm, "Readiness", pod))
			}
		}
	}
	return out
}

func lower(s string) string {
	switch s {
	case "Liveness":
		return "liveness"
	case "Startup":
		return "startup"
	}
	return s
}

func kobjTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// probeOutput is what a failed probe of a container says.
func probeOutput(cm map[string]any, probe string, pod map[string]any) string {
	field := map[string]string{"Liveness": "livenessProbe", "Readiness": "readinessProbe", "Startup": "startupProbe"}[probe]
	p := mapOf(cm, field)
	ip := str(mapOf(pod, "status"), "podIP")
	switch {
	case p["httpGet"] != nil:
		return "HTTP probe failed with statuscode: 503"
	case p["tcpSocket"] != nil:
		port := fmt.Sprint(mapOf(p, "tcpSocket")["port"])
		return fmt.Sprintf("dial tcp %s:%s: connect: connection refused", ip, port)
	case p["grpc"] != nil:
		return fmt.Sprintf("service unhealthy (responded with %q)", "NOT_SERVING")
	}
	return ""
}

// imageSize is the simulated size of an image, the same every time.
func imageSize(image string) int64 {
	h := fnv.New32a()
	h.Write([]byte(NormalizeImage(image)))
	return 10_000_000 + int64(h.Sum32()%190_000_000)
}

// scheduledEvent is the scheduler's Event of a pod it bound.
func scheduledEvent(pod map[string]any, node string, now time.Time) event.Event {
	md := mapOf(pod, "metadata")
	return event.Event{Involved: pod, Type: event.Normal, Reason: "Scheduled",
		Message:   "Successfully assigned " + str(md, "namespace") + "/" + str(md, "name") + " to " + node,
		Component: SchedulerComponent, Time: now}
}

// preemptedEvent is the scheduler's Event of a pod it deletes to make
// room for preemptor on node.
func preemptedEvent(victim, preemptor map[string]any, node string, now time.Time) event.Event {
	return event.Event{Involved: victim, Type: event.Normal, Reason: "Preempted",
		Message:   "Preempted by pod " + str(mapOf(preemptor, "metadata"), "uid") + " on node " + node,
		Component: SchedulerComponent, Time: now}
}

// failedSchedulingEvent is the scheduler's Event of a pod it cannot bind.
func failedSchedulingEvent(pod map[string]any, msg string, now time.Time) event.Event {
	return event.Event{Involved: pod, Type: event.Warning, Reason: "FailedScheduling", Message: msg,
		Component: SchedulerComponent, Time: now}
}
