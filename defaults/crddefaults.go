package defaults

import "strings"

// CustomResourceDefinition fills in the defaults kube-apiserver gives an
// apiextensions.k8s.io/v1 CustomResourceDefinition when it decodes one:
// spec.conversion {strategy: None} when the CRD names no conversion, and
// spec.names.singular (the kind in lower case) and spec.names.listKind
// (the kind followed by "List") when they are empty. It is the one
// implementation of these defaults: the embedded cluster's store applies
// it to every CRD it writes, and normalize.Server to the CRDs it
// normalizes, so that a CRD as written compares equal to the CRD as
// stored. Values of the wrong type are left for validation to report.
func CustomResourceDefinition(obj map[string]any) {
	spec := childMap(obj, "spec")
	if spec == nil {
		return
	}
	if _, ok := spec["conversion"].(map[string]any); !ok {
		spec["conversion"] = map[string]any{"strategy": "None"}
	}
	// A conversion webhook's service port defaults to 443.
	conv, _ := spec["conversion"].(map[string]any)
	webhook, _ := conv["webhook"].(map[string]any)
	cc, _ := webhook["clientConfig"].(map[string]any)
	if svc, ok := cc["service"].(map[string]any); ok {
		if _, ok := svc["port"]; !ok {
			svc["port"] = int64(443)
		}
	}
	names := childMap(spec, "names")
	if names == nil {
		return
	}
	kind, _ := names["kind"].(string)
	if kind == "" {
		return
	}
	if s, _ := names["singular"].(string); s == "" {
		names["singular"] = strings.ToLower(kind)
	}
	if s, _ := names["listKind"].(string); s == "" {
		names["listKind"] = kind + "List"
	}
}

// IsCustomResourceDefinition reports whether apiVersion and kind name an
// apiextensions.k8s.io/v1 CustomResourceDefinition, whose defaults are
// CustomResourceDefinition.
func IsCustomResourceDefinition(apiVersion, kind string) bool {
	return apiVersion == "apiextensions.k8s.io/v1" && kind == "CustomResourceDefinition"
}

// childMap returns m[field] as an object, creating it when it is absent or
// null; nil when it holds something else.
func childMap(m map[string]any, field string) map[string]any {
	switch v := m[field].(type) {
	case map[string]any:
		return v
	case nil:
		c := map[string]any{}
		m[field] = c
		return c
	}
	return nil
}
