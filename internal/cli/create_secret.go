package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/konverge/konverge/internal/cli/generate"
)

// The generators of TLS and registry secrets (kubectl create secret tls
// and docker-registry).

func newCreateSecretTLSCmd(g *Globals) *cobra.Command {
	var cert, key string
	var appendHash bool
	return newGeneratorCmd(g, generator{
		use:     "tls NAME --cert=path/to/cert/file --key=path/to/key/file [--dry-run=server|client|none]",
		short:   "Create a TLS secret",
		example: "  # Create a new TLS secret named tls-secret with the given key pair\n  konverge create secret tls tls-secret --cert=path/to/tls.crt --key=path/to/tls.key",
		failure: "failed to create secret %v",
		flags: func(cmd *cobra.Command) {
			fs := cmd.Flags()
			fs.StringVar(&cert, "cert", "", "The certificate file (PEM).")
			fs.StringVar(&key, "key", "", "The file of the certificate's private key (PEM).")
			fs.BoolVar(&appendHash, "append-hash", false, "Add a hash of the content to the name, so that a change makes a new secret.")
		},
		build: func(_ context.Context, f *generatorFlags, name string, _ []string) (runtime.Object, error) {
			if key == "" || cert == "" {
				return nil, fmt.Errorf("key and cert must be specified")
			}
			read := func(p string) ([]byte, error) {
				b, err := os.ReadFile(p)
				if err != nil {
					//lint:ignore ST1005 kubectl's message, word for word (users and scripts match it)
					//lint:ignore ST1005 kubectl's message, word for word (users and scripts match it)
					return nil, fmt.Errorf("Cannot read file %v, %v", p, err)
				}
				return b, nil
			}
			c, err := read(cert)
			if err != nil {
				return nil, err
			}
			k, err := read(key)
			if err != nil {
				return nil, err
			}
			s, err := generate.TLSSecret(name, f.namespace(), c, k)
			if err != nil {
				return nil, err
			}
			if appendHash {
				if err := s.AppendHash(); err != nil {
					return nil, err
				}
			}
			return s.Secret, nil
		},
	})
}

func newCreateSecretDockerCmd(g *Globals) *cobra.Command {
	var c generate.RegistryCredentials
	var files []string
	var appendHash bool
	return newGeneratorCmd(g, generator{
		use:     "docker-registry NAME --docker-username=user --docker-password=password --docker-email=email [--docker-server=string] [--from-file=[key=]source] [--dry-run=server|client|none]",
		short:   "Create a secret that holds registry credentials",
		example: "  # Create a new secret for use with registry.example.com\n  konverge create secret docker-registry my-secret --docker-server=registry.example.com --docker-username=bot --docker-password=PASSWORD --docker-email=bot@example.com",
		failure: "failed to create secret %v",
		flags: func(cmd *cobra.Command) {
			fs := cmd.Flags()
			fs.StringVar(&c.Username, "docker-username", "", "Username for Docker registry authentication")
			fs.StringVar(&c.Password, "docker-password", "", "Password for Docker registry authentication")
			fs.StringVar(&c.Email, "docker-email", "", "The e-mail address for the registry")
			fs.StringVar(&c.Server, "docker-server", "https://index.docker.io/v1/", "The registry's address")
			fs.BoolVar(&appendHash, "append-hash", false, "Add a hash of the content to the name, so that a change makes a new secret.")
			fs.StringSliceVar(&files, "from-file", nil, "Key files can be specified using their file path, in which case a default name will be given to them, or optionally with a name and file path, in which case the given name will be used.  Specifying a directory will iterate each named file in the directory that is a valid secret key. For this command, the key should always be .dockerconfigjson.")
		},
		build: func(_ context.Context, f *generatorFlags, name string, _ []string) (runtime.Object, error) {
			if len(files) == 0 && (c.Username == "" || c.Password == "" || c.Server == "") {
				return nil, fmt.Errorf("either --from-file or the combination of --docker-username, --docker-password and --docker-server is required")
			}
			var s generate.Secret
			if len(files) > 0 {
				s = generate.NewSecret(name, f.namespace(), corev1.SecretTypeDockerConfigJson)
				if err := addSecretSources(&dataSources{files: files}, s); err != nil {
					return nil, err
				}
			} else {
				var err error
				if s, err = generate.RegistrySecret(name, f.namespace(), c); err != nil {
					return nil, err
				}
			}
			if appendHash {
				if err := s.AppendHash(); err != nil {
					return nil, err
				}
			}
			return s.Secret, nil
		},
	})
}
