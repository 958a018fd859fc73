package cli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/konverge/konverge/internal/cli/generate"
)

// The generators of namespaces, service accounts, config maps and generic
// secrets (kubectl create namespace|serviceaccount|configmap|secret
// generic), and the reading of their data sources.

func newCreateNamespaceCmd(g *Globals) *cobra.Command {
	return newGeneratorCmd(g, generator{
		use:     "namespace NAME [--dry-run=server|client|none]",
		aliases: []string{"ns"},
		short:   "Create a namespace",
		example: "  # Create a new namespace named my-namespace\n  konverge create namespace my-namespace",
		build: func(_ context.Context, _ *generatorFlags, name string, _ []string) (runtime.Object, error) {
			return generate.Namespace(name), nil
		},
	})
}

func newCreateServiceAccountCmd(g *Globals) *cobra.Command {
	return newGeneratorCmd(g, generator{
		use:     "serviceaccount NAME [--dry-run=server|client|none]",
		aliases: []string{"sa"},
		short:   "Create a service account",
		example: "  # Create a new service account named my-service-account\n  konverge create serviceaccount my-service-account",
		failure: "failed to create serviceaccount: %v",
		build: func(_ context.Context, f *generatorFlags, name string, _ []string) (runtime.Object, error) {
			return generate.ServiceAccount(name, f.namespace()), nil
		},
	})
}

// dataSources are the --from-file, --from-literal and --from-env-file
// flags of config maps and secrets.
type dataSources struct {
	files, literals, envFiles []string
	appendHash                bool
}

func (d *dataSources) addFlags(cmd *cobra.Command, what string) {
	fs := cmd.Flags()
	if what == "configmap" {
		fs.StringSliceVar(&d.files, "from-file", nil, "A file whose content becomes a key (named after the file, or KEY=PATH to name it); a directory adds each of its files whose name is a valid key.")
	} else {
		fs.StringSliceVar(&d.files, "from-file", nil, "A file whose content becomes a key (named after the file, or KEY=PATH to name it); a directory adds each of its files whose name is a valid key.")
	}
	fs.StringArrayVar(&d.literals, "from-literal", nil, "Specify a key and literal value to insert in "+what+" (i.e. mykey=somevalue)")
	fs.StringSliceVar(&d.envFiles, "from-env-file", nil, "Specify the path to a file to read lines of key=val pairs to create a "+what+".")
	fs.BoolVar(&d.appendHash, "append-hash", false, "Append a hash of the "+what+" to its name.")
}

func (d *dataSources) validate() error {
	if len(d.envFiles) > 0 && (len(d.files) > 0 || len(d.literals) > 0) {
		return errors.New("from-env-file cannot be combined with from-file or from-literal")
	}
	return nil
}

// statSource stats a file source with kubectl's message.
func statSource(p string) (os.FileInfo, error) {
	info, err := os.Stat(p)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("error reading %s: %v", p, pe.Err)
		}
		return nil, fmt.Errorf("error reading %s: %v", p, err)
	}
	return info, nil
}

