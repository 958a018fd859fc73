package kinds_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/restmapper"
	clienttesting "k8s.io/client-go/testing"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/kinds"
	"github.com/konverge/konverge/schema"
)

// findCases are names kubectl users type, with what kubectl resolves them
// to against a v1.37.1 API server.
var findCases = []struct {
	name string
	want string // "group/version, Kind" as schema.GVK prints, or an error
}{
	{"po", "v1, Kind=Pod"},
	{"pod", "v1, Kind=Pod"},
	{"pods", "v1, Kind=Pod"},
	{"Pod", "v1, Kind=Pod"},
	{"POD", "v1, Kind=Pod"},
	{"Pods", "v1, Kind=Pod"},
	{"pods.v1.", "v1, Kind=Pod"},
	{"svc", "v1, Kind=Service"},
	{"service", "v1, Kind=Service"},
	{"cm", "v1, Kind=ConfigMap"},
	{"configmap", "v1, Kind=ConfigMap"},
	{"secret", "v1, Kind=Secret"},
	{"ns", "v1, Kind=Namespace"},
	{"no", "v1, Kind=Node"},
	{"nodes", "v1, Kind=Node"},
	{"pv", "v1, Kind=PersistentVolume"},
	{"pvc", "v1, Kind=PersistentVolumeClaim"},
	{"sa", "v1, Kind=ServiceAccount"},
	{"ep", "v1, Kind=Endpoints"},
	{"endpoints", "v1, Kind=Endpoints"},
	{"Endpoints", "v1, Kind=Endpoints"},
	{"ev", "v1, Kind=Event"},
	{"events", "v1, Kind=Event"},
	{"event", "v1, Kind=Event"},
	{"limits", "v1, Kind=LimitRange"},
	{"quota", "v1, Kind=ResourceQuota"},
	{"rc", "v1, Kind=ReplicationController"},
	{"cs", "v1, Kind=ComponentStatus"},
	{"podtemplates", "v1, Kind=PodTemplate"},
	{"bindings", "v1, Kind=Binding"},
	{"deploy", "apps/v1, Kind=Deployment"},
	{"deployment", "apps/v1, Kind=Deployment"},
	{"deployments", "apps/v1, Kind=Deployment"},
	{"Deployment", "apps/v1, Kind=Deployment"},
	{"DEPLOYMENT", "apps/v1, Kind=Deployment"},
	{"deployments.apps", "apps/v1, Kind=Deployment"},
	{"deployment.apps", "apps/v1, Kind=Deployment"},
	{"Deployment.apps", "apps/v1, Kind=Deployment"},
	{"deployments.v1.apps", "apps/v1, Kind=Deployment"},
	{"Deployment.v1.apps", "apps/v1, Kind=Deployment"},
	{"deploy.apps", "apps/v1, Kind=Deployment"},
	{"deploy.v1.apps", "apps/v1, Kind=Deployment"},
	{"deploy.app", "apps/v1, Kind=Deployment"},
	{"deployments.app", "apps/v1, Kind=Deployment"},
	{"rs", "apps/v1, Kind=ReplicaSet"},
	{"ds", "apps/v1, Kind=DaemonSet"},
	{"sts", "apps/v1, Kind=StatefulSet"},
	{"statefulset", "apps/v1, Kind=StatefulSet"},
	{"controllerrevisions", "apps/v1, Kind=ControllerRevision"},
	{"events.events.k8s.io", "events.k8s.io/v1, Kind=Event"},
	{"ev.events.k8s.io", "events.k8s.io/v1, Kind=Event"},
	{"event.events.k8s.io", "events.k8s.io/v1, Kind=Event"},
	{"events.v1.events.k8s.io", "events.k8s.io/v1, Kind=Event"},
	{"events.events", "events.k8s.io/v1, Kind=Event"},
	{"hpa", "autoscaling/v2, Kind=HorizontalPodAutoscaler"},
	{"horizontalpodautoscalers", "autoscaling/v2, Kind=HorizontalPodAutoscaler"},
	{"horizontalpodautoscalers.autoscaling", "autoscaling/v2, Kind=HorizontalPodAutoscaler"},
	{"horizontalpodautoscalers.v1.autoscaling", "autoscaling/v1, Kind=HorizontalPodAutoscaler"},
	{"hpa.v1.autoscaling", "autoscaling/v2, Kind=HorizontalPodAutoscaler"}, // the shortcut drops the version
	{"hpa.autoscal", "autoscaling/v2, Kind=HorizontalPodAutoscaler"},
	{"HorizontalPodAutoscaler.v1.autoscaling", "autoscaling/v1, Kind=HorizontalPodAutoscaler"},
	{"cj", "batch/v1, Kind=CronJob"},
	{"cronjob", "batch/v1, Kind=CronJob"},
	{"jobs", "batch/v1, Kind=Job"},
	{"job.batch", "batch/v1, Kind=Job"},
	{"csr", "certificates.k8s.io/v1, Kind=CertificateSigningRequest"},
	{"clustertrustbundles", "certificates.k8s.io/v1, Kind=ClusterTrustBundle"},
	{"ing", "networking.k8s.io/v1, Kind=Ingress"},
	{"ingress", "networking.k8s.io/v1, Kind=Ingress"},
	{"ingresses", "networking.k8s.io/v1, Kind=Ingress"},
	{"ingressclass", "networking.k8s.io/v1, Kind=IngressClass"},
	{"netpol", "networking.k8s.io/v1, Kind=NetworkPolicy"},
	{"ip", "networking.k8s.io/v1, Kind=IPAddress"},
	{"servicecidrs", "networking.k8s.io/v1, Kind=ServiceCIDR"},
	{"pdb", "policy/v1, Kind=PodDisruptionBudget"},
	{"clusterrole", "rbac.authorization.k8s.io/v1, Kind=ClusterRole"},
	{"rolebindings", "rbac.authorization.k8s.io/v1, Kind=RoleBinding"},
	{"roles.rbac.authorization.k8s.io", "rbac.authorization.k8s.io/v1, Kind=Role"},
	{"sc", "storage.k8s.io/v1, Kind=StorageClass"},
	{"storageclass", "storage.k8s.io/v1, Kind=StorageClass"},
	{"StorageClass.storage.k8s.io", "storage.k8s.io/v1, Kind=StorageClass"},
	{"vac", "storage.k8s.io/v1, Kind=VolumeAttributesClass"},
	{"csidrivers", "storage.k8s.io/v1, Kind=CSIDriver"},
	{"crd", "apiextensions.k8s.io/v1, Kind=CustomResourceDefinition"},
	{"crds", "apiextensions.k8s.io/v1, Kind=CustomResourceDefinition"},
	{"customresourcedefinition", "apiextensions.k8s.io/v1, Kind=CustomResourceDefinition"},
	{"apiservices", "apiregistration.k8s.io/v1, Kind=APIService"},
	{"pc", "scheduling.k8s.io/v1, Kind=PriorityClass"},
	{"priorityclass", "scheduling.k8s.io/v1, Kind=PriorityClass"},
	{"leases", "coordination.k8s.io/v1, Kind=Lease"},
	{"runtimeclass", "node.k8s.io/v1, Kind=RuntimeClass"},
	{"endpointslices", "discovery.k8s.io/v1, Kind=EndpointSlice"},
	{"resourceclaims", "resource.k8s.io/v1, Kind=ResourceClaim"},
	{"deviceclass", "resource.k8s.io/v1, Kind=DeviceClass"},
	{"flowschemas", "flowcontrol.apiserver.k8s.io/v1, Kind=FlowSchema"},
	{"tokenreviews", "authentication.k8s.io/v1, Kind=TokenReview"},
	{"selfsubjectaccessreviews", "authorization.k8s.io/v1, Kind=SelfSubjectAccessReview"},
	{"validatingwebhookconfigurations", "admissionregistration.k8s.io/v1, Kind=ValidatingWebhookConfiguration"},
	{"mutatingadmissionpolicies", "admissionregistration.k8s.io/v1, Kind=MutatingAdmissionPolicy"},
	{"storageversionmigrations", "storagemigration.k8s.io/v1, Kind=StorageVersionMigration"},

	{"PO", `the server doesn't have a resource type "PO"`},
	{"Deploy", `the server doesn't have a resource type "Deploy"`},
	{"foo", `the server doesn't have a resource type "foo"`},
	{"", `the server doesn't have a resource type ""`},
	{"endpoint", `the server doesn't have a resource type "endpoint"`},
	{"deployments.extensions", `the server doesn't have a resource type "deployments" in group "extensions"`},
	{"po.apps", `the server doesn't have a resource type "po" in group "apps"`},
	{"deployments.v1beta1.apps", `the server doesn't have a resource type "deployments" in group "v1beta1.apps"`},
	{"pods/status", `the server doesn't have a resource type "pods/status"`},
	{"workloads.scheduling.k8s.io", `the server doesn't have a resource type "workloads" in group "scheduling.k8s.io"`},
	{"podgroups", `the server doesn't have a resource type "podgroups"`},
	{"volumeattachments.v1beta1.storage.k8s.io", `the server doesn't have a resource type "volumeattachments" in group "v1beta1.storage.k8s.io"`},
}

