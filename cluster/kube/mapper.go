package kube

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/openapi"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/kinds"
	kschema "github.com/konverge/konverge/schema"
)

// mapper is the kinds of a real API server: what its discovery lists (in
// a kinds.Mapper, read again when a kind is missing, as kubectl's
// deferred discovery mapper does, so that the kinds of a CRD created
// meanwhile appear), and the merge schemas of its /openapi/v3 documents,
// read the first time a kind of a group version needs one and kept for
// the life of the Cluster.
type mapper struct {
	cur  atomic.Pointer[kinds.Mapper]
	disc discovery.DiscoveryInterface

	// refreshMu serializes discovery; refreshed is when it last ran.
	refreshMu sync.Mutex
	refreshed time.Time

	// builtin is konverge's own schemas of Kubernetes' built-in kinds, the
	// answer when the server has no document for a group version (or does
	// not describe the kind in it).
	builtin *kschema.Registry
	openapi openapi.Client

	pathsOnce sync.Once
	paths     map[string]openapi.GroupVersion
	pathsErr  error

	// cacheDir is Options.CacheDir: parsed merge schemas are kept under
	// konverge/openapi, named by the hash of their document's URL.
	cacheDir string

	// getCRD reads a CustomResourceDefinition by name.
	getCRD func(ctx context.Context, name string) (map[string]any, error)

	mu   sync.Mutex
	gvs  map[string]*gvSchemas
	crds map[string]*crdSchemas
}

// crdSchemas is the Types of the versions of one CustomResourceDefinition.
type crdSchemas struct {
	once     sync.Once
	versions []kschema.CRDVersion
}

// gvSchemas is the parsed /openapi/v3 document of one group version.
type gvSchemas struct {
	once sync.Once
	reg  *kschema.Registry // nil when there is none or it does not parse
	err  error
}

var _ cluster.Mapper = (*mapper)(nil)

func newMapper(resources []cluster.Resource, disc discovery.DiscoveryInterface, cacheDir string, getCRD func(ctx context.Context, name string) (map[string]any, error)) *mapper {
	builtin := kschema.Builtin()
	m := &mapper{
		disc:      disc,
		cacheDir:  cacheDir,
		refreshed: time.Now(),
		builtin:   builtin,
		openapi:   disc.OpenAPIV3(),
		getCRD:    getCRD,
		gvs:       map[string]*gvSchemas{},
		crds:      map[string]*crdSchemas{},
	}
	m.cur.Store(kinds.NewMapper(resources, builtin))
	return m
}

// refreshInterval is the least time between two discoveries caused by a
// missing kind: a loop that waits for a kind to be served asks no more
// often than that.
const refreshInterval = 200 * time.Millisecond

// refresh reads discovery again (past any cache) unless it was read since
// the caller looked, or less than refreshInterval ago; it reports whether
// the kinds may have changed.
func (m *mapper) refresh(seen *kinds.Mapper) bool {
	m.refreshMu.Lock()
	defer m.refreshMu.Unlock()
	if m.cur.Load() != seen {
		return true
	}
	if time.Since(m.refreshed) < refreshInterval {
		return false
	}
	if c, ok := m.disc.(discovery.CachedDiscoveryInterface); ok {
		c.Invalidate()
	}
	m.refreshed = time.Now()
	resources, err := discover(m.disc)
	if err != nil {
		return false
	}
	m.cur.Store(kinds.NewMapper(resources, m.builtin))
	return true
}

// ResourceFor implements cluster.Mapper; a kind it does not know makes it
// read discovery again.
func (m *mapper) ResourceFor(gvk kschema.GVK) (cluster.Resource, error) {
	cur := m.cur.Load()
	res, err := cur.ResourceFor(gvk)
	if err != nil && cluster.IsNotFound(err) && m.refresh(cur) {
		return m.cur.Load().ResourceFor(gvk)
	}
	return res, err
}

// Find implements cluster.Mapper; a name it does not know makes it read
// discovery again.
func (m *mapper) Find(name string) (cluster.Resource, error) {
	cur := m.cur.Load()
	res, err := cur.Find(name)
	if err != nil && m.refresh(cur) {
		return m.cur.Load().Find(name)
	}
	return res, err
}

// Resources implements cluster.Mapper.
func (m *mapper) Resources() []cluster.Resource { return m.cur.Load().Resources() }

