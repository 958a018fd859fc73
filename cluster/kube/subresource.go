package kube

import (
	"context"

	"github.com/konverge/konverge/cluster"

	kschema "github.com/konverge/konverge/schema"
)

var _ cluster.SubresourceReader = (*Cluster)(nil)

// GetSubresource implements cluster.SubresourceReader.
func (c *Cluster) GetSubresource(ctx context.Context, gvk kschema.GVK, namespace, name, subresource string) (cluster.Object, error) {
	p, err := c.item(gvk, namespace, name, subresource)
	if err != nil {
		return nil, err
	}
	return object(c.rc.Get().AbsPath(p...).Do(ctx))
}