func TestFind(t *testing.T) {
	m := kinds.NewMapper(kinds.Builtin(), nil)
	for _, tt := range findCases {
		t.Run(tt.name, func(t *testing.T) {
			r, err := m.Find(tt.name)
			got := ""
			if err != nil {
				got = err.Error()
				if !cluster.IsNotFound(err) {
					t.Errorf("error %v is not a NotFound *cluster.StatusError", err)
				}
			} else {
				got = r.GVK.String()
			}
			if got != tt.want {
				t.Errorf("Find(%q) = %s, want %s", tt.name, got, tt.want)
			}
		})
	}
}

// kubectlMapper builds the RESTMapper kubectl builds from discovery of the
// given resources: client-go's discovery RESTMapper behind its shortcut
// expander.
func kubectlMapper(resources []cluster.Resource) meta.RESTMapper {
	var groups []*restmapper.APIGroupResources
	var lists []*metav1.APIResourceList
	byGroup := map[string]*restmapper.APIGroupResources{}
	byGV := map[string]*metav1.APIResourceList{}
	for _, r := range resources {
		g := byGroup[r.GVK.Group]
		if g == nil {
			g = &restmapper.APIGroupResources{
				Group: metav1.APIGroup{
					Name:             r.GVK.Group,
					PreferredVersion: metav1.GroupVersionForDiscovery{GroupVersion: r.GVK.APIVersion(), Version: r.GVK.Version},
				},
				VersionedResources: map[string][]metav1.APIResource{},
			}
			byGroup[r.GVK.Group] = g
			groups = append(groups, g)
		}
		if _, ok := g.VersionedResources[r.GVK.Version]; !ok {
			g.Group.Versions = append(g.Group.Versions, metav1.GroupVersionForDiscovery{GroupVersion: r.GVK.APIVersion(), Version: r.GVK.Version})
		}
		ar := metav1.APIResource{Name: r.Plural, SingularName: r.Singular, Namespaced: r.Namespaced, Kind: r.GVK.Kind, ShortNames: r.ShortNames}
		g.VersionedResources[r.GVK.Version] = append(g.VersionedResources[r.GVK.Version], ar)
		l := byGV[r.GVK.APIVersion()]
		if l == nil {
			l = &metav1.APIResourceList{GroupVersion: r.GVK.APIVersion()}
			byGV[r.GVK.APIVersion()] = l
		}
		l.APIResources = append(l.APIResources, ar)
	}
	// Discovery lists groups in order and the versions of each group.
	for _, g := range groups {
		for _, v := range g.Group.Versions {
			lists = append(lists, byGV[v.GroupVersion])
		}
	}
	disco := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{Resources: lists}}
	return restmapper.NewShortcutExpander(restmapper.NewDiscoveryRESTMapper(groups), disco, nil)
}

