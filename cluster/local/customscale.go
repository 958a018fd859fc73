package local

import (
	"fmt"
	"math"
	"strings"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/validate"
)

// path splits a replicas or selector path of a CRD (".spec.replicas"),
// ignoring the leading period.
func scalePath(p string) []string {
	return strings.Split(strings.TrimPrefix(p, "."), ".")
}

// nested returns the value at path, whether it is there, and an error
// when something on the way is not an object (apimachinery's
// NestedFieldNoCopy).
func nested(obj map[string]any, path []string) (any, bool, error) {
	var cur any = obj
	for i, f := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			if cur == nil {
				return nil, false, nil
			}
			return nil, false, fmt.Errorf("%v accessor error: %v is of the type %s, expected map[string]interface{}", "."+strings.Join(path[:i+1], "."), cur, goType(cur))
		}
		if cur, ok = m[f]; !ok {
			return nil, false, nil
		}
	}
	return cur, true, nil
}

// nestedInt64 is apimachinery's NestedInt64.
func nestedInt64(obj map[string]any, path []string) (int64, bool, error) {
	v, found, err := nested(obj, path)
	if !found || err != nil {
		return 0, found, err
	}
	n, ok := v.(int64)
	if !ok {
		return 0, false, fmt.Errorf("%v accessor error: %v is of the type %s, expected int64", "."+strings.Join(path, "."), v, goType(v))
	}
	return n, true, nil
}

// nestedString is apimachinery's NestedString.
func nestedString(obj map[string]any, path []string) (string, bool, error) {
	v, found, err := nested(obj, path)
	if !found || err != nil {
		return "", found, err
	}
	s, ok := v.(string)
	if !ok {
		return "", false, fmt.Errorf("%v accessor error: %v is of the type %s, expected string", "."+strings.Join(path, "."), v, goType(v))
	}
	return s, true, nil
}

// goType names the Go type a JSON value decodes to in apimachinery.
func goType(v any) string {
	switch v.(type) {
	case map[string]any:
		return "map[string]interface {}"
	case []any:
		return "[]interface {}"
	default:
		return fmt.Sprintf("%T", v)
	}
}

// of is the autoscaling/v1 Scale of a custom resource (apiextensions'
// scaleFromCustomResource), and whether its spec replicas are set.
func (s *crdScale) of(obj map[string]any) (map[string]any, bool, error) {
	spec, found, err := nestedInt64(obj, scalePath(s.specReplicasPath))
	if err != nil {
		return nil, false, err
	}
	status, _, err := nestedInt64(obj, scalePath(s.statusReplicasPath))
	if err != nil {
		return nil, false, err
	}
	sst := map[string]any{"replicas": int64(int32(status))}
	if s.labelSelectorPath != "" {
		sel, _, err := nestedString(obj, scalePath(s.labelSelectorPath))
		if err != nil {
			return nil, false, err
		}
		if sel != "" {
			sst["selector"] = sel
		}
	}
	md := metadata(obj)
	smd := map[string]any{}
	for _, f := range []string{"name", "namespace", "uid", "resourceVersion", "creationTimestamp"} {
		if v, ok := md[f]; ok {
			smd[f] = v
		}
	}
	return map[string]any{
		"apiVersion": scaleGVK.APIVersion(), "kind": scaleGVK.Kind,
		"metadata": smd,
		"spec":     map[string]any{"replicas": int64(int32(spec))},
		"status":   sst,
	}, found, nil
}

// validate is the custom resource validator's check of the scale paths
// (ValidateScaleSpec and ValidateScaleStatus): replicas are integers from
// 0 to the largest int32, the selector a string.
func (s *crdScale) validate(obj map[string]any, spec bool) []cluster.Cause {
	var causes []cluster.Cause
	replicas := func(p string) {
		n, _, err := nestedInt64(obj, scalePath(p))
		switch {
		case err != nil:
			causes = append(causes, invalidCause(p, n, err.Error()))
		case n < 0:
			causes = append(causes, invalidCause(p, n, "should be a non-negative integer"))
		case n > math.MaxInt32:
			causes = append(causes, invalidCause(p, n, fmt.Sprintf("should be less than or equal to %v", math.MaxInt32)))
		}
	}
	if spec {
		replicas(s.specReplicasPath)
	}
	replicas(s.statusReplicasPath)
	if s.labelSelectorPath != "" {
		if sel, _, err := nestedString(obj, scalePath(s.labelSelectorPath)); err != nil {
			causes = append(causes, invalidCause(s.labelSelectorPath, sel, err.Error()))
		}
	}
	return causes
}

func invalidCause(field string, v any, msg string) cluster.Cause {
	return validate.ToCauses([]validate.Error{{Type: validate.ErrorTypeInvalid, Field: field, BadValue: v, Detail: msg}})[0]
}
