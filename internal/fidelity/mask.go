package fidelity

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/konverge/konverge/value"
)

// Step is what one command line did.
type Step struct {
	Args []string `json:"args"`
	Exit int      `json:"exit"`
	// Objects are the objects printed with -o json (a List's items, or
	// each document), masked; Stdout is the output otherwise.
	Objects []any  `json:"objects,omitempty"`
	Stdout  string `json:"stdout,omitempty"`
	Stderr  string `json:"stderr,omitempty"`
}

// Recording is the golden file of a case.
type Recording struct {
	Case  string `json:"case"`
	Steps []Step `json:"steps"`
}

// Outcome builds the Step of a command that printed stdout and stderr and
// exited with code, masked.
func Outcome(args []string, code int, stdout, stderr string) (Step, error) {
	s := Step{Args: args, Exit: code, Stderr: MaskText(stderr)}
	if len(args) > 0 && args[0] == "diff" {
		stdout = MaskDiff(stdout)
	}
	if wantsJSON(args) && strings.TrimSpace(stdout) != "" {
		objs, err := decodeStream([]byte(stdout))
		if err != nil {
			s.Stdout = MaskText(stdout)
			return s, nil
		}
		for _, o := range objs {
			o = Mask(o)
			if args[0] == "get" {
				maskControllers(o)
			}
			s.Objects = append(s.Objects, o)
		}
		return s, nil
	}
	s.Stdout = MaskText(stdout)
	return s, nil
}

func wantsJSON(args []string) bool {
	for i, a := range args {
		if a == "-ojson" || a == "--output=json" || ((a == "-o" || a == "--output") && i+1 < len(args) && args[i+1] == "json") {
			return true
		}
	}
	return false
}

// decodeStream reads one or more JSON documents; a List contributes its
// items.
func decodeStream(data []byte) ([]any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var out []any
	for dec.More() {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		v, err := value.Decode(raw)
		if err != nil {
			return nil, err
		}
		if m, ok := v.(map[string]any); ok && m["kind"] == "List" {
			items, _ := m["items"].([]any)
			out = append(out, items...)
			continue
		}
		out = append(out, v)
	}
	return out, nil
}

var (
	uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	timeRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$`)
	// tokenVolumeRE is the service-account volume whose suffix the
	// ServiceAccount admission plugin picks at random.
	tokenVolumeRE = regexp.MustCompile(`kube-api-access-[a-z0-9]{5}`)
)

var (
	// diffDirRE is the temporary directory of each side of kubectl diff.
	diffDirRE = regexp.MustCompile(`/tmp/(LIVE|MERGED)-[0-9]+/`)
	// diffStampRE is the time diff -u prints after a file name.
	diffStampRE = regexp.MustCompile(`(?m)^((?:---|\+\+\+) \S+)\t.*$`)
	// diffRVRE is a resourceVersion inside a printed diff.
	diffRVRE = regexp.MustCompile(`(?m)^([-+ ]\s*)resourceVersion: "\d+"`)
	// klogRE is the header of a line of kubectl's logger: level, date,
	// time, process, source line.
	klogRE = regexp.MustCompile(`(?m)^([IWEF])\d{4} \d{2}:\d{2}:\d{2}\.\d{6}\s+\d+ \S+:\d+\] `)
	// textTimeRE is a timestamp inside printed YAML.
	textTimeRE = regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})`)
)

// MaskDiff masks the output of kubectl diff: its temporary directories
// become live/ and merged/, the times after the file names go, and the
// timestamps of the objects become <time>.
func MaskDiff(s string) string {
	s = diffDirRE.ReplaceAllStringFunc(s, func(m string) string {
		if strings.Contains(m, "LIVE") {
			return "live/"
		}
		return "merged/"
	})
	s = diffStampRE.ReplaceAllString(s, "$1")
	s = diffRVRE.ReplaceAllString(s, "${1}resourceVersion: \"<rv>\"")
	return textTimeRE.ReplaceAllString(s, "<time>")
}

// MaskText masks uids and random volume names in command output.
func MaskText(s string) string {
	s = klogRE.ReplaceAllString(s, "${1}<klog> ")
	s = uuidRE.ReplaceAllString(s, "<uid>")
	return tokenVolumeRE.ReplaceAllString(s, "kube-api-access-<rand>")
}

// Mask returns v with what differs between runs replaced by placeholders.
// It does not change v.
func Mask(v any) any {
	v = value.DeepCopy(v)
	if obj, ok := v.(map[string]any); ok {
		maskObject(obj)
	}
	return maskWalk(v, "")
}

// controlled are the kinds whose status the workload controllers and the
// kubelet write: a get shows it as they left it, which depends on timing
// and on the node (the real control plane of the recording has no
// scheduler and no kubelet).
var controlled = map[string]bool{
	"Deployment": true, "ReplicaSet": true, "StatefulSet": true, "DaemonSet": true,
	"Job": true, "CronJob": true, "ReplicationController": true, "Pod": true,
	"HorizontalPodAutoscaler": true,
}

// maskControllers masks the status of a controlled object that a get
// printed, and a pod's node.
func maskControllers(v any) {
	obj, ok := v.(map[string]any)
	if !ok || !controlled[fmt.Sprint(obj["kind"])] {
		return
	}
	if _, ok := obj["status"]; ok {
		obj["status"] = "<controllers>"
	}
	// So is what the controllers own of it.
	md, _ := obj["metadata"].(map[string]any)
	entries, _ := md["managedFields"].([]any)
	for _, e := range entries {
		if em, ok := e.(map[string]any); ok && em["subresource"] == "status" {
			em["fieldsV1"] = "<controllers>"
		}
	}
	if spec, ok := obj["spec"].(map[string]any); ok && obj["kind"] == "Pod" {
		delete(spec, "nodeName")
	}
}