// kubectlFind is cli-runtime's Builder.mappingFor.
func kubectlFind(restMapper meta.RESTMapper, arg string) (k8sschema.GroupVersionKind, error) {
	fullySpecifiedGVR, groupResource := k8sschema.ParseResourceArg(arg)
	gvk := k8sschema.GroupVersionKind{}
	if fullySpecifiedGVR != nil {
		gvk, _ = restMapper.KindFor(*fullySpecifiedGVR)
	}
	if gvk.Empty() {
		gvk, _ = restMapper.KindFor(groupResource.WithVersion(""))
	}
	if !gvk.Empty() {
		m, err := restMapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return k8sschema.GroupVersionKind{}, err
		}
		return m.GroupVersionKind, nil
	}
	fullySpecifiedGVK, groupKind := k8sschema.ParseKindArg(arg)
	if fullySpecifiedGVK == nil {
		gvk := groupKind.WithVersion("")
		fullySpecifiedGVK = &gvk
	}
	if !fullySpecifiedGVK.Empty() {
		if mapping, err := restMapper.RESTMapping(fullySpecifiedGVK.GroupKind(), fullySpecifiedGVK.Version); err == nil {
			return mapping.GroupVersionKind, nil
		}
	}
	mapping, err := restMapper.RESTMapping(groupKind, gvk.Version)
	if err != nil {
		if meta.IsNoMatchError(err) {
			switch {
			case len(groupResource.Group) > 0:
				return k8sschema.GroupVersionKind{}, fmt.Errorf("the server doesn't have a resource type %q in group %q", groupResource.Resource, groupResource.Group)
			default:
				return k8sschema.GroupVersionKind{}, fmt.Errorf("the server doesn't have a resource type %q", groupResource.Resource)
			}
		}
		return k8sschema.GroupVersionKind{}, err
	}
	return mapping.GroupVersionKind, nil
}

