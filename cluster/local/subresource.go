package local

import (
	"context"

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
		switch {
		case subresource == "status" && res.Status:
		case subresource == "scale" && scalable[gkOf(res)]:
		default:
			return notFoundResource()
		}
		obj, err := t.get(gvk, namespace, name)
		if err != nil {
			return err
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