// openAPIPath is where /openapi/v3 lists a group version ("api/v1",
// "apis/apps/v1").
func openAPIPath(gvk kschema.GVK) string {
	if gvk.Group == "" {
		return "api/" + gvk.Version
	}
	return "apis/" + gvk.Group + "/" + gvk.Version
}

// Schema returns the merge schema of a kind the server serves: for a
// custom resource, its CustomResourceDefinition's (read with the rules the
// server applies to custom resources, as cluster/local does); else the one
// of the server's OpenAPI v3 document of its group version; else
// konverge's own for a built-in kind; else nil (JSON merge patch
// semantics).
func (m *mapper) Schema(gvk kschema.GVK) *kschema.Type {
	res, err := m.ResourceFor(gvk)
	if err != nil {
		return nil
	}
	if !res.Strategic && gvk.Group != "" && m.getCRD != nil {
		for _, v := range m.crd(res.Plural + "." + gvk.Group) {
			if v.GVK == gvk && v.Type != nil {
				return v.Type
			}
		}
	}
	if reg, _ := m.groupVersion(openAPIPath(gvk)); reg != nil {
		if t := reg.Lookup(gvk); t != nil {
			return t
		}
	}
	return m.builtin.Lookup(gvk)
}

// crd returns the versions of a CustomResourceDefinition, nil when there
// is none (an aggregated API) or it cannot be read.
func (m *mapper) crd(name string) []kschema.CRDVersion {
	m.mu.Lock()
	c := m.crds[name]
	if c == nil {
		c = &crdSchemas{}
		m.crds[name] = c
	}
	m.mu.Unlock()
	c.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		obj, err := m.getCRD(ctx, name)
		if err != nil {
			return
		}
		c.versions, _ = kschema.FromCRD(obj)
	})
	return c.versions
}

// groupVersion returns the parsed document of one group version, fetching
// and parsing it on first use.
func (m *mapper) groupVersion(path string) (*kschema.Registry, error) {
	m.mu.Lock()
	g := m.gvs[path]
	if g == nil {
		g = &gvSchemas{}
		m.gvs[path] = g
	}
	m.mu.Unlock()
	g.once.Do(func() { g.reg, g.err = m.fetch(path) })
	return g.reg, g.err
}

// fetch reads and parses the /openapi/v3 document of one group version.
func (m *mapper) fetch(path string) (*kschema.Registry, error) {
	m.pathsOnce.Do(func() {
		if m.openapi == nil {
			m.pathsErr = fmt.Errorf("no OpenAPI v3 client")
			return
		}
		m.paths, m.pathsErr = m.openapi.Paths()
	})
	if m.pathsErr != nil {
		return nil, fmt.Errorf("/openapi/v3: %w", m.pathsErr)
	}
	gv, ok := m.paths[path]
	if !ok {
		return nil, fmt.Errorf("/openapi/v3 has no %s", path)
	}
	// The document's URL carries its hash: a merge schema parsed from it
	// before is read back from the disk cache instead.
	cached := m.schemaCachePath(gv.ServerRelativeURL())
	if cached != "" {
		if b, err := os.ReadFile(cached); err == nil {
			reg := kschema.NewRegistry()
			if reg.UnmarshalBinary(b) == nil {
				return reg, nil
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	doc, err := openapi.ToGroupVersionWithContext(gv).SchemaWithContext(ctx, "application/json")
	if err != nil {
		return nil, fmt.Errorf("/openapi/v3/%s: %w", path, err)
	}
	reg, err := kschema.ParseOpenAPIV3Documents(doc)
	if err != nil {
		return nil, fmt.Errorf("/openapi/v3/%s: %w", strings.TrimPrefix(path, "/"), err)
	}
	if cached != "" {
		// A cache that cannot be written is only slower.
		_ = writeCache(cached, reg)
	}
	return reg, nil
}

// schemaCachePath is where the merge schema of the OpenAPI document at url
// (which carries the document's hash) is cached; "" without a cache.
func (m *mapper) schemaCachePath(url string) string {
	if m.cacheDir == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(url))
	return filepath.Join(m.cacheDir, "konverge", "openapi", hex.EncodeToString(sum[:])+".kvs")
}

// writeCache writes reg's binary form to path, atomically.
func writeCache(path string, reg *kschema.Registry) error {
	b, err := reg.MarshalBinary()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}
