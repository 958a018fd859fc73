package explain

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	clientopenapi "k8s.io/client-go/openapi"
	kubectlexplain "k8s.io/kubectl/pkg/explain/v2"
)

// GVR names a resource of an API group version, as a document's paths
// name it ("/apis/apps/v1/deployments").
type GVR struct {
	Group, Version, Resource string
}

// String is how kubectl names a GVR in its errors:
// "apps/v1, Resource=deployments" ("/v1, Resource=pods" for the core
// group).
func (r GVR) String() string {
	return r.Group + "/" + r.Version + ", Resource=" + r.Resource
}

// Request is what to explain.
type Request struct {
	// GVR is the resource whose kind is explained; the document's paths
	// say which kind it serves.
	GVR GVR
	// FieldPath is the field to explain ("spec", "template"), empty for
	// the kind itself.
	FieldPath []string
	// Recursive prints the names and types of the fields of fields, down
	// to MaxDepth levels (0: all).
	Recursive bool
	MaxDepth  int
}

// Error is a failure that kubectl explain's template reports itself
// ("field \"nope\" does not exist"), without its "error: " prefix.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

// Render writes the explanation of req from doc, an OpenAPI v3 document
// of req.GVR's group version as JSON values (paths and
// components.schemas): it hands the document to kubectl's own explain
// (k8s.io/kubectl/pkg/explain/v2, plaintext output). What kubectl printed
// before it failed stays written (the GROUP/KIND/VERSION header before a
// missing field's error); a failure the template reports is an *Error.
func Render(w io.Writer, doc map[string]any, req Request) error {
	raw, err := json.Marshal(doc)
	if err != nil {
		return fmt.Errorf("explain: encoding the document of %v: %w", req.GVR, err)
	}
	path := "api/" + req.GVR.Version
	if req.GVR.Group != "" {
		path = "apis/" + req.GVR.Group + "/" + req.GVR.Version
	}
	fields := req.FieldPath
	if fields == nil {
		fields = []string{}
	}
	gvr := k8sschema.GroupVersionResource{Group: req.GVR.Group, Version: req.GVR.Version, Resource: req.GVR.Resource}
	err = kubectlexplain.PrintModelDescription(fields, w, oneDocument{path: path, doc: raw}, gvr, req.Recursive, req.MaxDepth, "plaintext")
	// kubectl returns what its template throws as a bare error whose text
	// starts with "error: "; anything else it wraps.
	if err != nil && errors.Unwrap(err) == nil {
		if msg, ok := strings.CutPrefix(err.Error(), "error: "); ok {
			return &Error{Msg: msg}
		}
	}
	return err
}

// oneDocument is an OpenAPI v3 client that knows one group version's
// document, already encoded.
type oneDocument struct {
	path string
	doc  []byte
}

func (c oneDocument) Paths() (map[string]clientopenapi.GroupVersion, error) {
	return map[string]clientopenapi.GroupVersion{c.path: encodedDocument(c.doc)}, nil
}

type encodedDocument []byte

func (d encodedDocument) Schema(string) ([]byte, error) { return d, nil }

func (d encodedDocument) ServerRelativeURL() string { return "/openapi/v3/konverge" }
