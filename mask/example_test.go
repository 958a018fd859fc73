package mask_test

import (
	"fmt"

	"github.com/konverge/konverge/mask"
)

// Two versions of a Secret, masked together: the key whose value changes
// shows as changed, without its values.
func ExamplePair() {
	before := map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "creds"},
		"data":     map[string]any{"user": "YWRtaW4=", "password": "czNjcjN0"}}
	after := map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "creds"},
		"data":     map[string]any{"user": "YWRtaW4=", "password": "bjN3"}}
	b, a := mask.Pair(before, after)
	fmt.Println(b["data"])
	fmt.Println(a["data"])
	fmt.Println(before["data"].(map[string]any)["password"]) // not modified
	// Output:
	// map[password:*** (before) user:***]
	// map[password:*** (after) user:***]
	// czNjcjN0
}

// A patch keeps its nulls, which delete keys and hold no value.
func ExamplePatch() {
	patch := map[string]any{"stringData": map[string]any{"token": "t0ps3cret", "old": nil}}
	fmt.Println(mask.Patch(patch))
	// Output:
	// map[stringData:map[old:<nil> token:***]]
}

// Text is the safety net for messages that may quote a Secret.
func ExampleText() {
	secret := map[string]any{"data": map[string]any{"token": "dDBwczNjcmV0"}}
	fmt.Println(mask.Text(`invalid value "t0ps3cret" for token`, secret))
	// Output:
	// invalid value "***" for token
}
