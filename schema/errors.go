package schema

import "fmt"

// Error is a problem at one position of a schema document: an OpenAPI
// definition or a CustomResourceDefinition.
type Error struct {
	// Source names the document: `openapi definition
	// "io.k8s.api.apps.v1.DeploymentSpec"` or `customresourcedefinition
	// "widgets.example.com"`.
	Source string
	// Path is the position inside the document, in the document's own
	// terms: ".properties.spec.items", or for a CRD
	// ".spec.versions[0].schema.openAPIV3Schema.properties.spec".
	Path string
	// Err is the problem.
	Err error
}

func (e *Error) Error() string {
	switch {
	case e.Source == "":
		return fmt.Sprintf("schema: %s: %v", e.Path, e.Err)
	case e.Path == "":
		return fmt.Sprintf("schema: %s: %v", e.Source, e.Err)
	}
	return fmt.Sprintf("schema: %s: %s: %v", e.Source, e.Path, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }
