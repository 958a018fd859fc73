package kubelet_test

import (
	"fmt"

	"github.com/konverge/konverge/kubelet"
)

// A simulation profile says which images pull and how containers behave;
// ParseProfile rejects unknown fields.
func ExampleParseProfile() {
	_, err := kubelet.ParseProfile([]byte("imagez: []\n"))
	fmt.Println(err != nil)
	p, err := kubelet.ParseProfile(kubelet.DefaultProfileYAML())
	fmt.Println(p != nil, err)
	// Output:
	// true
	// true <nil>
}
