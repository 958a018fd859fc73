package admission

import (
	"slices"
	"strings"

	"github.com/konverge/konverge/cluster/local/internal/jsonobj"
)

// The annotations that mark a StorageClass as the default.
const (
	defaultClassAnnotation     = "storageclass.kubernetes.io/is-default-class"
	betaDefaultClassAnnotation = "storageclass.beta.kubernetes.io/is-default-class"
)

// DefaultStorageClass gives a created claim without storageClassName the
// default StorageClass (the newest of those annotated as default), if
// there is one.
type DefaultStorageClass struct{}

// Name implements Plugin.
func (DefaultStorageClass) Name() string { return "DefaultStorageClass" }

// Mutate implements Mutator.
func (DefaultStorageClass) Mutate(s Store, a *Attributes) error {
	if a.Operation != Create || a.Kind() != pvcGK {
		return nil
	}
	spec := child(a.Object, "spec")
	if _, ok := spec["storageClassName"]; ok {
		return nil
	}
	scs, err := s.List(storageClassGK, "")
	if err != nil {
		return err
	}
	var defaults []map[string]any
	for _, sc := range scs {
		ann := peek(peek(sc, "metadata"), "annotations")
		if ann[defaultClassAnnotation] == "true" || ann[betaDefaultClassAnnotation] == "true" {
			defaults = append(defaults, sc)
		}
	}
	if len(defaults) == 0 {
		return nil
	}
	// The newest wins; on a tie, the name that sorts first.
	slices.SortStableFunc(defaults, func(a, b map[string]any) int {
		if c := strings.Compare(metaString(b, "creationTimestamp"), metaString(a, "creationTimestamp")); c != 0 {
			return c
		}
		return strings.Compare(metaString(a, "name"), metaString(b, "name"))
	})
	spec["storageClassName"] = metaString(defaults[0], "name")
	return nil
}

// StorageObjectInUseProtection gives created claims and volumes the
// finalizer that keeps them while a pod uses them.
type StorageObjectInUseProtection struct{}

// Name implements Plugin.
func (StorageObjectInUseProtection) Name() string { return "StorageObjectInUseProtection" }

// Mutate implements Mutator.
func (StorageObjectInUseProtection) Mutate(_ Store, a *Attributes) error {
	if a.Operation != Create {
		return nil
	}
	switch a.Kind() {
	case pvcGK:
		jsonobj.AddFinalizer(a.Object, "kubernetes.io/pvc-protection")
	case pvGK:
		jsonobj.AddFinalizer(a.Object, "kubernetes.io/pv-protection")
	}
	return nil
}
