package printer

import (
	"fmt"
	"strconv"
	"time"
)

// PodSummary is what kubectl get pods prints of a pod's state.
type PodSummary struct {
	// Ready is "ready/total" containers (restartable init containers
	// count).
	Ready string
	// Status is kubectl's STATUS: the phase, or the reason a container
	// waits or terminated (ContainerCreating, ErrImagePull,
	// CrashLoopBackOff, Completed, Error, Init:0/1, ...), or Terminating.
	Status string
	// Restarts is the restart count, with the age of the last restart
	// ("3 (5m ago)") when one is known.
	Restarts string
}

// SummarizePod computes the READY, STATUS and RESTARTS columns of a pod
// as kubectl 1.37's printPod does, ages measured at now.
func SummarizePod(pod map[string]any, now time.Time) PodSummary {
	restarts := 0
	restartableInitRestarts := 0
	containers := List(pod, "spec", "containers")
	total := len(containers)
	ready := 0
	var lastRestart, lastRestartableInitRestart time.Time

	phase := Str(pod, "status", "phase")
	reason := phase
	if r := Str(pod, "status", "reason"); r != "" {
		reason = r
	}
	for _, c := range List(pod, "status", "conditions") {
		if Str(c, "type") == "PodScheduled" && Str(c, "reason") == "SchedulingGated" {
			reason = "SchedulingGated"
		}
	}

	initSpecs := List(pod, "spec", "initContainers")
	restartable := map[string]bool{}
	for _, c := range initSpecs {
		if Str(c, "restartPolicy") == "Always" {
			restartable[Str(c, "name")] = true
			total++
		}
	}

	initializing := false
	for i, cs := range List(pod, "status", "initContainerStatuses") {
		name := Str(cs, "name")
		restarts += int(Int(cs, "restartCount"))
		if Has(cs, "lastState", "terminated") {
			if t := Time(cs, "lastState", "terminated", "finishedAt"); lastRestart.Before(t) {
				lastRestart = t
			}
		}
		if restartable[name] {
			restartableInitRestarts += int(Int(cs, "restartCount"))
			if Has(cs, "lastState", "terminated") {
				if t := Time(cs, "lastState", "terminated", "finishedAt"); lastRestartableInitRestart.Before(t) {
					lastRestartableInitRestart = t
				}
			}
		}
		term := Map(cs, "state", "terminated")
		waiting := Map(cs, "state", "waiting")
		switch {
		case term != nil && Int(term, "exitCode") == 0:
			continue
		case restartable[name] && Bool(cs, "started"):
			if Bool(cs, "ready") {
				ready++
			}
			continue
		case term != nil:
			if r := Str(term, "reason"); r == "" {
				if sig := Int(term, "signal"); sig != 0 {
					reason = fmt.Sprintf("Init:Signal:%d", sig)
				} else {
					reason = fmt.Sprintf("Init:ExitCode:%d", Int(term, "exitCode"))
				}
			} else {
				reason = "Init:" + r
			}
			initializing = true
		case waiting != nil && Str(waiting, "reason") != "" && Str(waiting, "reason") != "PodInitializing":
			reason = "Init:" + Str(waiting, "reason")
			initializing = true
		default:
			reason = fmt.Sprintf("Init:%d/%d", i, len(initSpecs))
			initializing = true
		}
		break
	}

	if !initializing || conditionTrue(pod, "Initialized") {
		restarts = restartableInitRestarts
		lastRestart = lastRestartableInitRestart
		hasRunning := false
		errorReason := ""
		statuses := List(pod, "status", "containerStatuses")
		for i := len(statuses) - 1; i >= 0; i-- {
			cs := statuses[i]
			restarts += int(Int(cs, "restartCount"))
			if Has(cs, "lastState", "terminated") {
				if t := Time(cs, "lastState", "terminated", "finishedAt"); lastRestart.Before(t) {
					lastRestart = t
				}
			}
			term := Map(cs, "state", "terminated")
			switch {
			case Str(cs, "state", "waiting", "reason") != "":
				reason = Str(cs, "state", "waiting", "reason")
			case term != nil:
				if r := Str(term, "reason"); r != "" {
					reason = r
				} else if sig := Int(term, "signal"); sig != 0 {
					reason = fmt.Sprintf("Signal:%d", sig)
				} else {
					reason = fmt.Sprintf("ExitCode:%d", Int(term, "exitCode"))
				}
				if Int(term, "exitCode") != 0 {
					errorReason = reason
				}
			case Bool(cs, "ready") && Has(cs, "state", "running"):
				hasRunning = true
				ready++
			}
		}
		if reason == "Completed" {
			// A container finished while others run: the pod is running
			// (or not ready), unless one failed.
			switch {
			case hasRunning && conditionTrue(pod, "Ready"):
				reason = "Running"
			case errorReason != "":
				reason = errorReason
			case hasRunning:
				reason = "NotReady"
			}
		}
	}

	if Has(pod, "metadata", "deletionTimestamp") {
		if Str(pod, "status", "reason") == "NodeLost" {
			reason = "Unknown"
		} else if phase != "Succeeded" && phase != "Failed" {
			reason = "Terminating"
		}
	}

	rs := strconv.Itoa(restarts)
	if restarts != 0 && !lastRestart.IsZero() {
		rs = fmt.Sprintf("%d (%s ago)", restarts, Since(lastRestart, now))
	}
	return PodSummary{Ready: fmt.Sprintf("%d/%d", ready, total), Status: reason, Restarts: rs}
}

// conditionTrue reports whether the pod's condition of type t is True.
func conditionTrue(pod map[string]any, t string) bool {
	for _, c := range List(pod, "status", "conditions") {
		if Str(c, "type") == t {
			return Str(c, "status") == "True"
		}
	}
	return false
}

func podRow(pod map[string]any, now time.Time, wide bool) []string {
	s := SummarizePod(pod, now)
	cells := []string{name(pod), s.Ready, s.Status, s.Restarts, age(pod, now)}
	if !wide {
		return cells
	}
	ip := ""
	if ips := List(pod, "status", "podIPs"); len(ips) > 0 {
		ip = Str(ips[0], "ip")
	}
	node := Str(pod, "spec", "nodeName")
	nominated := Str(pod, "status", "nominatedNodeName")
	gates := "<none>"
	if rg := List(pod, "spec", "readinessGates"); len(rg) > 0 {
		n := 0
		for _, g := range rg {
			for _, c := range List(pod, "status", "conditions") {
				if Str(c, "type") == Str(g, "conditionType") {
					if Str(c, "status") == "True" {
						n++
					}
					break
				}
			}
		}
		gates = fmt.Sprintf("%d/%d", n, len(rg))
	}
	return append(cells, orNone(ip), orNone(node), orNone(nominated), gates)
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}
