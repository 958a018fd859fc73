package generate

import (
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/kubectl/pkg/util/hash"
)

// Namespace is the Namespace of create namespace.
func Namespace(name string) *corev1.Namespace {
	return &corev1.Namespace{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
	}
}

// ServiceAccount is the ServiceAccount of create serviceaccount.
func ServiceAccount(name, namespace string) *corev1.ServiceAccount {
	return &corev1.ServiceAccount{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
	}
}

// ConfigMap is a new ConfigMap to which keys are added with kubectl's
// checks (create configmap).
type ConfigMap struct{ *corev1.ConfigMap }

// NewConfigMap is an empty ConfigMap.
func NewConfigMap(name, namespace string) ConfigMap {
	return ConfigMap{&corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Data:       map[string]string{},
		BinaryData: map[string][]byte{},
	}}
}

func (c ConfigMap) check(key string) error {
	if errs := validation.IsConfigMapKey(key); len(errs) > 0 {
		return fmt.Errorf("%q is not a valid key name for a ConfigMap: %s", key, strings.Join(errs, ","))
	}
	if _, ok := c.Data[key]; ok {
		return fmt.Errorf("cannot add key %q, another key by that name already exists in Data for ConfigMap %q", key, c.Name)
	}
	if _, ok := c.BinaryData[key]; ok {
		return fmt.Errorf("cannot add key %q, another key by that name already exists in BinaryData for ConfigMap %q", key, c.Name)
	}
	return nil
}

// Add adds key with a text value (--from-literal, --from-env-file).
func (c ConfigMap) Add(key, value string) error {
	if err := c.check(key); err != nil {
		return err
	}
	c.Data[key] = value
	return nil
}

// AddFile adds key with a file's content: as text when it is UTF-8,
// else as binary data.
func (c ConfigMap) AddFile(key string, data []byte) error {
	if utf8.Valid(data) {
		return c.Add(key, string(data))
	}
	if err := c.check(key); err != nil {
		return err
	}
	c.BinaryData[key] = data
	return nil
}

// AppendHash adds kubectl's --append-hash suffix to the name.
func (c ConfigMap) AppendHash() error {
	h, err := hash.ConfigMapHash(c.ConfigMap)
	if err != nil {
		return err
	}
	c.Name += "-" + h
	return nil
}

// Secret is a new Secret to which keys are added with kubectl's checks
// (create secret).
type Secret struct{ *corev1.Secret }

// NewSecret is an empty Secret of type typ ("" is Opaque to the server).
func NewSecret(name, namespace string, typ corev1.SecretType) Secret {
	return Secret{&corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Type:       typ,
		Data:       map[string][]byte{},
	}}
}

// Add adds key with data.
func (s Secret) Add(key string, data []byte) error {
	if errs := validation.IsConfigMapKey(key); len(errs) != 0 {
		return fmt.Errorf("%q is not valid key name for a Secret %s", key, strings.Join(errs, ";"))
	}
	if _, ok := s.Data[key]; ok {
		return fmt.Errorf("cannot add key %s, another key by that name already exists", key)
	}
	s.Data[key] = data
	return nil
}

// AppendHash adds kubectl's --append-hash suffix to the name.
func (s Secret) AppendHash() error {
	h, err := hash.SecretHash(s.Secret)
	if err != nil {
		return err
	}
	s.Name += "-" + h
	return nil
}

// TLSSecret is the kubernetes.io/tls Secret of a certificate and its key
// (PEM), which must make a key pair.
func TLSSecret(name, namespace string, cert, key []byte) (Secret, error) {
	if _, err := tls.X509KeyPair(cert, key); err != nil {
		return Secret{}, err
	}
	s := NewSecret(name, namespace, corev1.SecretTypeTLS)
	s.Data[corev1.TLSCertKey] = cert
	s.Data[corev1.TLSPrivateKeyKey] = key
	return s, nil
}

// RegistryCredentials are create secret docker-registry's account flags.
type RegistryCredentials struct {
	Username, Password, Email, Server string
}

// dockerConfigEntry is one registry's entry of a .dockerconfigjson.
type dockerConfigEntry struct {
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
	Email    string `json:"email,omitempty"`
	Auth     string `json:"auth,omitempty"`
}

type dockerConfigJSON struct {
	Auths       map[string]dockerConfigEntry `json:"auths"`
	HttpHeaders map[string]string            `json:"HttpHeaders,omitempty"`
}

// RegistrySecret is the kubernetes.io/dockerconfigjson Secret of one
// registry account.
func RegistrySecret(name, namespace string, c RegistryCredentials) (Secret, error) {
	b, err := json.Marshal(dockerConfigJSON{Auths: map[string]dockerConfigEntry{c.Server: {
		Username: c.Username, Password: c.Password, Email: c.Email,
		Auth: base64.StdEncoding.EncodeToString([]byte(c.Username + ":" + c.Password)),
	}}})
	if err != nil {
		return Secret{}, err
	}
	s := NewSecret(name, namespace, corev1.SecretTypeDockerConfigJson)
	s.Data[corev1.DockerConfigJsonKey] = b
	return s, nil
}

// ParseLiteralSource reads --from-literal's "key=value" as kubectl does.
func ParseLiteralSource(source string) (key, value string, err error) {
	if strings.Index(source, "=") == 0 {
		return "", "", fmt.Errorf("invalid literal source %v, expected key=value", source)
	}
	k, v, ok := strings.Cut(source, "=")
	if !ok {
		return "", "", fmt.Errorf("invalid literal source %v, expected key=value", source)
	}
	return k, v, nil
}

// ParseFileSource reads --from-file's "[key=]path" as kubectl does: the
// key is the file's name when not given.
func ParseFileSource(source string) (key, file string, err error) {
	n := strings.Count(source, "=")
	switch {
	case n == 0:
		return path.Base(filepath.ToSlash(source)), source, nil
	case n == 1 && strings.HasPrefix(source, "="):
		return "", "", fmt.Errorf("key name for file path %v missing", strings.TrimPrefix(source, "="))
	case n == 1 && strings.HasSuffix(source, "="):
		return "", "", fmt.Errorf("file path for key name %v missing", strings.TrimSuffix(source, "="))
	case n > 1:
		return "", "", errors.New("key names or file paths cannot contain '='")
	}
	k, f, _ := strings.Cut(source, "=")
	return k, f, nil
}
