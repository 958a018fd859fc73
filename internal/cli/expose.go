package cli

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/konverge/konverge/internal/cli/flags"
	"github.com/konverge/konverge/internal/printer"
	"github.com/konverge/konverge/schema"
)

// newExposeCmd is kubectl expose: a service for a pod, service,
// replication controller, deployment or replica set, its selector and
// ports read from the object.
func newExposeCmd(g *Globals) *cobra.Command {
	f := &generatorFlags{g: g, verb: "exposed"}
	var ff flags.FilenameFlags
	var protocol, port, typ, lbIP, selector, labels, targetPort, externalIP, name, affinity, clusterIP, overrides string
	cmd := &cobra.Command{
		Use:   "expose (-f FILENAME | TYPE NAME) [--port=port] [--protocol=TCP|UDP|SCTP] [--target-port=number-or-name] [--name=name] [--external-ip=external-ip-of-service] [--type=type]",
		Short: "Make a service that sends traffic to the pods of a workload, service or pod",
		Long: `Create a service for an existing deployment, replica set, replication
controller, service or pod: the new service selects the same pods (the
object's selector, or a pod's labels) and listens on the port given.`,
		Example: `  # Service web on port 80, forwarding to port 8080 of deployment web's pods
  konverge expose deployment web --port=80 --target-port=8080`,
		RunE: func(cmd *cobra.Command, args []string) error {
			g.complete(cmd)
			ctx := cmd.Context()
			dry, _, err := f.check()
			if err != nil {
				return failOne(g.ErrOut, err)
			}
			_ = dry
			sess, err := g.openResourceSession(ctx)
			if err != nil {
				return failOne(g.ErrOut, err)
			}
			ff.Warnings = g.ErrOut
			var targets []gotObject
			var errs []error
			if ff.Given() {
				// As kubectl: the service is built from the file's object
				// alone, which need not exist on the cluster.
				targets, errs = fileObjects(ctx, g, sess, ff)
			} else {
				targets, errs = selectTargets(ctx, g, sess, ff, args, "", false)
			}
			_ = sess.Close(ctx)
			if len(errs) > 0 {
				return reportErrors(g.ErrOut, errs)
			}
			for _, t := range targets {
				gk := t.res.GVK.Kind
				switch {
				case t.res.GVK.Group == "" && (gk == "Pod" || gk == "Service" || gk == "ReplicationController"):
				case (t.res.GVK.Group == "apps" || t.res.GVK.Group == "extensions") && (gk == "Deployment" || gk == "ReplicaSet"):
				default:
					return failOne(g.ErrOut, fmt.Errorf("cannot expose a %s", exposeKindString(t.res.GVK.Kind, t.res.GVK.Group)))
				}
				defName := printer.Str(t.obj, "metadata", "name")
				if len(defName) > 63 {
					defName = defName[:63]
				}
				sel := selector
				if sel == "" {
					s, err := selectorFor(t.obj)
					if err != nil {
						return failOne(g.ErrOut, fmt.Errorf("couldn't retrieve selectors via --selector flag or introspection: %v", err))
					}
					sel = s
				}
				p, ports := port, ""
				if p == "" {
					found := portsFor(t.obj)
					switch len(found) {
					case 0:
						if clusterIP != "None" {
							return failOne(g.ErrOut, errors.New("couldn't find port via --port flag or introspection"))
						}
					case 1:
						p = found[0]
					default:
						ports = strings.Join(found, ",")
					}
				}
				protocols := protocolsFor(t.obj)
				lbl := labels
				if lbl == "" {
					lbl = makeLabels(printer.StringMap(t.obj, "metadata", "labels"))
				}
				svc, err := exposeService(exposeSpec{
					name: name, defName: defName, selector: sel, labels: lbl, port: p, ports: ports, protocol: protocol,
					protocols: protocols, targetPort: targetPort, externalIP: externalIP, typ: typ, lbIP: lbIP,
					affinity: affinity, clusterIP: clusterIP,
				})
				if err != nil {
					return failOne(g.ErrOut, err)
				}
				svc.Namespace = f.namespace()
				if overrides != "" {
					if err := f.createWithOverrides(ctx, svc, overrides); err != nil {
						return err
					}
					continue
				}
				if err := f.create(ctx, svc, nil); err != nil {
					return err
				}
			}
			return nil
		},
	}
	f.addFlags(cmd, managerExpose)
	fs := cmd.Flags()
	ff.AddFlags(fs, "the object to make a service for")
	fs.StringVar(&protocol, "protocol", "", "The network protocol for the service to be created. Default is 'TCP'.")
	fs.StringVar(&port, "port", "", "The port that the service should serve on. Copied from the resource being exposed, if unspecified")
	fs.StringVar(&typ, "type", "", "Type for this service: ClusterIP, NodePort, LoadBalancer, or ExternalName. Default is 'ClusterIP'.")
	fs.StringVar(&lbIP, "load-balancer-ip", "", "IP to assign to the LoadBalancer. If empty, an ephemeral IP will be created and used (cloud-provider specific).")
	fs.StringVar(&selector, "selector", "", "A label selector to use for this service. Only equality-based selector requirements are supported. If empty (the default) infer the selector from the resource being exposed.")
	fs.StringVarP(&labels, "labels", "l", "", "Labels of the new service (key=value,...).")
	fs.StringVar(&targetPort, "target-port", "", "Name or number for the port on the container that the service should direct traffic to. Optional.")
	fs.StringVar(&externalIP, "external-ip", "", "Additional external IP address (not managed by Kubernetes) to accept for the service. If this IP is routed to a node, the service can be accessed by this IP in addition to its generated service IP.")
	fs.StringVar(&name, "name", "", "The name for the newly created object.")
	fs.StringVar(&affinity, "session-affinity", "", "If non-empty, set the session affinity for the service to this; legal values: 'None', 'ClientIP'")
	fs.StringVar(&clusterIP, "cluster-ip", "", "ClusterIP to be assigned to the service. Leave empty to auto-allocate, or set to 'None' to create a headless service.")
	fs.StringVar(&overrides, "overrides", "", "JSON to merge over the generated object before it is sent; it must carry an apiVersion.")
	return cmd
}

