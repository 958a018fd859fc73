// Command gen writes the OpenAPI data that package openapi embeds.
//
// It downloads k8s.io/kubernetes at the given version with `go mod download`
// (in a throwaway module, so that konverge's go.mod never depends on it),
// reads every OpenAPI v3 document of api/openapi-spec/v3, and writes into
// the output directory:
//
//   - definitions.json.gz: the definitions (components.schemas) of all the
//     documents merged into one JSON object by name, gzipped. A definition
//     that several documents hold is the same in each but for its
//     x-kubernetes-group-version-kind list, which is merged.
//   - smd.json.gz: the structured-merge-diff schema of those definitions,
//     converted as kube-apiserver converts them (kube-openapi's schemaconv,
//     preserveUnknownFields false), the kinds that name a definition, and
//     the empty object of each kind as kube-apiserver's Go types encode it
//     (json.Marshal of the zero value: struct fields without omitempty are
//     there), as JSON, gzipped. The empty objects come from a program run
//     in a throwaway module that requires k8s.io/api,
//     k8s.io/apiextensions-apiserver and k8s.io/kube-aggregator at the
//     matching version, so that konverge's go.mod does not.
//   - openapi_gen.go: the version and the embed directives.
//
// Run it with `go generate ./openapi` from the module root.
package main

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/kube-openapi/pkg/schemaconv"
	"k8s.io/kube-openapi/pkg/validation/spec"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"

	"github.com/konverge/konverge/internal/modcache"
	"github.com/konverge/konverge/openapi/internal/smdjson"
)

