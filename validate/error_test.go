package validate

import "testing"

// TestErrorFormat pins the printed form of each error type, as
// apimachinery's field.Error prints it.
func TestErrorFormat(t *testing.T) {
	p := newPath("spec", "template").child("spec", "containers").at(0).child("resources", "limits").key("cpu")
	tests := []struct {
		err  Error
		want string
	}{
		{required(newPath("spec", "selector"), ""), "spec.selector: Required value"},
		{required(newPath("spec"), "must specify a handler type"), "spec: Required value: must specify a handler type"},
		{invalid(newPath("spec", "replicas"), int64(-1), isNegativeErrorMsg), "spec.replicas: Invalid value: -1: must be greater than or equal to 0"},
		{invalid(newPath("a"), "x\"y", "d"), `a: Invalid value: "x\"y": d`},
		{invalid(newPath("a"), map[string]any{"b": "1", "a": "<"}, "d"), `a: Invalid value: {"a":"\u003c","b":"1"}: d`},
		{invalid(newPath("a"), goValue(`{"Type":"Foo"}`), "d"), `a: Invalid value: {"Type":"Foo"}: d`},
		{invalid(newPath("a"), true, "d"), `a: Invalid value: true: d`},
		{notSupported(newPath("spec", "strategy", "type"), "Foo", "Recreate", "RollingUpdate"), `spec.strategy.type: Unsupported value: "Foo": supported values: "Recreate", "RollingUpdate"`},
		{duplicate(p, "nginx"), `spec.template.spec.containers[0].resources.limits[cpu]: Duplicate value: "nginx"`},
		{forbidden(newPath("spec", "rollingUpdate"), "x"), "spec.rollingUpdate: Forbidden: x"},
		{notFound(newPath("v").at(2).child("name"), "x"), `v[2].name: Not found: "x"`},
		{tooLong(newPath("metadata", "annotations"), 262144), "metadata.annotations: Too long: may not be more than 262144 bytes"},
		{tooLong(newPath(""), 1048576), "[]: Too long: may not be more than 1048576 bytes"},
		{tooMany(newPath("l"), 4, 3), "l: Too many: 4: must have at most 3 items"},
		{tooMany(newPath("l"), -1, 1), "l: Too many: must have at most 1 item"},
		{typeInvalid(newPath("spec", "x"), "string", "spec.x in body must be of type integer: \"string\""), `spec.x: Invalid value: "string": spec.x in body must be of type integer: "string"`},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("got  %s\nwant %s", got, tt.want)
		}
	}
	causes := ToCauses([]Error{tests[0].err})
	if causes[0].Type != "FieldValueRequired" || causes[0].Field != "spec.selector" || causes[0].Message != "Required value" {
		t.Errorf("ToCauses = %+v", causes)
	}
}
