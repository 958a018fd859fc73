package schema_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	admissionregistrationv1alpha1 "k8s.io/api/admissionregistration/v1alpha1"
	admissionregistrationv1beta1 "k8s.io/api/admissionregistration/v1beta1"
	apiserverinternalv1alpha1 "k8s.io/api/apiserverinternal/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	coordinationv1 "k8s.io/api/coordination/v1"
	coordinationv1alpha2 "k8s.io/api/coordination/v1alpha2"
	coordinationv1beta1 "k8s.io/api/coordination/v1beta1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	resourcev1 "k8s.io/api/resource/v1"
	resourcev1alpha3 "k8s.io/api/resource/v1alpha3"
	resourcev1beta1 "k8s.io/api/resource/v1beta1"
	resourcev1beta2 "k8s.io/api/resource/v1beta2"
	schedulingv1 "k8s.io/api/scheduling/v1"
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	storagev1 "k8s.io/api/storage/v1"
	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	storagemigrationv1beta1 "k8s.io/api/storagemigration/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"github.com/konverge/konverge/schema"
)

// TestStrategicPatchReference walks every kind that both Builtin and the Go
// types of k8s.io/api know, field by field, and compares each position's
// patch strategy and merge key with what strategicpatch reads from the Go
// struct tags (LookupPatchMetadataForStruct / ForSlice), and its shape with
// the Go type.
func TestStrategicPatchReference(t *testing.T) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		admissionregistrationv1.AddToScheme, admissionregistrationv1alpha1.AddToScheme,
		admissionregistrationv1beta1.AddToScheme, apiserverinternalv1alpha1.AddToScheme,
		appsv1.AddToScheme, authenticationv1.AddToScheme, authorizationv1.AddToScheme,
		autoscalingv1.AddToScheme, autoscalingv2.AddToScheme, batchv1.AddToScheme,
		certificatesv1.AddToScheme, certificatesv1beta1.AddToScheme, coordinationv1.AddToScheme,
		coordinationv1alpha2.AddToScheme, coordinationv1beta1.AddToScheme, corev1.AddToScheme,
		discoveryv1.AddToScheme, eventsv1.AddToScheme, flowcontrolv1.AddToScheme,
		lifecyclev1alpha1.AddToScheme, networkingv1.AddToScheme, nodev1.AddToScheme,
		policyv1.AddToScheme, rbacv1.AddToScheme, resourcev1.AddToScheme,
		resourcev1alpha3.AddToScheme, resourcev1beta1.AddToScheme, resourcev1beta2.AddToScheme,
		schedulingv1.AddToScheme, schedulingv1alpha3.AddToScheme, schedulingv1beta1.AddToScheme,
		storagev1.AddToScheme, storagemigrationv1.AddToScheme, storagemigrationv1beta1.AddToScheme,
	} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}

	// The kinds that must be compared, whatever else the scheme holds.
	required := map[schema.GVK]bool{}
	for _, obj := range []runtime.Object{
		&corev1.Pod{}, &appsv1.Deployment{}, &appsv1.StatefulSet{}, &appsv1.DaemonSet{},
		&batchv1.Job{}, &batchv1.CronJob{}, &corev1.Service{}, &corev1.ConfigMap{},
		&corev1.Secret{}, &appsv1.ReplicaSet{}, &corev1.Namespace{}, &networkingv1.Ingress{},
		&corev1.ServiceAccount{},
	} {
		gvks, _, err := scheme.ObjectKinds(obj)
		if err != nil {
			t.Fatal(err)
		}
		required[schema.GVK{Group: gvks[0].Group, Version: gvks[0].Version, Kind: gvks[0].Kind}] = true
	}

	reg := schema.Builtin()
	known := scheme.AllKnownTypes()
	var kinds []schema.GVK
	goTypes := map[schema.GVK]reflect.Type{}
	for gvk, rt := range known {
		k := schema.GVK{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind}
		if reg.Lookup(k) == nil {
			if required[k] {
				t.Errorf("Builtin has no %v", k)
			}
			continue // options types (GetOptions ...) and versions not served
		}
		kinds = append(kinds, k)
		goTypes[k] = rt
	}
	slices.SortFunc(kinds, func(a, b schema.GVK) int { return strings.Compare(a.String(), b.String()) })
	total := 0
	for _, k := range kinds {
		t.Run(k.String(), func(t *testing.T) {
			delete(required, k)
			w := &walker{t: t, seen: map[seenKey]bool{}}
			w.walk(strategicpatch.PatchMetaFromStruct{T: goTypes[k]}, goTypes[k], reg.Lookup(k), "")
			total += w.count
		})
	}
	for k := range required {
		t.Errorf("%v was not compared", k)
	}
	t.Logf("compared %d positions of %d kinds", total, len(kinds))
}

type seenKey struct {
	rt  reflect.Type
	typ *schema.Type
}

type walker struct {
	t     *testing.T
	seen  map[seenKey]bool
	count int
}

var marshalerType = reflect.TypeFor[json.Marshaler]()

// isLeaf reports whether rt serializes itself (Quantity, Time, IntOrString,
// RawExtension, FieldsV1, Duration): its JSON form is not its Go fields.
func isLeaf(rt reflect.Type) bool {
	return rt.Implements(marshalerType) || reflect.PointerTo(rt).Implements(marshalerType)
}

