package kube

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/disk"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/homedir"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/kinds"
	kschema "github.com/konverge/konverge/schema"
)

// Cluster is a real Kubernetes API server.
type Cluster struct {
	// rc sends the requests of every verb but Watch (dyn's), reading and
	// writing JSON with package value.
	rc     rest.Interface
	dyn    dynamic.Interface
	mapper *mapper
	host   string
}

var _ cluster.Interface = (*Cluster)(nil)

// Options tune Open. The zero value caches nothing on disk and does not
// throttle requests.
type Options struct {
	// CacheDir keeps the server's discovery and OpenAPI v3 documents on
	// disk, as kubectl does in ~/.kube/cache (DefaultCacheDir): discovery
	// under discovery/<host>, trusted for six hours and read again when a
	// kind is missing from it; the HTTP responses, OpenAPI included, under
	// http, revalidated with their ETag (the OpenAPI documents are named
	// by their hash, so a changed one is fetched again); and the merge
	// schemas konverge parses from OpenAPI documents, under konverge/openapi,
	// named by their document's hash. "" caches nothing.
	CacheDir string
}

// DefaultCacheDir is kubectl's cache directory: $KUBECACHEDIR, else
// ~/.kube/cache ("" when there is no home directory).
func DefaultCacheDir() string {
	if d := os.Getenv("KUBECACHEDIR"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return ""
	}
	return filepath.Join(home, ".kube", "cache")
}

// discoveryTTL is how long cached discovery is trusted, kubectl's.
const discoveryTTL = 6 * time.Hour

// FromKubeconfig connects to the cluster of a kubeconfig file and context
// ("" for the file's current context). The server's warnings go to
// standard error, once each, as kubectl prints them.
func FromKubeconfig(path, context string) (*Cluster, error) {
	cfg, err := RESTConfig(path, context)
	if err != nil {
		return nil, err
	}
	return New(cfg)
}

// RESTConfig reads the client configuration of a kubeconfig as kubectl
// does: the file path when it is not "", else the files of $KUBECONFIG,
// else ~/.kube/config; context "" means the current context.
func RESTConfig(path, context string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if os.Getenv(clientcmd.RecommendedConfigPathEnvVar) == "" {
		// ~/.kube/config of the home directory of now (client-go's is
		// the one of the process's start).
		rules.Precedence = []string{filepath.Join(homedir.HomeDir(), clientcmd.RecommendedHomeDir, clientcmd.RecommendedFileName)}
	}
	rules.ExplicitPath = path
	overrides := &clientcmd.ConfigOverrides{CurrentContext: context}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides).ClientConfig()
	if err != nil {
		if path == "" {
			return nil, fmt.Errorf("kubeconfig: %w", err)
		}
		return nil, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	return cfg, nil
}

// New connects to the API server of cfg and reads what it serves, with
// no disk cache: Open(cfg, Options{}).
func New(cfg *rest.Config) (*Cluster, error) {
	return Open(cfg, Options{})
}

// Open connects to the API server of cfg and reads what it serves.
//
// Without a rate limiter in cfg (QPS 0, as rest.Config comes from a
// kubeconfig), requests are not throttled on the client: the server's
// API Priority and Fairness protects it, and answers 429 with a
// Retry-After, which the client honours. A QPS above 0 sets a token
// bucket of QPS and Burst. Without a WarningHandler in cfg, the server's
// warnings go to standard error, once each ("Warning: ...").
func Open(cfg *rest.Config, opts Options) (*Cluster, error) {
	cfg = rest.CopyConfig(cfg)
	if cfg.QPS == 0 && cfg.RateLimiter == nil {
		cfg.QPS = -1
	}
	if cfg.WarningHandler == nil && cfg.WarningHandlerWithContext == nil {
		cfg.WarningHandler = rest.NewWarningWriter(os.Stderr, rest.WarningWriterOptions{Deduplicate: true})
	}
	if w := traceWrapper(); w != nil {
		cfg.Wrap(w)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Host, err)
	}
	rc, err := rest.UnversionedRESTClientFor(dynamic.ConfigFor(cfg))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Host, err)
	}
	var disc discovery.DiscoveryInterface
	if opts.CacheDir != "" {
		disc, err = disk.NewCachedDiscoveryClientForConfig(cfg,
			filepath.Join(opts.CacheDir, "discovery", hostDir(cfg.Host)),
			filepath.Join(opts.CacheDir, "http"), discoveryTTL)
	} else {
		disc, err = discovery.NewDiscoveryClientForConfig(cfg)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Host, err)
	}
	resources, err := discover(disc)
	if err != nil {
		return nil, fmt.Errorf("%s: discovery: %w", cfg.Host, err)
	}
	c := &Cluster{rc: rc, dyn: dyn, host: cfg.Host}
	c.mapper = newMapper(resources, disc, opts.CacheDir, func(ctx context.Context, name string) (map[string]any, error) {
		return c.Get(ctx, kschema.GVK{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}, "", name)
	})
	return c, nil
}

// unsafeHostChars are the characters of a host kubectl replaces in the
// name of its discovery cache directory.
var unsafeHostChars = regexp.MustCompile(`[^(\w/.)]`)

