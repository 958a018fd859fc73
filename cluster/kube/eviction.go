package kube

import (
	"context"
	"encoding/json"

	"github.com/konverge/konverge/cluster"
	kschema "github.com/konverge/konverge/schema"
)

var _ cluster.Evicter = (*Cluster)(nil)

// eviction is a policy/v1 Eviction as the pods/eviction subresource
// takes it.
type eviction struct {
	APIVersion    string         `json:"apiVersion"`
	Kind          string         `json:"kind"`
	Metadata      map[string]any `json:"metadata"`
	DeleteOptions deleteOptions  `json:"deleteOptions"`
}

// Evict implements cluster.Evicter: a POST of an Eviction to the pod's
// eviction subresource.
func (c *Cluster) Evict(ctx context.Context, namespace, name string, opts ...cluster.DeleteOption) error {
	if namespace == "" {
		namespace = "default"
	}
	p, err := c.item(kschema.GVK{Version: "v1", Kind: "Pod"}, namespace, name, "eviction")
	if err != nil {
		return err
	}
	body, err := json.Marshal(eviction{
		APIVersion:    "policy/v1",
		Kind:          "Eviction",
		Metadata:      map[string]any{"name": name, "namespace": namespace},
		DeleteOptions: deleteOptionsOf(cluster.CollectDelete(opts)),
	})
	if err != nil {
		return err
	}
	return convert(c.rc.Post().AbsPath(p...).Body(body).Do(ctx).Error())
}