// namesToTry returns what users might type for a set of resources: every
// name, qualified every way, in other cases, and some that match nothing.
func namesToTry(resources []cluster.Resource) []string {
	seen := map[string]bool{}
	var names []string
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			names = append(names, s)
		}
	}
	for _, r := range resources {
		g, v := r.GVK.Group, r.GVK.Version
		bases := append([]string{r.Plural, r.Singular, r.GVK.Kind, strings.ToUpper(r.Plural), strings.ToLower(r.GVK.Kind) + "s"}, r.ShortNames...)
		for _, s := range r.ShortNames {
			bases = append(bases, strings.ToUpper(s))
		}
		for _, b := range bases {
			add(b)
			add(b + "." + g)
			add(b + "." + v + "." + g)
			if len(g) > 3 {
				add(b + "." + g[:3])
				add(b + "." + v + "." + g[:3])
			}
			add(b + ".x")
			add(b + ".v9." + g)
		}
	}
	for _, s := range []string{"", ".", "..", "...", "foo", "foo.bar", "v1", "apps", "list", "lists", "pods.", ".pods", "*"} {
		add(s)
	}
	return names
}

func compareWithKubectl(t *testing.T, m *kinds.Mapper) (names, lists int) {
	t.Helper()
	ref := kubectlMapper(m.Resources())
	all := namesToTry(m.Resources())
	for _, name := range all {
		want, wantErr := kubectlFind(ref, name)
		got, err := m.Find(name)
		switch {
		case wantErr != nil && err != nil:
			if err.Error() != wantErr.Error() {
				t.Errorf("Find(%q) error = %q, kubectl: %q", name, err, wantErr)
			}
		case wantErr != nil:
			t.Errorf("Find(%q) = %v, kubectl: %v", name, got.GVK, wantErr)
		case err != nil:
			// kubectl's discovery mapper also maps <Kind>List kinds
			// ("deploymentlist"), which no server serves as resources;
			// konverge reports them unknown.
			if !strings.HasSuffix(want.Kind, "List") {
				t.Errorf("Find(%q) error = %v, kubectl: %v", name, err, want)
			}
			lists++
		default:
			if got.GVK != (schema.GVK{Group: want.Group, Version: want.Version, Kind: want.Kind}) {
				t.Errorf("Find(%q) = %v, kubectl: %v", name, got.GVK, want)
			}
		}
	}
	return len(all), lists
}