// jsonField is one field of a Go struct as encoding/json sees it.
type jsonField struct {
	name string
	typ  reflect.Type
}

// jsonFields lists the JSON fields of a struct, with the fields of embedded
// structs promoted.
func jsonFields(rt reflect.Type) []jsonField {
	var out []jsonField
	for i := range rt.NumField() {
		f := rt.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if name == "" && f.Anonymous {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				out = append(out, jsonFields(ft)...)
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, jsonField{name: name, typ: f.Type})
	}
	return out
}

func deref(rt reflect.Type) reflect.Type {
	for rt.Kind() == reflect.Pointer {
		rt = rt.Elem()
	}
	return rt
}

// walk compares the fields of the Go struct rt with the Struct typ.
func (w *walker) walk(meta strategicpatch.LookupPatchMeta, rt reflect.Type, typ *schema.Type, path string) {
	rt = deref(rt)
	key := seenKey{rt, typ}
	if w.seen[key] {
		return
	}
	w.seen[key] = true
	if !w.checkShape(rt, typ, path) || typ.KindOf() != schema.Struct {
		return
	}
	goNames := map[string]bool{}
	for _, f := range jsonFields(rt) {
		goNames[f.name] = true
		fpath := path + "." + f.name
		sub, pm, err := meta.LookupPatchMetadataForStruct(f.name)
		if err != nil {
			w.t.Errorf("%s: strategicpatch: %v", fpath, err)
			continue
		}
		ours := typ.Field(f.name)
		w.count++
		goStrategies := slices.DeleteFunc(slices.Clone(pm.GetPatchStrategies()), func(s string) bool { return s == "" })
		slices.Sort(goStrategies)
		var ourStrategies []string
		if s := ours.Strategy(); s != "" {
			ourStrategies = strings.Split(s, ",")
		}
		slices.Sort(ourStrategies)
		if !slices.Equal(goStrategies, ourStrategies) {
			w.t.Errorf("%s: patch strategy %q, strategicpatch says %q", fpath, ourStrategies, goStrategies)
		}
		if ours.MergeKey != pm.GetPatchMergeKey() {
			w.t.Errorf("%s: merge key %q, strategicpatch says %q", fpath, ours.MergeKey, pm.GetPatchMergeKey())
		}

		ft := deref(f.typ)
		switch {
		case isLeaf(ft):
			w.checkShape(ft, ours, fpath)
		case ft.Kind() == reflect.Struct:
			w.walk(sub, ft, ours, fpath)
		case ft.Kind() == reflect.Slice && deref(ft.Elem()).Kind() == reflect.Struct && !isLeaf(deref(ft.Elem())):
			if !w.checkShape(ft, ours, fpath) {
				continue
			}
			elemMeta, _, err := meta.LookupPatchMetadataForSlice(f.name)
			if err != nil {
				w.t.Errorf("%s: strategicpatch: %v", fpath, err)
				continue
			}
			w.walk(elemMeta, ft.Elem(), ours.Element(), fpath+"[]")
		case ft.Kind() == reflect.Map && deref(ft.Elem()).Kind() == reflect.Struct && !isLeaf(deref(ft.Elem())):
			if !w.checkShape(ft, ours, fpath) {
				continue
			}
			w.walk(strategicpatch.PatchMetaFromStruct{T: deref(ft.Elem())}, ft.Elem(), ours.Field("*"), fpath+"[*]")
		default:
			w.checkShape(ft, ours, fpath)
		}
	}
	for name := range typ.Fields {
		if !goNames[name] {
			w.t.Errorf("%s.%s: in the OpenAPI document but not in Go type %v", path, name, rt)
		}
	}
}

// checkShape compares the Kind of typ with the Go type rt and reports
// whether they agree.
func (w *walker) checkShape(rt reflect.Type, typ *schema.Type, path string) bool {
	rt = deref(rt)
	got := typ.KindOf()
	var want []schema.Kind
	switch {
	case isLeaf(rt):
		want = []schema.Kind{schema.Scalar, schema.Untyped}
	case rt.Kind() == reflect.Struct:
		if len(jsonFields(rt)) == 0 {
			want = []schema.Kind{schema.Untyped}
		} else {
			want = []schema.Kind{schema.Struct}
		}
	case rt.Kind() == reflect.Slice && rt.Elem().Kind() == reflect.Uint8:
		want = []schema.Kind{schema.Scalar} // []byte is a base64 string
	case rt.Kind() == reflect.Slice:
		want = []schema.Kind{schema.List}
	case rt.Kind() == reflect.Map:
		want = []schema.Kind{schema.Map}
	case rt.Kind() == reflect.Interface:
		want = []schema.Kind{schema.Untyped}
	default:
		want = []schema.Kind{schema.Scalar}
	}
	if !slices.Contains(want, got) {
		w.t.Errorf("%s: %s, but Go type %v is a %v", path, got, rt, want)
		return false
	}
	if got == schema.Scalar && !isLeaf(rt) {
		var ws schema.ScalarType
		switch rt.Kind() {
		case reflect.String, reflect.Slice:
			ws = schema.String
		case reflect.Bool:
			ws = schema.Boolean
		case reflect.Float32, reflect.Float64:
			ws = schema.Number
		default:
			ws = schema.Integer
		}
		if typ.Scalar != ws {
			w.t.Errorf("%s: %s, but Go type %v is a %s", path, typ.Scalar, rt, ws)
		}
	}
	return true
}
