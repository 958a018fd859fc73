// Package value is konverge's one representation of Kubernetes objects: JSON
// values decoded into map[string]any, []any, string, int64, float64, bool and
// nil, exactly what unstructured.Unstructured holds, so that objects pass
// between client-go and konverge without a copy.
//
// It decodes JSON quickly into that form (rejecting duplicate keys and
// documents nested too deeply), encodes it back the way Go's encoding/json
// does (sorted keys, HTML-safe escapes; the bytes kubectl writes into the
// last-applied annotation), compares values (numbers by value), copies them,
// and names positions inside them with Path, the one field-path type every
// konverge error carries.
//
// It knows nothing of schemas or merging; see packages schema and merge.
package value
