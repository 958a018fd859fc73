package generate

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestDataObjects(t *testing.T) {
	runGeneratorCases(t, []generatorCase{
		{name: "namespace", build: obj(Namespace("team")),
			want: `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team"},"spec":{},"status":{}}`},
		{name: "serviceaccount", build: obj(ServiceAccount("bot", "ns")),
			want: `{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"bot","namespace":"ns"}}`},
		{name: "configmap text and binary", build: func() (runtime.Object, error) {
			cm := NewConfigMap("settings", "")
			if err := cm.Add("mode", "fast"); err != nil {
				return nil, err
			}
			if err := cm.AddFile("blob", []byte{0xff, 0x00}); err != nil {
				return nil, err
			}
			return cm.ConfigMap, cm.AddFile("conf", []byte("a=1\n"))
		}, want: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"settings"},"data":{"conf":"a=1\n","mode":"fast"},"binaryData":{"blob":"/wA="}}`},
		{name: "configmap key twice", build: func() (runtime.Object, error) {
			cm := NewConfigMap("settings", "")
			_ = cm.AddFile("k", []byte{0xff})
			return cm.ConfigMap, cm.Add("k", "v")
		}, err: `cannot add key "k", another key by that name already exists in BinaryData for ConfigMap "settings"`},
		{name: "configmap bad key", build: func() (runtime.Object, error) {
			cm := NewConfigMap("settings", "")
			return cm.ConfigMap, cm.Add("a/b", "v")
		}, err: `"a/b" is not a valid key name for a ConfigMap`},
		{name: "configmap hash", build: func() (runtime.Object, error) {
			cm := NewConfigMap("settings", "")
			_ = cm.Add("mode", "fast")
			return cm.ConfigMap, cm.AppendHash()
		}, want: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"settings-` + configMapHashOf(t, "settings", "mode", "fast") + `"},"data":{"mode":"fast"}}`},
		{name: "secret", build: func() (runtime.Object, error) {
			s := NewSecret("db", "ns", "")
			return s.Secret, s.Add("password", []byte("s3cret"))
		}, want: `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"db","namespace":"ns"},"data":{"password":"czNjcmV0"}}`},
		{name: "secret key twice", build: func() (runtime.Object, error) {
			s := NewSecret("db", "", "")
			_ = s.Add("k", nil)
			return s.Secret, s.Add("k", nil)
		}, err: "cannot add key k, another key by that name already exists"},
		{name: "registry secret", build: func() (runtime.Object, error) {
			s, err := RegistrySecret("pull", "", RegistryCredentials{Username: "bot", Password: "pw", Server: "registry.example.com"})
			return s.Secret, err
		}, want: `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"pull"},"type":"kubernetes.io/dockerconfigjson",
			"data":{".dockerconfigjson":"eyJhdXRocyI6eyJyZWdpc3RyeS5leGFtcGxlLmNvbSI6eyJ1c2VybmFtZSI6ImJvdCIsInBhc3N3b3JkIjoicHciLCJhdXRoIjoiWW05ME9uQjMifX19"}}`},
		{name: "tls secret of no key pair", build: func() (runtime.Object, error) {
			s, err := TLSSecret("tls", "", []byte("not a cert"), []byte("not a key"))
			return s.Secret, err
		}, err: "failed to find any PEM data in certificate input"},
	})
}

// configMapHashOf is the --append-hash suffix of a config map of one key,
// computed through the API under test, so that the case pins the name's
// form and that the hash is of the content.
func configMapHashOf(t *testing.T, name, k, v string) string {
	cm := NewConfigMap(name, "")
	_ = cm.Add(k, v)
	if err := cm.AppendHash(); err != nil {
		t.Fatal(err)
	}
	other := NewConfigMap(name, "")
	_ = other.Add(k, v+"!")
	_ = other.AppendHash()
	if other.Name == cm.Name {
		t.Fatalf("two config maps of different data have the same hashed name %s", cm.Name)
	}
	return strings.TrimPrefix(cm.Name, name+"-")
}

func TestSources(t *testing.T) {
	for _, c := range []struct {
		source, key, value, err string
		file                    bool
	}{
		{source: "a=b=c", key: "a", value: "b=c"},
		{source: "a=", key: "a", value: ""},
		{source: "=b", err: "invalid literal source =b, expected key=value"},
		{source: "ab", err: "invalid literal source ab, expected key=value"},
		{source: "dir/conf.yaml", key: "conf.yaml", value: "dir/conf.yaml", file: true},
		{source: "k=dir/conf.yaml", key: "k", value: "dir/conf.yaml", file: true},
		{source: "=dir/f", err: "key name for file path dir/f missing", file: true},
		{source: "k=", err: "file path for key name k missing", file: true},
		{source: "k=a=b", err: "key names or file paths cannot contain '='", file: true},
	} {
		parse := ParseLiteralSource
		if c.file {
			parse = ParseFileSource
		}
		k, v, err := parse(c.source)
		switch {
		case c.err != "" && (err == nil || err.Error() != c.err):
			t.Errorf("%q: error %v, want %q", c.source, err, c.err)
		case c.err == "" && (err != nil || k != c.key || v != c.value):
			t.Errorf("%q: %q, %q, %v; want %q, %q", c.source, k, v, err, c.key, c.value)
		}
	}
}

func TestSecretType(t *testing.T) {
	if s := NewSecret("a", "", corev1.SecretTypeTLS); s.Type != corev1.SecretTypeTLS || s.Kind != "Secret" {
		t.Errorf("NewSecret = %+v", s.Secret)
	}
}
