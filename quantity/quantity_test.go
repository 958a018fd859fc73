package quantity_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/konverge/konverge/quantity"
)

func TestCanonical(t *testing.T) {
	tests := []struct {
		name, in, want string
		format         quantity.Format
	}{
		{name: "half a CPU", in: "0.5", want: "500m", format: quantity.DecimalSI},
		{name: "a thousand millis", in: "1000m", want: "1", format: quantity.DecimalSI},
		{name: "fraction of Gi", in: "1.5Gi", want: "1536Mi", format: quantity.BinarySI},
		{name: "tenth", in: "0.1", want: "100m", format: quantity.DecimalSI},
		{name: "1024Mi is 1Gi", in: "1024Mi", want: "1Gi", format: quantity.BinarySI},
		{name: "100Mi stays", in: "100Mi", want: "100Mi", format: quantity.BinarySI},
		{name: "billions of millis", in: "2000000000m", want: "2M", format: quantity.DecimalSI},
		{name: "negative", in: "-1.5Gi", want: "-1536Mi", format: quantity.BinarySI},
		{name: "negative millis", in: "-0.5", want: "-500m", format: quantity.DecimalSI},
		{name: "below nano rounds up", in: "0.1n", want: "1n", format: quantity.DecimalSI},
		{name: "below nano rounds away from zero", in: "-0.0000000001", want: "-1n", format: quantity.DecimalSI},
		{name: "half Ki is 512", in: "0.5Ki", want: "512", format: quantity.BinarySI},
		{name: "fraction of Ki", in: "1.1Ki", want: "1126400m", format: quantity.BinarySI},
		{name: "fraction of Ki above one", in: "0.001Ki", want: "1024m", format: quantity.BinarySI},
		{name: "Ki below one is DecimalSI", in: "0.0005Ki", want: "512m", format: quantity.DecimalSI},
		{name: "binary cap", in: "100Ei", want: "9223372036854775807", format: quantity.BinarySI},
		{name: "exponent kept as written", in: "1e3", want: "1e3", format: quantity.DecimalExponent},
		{name: "negative exponent kept", in: "12e-3", want: "12e-3", format: quantity.DecimalExponent},
		{name: "exponent to multiple of 3", in: "15e-1", want: "1500e-3", format: quantity.DecimalExponent},
		{name: "exponent beyond nano", in: "1e-10", want: "1e-9", format: quantity.DecimalExponent},
		{name: "large exponent", in: "1e100", want: "10e99", format: quantity.DecimalExponent},
		{name: "plus sign kept", in: "+1", want: "+1", format: quantity.DecimalSI},
		{name: "large integer", in: "12345678901234567890123", want: "12345678901234567890123", format: quantity.DecimalSI},
		{name: "beyond E loses suffix", in: "1000E", want: "1", format: quantity.DecimalSI},
		{name: "zero", in: "0", want: "0", format: quantity.DecimalSI},
		{name: "zero with suffix", in: "0Gi", want: "0", format: quantity.BinarySI},
		{name: "zero millis", in: "0.000m", want: "0", format: quantity.DecimalSI},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := quantity.Canonical(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Canonical(%q) = %q, want %q", tt.in, got, tt.want)
			}
			q, _ := quantity.Parse(tt.in)
			if q.Format() != tt.format {
				t.Errorf("Parse(%q).Format() = %q, want %q", tt.in, q.Format(), tt.format)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, in string
		want     error
		msg      string
	}{
		{name: "empty", in: "", want: quantity.ErrFormatWrong,
			msg: `quantity: "": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`},
		{name: "unknown suffix", in: "1Q", want: quantity.ErrFormatWrong},
		{name: "lowercase binary suffix", in: "1ki", want: quantity.ErrSuffix,
			msg: `quantity: "1ki": unable to parse quantity's suffix`},
		{name: "two exponents", in: "1ee3", want: quantity.ErrSuffix},
		{name: "two signs", in: "--1", want: quantity.ErrSuffix},
		{name: "space", in: " 1", want: quantity.ErrFormatWrong},
		{name: "two points", in: "1.5.5", want: quantity.ErrFormatWrong},
		{name: "point alone with Ei", in: ".Ei", want: quantity.ErrNumeric,
			msg: `quantity: ".Ei": unable to parse numeric part of quantity`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := quantity.Parse(tt.in)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Parse(%q) error = %v, want %v", tt.in, err, tt.want)
			}
			var qe *quantity.Error
			if !errors.As(err, &qe) || qe.Input != tt.in {
				t.Fatalf("Parse(%q) error %#v does not name the input", tt.in, err)
			}
			if tt.msg != "" && err.Error() != tt.msg {
				t.Errorf("Parse(%q) error\n got: %s\nwant: %s", tt.in, err, tt.msg)
			}
		})
	}
}

func TestCmpAndValues(t *testing.T) {
	tests := []struct {
		name       string
		a, b       string
		cmp        int
		value      int64
		milliValue int64
	}{
		{name: "equal in other units", a: "1Gi", b: "1073741824", cmp: 0, value: 1073741824, milliValue: 1073741824000},
		{name: "millis", a: "500m", b: "0.5", cmp: 0, value: 1, milliValue: 500},
		{name: "less", a: "100Mi", b: "1Gi", cmp: -1, value: 104857600, milliValue: 104857600000},
		{name: "greater", a: "2", b: "1999m", cmp: 1, value: 2, milliValue: 2000},
		{name: "negative", a: "-1.5", b: "-1", cmp: -1, value: -2, milliValue: -1500},
		{name: "nano rounding makes equal", a: "0.0000000001", b: "1n", cmp: 0, value: 1, milliValue: 1},
		{name: "exponent", a: "1e3", b: "1k", cmp: 0, value: 1000, milliValue: 1000000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := quantity.Parse(tt.a)
			if err != nil {
				t.Fatal(err)
			}
			b, err := quantity.Parse(tt.b)
			if err != nil {
				t.Fatal(err)
			}
			if got := a.Cmp(b); got != tt.cmp {
				t.Errorf("Cmp = %d, want %d", got, tt.cmp)
			}
			if got := b.Cmp(a); got != -tt.cmp {
				t.Errorf("reverse Cmp = %d, want %d", got, -tt.cmp)
			}
			if got := a.Value(); got != tt.value {
				t.Errorf("Value = %d, want %d", got, tt.value)
			}
			if got := a.MilliValue(); got != tt.milliValue {
				t.Errorf("MilliValue = %d, want %d", got, tt.milliValue)
			}
		})
	}
}