func TestFindDifferential(t *testing.T) {
	t.Run("Builtin", func(t *testing.T) {
		n, lists := compareWithKubectl(t, kinds.NewMapper(kinds.Builtin(), nil))
		t.Logf("%d names, %d of them List kinds", n, lists)
	})
	t.Run("WithCRDs", func(t *testing.T) {
		n, lists := compareWithKubectl(t, kinds.NewMapper(kinds.Builtin(), nil).With(testCRDs...))
		t.Logf("%d names, %d of them List kinds", n, lists)
	})
	t.Run("Cases", func(t *testing.T) {
		ref := kubectlMapper(kinds.Builtin())
		for _, tt := range findCases {
			want, err := kubectlFind(ref, tt.name)
			got := ""
			if err != nil {
				got = err.Error()
			} else {
				got = schema.GVK{Group: want.Group, Version: want.Version, Kind: want.Kind}.String()
			}
			if got != tt.want {
				t.Errorf("kubectl resolves %q to %s; the table says %s", tt.name, got, tt.want)
			}
		}
	})
}

// testCRDs are custom resources, some of whose names collide with built-in
// ones.
var testCRDs = []cluster.Resource{
	{GVK: schema.GVK{Group: "stable.example.com", Version: "v1", Kind: "CronTab"}, Plural: "crontabs", Singular: "crontab", ShortNames: []string{"ct"}, Namespaced: true, Status: true},
	{GVK: schema.GVK{Group: "stable.example.com", Version: "v1beta1", Kind: "CronTab"}, Plural: "crontabs", Singular: "crontab", ShortNames: []string{"ct"}, Namespaced: true},
	{GVK: schema.GVK{Group: "stable.example.com", Version: "v2alpha1", Kind: "CronTab"}, Plural: "crontabs", Singular: "crontab", ShortNames: []string{"ct"}, Namespaced: true},
	{GVK: schema.GVK{Group: "apps.example.com", Version: "v1", Kind: "Deployment"}, Plural: "deployments", Singular: "deployment", ShortNames: []string{"deploy", "xd"}, Namespaced: true},
	{GVK: schema.GVK{Group: "a.example.com", Version: "v1", Kind: "Widget"}, Plural: "widgets", Singular: "widget", ShortNames: []string{"po"}},
	{GVK: schema.GVK{Group: "a.example.com", Version: "v1", Kind: "Gadget"}, Plural: "gadgets", Singular: "thing"},
	{GVK: schema.GVK{Group: "events.example.com", Version: "v1", Kind: "Event"}, Plural: "events", Singular: "event", ShortNames: []string{"ev"}, Namespaced: true},
	{GVK: schema.GVK{Group: "z.example.com", Version: "foo", Kind: "Thing"}, Plural: "things", Singular: "thing"},
	{GVK: schema.GVK{Group: "z.example.com", Version: "v1", Kind: "Thing"}, Plural: "things", Singular: "thing"},
}

