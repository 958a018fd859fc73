package cli

import (
	"fmt"
	"time"

	"k8s.io/client-go/rest"

	"github.com/konverge/konverge/cluster/kube"
)

// openKube opens the real cluster of --kubeconfig and --context, found as
// kubectl finds it: the file of --kubeconfig, else the files of
// $KUBECONFIG, else ~/.kube/config. Only the flags select a real cluster:
// $KUBECONFIG alone does not, so that the embedded cluster stays the
// default whatever the environment holds. Discovery and OpenAPI are cached
// on disk as kubectl caches them (--cache-dir, $KUBECACHEDIR,
// ~/.kube/cache). Requests are not throttled unless --qps says so.
//
// The session has no Store and no Clock: the simulation hooks (the virtual
// clock, the controllers of simhook.go) act on the embedded cluster only,
// and time is the wall clock. The server's warnings go to the command's
// standard error, once each, as kubectl prints them.
func (g *Globals) openKube() (*Session, error) {
	cfg, err := kube.RESTConfig(g.Kubeconfig, g.Context)
	if err != nil {
		return nil, err
	}
	if g.ErrOut != nil {
		cfg.WarningHandler = rest.NewWarningWriter(g.ErrOut, rest.WarningWriterOptions{Deduplicate: true})
	}
	if g.QPS > 0 {
		cfg.QPS, cfg.Burst = g.QPS, g.Burst
		if cfg.Burst <= 0 {
			cfg.Burst = max(1, int(2*g.QPS))
		}
	}
	cacheDir := g.CacheDir
	if cacheDir == "" {
		cacheDir = kube.DefaultCacheDir()
	}
	c, err := kube.Open(cfg, kube.Options{CacheDir: cacheDir})
	if err != nil {
		if g.Kubeconfig == "" {
			return nil, fmt.Errorf("connecting to the cluster of --context %s: %w", g.Context, err)
		}
		return nil, fmt.Errorf("connecting to the cluster of --kubeconfig %s: %w", g.Kubeconfig, err)
	}
	return &Session{Cluster: c, Now: time.Now}, nil
}
