package printer

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"reflect"
	"text/template"

	"k8s.io/client-go/util/jsonpath"
)

// jsonPathPrinter is kubectl's -o jsonpath: client-go's JSONPath (the
// dialect kubectl implements) over the object.
type jsonPathPrinter struct {
	raw string
	jp  *jsonpath.JSONPath
}

func newJSONPathPrinter(tmpl string, allowMissing, asJSON bool) (*jsonPathPrinter, error) {
	jp := jsonpath.New("out")
	if err := jp.Parse(tmpl); err != nil {
		return nil, fmt.Errorf("error parsing jsonpath %s, %v", tmpl, err)
	}
	jp.AllowMissingKeys(allowMissing)
	jp.EnableJSONOutput(asJSON)
	return &jsonPathPrinter{raw: tmpl, jp: jp}, nil
}

// PrintObject executes the template on obj.
func (p *jsonPathPrinter) PrintObject(w io.Writer, obj any) error {
	v, err := plain(obj)
	if err != nil {
		return err
	}
	if err := p.jp.Execute(w, v); err != nil {
		var buf bytes.Buffer
		fmt.Fprintf(&buf, "Error executing template: %v. Printing more information for debugging the template:\n", err)
		fmt.Fprintf(&buf, "\ttemplate was:\n\t\t%v\n", p.raw)
		fmt.Fprintf(&buf, "\tobject given to jsonpath engine was:\n\t\t%#v\n\n", v)
		return fmt.Errorf("error executing jsonpath %q: %v\n", p.raw, buf.String())
	}
	return nil
}

// templatePrinter is kubectl's -o go-template: text/template with
// kubectl's two functions, exists and base64decode.
type templatePrinter struct {
	raw string
	t   *template.Template
}

func newTemplatePrinter(tmpl string, allowMissing bool) (*templatePrinter, error) {
	t, err := template.New("output").Funcs(template.FuncMap{
		"exists":       exists,
		"base64decode": base64decode,
	}).Parse(tmpl)
	if err != nil {
		return nil, fmt.Errorf("error parsing template %s, %v", tmpl, err)
	}
	if allowMissing {
		t.Option("missingkey=default")
	} else {
		t.Option("missingkey=error")
	}
	return &templatePrinter{raw: tmpl, t: t}, nil
}

// PrintObject executes the template on obj; on failure it prints what
// kubectl prints to help debug the template, and returns the error.
func (p *templatePrinter) PrintObject(w io.Writer, obj any) error {
	v, err := plain(obj)
	if err != nil {
		return err
	}
	if err := p.execute(w, v); err != nil {
		data, _ := encode(obj)
		fmt.Fprintf(w, "Error executing template: %v. Printing more information for debugging the template:\n", err)
		fmt.Fprintf(w, "\ttemplate was:\n\t\t%v\n", p.raw)
		fmt.Fprintf(w, "\traw data was:\n\t\t%v\n", string(data))
		fmt.Fprintf(w, "\tobject given to template engine was:\n\t\t%+v\n\n", v)
		return fmt.Errorf("error executing template %q: %v", p.raw, err)
	}
	return nil
}

// execute runs the template, turning a panic of the template engine into
// an error.
func (p *templatePrinter) execute(w io.Writer, v any) (err error) {
	defer func() {
		if x := recover(); x != nil {
			err = fmt.Errorf("caught panic: %+v", x)
		}
	}()
	return p.t.Execute(w, v)
}

func base64decode(v string) (string, error) {
	data, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		return "", fmt.Errorf("base64 decode failed: %v", err)
	}
	return string(data), nil
}

// exists reports whether item has a value at the indices (map keys or
// list positions), as kubectl's template function of that name.
func exists(item any, indices ...any) bool {
	v := reflect.ValueOf(item)
	for _, i := range indices {
		index := reflect.ValueOf(i)
		var isNil bool
		if v, isNil = indirect(v); isNil {
			return false
		}
		switch v.Kind() {
		case reflect.Array, reflect.Slice, reflect.String:
			var x int64
			switch index.Kind() {
			case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
				x = index.Int()
			case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
				x = int64(index.Uint())
			default:
				return false
			}
			if x < 0 || x >= int64(v.Len()) {
				return false
			}
			v = v.Index(int(x))
		case reflect.Map:
			if !index.IsValid() {
				index = reflect.Zero(v.Type().Key())
			}
			if !index.Type().AssignableTo(v.Type().Key()) {
				return false
			}
			if x := v.MapIndex(index); x.IsValid() {
				v = x
			} else {
				v = reflect.Zero(v.Type().Elem())
			}
		default:
			return false
		}
	}
	_, isNil := indirect(v)
	return !isNil
}

func indirect(v reflect.Value) (rv reflect.Value, isNil bool) {
	for ; v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface; v = v.Elem() {
		if v.IsNil() {
			return v, true
		}
		if v.Kind() == reflect.Interface && v.NumMethod() > 0 {
			break
		}
	}
	return v, false
}
