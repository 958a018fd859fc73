package printer

import (
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/printers"
)

// jsonPathPrinter is kubectl's -o jsonpath: cli-runtime's JSONPath printer,
// the one kubectl runs, over the object.
type jsonPathPrinter struct {
	p *printers.JSONPathPrinter
}

func newJSONPathPrinter(tmpl string, allowMissing, asJSON bool) (*jsonPathPrinter, error) {
	p, err := printers.NewJSONPathPrinter(tmpl)
	if err != nil {
		return nil, fmt.Errorf("error parsing jsonpath %s, %v", tmpl, err)
	}
	p.AllowMissingKeys(allowMissing)
	p.EnableJSONOutput(asJSON)
	return &jsonPathPrinter{p: p}, nil
}

// PrintObject executes the template on obj.
func (p *jsonPathPrinter) PrintObject(w io.Writer, obj any) error {
	u, err := unstructuredOf(obj)
	if err != nil {
		return err
	}
	return p.p.PrintObj(u, w)
}

// templatePrinter is kubectl's -o go-template: cli-runtime's Go template
// printer, with its functions exists and base64decode.
type templatePrinter struct {
	p *printers.GoTemplatePrinter
}

func newTemplatePrinter(tmpl string, allowMissing bool) (*templatePrinter, error) {
	p, err := printers.NewGoTemplatePrinter([]byte(tmpl))
	if err != nil {
		return nil, fmt.Errorf("error parsing template %s, %v", tmpl, err)
	}
	p.AllowMissingKeys(allowMissing)
	return &templatePrinter{p: p}, nil
}

// PrintObject executes the template on obj; on failure cli-runtime prints
// what kubectl prints to help debug the template, and the error returns.
func (p *templatePrinter) PrintObject(w io.Writer, obj any) error {
	u, err := unstructuredOf(obj)
	if err != nil {
		return err
	}
	return p.p.PrintObj(u, w)
}

// unstructuredOf wraps an object (a Raw document or a decoded one) for
// cli-runtime's printers.
func unstructuredOf(obj any) (*unstructured.Unstructured, error) {
	v, err := plain(obj)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("printing %T: not an object", v)
	}
	return &unstructured.Unstructured{Object: m}, nil
}
