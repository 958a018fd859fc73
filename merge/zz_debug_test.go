package merge

import (
	"testing"
	"github.com/konverge/konverge/value"
)

func TestZZDebug(t *testing.T) {
	k := genKinds[2]
	last := mustYAMLObject(t, `{"apiVersion":"v1","kind":"Service","spec":{"ports":[{"name":"p-c3","port":443,"protocol":"UDP"}]}}`)
	config := mustYAMLObject(t, `{"apiVersion":"v1","kind":"Service","spec":{"ports":[{"name":"p-c5","port":80,"protocol":"TCP","targetPort":80},{"name":"p-c4","port":53,"protocol":"UDP","targetPort":53}]}}`)
	live := mustYAMLObject(t, `{"apiVersion":"v1","kind":"Service","spec":{"ports":[{"port":53,"protocol":"TCP","targetPort":53},{"port":80,"protocol":"TCP","targetPort":80},{"port":443,"protocol":"UDP","targetPort":443},{"name":"p-c6","port":53,"protocol":"UDP","targetPort":53}]}}`)
	p, err := ThreeWay(last, config, live, k.Type(), Options{})
	b, _ := value.Encode(p)
	t.Logf("%s %v", b, err)
	r, err := Apply(live, p, k.Type())
	b, _ = value.Encode(r)
	t.Logf("%s %v", b, err)
}