func TestWith(t *testing.T) {
	base := kinds.NewMapper(kinds.Builtin(), nil)
	m := base.With(testCRDs...)
	tests := []struct {
		name, find, want string
	}{
		{name: "CRD plural", find: "crontabs", want: "stable.example.com/v1, Kind=CronTab"},
		{name: "CRD short name", find: "ct", want: "stable.example.com/v1, Kind=CronTab"},
		{name: "CRD version", find: "crontabs.v1beta1.stable.example.com", want: "stable.example.com/v1beta1, Kind=CronTab"},
		{name: "CRD kind", find: "CronTab", want: "stable.example.com/v1, Kind=CronTab"},
		{name: "built-in wins over CRD", find: "deployments", want: "apps/v1, Kind=Deployment"},
		{name: "built-in short name wins", find: "deploy", want: "apps/v1, Kind=Deployment"},
		{name: "CRD by group", find: "deploy.apps.example.com", want: "apps.example.com/v1, Kind=Deployment"},
		{name: "CRD short name not shadowed", find: "xd", want: "apps.example.com/v1, Kind=Deployment"},
		{name: "core short name wins", find: "po", want: "v1, Kind=Pod"},
		{name: "core events win", find: "ev", want: "v1, Kind=Event"},
		{name: "singular that is not the kind", find: "thing", want: "a.example.com/v1, Kind=Gadget"},
		{name: "kind of odd singular", find: "Gadget.a.example.com", want: "a.example.com/v1, Kind=Gadget"},
		{name: "kube-aware version order", find: "things", want: "z.example.com/v1, Kind=Thing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := m.Find(tt.find)
			if err != nil {
				t.Fatal(err)
			}
			if got := r.GVK.String(); got != tt.want {
				t.Errorf("Find(%q) = %s, want %s", tt.find, got, tt.want)
			}
		})
	}
	if _, err := base.Find("crontabs"); err == nil {
		t.Error("With changed the mapper it was called on")
	}
	if got, want := len(m.Resources()), len(base.Resources())+len(testCRDs); got != want {
		t.Errorf("%d resources, want %d", got, want)
	}
	// New groups come after the built-in ones, by name; versions by
	// kube-aware order.
	var order []string
	for _, r := range m.Resources()[len(base.Resources()):] {
		order = append(order, r.GVK.APIVersion()+" "+r.Plural)
	}
	want := []string{
		"a.example.com/v1 gadgets", "a.example.com/v1 widgets", "apps.example.com/v1 deployments",
		"events.example.com/v1 events", "stable.example.com/v1 crontabs", "stable.example.com/v1beta1 crontabs",
		"stable.example.com/v2alpha1 crontabs", "z.example.com/v1 things", "z.example.com/foo things",
	}
	if strings.Join(order, "\n") != strings.Join(want, "\n") {
		t.Errorf("order of added resources:\n%s\nwant:\n%s", strings.Join(order, "\n"), strings.Join(want, "\n"))
	}
}

func TestWithReplaces(t *testing.T) {
	m := kinds.NewMapper(kinds.Builtin(), nil)
	// The same new kind twice: the last one counts.
	twice := m.With(testCRDs[0], testCRDs[0], cluster.Resource{GVK: testCRDs[0].GVK, Plural: "crontabs", Singular: "crontab"})
	if r, err := twice.Find("crontabs"); err != nil || len(r.ShortNames) != 0 || len(twice.Resources()) != len(m.Resources())+1 {
		t.Errorf("With the same kind twice: %+v, %v", r, err)
	}
	crd := schema.GVK{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}
	m2 := m.With(cluster.Resource{GVK: crd, Plural: "customresourcedefinitions", Singular: "customresourcedefinition"})
	r, err := m2.ResourceFor(crd)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.ShortNames) != 0 || len(m2.Resources()) != len(m.Resources()) {
		t.Errorf("With did not replace the resource: %+v", r)
	}
	if r, _ := m.ResourceFor(crd); len(r.ShortNames) != 2 {
		t.Errorf("With changed the original mapper: %+v", r)
	}
}

