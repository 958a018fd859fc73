package apply

import (
	"context"
	"fmt"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/defaults"
	"github.com/konverge/konverge/merge"
	"github.com/konverge/konverge/objref"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/validate"
	"github.com/konverge/konverge/value"
)

var crdGVK = schema.GVK{Group: crdGroup, Version: "v1", Kind: "CustomResourceDefinition"}

// inputCRD is one served version of a CustomResourceDefinition of the
// input: what custom resources of the same input are checked against before
// the API serves their kind.
type inputCRD struct {
	version schema.CRDVersion
	// openAPI is the version's schema.openAPIV3Schema, nil when none.
	openAPI map[string]any
}

// collectCRDs reads the CRDs of the input; one that does not convert is an
// error of its own.
func collectCRDs(items []*item, errs *errorList) (map[schema.GVK]*inputCRD, map[*item]bool) {
	out := map[schema.GVK]*inputCRD{}
	bad := map[*item]bool{}
	for _, it := range items {
		if !it.isCRD() {
			continue
		}
		versions, err := schema.FromCRD(it.config)
		if err != nil {
			errs.add(it, err)
			bad[it] = true
			continue
		}
		for _, v := range versions {
			if !v.Served {
				continue
			}
			out[v.GVK] = &inputCRD{version: v, openAPI: crdVersionSchema(it.config, v.GVK.Version)}
		}
	}
	return out, bad
}

// crdVersionSchema returns spec.versions[name=version].schema.openAPIV3Schema.
func crdVersionSchema(crd map[string]any, version string) map[string]any {
	spec, _ := crd["spec"].(map[string]any)
	versions, _ := spec["versions"].([]any)
	for _, v := range versions {
		vm, _ := v.(map[string]any)
		if name, _ := vm["name"].(string); name != version {
			continue
		}
		s, _ := vm["schema"].(map[string]any)
		o, _ := s["openAPIV3Schema"].(map[string]any)
		return o
	}
	return nil
}

// validate checks a custom resource as the API server will once its CRD
// is served: its merge schema, then pruned and defaulted, its metadata and
// its openAPIV3Schema. The problems found by the schema come as one Invalid
// error worded as the API server's.
func (c *inputCRD) validate(obj map[string]any, namespaced bool) error {
	if c.version.Type != nil {
		if err := merge.Validate(obj, c.version.Type); err != nil {
			return err
		}
	}
	cp := value.DeepCopyObject(obj)
	var errs []validate.Error
	if c.openAPI != nil {
		defaults.PruneUnknown(cp, c.openAPI)
		if err := defaults.ApplyCustomResource(cp, c.openAPI); err != nil {
			return err
		}
	}
	errs = validate.ObjectMeta(objref.Metadata(cp), nil, namespaced)
	if c.openAPI != nil {
		errs = append(errs, validate.CustomResource(cp, c.openAPI)...)
	}
	if len(errs) == 0 {
		return nil
	}
	gvk := c.version.GVK
	return cluster.NewInvalid(gvk.Kind+"."+gvk.Group, objref.Name(obj), validate.ToCauses(errs))
}

// waitEstablished waits until the CustomResourceDefinition name is
// Established and the API serves its kinds, as a real API server takes a
// moment to; a CRD whose names are refused fails at once.
func waitEstablished(ctx context.Context, c cluster.Interface, name string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	delay := 50 * time.Millisecond
	for {
		obj, err := c.Get(ctx, crdGVK, "", name)
		if err != nil {
			return fmt.Errorf("waiting for CustomResourceDefinition %s: %w", name, err)
		}
		established, refused := crdConditions(obj)
		if refused != "" {
			return fmt.Errorf("CustomResourceDefinition %s: names not accepted: %s", name, refused)
		}
		if established && servesCRD(c.Mapper(), obj) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %s waiting for CustomResourceDefinition %s to be established", timeout, name)
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		delay = min(2*delay, time.Second)
	}
}

// crdConditions reads the Established condition, and the message of a
// NamesAccepted condition that is False.
func crdConditions(obj map[string]any) (established bool, refused string) {
	status, _ := obj["status"].(map[string]any)
	conds, _ := status["conditions"].([]any)
	for _, c := range conds {
		cm, _ := c.(map[string]any)
		typ, _ := cm["type"].(string)
		st, _ := cm["status"].(string)
		switch {
		case typ == "Established" && st == "True":
			established = true
		case typ == "NamesAccepted" && st == "False":
			refused, _ = cm["message"].(string)
			if refused == "" {
				refused = "NamesAccepted is False"
			}
		}
	}
	return established, refused
}

// servesCRD reports whether the mapper serves every served version of crd.
func servesCRD(m cluster.Mapper, crd map[string]any) bool {
	versions, err := schema.FromCRD(crd)
	if err != nil {
		return true // the server took it; nothing more to wait for
	}
	for _, v := range versions {
		if !v.Served {
			continue
		}
		if _, err := m.ResourceFor(v.GVK); err != nil {
			return false
		}
	}
	return true
}
