package merge

import (
	"fmt"
	"testing"

	"github.com/konverge/konverge/schema"
)

func dumpT(t *schema.Type, name string, depth int, seen map[*schema.Type]bool) {
	if depth > 7 || t == nil {
		return
	}
	ind := ""
	for i := 0; i < depth; i++ {
		ind += "  "
	}
	fmt.Printf("%s%s: %s %s %s mk=%s keys=%v rk=%v repl=%v def=%v\n", ind, name, t.Kind, t.Name, t.ListType, t.MergeKey, t.Keys, t.RetainKeys, t.Replace, t.Default)
	if seen[t] {
		return
	}
	seen[t] = true
	for k, f := range t.Fields {
		dumpT(f, k, depth+1, seen)
	}
	if t.Elem != nil {
		dumpT(t.Elem, "[]", depth+1, seen)
	}
}

func TestZZProbe(t *testing.T) {
	for _, k := range []schema.GVK{{Group: "apps", Version: "v1", Kind: "Deployment"}, {Version: "v1", Kind: "Service"}} {
		dumpT(schema.Builtin().Lookup(k), k.Kind, 0, map[*schema.Type]bool{})
	}
}