func TestResourceFor(t *testing.T) {
	m := kinds.NewMapper(kinds.Builtin(), schema.Builtin())
	tests := []struct {
		name string
		gvk  schema.GVK
		want string
	}{
		{name: "deployment", gvk: schema.GVK{Group: "apps", Version: "v1", Kind: "Deployment"}, want: "deployments.apps namespaced=true status=true"},
		{name: "namespace", gvk: schema.GVK{Version: "v1", Kind: "Namespace"}, want: "namespaces namespaced=false status=true"},
		{name: "unknown kind", gvk: schema.GVK{Group: "example.com", Version: "v1", Kind: "Foo"}, want: `no matches for kind "Foo" in version "example.com/v1"`},
		{name: "core unknown", gvk: schema.GVK{Version: "v1", Kind: "Foo"}, want: `no matches for kind "Foo" in version "v1"`},
		{name: "beta off by default", gvk: schema.GVK{Group: "storage.k8s.io", Version: "v1beta1", Kind: "VolumeAttributesClass"}, want: `no matches for kind "VolumeAttributesClass" in version "storage.k8s.io/v1beta1"`},
		{name: "no version", gvk: schema.GVK{Group: "apps", Kind: "Deployment"}, want: `no matches for kind "Deployment" in group "apps"`},
		{name: "kind is case-sensitive", gvk: schema.GVK{Group: "apps", Version: "v1", Kind: "deployment"}, want: `no matches for kind "deployment" in version "apps/v1"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := m.ResourceFor(tt.gvk)
			got := ""
			if err != nil {
				got = err.Error()
				var se *cluster.StatusError
				if !errors.As(err, &se) || se.Reason != cluster.ReasonNotFound || se.Code != 404 {
					t.Errorf("error %#v is not a NotFound *cluster.StatusError", err)
				}
			} else {
				got = fmt.Sprintf("%s namespaced=%v status=%v", r.GroupResource(), r.Namespaced, r.Status)
			}
			if got != tt.want {
				t.Errorf("ResourceFor(%v) = %s, want %s", tt.gvk, got, tt.want)
			}
		})
	}
}

func TestSchema(t *testing.T) {
	reg := schema.Builtin()
	m := kinds.NewMapper(kinds.Builtin(), reg)
	deploy := schema.GVK{Group: "apps", Version: "v1", Kind: "Deployment"}
	if m.Schema(deploy) == nil || m.Schema(deploy) != reg.Lookup(deploy) {
		t.Error("Schema(Deployment) is not the registry's")
	}
	if m.Schema(schema.GVK{Group: "example.com", Version: "v1", Kind: "Foo"}) != nil {
		t.Error("Schema of an unknown kind is not nil")
	}
	if kinds.NewMapper(kinds.Builtin(), nil).Schema(deploy) != nil {
		t.Error("Schema without a registry is not nil")
	}
}

func TestResourcesAreCopies(t *testing.T) {
	m := kinds.NewMapper(kinds.Builtin(), nil)
	rs := m.Resources()
	rs[0].Plural = "changed"
	for i := range rs {
		if len(rs[i].ShortNames) > 0 {
			rs[i].ShortNames[0] = "changed"
		}
	}
	for i, r := range m.Resources() {
		if r.Plural == "changed" || len(r.ShortNames) > 0 && r.ShortNames[0] == "changed" {
			t.Fatalf("Resources returns the mapper's own slice: %d %+v", i, r)
		}
	}
	if b := kinds.Builtin(); b[0].Plural == "changed" {
		t.Error("NewMapper kept the caller's slice")
	}
}

func BenchmarkFind(b *testing.B) {
	names := []string{"po", "deployments.apps", "Deployment", "hpa", "events", "crontabs", "foo"}
	m := kinds.NewMapper(kinds.Builtin(), nil).With(testCRDs...)
	b.Run("konverge", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			_, _ = m.Find(names[i%len(names)])
		}
	})
	ref := kubectlMapper(m.Resources())
	b.Run("kubectl", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			_, _ = kubectlFind(ref, names[i%len(names)])
		}
	})
}

// The Mapper serves as a cluster.Mapper.
var _ cluster.Mapper = (*kinds.Mapper)(nil)
