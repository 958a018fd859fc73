package flags

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/konverge/konverge/apply"
	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/internal/printer"
)

func TestParseDryRun(t *testing.T) {
	for v, want := range map[string]apply.DryRun{"": apply.DryRunNone, "none": apply.DryRunNone, "false": apply.DryRunNone,
		"client": apply.DryRunClient, "true": apply.DryRunClient, "server": apply.DryRunServer} {
		if got, err := ParseDryRun(v); err != nil || got != want {
			t.Errorf("ParseDryRun(%q) = %q, %v; want %q", v, got, err, want)
		}
	}
	for v, msg := range map[string]string{
		"unchanged": "--dry-run flag without a value was specified",
		"yes":       `Invalid dry-run value (yes). Must be "none", "server", or "client".`,
	} {
		if _, err := ParseDryRun(v); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseDryRun(%q) error = %v, want %q", v, err, msg)
		}
	}
}

func TestDryRunFlagAlone(t *testing.T) {
	// --dry-run without a value is kubectl's error, not a default.
	var v string
	cmd := &cobra.Command{Use: "x", RunE: func(*cobra.Command, []string) error { return nil }}
	DryRun(cmd.Flags(), &v)
	cmd.SetArgs([]string{"--dry-run"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if _, err := ParseDryRun(v); err == nil {
		t.Errorf("--dry-run alone gave %q, which parses", v)
	}
}

func TestFieldValidation(t *testing.T) {
	for v, want := range map[string]cluster.FieldValidation{"strict": cluster.FieldValidationStrict, "true": cluster.FieldValidationStrict,
		"warn": cluster.FieldValidationWarn, "ignore": cluster.FieldValidationIgnore, "false": cluster.FieldValidationIgnore} {
		if got, err := FieldValidation(v); err != nil || got != want {
			t.Errorf("FieldValidation(%q) = %q, %v; want %q", v, got, err, want)
		}
	}
	if _, err := FieldValidation("loose"); err == nil {
		t.Error("FieldValidation(loose) passed")
	}
}

func TestChecks(t *testing.T) {
	for s, ok := range map[string]bool{"": true, "status": true, "scale": true, "spec": false} {
		if err := CheckSubresource(s); (err == nil) != ok {
			t.Errorf("CheckSubresource(%q) = %v", s, err)
		}
	}
	for s, ok := range map[string]bool{"": true, "app=web,tier in (a,b)": true, "app in (a": false} {
		if err := CheckSelector(s); (err == nil) != ok {
			t.Errorf("CheckSelector(%q) = %v", s, err)
		}
	}
	if (&FilenameFlags{}).Given() || !(&FilenameFlags{Kustomize: "dir"}).Given() || !(&FilenameFlags{Filenames: []string{"-"}}).Given() {
		t.Error("Given is not whether -f or -k was given")
	}
}

func TestManagedFieldsLeftOut(t *testing.T) {
	obj := func() map[string]any {
		return map[string]any{"kind": "ConfigMap", "metadata": map[string]any{"name": "a", "managedFields": []any{map[string]any{"manager": "m"}}}}
	}
	list := map[string]any{"kind": "List", "items": []any{obj(), map[string]any{"metadata": map[string]any{"name": "b"}}}}
	got := StripManagedFields(list).(map[string]any)
	want := map[string]any{"kind": "List", "items": []any{
		map[string]any{"kind": "ConfigMap", "metadata": map[string]any{"name": "a"}},
		map[string]any{"metadata": map[string]any{"name": "b"}}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("StripManagedFields(list) = %v, want %v", got, want)
	}
	if _, ok := list["items"].([]any)[0].(map[string]any)["metadata"].(map[string]any)["managedFields"]; !ok {
		t.Error("StripManagedFields changed its argument")
	}

	for _, c := range []struct {
		pf    PrintFlags
		strip bool
	}{
		{PrintFlags{Output: "yaml"}, true},
		{PrintFlags{Output: "json", ShowManagedFields: true}, false},
		{PrintFlags{Output: "jsonpath", Template: "{.metadata.name}"}, false},
	} {
		p, err := c.pf.ToPrinter(printer.GetFormats(), false, "")
		if err != nil {
			t.Fatal(err)
		}
		if StripsManagedFields(p) != c.strip {
			t.Errorf("%+v: StripsManagedFields = %v", c.pf, !c.strip)
		}
		if c.pf.Output == "yaml" {
			var b bytes.Buffer
			if err := p.PrintObject(&b, obj()); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(b.String(), "managedFields") {
				t.Errorf("-o yaml printed managedFields:\n%s", b.String())
			}
		}
	}
}