// fileObjects reads the objects of the files ff names, as they are written
// there (the namespace defaulted, and checked against --namespace as
// kubectl's builder does), without reading the cluster.
func fileObjects(ctx context.Context, g *Globals, sess *Session, ff flags.FilenameFlags) ([]gotObject, []error) {
	objs, err := ff.Read(ctx, g.In)
	if err != nil {
		return nil, []error{err}
	}
	var out []gotObject
	var errs []error
	for _, mo := range objs {
		obj := mo.Obj
		gvk := schema.ParseGVK(printer.Str(obj, "apiVersion"), printer.Str(obj, "kind"))
		res, err := sess.Mapper().ResourceFor(gvk)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if res.Namespaced {
			ns := printer.Str(obj, "metadata", "namespace")
			if ns != "" && g.NamespaceSet && ns != g.Ns() {
				//lint:ignore ST1005 kubectl's message (cli-runtime's), word for word
				errs = append(errs, fmt.Errorf("the namespace from the provided object %q does not match the namespace %q. You must pass '--namespace=%s' to perform this operation.", ns, g.Ns(), ns))
				continue
			}
		}
		out = append(out, gotObject{res: res, obj: obj})
	}
	return out, errs
}

// exposeKindString names a kind as kubectl's "cannot expose" error does.
func exposeKindString(kind, group string) string {
	if group == "" {
		return kind
	}
	return kind + "." + group
}

// selectorFor is the selector of the object being exposed.
func selectorFor(obj map[string]any) (string, error) {
	kind := printer.Str(obj, "kind")
	switch kind {
	case "Pod":
		l := printer.StringMap(obj, "metadata", "labels")
		if len(l) == 0 {
			return "", errors.New("the pod has no labels and cannot be exposed")
		}
		return makeLabels(l), nil
	case "Service":
		s := printer.StringMap(obj, "spec", "selector")
		if len(s) == 0 {
			return "", errors.New("the service has no pod selector set")
		}
		return makeLabels(s), nil
	case "ReplicationController":
		// An empty selector is kept: the generator then says the selector
		// must be specified, as kubectl's does.
		return makeLabels(printer.StringMap(obj, "spec", "selector")), nil
	case "Deployment", "ReplicaSet":
		sel := printer.Map(obj, "spec", "selector")
		if sel == nil {
			return "", fmt.Errorf("invalid %s: no selectors, therefore cannot be exposed", strings.ToLower(kind))
		}
		if exprs := printer.List(sel, "matchExpressions"); len(exprs) > 0 {
			// kubectl prints the typed requirements with %+v, quoted.
			var reqs []metav1.LabelSelectorRequirement
			for _, e := range exprs {
				r := metav1.LabelSelectorRequirement{Key: printer.Str(e, "key"), Operator: metav1.LabelSelectorOperator(printer.Str(e, "operator"))}
				for _, v := range printer.List(e, "values") {
					r.Values = append(r.Values, fmt.Sprint(v))
				}
				reqs = append(reqs, r)
			}
			return "", fmt.Errorf("couldn't convert expressions - %q to map-based selector format", fmt.Sprintf("%+v", reqs))
		}
		return makeLabels(printer.StringMap(sel, "matchLabels")), nil
	}
	return "", fmt.Errorf("cannot extract pod selector from %s", kind)
}

