// Command record writes internal/explain/served.json.gz: the definitions of every
// OpenAPI v3 document that a real kube-apiserver serves
// (/openapi/v3/api/v1, /openapi/v3/apis/GROUP/VERSION), merged by name.
// The server's documents carry what the documents of the Kubernetes
// repository lack (enums and their "Possible enum values"), and explain
// prints what the server serves.
//
// Usage: go run ./internal/explain/internal/record -kubeconfig FILE [-out internal/explain/served.json.gz]
package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"sort"
	"strings"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	kubeconfig := flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig of the API server to record")
	out := flag.String("out", "internal/explain/served.json.gz", "file to write")
	flag.Parse()
	if err := record(*kubeconfig, *out); err != nil {
		log.Fatal(err)
	}
}

func record(kubeconfig, out string) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	paths, err := dc.OpenAPIV3().Paths()
	if err != nil {
		return err
	}
	names := make([]string, 0, len(paths))
	for p := range paths {
		// Group versions only: "api/v1", "apis/apps/v1".
		if p == "api/v1" || (strings.HasPrefix(p, "apis/") && strings.Count(p, "/") == 2) {
			names = append(names, p)
		}
	}
	sort.Strings(names)
	defs := map[string]json.RawMessage{}
	for _, p := range names {
		raw, err := paths[p].Schema("application/json")
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		var doc struct {
			Components struct {
				Schemas map[string]json.RawMessage `json:"schemas"`
			} `json:"components"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		for k, v := range doc.Components.Schemas {
			if !strings.HasPrefix(k, "io.k8s.") {
				continue // a custom resource's
			}
			defs[k] = v
		}
	}
	data, err := json.Marshal(defs)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return err
	}
	if _, err := zw.Write(data); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "%d definitions from %d group versions\n", len(defs), len(names))
	return os.WriteFile(out, buf.Bytes(), 0o644)
}