// readSources feeds every source to add, in kubectl's order for the kind:
// literals first for secrets, files first for config maps.
func (d *dataSources) readSources(literalsFirst bool, envWhat string, addFile func(key, path string) error, add func(key, value string) error) error {
	literals := func() error {
		for _, s := range d.literals {
			k, v, err := generate.ParseLiteralSource(s)
			if err != nil {
				return err
			}
			if err := add(k, v); err != nil {
				return err
			}
		}
		return nil
	}
	files := func() error {
		for _, s := range d.files {
			k, p, err := generate.ParseFileSource(s)
			if err != nil {
				return err
			}
			info, err := statSource(p)
			if err != nil {
				return err
			}
			if !info.IsDir() {
				if err := addFile(k, p); err != nil {
					return err
				}
				continue
			}
			if strings.Contains(s, "=") {
				return errors.New("cannot give a key name for a directory path")
			}
			entries, err := os.ReadDir(p)
			if err != nil {
				return fmt.Errorf("error listing files in %s: %v", p, err)
			}
			for _, e := range entries {
				if e.Type().IsRegular() {
					if err := addFile(e.Name(), filepath.Join(p, e.Name())); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	first, second := files, literals
	if literalsFirst {
		first, second = literals, files
	}
	if err := first(); err != nil {
		return err
	}
	if err := second(); err != nil {
		return err
	}
	for _, p := range d.envFiles {
		info, err := statSource(p)
		if err != nil {
			return err
		}
		if info.IsDir() {
			return fmt.Errorf("env %s file cannot be a directory", envWhat)
		}
		if err := addFromEnvFile(p, add); err != nil {
			return err
		}
	}
	return nil
}

// addFromEnvFile reads KEY=VALUE lines as kubectl's --from-env-file:
// comments and blank lines skipped, a key without "=" takes its value
// from the environment.
func addFromEnvFile(p string, add func(key, value string) error) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	line := 0
	for s.Scan() {
		b := s.Bytes()
		if !utf8.Valid(b) {
			return fmt.Errorf("env file %s contains invalid utf8 bytes at line %d: %v", p, line+1, b)
		}
		if line == 0 {
			b = bytes.TrimPrefix(b, []byte("\xEF\xBB\xBF"))
		}
		line++
		b = bytes.TrimLeftFunc(b, unicode.IsSpace)
		if len(b) == 0 || b[0] == '#' {
			continue
		}
		k, v, hasValue := strings.Cut(string(b), "=")
		if errs := validation.IsEnvVarName(k); len(errs) != 0 {
			return fmt.Errorf("%q is not a valid key name: %s", k, strings.Join(errs, ";"))
		}
		if !hasValue {
			v = os.Getenv(k)
		}
		if err := add(k, v); err != nil {
			return err
		}
	}
	return s.Err()
}

func newCreateConfigMapCmd(g *Globals) *cobra.Command {
	var d dataSources
	return newGeneratorCmd(g, generator{
		use:     "configmap NAME [--from-file=[key=]source] [--from-literal=key1=value1] [--dry-run=server|client|none]",
		aliases: []string{"cm"},
		short:   "Create a config map from files, directories or literal values",
		example: `  # A config map settings with two keys given on the command line
  konverge create configmap settings --from-literal=mode=fast --from-literal=level=3

  # One key per file of a directory
  konverge create configmap settings --from-file=conf/`,
		failure: "failed to create configmap: %v",
		flags:   func(cmd *cobra.Command) { d.addFlags(cmd, "configmap") },
		build: func(_ context.Context, f *generatorFlags, name string, _ []string) (runtime.Object, error) {
			if err := d.validate(); err != nil {
				return nil, err
			}
			cm := generate.NewConfigMap(name, f.namespace())
			addFile := func(key, p string) error {
				data, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				return cm.AddFile(key, data)
			}
			if err := d.readSources(false, "config", addFile, cm.Add); err != nil {
				return nil, err
			}
			if d.appendHash {
				if err := cm.AppendHash(); err != nil {
					return nil, err
				}
			}
			return cm.ConfigMap, nil
		},
	})
}

func newCreateSecretCmd(g *Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "secret (docker-registry | generic | tls)",
		Short: "Create a secret of one of the kinds below",
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmd.Help()
		},
	}
	return cmd
}

// addSecretSources adds the data of d's sources to s, literals first as
// kubectl does for secrets.
func addSecretSources(d *dataSources, s generate.Secret) error {
	addFile := func(k, p string) error {
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return s.Add(k, data)
	}
	return d.readSources(true, "secret", addFile, func(k, v string) error { return s.Add(k, []byte(v)) })
}

func newCreateSecretGenericCmd(g *Globals) *cobra.Command {
	var d dataSources
	var typ string
	return newGeneratorCmd(g, generator{
		use:   "generic NAME [--type=string] [--from-file=[key=]source] [--from-literal=key1=value1] [--dry-run=server|client|none]",
		short: "Create a secret from files, directories or literal values",
		example: `  # A secret db with a user and a password given on the command line
  konverge create secret generic db --from-literal=user=app --from-literal=password=s3cret`,
		failure: "failed to create secret %v",
		flags: func(cmd *cobra.Command) {
			d.addFlags(cmd, "secret")
			cmd.Flags().StringVar(&typ, "type", "", "The secret's type field (Opaque when not given)")
		},
		build: func(_ context.Context, f *generatorFlags, name string, _ []string) (runtime.Object, error) {
			if err := d.validate(); err != nil {
				return nil, err
			}
			s := generate.NewSecret(name, f.namespace(), corev1.SecretType(typ))
			if err := addSecretSources(&d, s); err != nil {
				return nil, err
			}
			if d.appendHash {
				if err := s.AppendHash(); err != nil {
					return nil, err
				}
			}
			return s.Secret, nil
		},
	})
}
