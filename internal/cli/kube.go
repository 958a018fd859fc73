package cli

import (
	"fmt"
	"time"

	"k8s.io/client-go/rest"

	"github.com/konverge/konverge/cluster/kube"
)

// openKube opens the real cluster of --kubeconfig and --context. Only
// --kubeconfig selects a real cluster: $KUBECONFIG alone does not, so that
// the embedded cluster stays the default whatever the environment holds.
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
	c, err := kube.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("connecting to the cluster of --kubeconfig %s: %w", g.Kubeconfig, err)
	}
	return &Session{Cluster: c, Now: time.Now}, nil
}
