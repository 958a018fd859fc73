package local

import (
	"context"
	"fmt"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/schema"
)

var _ cluster.SubresourceReader = (*Store)(nil)

// GetSubresource returns an object (its status subresource) or its
// autoscaling/v1 Scale.
func (s *Store) GetSubresource(ctx context.Context, gvk schema.GVK, namespace, name, subresource string) (cluster.Object, error) {
	var out cluster.Object
	err := s.view(ctx, func(t *txn) error {
		res, err := t.resource(gvk)
		if err != nil {
			return err
		}
		crd := t.crdVersion(res)
		switch {
		case subresource == "status" && res.Status:
		case subresource == "scale" && scalable[gkOf(res)]:
		case subresource == "scale" && crd != nil && crd.scale != nil:
		case crd != nil:
			// The custom resource handler answers a subresource its CRD
			// does not serve as the object not found.
			return cluster.NewNotFound(res.GroupResource(), name)
		default:
			return notFoundResource()
		}
		obj, err := t.get(gvk, namespace, name)
		if err != nil {
			return err
		}
		if subresource == "scale" && crd != nil {
			scale, found, err := crd.scale.of(obj)
			if err != nil {
				return internalError("Internal error occurred: " + err.Error())
			}
			if !found {
				return internalError(fmt.Sprintf("Internal error occurred: the spec replicas field %q does not exist", crd.scale.specReplicasPath))
			}
			out = scale
			return nil
		}
		if subresource == "scale" {
			out, err = scaleOf(obj)
			return err
		}
		out = obj
		return nil
	})
	return out, err
}