// hostDir is the directory name of a host's discovery cache, kubectl's
// ("127.0.0.1_6443").
func hostDir(host string) string {
	host = strings.Replace(strings.Replace(host, "https://", "", 1), "http://", "", 1)
	return unsafeHostChars.ReplaceAllString(host, "_")
}

// discover lists the kinds the server serves, preferred versions first.
func discover(disc discovery.DiscoveryInterface) ([]cluster.Resource, error) {
	builtin := map[kschema.GVK]bool{}
	for _, r := range kinds.Builtin() {
		builtin[r.GVK] = true
	}
	// A group that fails (an aggregated API whose backend is down) leaves
	// the others usable, as with kubectl.
	groups, all, err := disc.ServerGroupsAndResources()
	if err != nil && len(all) == 0 {
		return nil, err
	}
	isPreferred := map[string]bool{}
	for _, g := range groups {
		isPreferred[g.PreferredVersion.GroupVersion] = true
	}
	var first, rest []cluster.Resource
	for _, l := range all {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		status := map[string]bool{}
		for _, r := range l.APIResources {
			if base, sub, ok := strings.Cut(r.Name, "/"); ok && sub == "status" {
				status[base] = true
			}
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !hasVerb(r.Verbs, "get") {
				continue
			}
			gvk := kschema.GVK{Group: gv.Group, Version: gv.Version, Kind: r.Kind}
			res := cluster.Resource{
				GVK:        gvk,
				Plural:     r.Name,
				Singular:   r.SingularName,
				ShortNames: r.ShortNames,
				Namespaced: r.Namespaced,
				Status:     status[r.Name],
				Strategic:  builtin[gvk],
			}
			if res.Singular == "" {
				res.Singular = strings.ToLower(r.Kind)
			}
			if isPreferred[l.GroupVersion] {
				first = append(first, res)
			} else {
				rest = append(rest, res)
			}
		}
	}
	return append(first, rest...), nil
}

func hasVerb(verbs []string, v string) bool {
	for _, x := range verbs {
		if x == v {
			return true
		}
	}
	return false
}

// Host is the API server's address.
func (c *Cluster) Host() string { return c.host }

// Mapper returns the kinds the server serves.
func (c *Cluster) Mapper() cluster.Mapper { return c.mapper }

// resource returns the client of a kind in a namespace.
func (c *Cluster) resource(gvk kschema.GVK, namespace string) (dynamic.ResourceInterface, cluster.Resource, error) {
	res, err := c.mapper.ResourceFor(gvk)
	if err != nil {
		return nil, res, err
	}
	nri := c.dyn.Resource(schema.GroupVersionResource{Group: gvk.Group, Version: gvk.Version, Resource: res.Plural})
	if res.Namespaced && namespace != "" {
		return nri.Namespace(namespace), res, nil
	}
	return nri, res, nil
}

func gvkOf(obj cluster.Object) kschema.GVK {
	u := unstructured.Unstructured{Object: obj}
	gvk := u.GroupVersionKind()
	return kschema.GVK{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind}
}

func dryRun(on bool) []string {
	if on {
		return []string{metav1.DryRunAll}
	}
	return nil
}

// Watch implements cluster.Reader.
func (c *Cluster) Watch(ctx context.Context, gvk kschema.GVK, opts ...cluster.ListOption) (cluster.Watcher, error) {
	o := cluster.CollectList(opts)
	ri, _, err := c.resource(gvk, o.Namespace)
	if err != nil {
		return nil, err
	}
	w, err := ri.Watch(ctx, metav1.ListOptions{LabelSelector: o.LabelSelector, FieldSelector: o.FieldSelector, ResourceVersion: o.ResourceVersion})
	if err != nil {
		return nil, convert(err)
	}
	out := &watcher{w: w, ch: make(chan cluster.Event)}
	go out.run(ctx)
	return out, nil
}

type watcher struct {
	w  watch.Interface
	ch chan cluster.Event
}

func (w *watcher) run(ctx context.Context) {
	defer close(w.ch)
	defer w.w.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.w.ResultChan():
			if !ok {
				return
			}
			var t cluster.EventType
			switch ev.Type {
			case watch.Added:
				t = cluster.Added
			case watch.Modified:
				t = cluster.Modified
			case watch.Deleted:
				t = cluster.Deleted
			default:
				continue // bookmarks and errors
			}
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				continue
			}
			select {
			case w.ch <- cluster.Event{Type: t, Object: u.Object}:
			case <-ctx.Done():
				return
			}
		}
	}
}

func (w *watcher) ResultChan() <-chan cluster.Event { return w.ch }
func (w *watcher) Stop()                            { w.w.Stop() }

// convert turns an API error into a *cluster.StatusError with the same
// code, reason, message and causes; other errors are returned as they are.
func convert(err error) error {
	if err == nil {
		return nil
	}
	var as apierrors.APIStatus
	if !errors.As(err, &as) {
		return err
	}
	st := as.Status()
	out := &cluster.StatusError{Code: int(st.Code), Reason: cluster.Reason(st.Reason), Message: st.Message}
	if d := st.Details; d != nil {
		out.Group, out.Kind, out.Name = d.Group, d.Kind, d.Name
		out.RetryAfterSeconds = int(d.RetryAfterSeconds)
		for _, c := range d.Causes {
			out.Causes = append(out.Causes, cluster.Cause{Type: string(c.Type), Field: c.Field, Message: c.Message})
		}
	}
	return out
}