// makeLabels prints labels as "k=v,k2=v2" (sorted).
func makeLabels(m map[string]string) string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// podSpecForExpose is the pod spec whose container ports expose reads.
func podSpecForExpose(obj map[string]any) map[string]any {
	if printer.Str(obj, "kind") == "Pod" {
		return printer.Map(obj, "spec")
	}
	return printer.Map(obj, "spec", "template", "spec")
}

// portsFor lists the ports of the object being exposed.
func portsFor(obj map[string]any) []string {
	var out []string
	if printer.Str(obj, "kind") == "Service" {
		for _, p := range printer.List(obj, "spec", "ports") {
			out = append(out, strconv.FormatInt(printer.Int(p, "port"), 10))
		}
		return out
	}
	// A port number that several containers or protocols share is listed
	// once, as kubectl lists it (protocolsFor gives its protocols).
	seen := map[string]bool{}
	for _, c := range printer.List(podSpecForExpose(obj), "containers") {
		for _, p := range printer.List(c, "ports") {
			n := strconv.FormatInt(printer.Int(p, "containerPort"), 10)
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	return out
}

// protocolsFor maps each port of the object to its protocols.
func protocolsFor(obj map[string]any) map[string][]string {
	out := map[string][]string{}
	add := func(port int64, proto string) {
		if proto == "" {
			proto = "TCP"
		}
		k := strconv.FormatInt(port, 10)
		out[k] = append(out[k], proto)
	}
	if printer.Str(obj, "kind") == "Service" {
		for _, p := range printer.List(obj, "spec", "ports") {
			add(printer.Int(p, "port"), printer.Str(p, "protocol"))
		}
		return out
	}
	for _, c := range printer.List(podSpecForExpose(obj), "containers") {
		for _, p := range printer.List(c, "ports") {
			add(printer.Int(p, "containerPort"), printer.Str(p, "protocol"))
		}
	}
	return out
}

type exposeSpec struct {
	name, defName, selector, labels, port, ports, protocol string
	protocols                                              map[string][]string
	targetPort, externalIP, typ, lbIP, affinity, clusterIP string
}

// exposeService builds the service as kubectl expose's generator does.
func exposeService(o exposeSpec) (*corev1.Service, error) {
	if o.selector == "" {
		return nil, errors.New("selector must be specified")
	}
	selector, err := parseRunLabels(o.selector)
	if err != nil {
		return nil, err
	}
	var labels map[string]string
	if o.labels != "" {
		if labels, err = parseRunLabels(o.labels); err != nil {
			return nil, err
		}
	}
	name := o.name
	if name == "" {
		name = o.defName
		if name == "" {
			return nil, errors.New("name must be specified")
		}
	}
	portString := o.ports
	if portString == "" {
		portString = o.port
	}
	ports := []corev1.ServicePort{}
	if portString != "" {
		list := strings.Split(portString, ",")
		for i, ps := range list {
			n, err := strconv.Atoi(ps)
			if err != nil {
				return nil, err
			}
			pname := ""
			if len(list) > 1 {
				pname = fmt.Sprintf("port-%d", i+1)
			}
			proto := o.protocol
			if proto == "" {
				proto = "TCP"
				if ps, ok := o.protocols[ps]; ok {
					if len(ps) == 1 {
						proto = ps[0]
					} else {
						for _, p := range ps {
							ports = append(ports, corev1.ServicePort{Name: fmt.Sprintf("port-%d-%s", i+1, strings.ToLower(p)),
								Port: int32(n), Protocol: corev1.Protocol(p)})
						}
						continue
					}
				}
			}
			ports = append(ports, corev1.ServicePort{Name: pname, Port: int32(n), Protocol: corev1.Protocol(proto)})
		}
	}
	svc := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec:       corev1.ServiceSpec{Selector: selector, Ports: ports},
	}
	for i := range svc.Spec.Ports {
		if o.targetPort != "" {
			svc.Spec.Ports[i].TargetPort = intstr.Parse(o.targetPort)
		} else {
			svc.Spec.Ports[i].TargetPort = intstr.FromInt32(svc.Spec.Ports[i].Port)
		}
	}
	if o.externalIP != "" {
		svc.Spec.ExternalIPs = []string{o.externalIP}
	}
	if o.typ != "" {
		svc.Spec.Type = corev1.ServiceType(o.typ)
	}
	if svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
		svc.Spec.LoadBalancerIP = o.lbIP
	}
	switch o.affinity {
	case "":
	case "None":
		svc.Spec.SessionAffinity = corev1.ServiceAffinityNone
	case "ClientIP":
		svc.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
	default:
		return nil, fmt.Errorf("unknown session affinity: %s", o.affinity)
	}
	if o.clusterIP != "" {
		svc.Spec.ClusterIP = o.clusterIP
	}
	return svc, nil
}
