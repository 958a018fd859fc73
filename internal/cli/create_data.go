package cli

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// The generators of namespaces, service accounts, config maps and generic
// secrets (kubectl create namespace|serviceaccount|configmap|secret
// generic).

func newCreateNamespaceCmd(g *Globals) *cobra.Command {
	f := &generatorFlags{g: g}
	cmd := &cobra.Command{
		Use:     "namespace NAME [--dry-run=server|client|none]",
		Aliases: []string{"ns"},
		Short:   "Create a namespace",
		Example: "  # Create a new namespace named my-namespace\n  konverge create namespace my-namespace",
		RunE: func(cmd *cobra.Command, args []string) error {
			g.complete(cmd)
			name, err := f.oneName(args)
			if err != nil {
				return failOne(g.ErrOut, err)
			}
			ns := &corev1.Namespace{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
				ObjectMeta: metav1.ObjectMeta{Name: name},
			}
			return f.create(cmd.Context(), ns, nil)
		},
	}
	f.addFlags(cmd, managerCreate)
	return cmd
}

func newCreateServiceAccountCmd(g *Globals) *cobra.Command {
	f := &generatorFlags{g: g}
	cmd := &cobra.Command{
		Use:     "serviceaccount NAME [--dry-run=server|client|none]",
		Aliases: []string{"sa"},
		Short:   "Create a service account",
		Example: "  # Create a new service account named my-service-account\n  konverge create serviceaccount my-service-account",
		RunE: func(cmd *cobra.Command, args []string) error {
			g.complete(cmd)
			name, err := f.oneName(args)
			if err != nil {
				return failOne(g.ErrOut, err)
			}
			sa := &corev1.ServiceAccount{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.namespace()},
			}
			return f.create(cmd.Context(), sa, wrapError("failed to create serviceaccount: %v"))
		},
	}
	f.addFlags(cmd, managerCreate)
	return cmd
}

// wrapError returns a wrapper of the cluster's error in a generator's
// message, as kubectl prints it (the API error's text, without
// "Error from server").
func wrapError(format string) func(error) error {
	return func(err error) error { return fmt.Errorf(format, err) }
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

// parseLiteralSource reads "key=value" as kubectl does.
func parseLiteralSource(source string) (key, value string, err error) {
	if strings.Index(source, "=") == 0 {
		return "", "", fmt.Errorf("invalid literal source %v, expected key=value", source)
	}
	k, v, ok := strings.Cut(source, "=")
	if !ok {
		return "", "", fmt.Errorf("invalid literal source %v, expected key=value", source)
	}
	return k, v, nil
}

// parseFileSource reads "[key=]path" as kubectl does.
func parseFileSource(source string) (key, file string, err error) {
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
			k, v, err := parseLiteralSource(s)
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
			k, p, err := parseFileSource(s)
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
	f := &generatorFlags{g: g}
	var d dataSources
	cmd := &cobra.Command{
		Use:     "configmap NAME [--from-file=[key=]source] [--from-literal=key1=value1] [--dry-run=server|client|none]",
		Aliases: []string{"cm"},
		Short:   "Create a config map from files, directories or literal values",
		Example: `  # A config map settings with two keys given on the command line
  konverge create configmap settings --from-literal=mode=fast --from-literal=level=3

  # One key per file of a directory
  konverge create configmap settings --from-file=conf/`,
		RunE: func(cmd *cobra.Command, args []string) error {
			g.complete(cmd)
			name, err := f.oneName(args)
			if err != nil {
				return failOne(g.ErrOut, err)
			}
			if err := d.validate(); err != nil {
				return failOne(g.ErrOut, err)
			}
			cm := &corev1.ConfigMap{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.namespace()},
				Data:       map[string]string{},
				BinaryData: map[string][]byte{},
			}
			check := func(key string) error {
				if errs := validation.IsConfigMapKey(key); len(errs) > 0 {
					return fmt.Errorf("%q is not a valid key name for a ConfigMap: %s", key, strings.Join(errs, ","))
				}
				if _, ok := cm.Data[key]; ok {
					return fmt.Errorf("cannot add key %q, another key by that name already exists in Data for ConfigMap %q", key, cm.Name)
				}
				if _, ok := cm.BinaryData[key]; ok {
					return fmt.Errorf("cannot add key %q, another key by that name already exists in BinaryData for ConfigMap %q", key, cm.Name)
				}
				return nil
			}
			add := func(key, value string) error {
				if err := check(key); err != nil {
					return err
				}
				cm.Data[key] = value
				return nil
			}
			addFile := func(key, p string) error {
				data, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				if utf8.Valid(data) {
					return add(key, string(data))
				}
				if err := check(key); err != nil {
					return err
				}
				cm.BinaryData[key] = data
				return nil
			}
			if err := d.readSources(false, "config", addFile, add); err != nil {
				return failOne(g.ErrOut, err)
			}
			if d.appendHash {
				h, err := configMapHash(cm)
				if err != nil {
					return failOne(g.ErrOut, err)
				}
				cm.Name += "-" + h
			}
			return f.create(cmd.Context(), cm, wrapError("failed to create configmap: %v"))
		},
	}
	f.addFlags(cmd, managerCreate)
	d.addFlags(cmd, "configmap")
	return cmd
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

// secretWithData is a new Secret to which keys are added with kubectl's
// checks.
type secretWithData struct{ s *corev1.Secret }

func newSecret(name, namespace string, typ corev1.SecretType) secretWithData {
	return secretWithData{&corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Type:       typ,
		Data:       map[string][]byte{},
	}}
}

func (s secretWithData) add(key string, data []byte) error {
	if errs := validation.IsConfigMapKey(key); len(errs) != 0 {
		return fmt.Errorf("%q is not valid key name for a Secret %s", key, strings.Join(errs, ";"))
	}
	if _, ok := s.s.Data[key]; ok {
		return fmt.Errorf("cannot add key %s, another key by that name already exists", key)
	}
	s.s.Data[key] = data
	return nil
}

func newCreateSecretGenericCmd(g *Globals) *cobra.Command {
	f := &generatorFlags{g: g}
	var d dataSources
	var typ string
	cmd := &cobra.Command{
		Use:   "generic NAME [--type=string] [--from-file=[key=]source] [--from-literal=key1=value1] [--dry-run=server|client|none]",
		Short: "Create a secret from files, directories or literal values",
		Example: `  # A secret db with a user and a password given on the command line
  konverge create secret generic db --from-literal=user=app --from-literal=password=s3cret`,
		RunE: func(cmd *cobra.Command, args []string) error {
			g.complete(cmd)
			name, err := f.oneName(args)
			if err != nil {
				return failOne(g.ErrOut, err)
			}
			if err := d.validate(); err != nil {
				return failOne(g.ErrOut, err)
			}
			s := newSecret(name, f.namespace(), corev1.SecretType(typ))
			add := func(k, v string) error { return s.add(k, []byte(v)) }
			addFile := func(k, p string) error {
				data, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				return s.add(k, data)
			}
			if err := d.readSources(true, "secret", addFile, add); err != nil {
				return failOne(g.ErrOut, err)
			}
			if d.appendHash {
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
	d.addFlags(cmd, "secret")
	cmd.Flags().StringVar(&typ, "type", "", "The secret's type field (Opaque when not given)")
	return cmd
}
