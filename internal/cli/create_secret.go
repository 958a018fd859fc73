package cli

import (
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/kubectl/pkg/util/hash"
)

// The generators of TLS and registry secrets (kubectl create secret tls
// and docker-registry), and the name hashes of --append-hash.

func newCreateSecretTLSCmd(g *Globals) *cobra.Command {
	f := &generatorFlags{g: g}
	var cert, key string
	var appendHash bool
	cmd := &cobra.Command{
		Use:     "tls NAME --cert=path/to/cert/file --key=path/to/key/file [--dry-run=server|client|none]",
		Short:   "Create a TLS secret",
		Example: "  # Create a new TLS secret named tls-secret with the given key pair\n  konverge create secret tls tls-secret --cert=path/to/tls.crt --key=path/to/tls.key",
		RunE: func(cmd *cobra.Command, args []string) error {
			g.complete(cmd)
			name, err := f.oneName(args)
			if err != nil {
				return failOne(g.ErrOut, err)
			}
			if key == "" || cert == "" {
				return failOne(g.ErrOut, fmt.Errorf("key and cert must be specified"))
			}
			read := func(p string) ([]byte, error) {
				b, err := os.ReadFile(p)
				if err != nil {
					//lint:ignore ST1005 kubectl's message, word for word (users and scripts match it)
					return nil, fmt.Errorf("Cannot read file %v, %v", p, err)
				}
				return b, nil
			}
			c, err := read(cert)
			if err != nil {
				return failOne(g.ErrOut, err)
			}
			k, err := read(key)
			if err != nil {
				return failOne(g.ErrOut, err)
			}
			if _, err := tls.X509KeyPair(c, k); err != nil {
				return failOne(g.ErrOut, err)
			}
			s := newSecret(name, f.namespace(), corev1.SecretTypeTLS)
			s.s.Data[corev1.TLSCertKey] = c
			s.s.Data[corev1.TLSPrivateKeyKey] = k
			if appendHash {
				h, err := secretHash(s.s)
				if err != nil {
					return failOne(g.ErrOut, err)
				}
				s.s.Name += "-" + h
			}
			return f.create(cmd.Context(), s.s, wrapError("failed to create secret %v"))
		},
	}
	f.addFlags(cmd, managerCreate)
	fs := cmd.Flags()
	fs.StringVar(&cert, "cert", "", "The certificate file (PEM).")
	fs.StringVar(&key, "key", "", "The file of the certificate's private key (PEM).")
	fs.BoolVar(&appendHash, "append-hash", false, "Add a hash of the content to the name, so that a change makes a new secret.")
	return cmd
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

func newCreateSecretDockerCmd(g *Globals) *cobra.Command {
	f := &generatorFlags{g: g}
	var user, password, email, server string
	var files []string
	var appendHash bool
	cmd := &cobra.Command{
		Use:     "docker-registry NAME --docker-username=user --docker-password=password --docker-email=email [--docker-server=string] [--from-file=[key=]source] [--dry-run=server|client|none]",
		Short:   "Create a secret that holds registry credentials",
		Example: "  # Create a new secret for use with registry.example.com\n  konverge create secret docker-registry my-secret --docker-server=registry.example.com --docker-username=bot --docker-password=PASSWORD --docker-email=bot@example.com",
		RunE: func(cmd *cobra.Command, args []string) error {
			g.complete(cmd)
			name, err := f.oneName(args)
			if err != nil {
				return failOne(g.ErrOut, err)
			}
			if len(files) == 0 && (user == "" || password == "" || server == "") {
				return failOne(g.ErrOut, fmt.Errorf("either --from-file or the combination of --docker-username, --docker-password and --docker-server is required"))
			}
			s := newSecret(name, f.namespace(), corev1.SecretTypeDockerConfigJson)
			if len(files) > 0 {
				d := dataSources{files: files}
				addFile := func(k, p string) error {
					data, err := os.ReadFile(p)
					if err != nil {
						return err
					}
					return s.add(k, data)
				}
				if err := d.readSources(true, "secret", addFile, func(k, v string) error { return s.add(k, []byte(v)) }); err != nil {
					return failOne(g.ErrOut, err)
				}
			} else {
				b, err := json.Marshal(dockerConfigJSON{Auths: map[string]dockerConfigEntry{server: {
					Username: user, Password: password, Email: email,
					Auth: base64.StdEncoding.EncodeToString([]byte(user + ":" + password)),
				}}})
				if err != nil {
					return failOne(g.ErrOut, err)
				}
				s.s.Data[corev1.DockerConfigJsonKey] = b
			}
			if appendHash {
				h, err := secretHash(s.s)
				if err != nil {
					return failOne(g.ErrOut, err)
				}
				s.s.Name += "-" + h
			}
			return f.create(cmd.Context(), s.s, wrapError("failed to create secret %v"))
		},
	}
	f.addFlags(cmd, managerCreate)
	fs := cmd.Flags()
	fs.StringVar(&user, "docker-username", "", "Username for Docker registry authentication")
	fs.StringVar(&password, "docker-password", "", "Password for Docker registry authentication")
	fs.StringVar(&email, "docker-email", "", "The e-mail address for the registry")
	fs.StringVar(&server, "docker-server", "https://index.docker.io/v1/", "The registry's address")
	fs.BoolVar(&appendHash, "append-hash", false, "Add a hash of the content to the name, so that a change makes a new secret.")
	fs.StringSliceVar(&files, "from-file", nil, "Key files can be specified using their file path, in which case a default name will be given to them, or optionally with a name and file path, in which case the given name will be used.  Specifying a directory will iterate each named file in the directory that is a valid secret key. For this command, the key should always be .dockerconfigjson.")
	return cmd
}

// configMapHash is kubectl's --append-hash suffix of a config map
// (k8s.io/kubectl/pkg/util/hash).
func configMapHash(cm *corev1.ConfigMap) (string, error) { return hash.ConfigMapHash(cm) }

// secretHash is kubectl's --append-hash suffix of a secret.
func secretHash(s *corev1.Secret) (string, error) { return hash.SecretHash(s) }
