package schema

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"sync"
)

//go:generate go run ./internal/gen

// builtinBase decodes the embedded registry of built-in kinds once. It is
// never modified: Builtin hands out registries layered on top of it.
var builtinBase = sync.OnceValues(decodeBuiltin)

// decodeBuiltin decodes the embedded registry.
func decodeBuiltin() (*Registry, error) {
	zr, err := gzip.NewReader(bytes.NewReader(builtinData))
	if err != nil {
		return nil, fmt.Errorf("schema: built-in kinds: %w", err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("schema: built-in kinds: %w", err)
	}
	own, err := decodeRegistry(data)
	if err != nil {
		return nil, fmt.Errorf("schema: built-in kinds: %w", err)
	}
	return &Registry{own: own}, nil
}

// Builtin returns a Registry of every kind that Kubernetes KubernetesVersion
// serves, from the OpenAPI v3 documents of its api/openapi-spec/v3
// directory, alpha and beta versions included.
//
// The table is embedded in the binary and decoded on the first call; every
// call shares the decoded Types. Each call returns a new Registry, so callers
// may Add their own kinds (CRDs) to it without affecting other callers; the
// call itself is cheap, but keep the Registry rather than calling Builtin
// per object.
//
// Builtin panics only if the embedded table is corrupt, which the package's
// tests rule out.
func Builtin() *Registry {
	base, err := builtinBase()
	if err != nil {
		panic(err)
	}
	return layered(base)
}

// objectMeta is the Type of metadata (io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta)
// without the default of any one position.
var objectMeta = sync.OnceValue(func() *Type {
	pod := Builtin().Lookup(GVK{Version: "v1", Kind: "Pod"})
	m := pod.Field("metadata")
	if m.KindOf() != Struct {
		return untyped
	}
	return &Type{Kind: Struct, Name: m.Name, Fields: m.Fields}
})
