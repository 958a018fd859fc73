package quantity_test

import (
	"fmt"

	"github.com/konverge/konverge/quantity"
)

func ExampleCanonical() {
	for _, s := range []string{"0.5", "1000m", "1.5Gi", "1024Mi", "100Mi", "2000000000m", "1e3"} {
		c, err := quantity.Canonical(s)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%s -> %s\n", s, c)
	}
	// Output:
	// 0.5 -> 500m
	// 1000m -> 1
	// 1.5Gi -> 1536Mi
	// 1024Mi -> 1Gi
	// 100Mi -> 100Mi
	// 2000000000m -> 2M
	// 1e3 -> 1e3
}

func ExampleParse() {
	q, err := quantity.Parse("1.5Gi")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(q, q.Format(), q.Value())

	_, err = quantity.Parse("1.5GB")
	fmt.Println(err)
	// Output:
	// 1536Mi BinarySI 1610612736
	// quantity: "1.5GB": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'
}

func ExampleQuantity_Cmp() {
	limit, _ := quantity.Parse("1Gi")
	request, _ := quantity.Parse("1073741824")
	fmt.Println(limit.Cmp(request))
	// Output: 0
}

func ExampleQuantity_MilliValue() {
	cpu, _ := quantity.Parse("1.5")
	fmt.Println(cpu.MilliValue())
	// Output: 1500
}

func ExampleNormalize() {
	// A manifest decoded from YAML: numbers are float64 or int64.
	resources := map[string]any{"cpu": 0.5, "memory": int64(1024), "ephemeral-storage": "1.5Gi"}
	for _, name := range []string{"cpu", "memory", "ephemeral-storage"} {
		v, err := quantity.Normalize(resources[name])
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%s: %q\n", name, v)
	}
	// Output:
	// cpu: "500m"
	// memory: "1024"
	// ephemeral-storage: "1536Mi"
}