func TestZeroQuantity(t *testing.T) {
	var q quantity.Quantity
	if q.String() != "0" || !q.IsZero() || q.Value() != 0 || q.Format() != quantity.DecimalSI {
		t.Errorf("zero Quantity = %q, IsZero %v, Value %d, Format %q", q.String(), q.IsZero(), q.Value(), q.Format())
	}
	one, _ := quantity.Parse("1")
	if q.Cmp(one) != -1 {
		t.Errorf("zero Quantity Cmp 1 = %d, want -1", q.Cmp(one))
	}
}

func TestNormalize(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want any
		err  string
	}{
		{name: "cpu as float", in: 0.5, want: "500m"},
		{name: "memory as integer", in: int64(1024), want: "1024"},
		{name: "memory as float integer", in: float64(1024), want: "1024"},
		{name: "int", in: 2, want: "2"},
		{name: "string", in: "1.5Gi", want: "1536Mi"},
		{name: "string with spaces", in: " 1Gi ", want: "1Gi"},
		{name: "json number", in: json.Number("1e3"), want: "1e3"},
		{name: "large float", in: 1e21, want: "1e+21"},
		{name: "small float is written with an exponent", in: 1e-7, want: "100e-9"},
		{name: "negative float", in: -0.25, want: "-250m"},
		{name: "float32", in: float32(0.1), want: "100m"},
		{name: "null stays", in: nil, want: nil},
		{name: "boolean", in: true, err: `quantity: "true": a quantity must be a string or a number, not a boolean`},
		{name: "object", in: map[string]any{}, err: `quantity: "map[]": a quantity must be a string or a number, not an object`},
		{name: "bad string", in: "1Q", err: `quantity: "1Q": quantities must match the regular expression`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := quantity.Normalize(tt.in)
			if tt.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.err) {
					t.Fatalf("Normalize(%v) error = %v, want %s", tt.in, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Normalize(%v) = %#v, want %#v", tt.in, got, tt.want)
			}
		})
	}
}

// TestNormalizeDifferential decodes JSON values into a resource.Quantity,
// as the API server does, and compares with Normalize of the same values
// decoded with UseNumber (the JSON text) and, where encoding/json writes
// the number back the same, as float64.
func TestNormalizeDifferential(t *testing.T) {
	docs := []string{`0.5`, `1024`, `"1Gi"`, `" 1 "`, `"1.5Gi"`, `1e3`, `1E3`, `1.50`, `-0.5`, `0.1`,
		`1e21`, `1e-7`, `100`, `2000000000`, `0.000000001`, `123456789012345678901234`, `"+1"`, `-0`}
	for _, doc := range docs {
		t.Run(doc, func(t *testing.T) {
			var ref resource.Quantity
			if err := json.Unmarshal([]byte(doc), &ref); err != nil {
				t.Fatal(err)
			}
			want := ref.String()

			dec := json.NewDecoder(strings.NewReader(doc))
			dec.UseNumber()
			var v any
			if err := dec.Decode(&v); err != nil {
				t.Fatal(err)
			}
			got, err := quantity.Normalize(v)
			if err != nil || got != want {
				t.Fatalf("Normalize(%#v) = %v, %v, want %q", v, got, err, want)
			}

			var f any
			if err := json.Unmarshal([]byte(doc), &f); err != nil {
				t.Fatal(err)
			}
			if x, ok := f.(float64); ok {
				text, _ := json.Marshal(x)
				if string(text) != doc {
					return // the float64 no longer holds the text apimachinery parses
				}
			}
			if got, err := quantity.Normalize(f); err != nil || got != want {
				t.Fatalf("Normalize(%#v) = %v, %v, want %q", f, got, err, want)
			}
		})
	}
}

func BenchmarkParse(b *testing.B) {
	inputs := []string{"500m", "0.5", "1.5Gi", "1024Mi", "100Mi", "2", "12e-3", "1.23456789012345678901"}
	b.Run("konverge", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if _, err := quantity.Parse(inputs[i%len(inputs)]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("apimachinery", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			q, err := resource.ParseQuantity(inputs[i%len(inputs)])
			if err != nil {
				b.Fatal(err)
			}
			_ = q.String()
		}
	})
}

// Quantities that apimachinery's arithmetic does not finish on (long
// numbers, huge exponents) parse, print and round at once here (a
// generous watchdog, not a timing).
func TestExtremeQuantitiesFinish(t *testing.T) {
	inputs := []string{
		"1" + strings.Repeat("0", 200000), strings.Repeat("9", 20000) + "e-5000", "0." + strings.Repeat("0", 100000) + "1",
		"12345678901234567890e2147483647", "99999999999999999999e-2147483648", "1234567890123456789e1000000",
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, s := range inputs {
			q, err := quantity.Parse(s)
			if err != nil {
				t.Errorf("%.20q: %v", s, err)
				continue
			}
			_ = q.String()
			_ = q.RoundUp(-3).String()
		}
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("parsing extreme quantities did not finish")
	}
}