// maskObject masks what depends on the object's kind.
func maskObject(obj map[string]any) {
	md, _ := obj["metadata"].(map[string]any)
	sortManagedFields(md)
	if gen, ok := md["generateName"].(string); ok {
		if name, ok := md["name"].(string); ok && strings.HasPrefix(name, gen) {
			md["name"] = gen + "<rand>"
		}
	}
	switch obj["kind"] {
	case "Service":
		// The kubernetes Service targets the API server's port.
		if md["name"] == "kubernetes" && md["namespace"] == "default" {
			spec, _ := obj["spec"].(map[string]any)
			ports, _ := spec["ports"].([]any)
			for _, p := range ports {
				if pm, ok := p.(map[string]any); ok {
					pm["targetPort"] = "<port>"
				}
			}
		}
	case "Endpoints", "EndpointSlice":
		// So do the kubernetes Service's endpoints, at the API server's
		// address.
		if md["name"] == "kubernetes" && md["namespace"] == "default" {
			maskPorts := func(ports []any) {
				for _, p := range ports {
					if pm, ok := p.(map[string]any); ok {
						pm["port"] = "<port>"
					}
				}
			}
			ports, _ := obj["ports"].([]any)
			maskPorts(ports)
			eps, _ := obj["endpoints"].([]any)
			for _, e := range eps {
				if em, ok := e.(map[string]any); ok {
					if addrs, ok := em["addresses"].([]any); ok {
						for i := range addrs {
							addrs[i] = "<ip>"
						}
					}
				}
			}
			subsets, _ := obj["subsets"].([]any)
			for _, ss := range subsets {
				sm, ok := ss.(map[string]any)
				if !ok {
					continue
				}
				ports, _ := sm["ports"].([]any)
				maskPorts(ports)
				addrs, _ := sm["addresses"].([]any)
				for _, a := range addrs {
					if am, ok := a.(map[string]any); ok {
						am["ip"] = "<ip>"
					}
				}
			}
		}
	case "ConfigMap":
		if md["name"] == "kube-root-ca.crt" {
			if data, ok := obj["data"].(map[string]any); ok {
				if _, ok := data["ca.crt"]; ok {
					data["ca.crt"] = "<ca>"
				}
			}
		}
	case "List":
		items, _ := obj["items"].([]any)
		for _, it := range items {
			if m, ok := it.(map[string]any); ok {
				maskObject(m)
			}
		}
	}
}

func maskWalk(v any, key string) any {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			x[k] = maskWalk(c, k)
		}
		return x
	case []any:
		for i, c := range x {
			x[i] = maskWalk(c, key)
		}
		return x
	case string:
		switch key {
		case "resourceVersion":
			if x != "" {
				return "<rv>"
			}
		case "clusterIP", "clusterIPs":
			if x != "" && x != "None" {
				return "<ip>"
			}
		}
		if timeRE.MatchString(x) {
			return "<time>"
		}
		return MaskText(x)
	case int64, float64:
		switch key {
		case "nodePort", "healthCheckNodePort":
			return "<port>"
		}
	}
	return v
}

// Encode writes a recording as indented JSON with sorted keys.
func Encode(r Recording) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(normalize(r)); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// normalize turns a recording into plain values that encoding/json writes
// with sorted keys.
func normalize(r Recording) any {
	data, _ := json.Marshal(r)
	var v any
	_ = json.Unmarshal(data, &v)
	return v
}

// Diff lists the differences between want and got as lines naming the
// field path, in path order; nil when they are equal.
func Diff(want, got any) []string {
	var out []string
	diffWalk("", want, got, &out)
	sort.Strings(out)
	return out
}

func diffWalk(path string, want, got any, out *[]string) {
	wm, wok := want.(map[string]any)
	gm, gok := got.(map[string]any)
	if wok && gok {
		for k, wv := range wm {
			p := path + "." + k
			gv, ok := gm[k]
			if !ok {
				*out = append(*out, p+": missing (want "+short(wv)+")")
				continue
			}
			diffWalk(p, wv, gv, out)
		}
		for k, gv := range gm {
			if _, ok := wm[k]; !ok {
				*out = append(*out, path+"."+k+": unexpected "+short(gv))
			}
		}
		return
	}
	wl, wok := want.([]any)
	gl, gok := got.([]any)
	if wok && gok && len(wl) == len(gl) {
		for i := range wl {
			diffWalk(path+"["+itoa(i)+"]", wl[i], gl[i], out)
		}
		return
	}
	if !value.Equal(want, got) {
		*out = append(*out, path+": want "+short(want)+", got "+short(got))
	}
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

func short(v any) string {
	data, err := value.Encode(v)
	if err != nil {
		return "?"
	}
	if len(data) > 200 {
		return string(data[:200]) + "..."
	}
	return string(data)
}

// sortManagedFields orders managedFields without their times, which are
// masked: kube-apiserver orders entries by operation, time, manager,
// apiVersion and subresource, and two commands of a case may or may not
// fall within one second.
func sortManagedFields(md map[string]any) {
	entries, _ := md["managedFields"].([]any)
	key := func(e any) string {
		m, _ := e.(map[string]any)
		return fmt.Sprint(m["operation"], "\x00", m["manager"], "\x00", m["apiVersion"], "\x00", m["subresource"])
	}
	sort.SliceStable(entries, func(i, j int) bool { return key(entries[i]) < key(entries[j]) })
}