func main() {
	version := flag.String("version", "v1.37.1", "version of the module k8s.io/kubernetes to read")
	specDir := flag.String("spec", "", "directory of OpenAPI v3 documents (default: api/openapi-spec/v3 of k8s.io/kubernetes, downloaded)")
	out := flag.String("out", ".", "directory to write the data and openapi_gen.go into")
	flag.Parse()
	if err := run(*version, *specDir, *out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// gvkExt is the extension that names the kinds of a definition.
const gvkExt = "x-kubernetes-group-version-kind"

type gvk struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

func run(version, specDir, out string) error {
	if specDir == "" {
		dir, err := modcache.Dir("k8s.io/kubernetes", version)
		if err != nil {
			return err
		}
		specDir = filepath.Join(dir, "api", "openapi-spec", "v3")
	}
	files, err := filepath.Glob(filepath.Join(specDir, "*.json"))
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("no OpenAPI documents in %s", specDir)
	}
	slices.Sort(files)

	defs := map[string]map[string]any{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		var doc struct {
			Components struct {
				Schemas map[string]map[string]any `json:"schemas"`
			} `json:"components"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		for name, d := range doc.Components.Schemas {
			old, ok := defs[name]
			if !ok {
				defs[name] = d
				continue
			}
			if err := mergeDefinition(name, old, d); err != nil {
				return fmt.Errorf("%s: %w", filepath.Base(f), err)
			}
		}
	}
	for _, d := range defs {
		sortGVKs(d)
	}
	defsJSON, err := json.Marshal(defs) // map keys sorted: stable output
	if err != nil {
		return err
	}

	// The SMD schema, from the definitions as kube-openapi decodes them.
	var models map[string]*spec.Schema
	if err := json.Unmarshal(defsJSON, &models); err != nil {
		return err
	}
	s, err := schemaconv.ToSchemaFromOpenAPI(models, false)
	if err != nil {
		return err
	}
	sortSchema(s)
	var kinds []kindEntry
	for name, d := range defs {
		for _, g := range gvksOf(d) {
			if g.Kind != "" {
				kinds = append(kinds, kindEntry{Group: g.Group, Version: g.Version, Kind: g.Kind, Definition: name})
			}
		}
	}
	slices.SortFunc(kinds, func(a, b kindEntry) int {
		return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.Version, b.Version), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Definition, b.Definition))
	})
	zeroJSON, err := zeroObjects(version, kinds)
	if err != nil {
		return err
	}
	smdJSON, err := json.Marshal(struct {
		Types smdjson.Raw                `json:"types"`
		Kinds []kindEntry                `json:"kinds"`
		Zero  map[string]json.RawMessage `json:"zero"`
	}{smdjson.Encode(s.Types), kinds, zeroJSON})
	if err != nil {
		return err
	}

	defsGz, err := gz(defsJSON)
	if err != nil {
		return err
	}
	smdGz, err := gz(smdJSON)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "definitions.json.gz"), defsGz, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "smd.json.gz"), smdGz, 0o644); err != nil {
		return err
	}

	var src strings.Builder
	fmt.Fprintf(&src, `// Code generated by go run ./internal/gen; DO NOT EDIT.

package openapi

import _ "embed"

// KubernetesVersion is the Kubernetes release whose OpenAPI v3 documents
// the package holds: %d definitions and %d kinds from the %d documents of
// api/openapi-spec/v3.
const KubernetesVersion = %q

// definitionsData is the definitions of every document by name, as JSON,
// gzipped (%d bytes, %d unzipped).
//
//go:embed definitions.json.gz
var definitionsData []byte

// smdData is the structured-merge-diff schema of the definitions, the
// kinds that name them and their empty objects, as JSON, gzipped (%d
// bytes, %d unzipped).
//
//go:embed smd.json.gz
var smdData []byte
`, len(defs), len(kinds), len(files), version, len(defsGz), len(defsJSON), len(smdGz), len(smdJSON))
	if err := os.WriteFile(filepath.Join(out, "openapi_gen.go"), []byte(src.String()), 0o644); err != nil {
		return err
	}
	fmt.Printf("gen: %d definitions, %d kinds from %d documents: definitions.json.gz %d bytes (%d unzipped), smd.json.gz %d bytes (%d unzipped)\n",
		len(defs), len(kinds), len(files), len(defsGz), len(defsJSON), len(smdGz), len(smdJSON))
	return nil
}

type kindEntry struct {
	Group      string `json:"group,omitempty"`
	Version    string `json:"version"`
	Kind       string `json:"kind"`
	Definition string `json:"definition"`
}

// mergeDefinition merges d into old: they must be equal but for their
// kinds, which are joined.
func mergeDefinition(name string, old, d map[string]any) error {
	a, b := withoutGVKs(old), withoutGVKs(d)
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if !bytes.Equal(ja, jb) {
		return fmt.Errorf("definition %s differs between documents", name)
	}
	all := append(gvksOf(old), gvksOf(d)...)
	if len(all) == 0 {
		return nil
	}
	list := make([]any, len(all))
	for i, g := range all {
		list[i] = map[string]any{"group": g.Group, "version": g.Version, "kind": g.Kind}
	}
	old[gvkExt] = list
	return nil
}

func withoutGVKs(d map[string]any) map[string]any {
	c := make(map[string]any, len(d))
	for k, v := range d {
		if k != gvkExt {
			c[k] = v
		}
	}
	return c
}

func gvksOf(d map[string]any) []gvk {
	list, _ := d[gvkExt].([]any)
	var out []gvk
	for _, x := range list {
		m, _ := x.(map[string]any)
		g, _ := m["group"].(string)
		v, _ := m["version"].(string)
		k, _ := m["kind"].(string)
		out = append(out, gvk{g, v, k})
	}
	return out
}

// sortGVKs sorts and deduplicates the kinds of a definition.
func sortGVKs(d map[string]any) {
	gs := gvksOf(d)
	if len(gs) == 0 {
		return
	}
	slices.SortFunc(gs, func(a, b gvk) int {
		return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.Version, b.Version), cmp.Compare(a.Kind, b.Kind))
	})
	gs = slices.Compact(gs)
	list := make([]any, len(gs))
	for i, g := range gs {
		list[i] = map[string]any{"group": g.Group, "version": g.Version, "kind": g.Kind}
	}
	d[gvkExt] = list
}

// sortSchema orders the types and their fields by name, so that the
// output is the same on every run.
func sortSchema(s *smdschema.Schema) {
	slices.SortFunc(s.Types, func(a, b smdschema.TypeDef) int { return cmp.Compare(a.Name, b.Name) })
	var walk func(a *smdschema.Atom)
	walk = func(a *smdschema.Atom) {
		if a.Map != nil {
			slices.SortFunc(a.Map.Fields, func(x, y smdschema.StructField) int { return cmp.Compare(x.Name, y.Name) })
			for i := range a.Map.Fields {
				walk(&a.Map.Fields[i].Type.Inlined)
			}
			walk(&a.Map.ElementType.Inlined)
		}
		if a.List != nil {
			walk(&a.List.ElementType.Inlined)
		}
	}
	for i := range s.Types {
		walk(&s.Types[i].Atom)
	}
}

func gz(data []byte) ([]byte, error) {
	var b bytes.Buffer
	zw, err := gzip.NewWriterLevel(&b, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(data); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// zeroProgram prints the JSON encoding of the zero value of every kind
// named on its standard input ("group/version/Kind" lines) that the schemes
// of k8s.io/api, apiextensions and apiregistration know, as one JSON
// object.
const zeroProgram = `package main

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

func main() {
	s := scheme.Scheme
	for _, add := range []func(*runtime.Scheme) error{apiextensionsv1.AddToScheme, apiextensionsv1beta1.AddToScheme, apiregistrationv1.AddToScheme} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	out := map[string]json.RawMessage{}
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), "/", 3)
		if len(parts) != 3 {
			continue
		}
		obj, err := s.New(schema.GroupVersionKind{Group: parts[0], Version: parts[1], Kind: parts[2]})
		if err != nil {
			continue
		}
		b, err := json.Marshal(obj)
		if err != nil {
			panic(err)
		}
		out[sc.Text()] = b
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		panic(err)
	}
}
`

// zeroObjects runs zeroProgram for the kinds, in a throwaway module.
func zeroObjects(version string, kinds []kindEntry) (map[string]json.RawMessage, error) {
	minor := "v0" + strings.TrimPrefix(version, "v1")
	tmp, err := os.MkdirTemp("", "konverge-gen-zero-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	mod := "module zero\n\ngo 1.24\n\nrequire (\n" +
		"\tk8s.io/api " + minor + "\n" +
		"\tk8s.io/apimachinery " + minor + "\n" +
		"\tk8s.io/client-go " + minor + "\n" +
		"\tk8s.io/apiextensions-apiserver " + minor + "\n" +
		"\tk8s.io/kube-aggregator " + minor + "\n)\n"
	src := strings.Replace(zeroProgram, `"k8s.io/apimachinery/pkg/runtime/schema"`, "\"k8s.io/apimachinery/pkg/runtime\"\n\t\"k8s.io/apimachinery/pkg/runtime/schema\"", 1)
	if err := os.WriteFile(filepath.Join(tmp, "go.mod"), []byte(mod), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(tmp, "main.go"), []byte(src), 0o644); err != nil {
		return nil, err
	}
	env := modcache.Env()
	// -e: tidy also looks for the modules that the tests of the imported
	// packages import (testify and the like); the program does not build
	// them, and offline (GOPROXY=off, CI's generate check) the module
	// cache need not hold them. A module the program does need and cannot
	// have still fails go run below.
	tidy := exec.Command("go", "mod", "tidy", "-e")
	tidy.Dir, tidy.Env = tmp, env
	if out, err := tidy.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go mod tidy (empty objects): %w: %s", err, out)
	}
	var in strings.Builder
	for _, k := range kinds {
		fmt.Fprintf(&in, "%s/%s/%s\n", k.Group, k.Version, k.Kind)
	}
	run := exec.Command("go", "run", ".")
	run.Dir, run.Env = tmp, env
	run.Stdin = strings.NewReader(in.String())
	var stderr bytes.Buffer
	run.Stderr = &stderr
	out, err := run.Output()
	if err != nil {
		return nil, fmt.Errorf("empty objects: %w: %s", err, stderr.String())
	}
	var zero map[string]json.RawMessage
	if err := json.Unmarshal(out, &zero); err != nil {
		return nil, fmt.Errorf("empty objects: %w", err)
	}
	return zero, nil
}
