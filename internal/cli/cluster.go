package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/konverge/konverge/clock"
	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/cluster/local"
)

// Globals are the flags every cluster command shares: where the embedded
// cluster lives, or which real cluster to talk to, and the namespace.
type Globals struct {
	Streams

	// State is the directory of the embedded cluster (--state); "" means
	// $KONVERGE_STATE, else ./.konverge.
	State string
	// Kubeconfig and Context name a real cluster (--kubeconfig, --context).
	Kubeconfig string
	Context    string
	// CacheDir is where discovery and OpenAPI of a real cluster are cached
	// (--cache-dir); "" means $KUBECACHEDIR, else ~/.kube/cache.
	CacheDir string
	// QPS and Burst throttle the requests to a real cluster (--qps,
	// --burst); QPS 0 means no client-side limit.
	QPS   float32
	Burst int
	// Namespace is -n/--namespace; NamespaceSet reports that it was given.
	Namespace    string
	NamespaceSet bool

	// sessions are those Open returned, which closeSessions closes at
	// the end of the command (a command may close them first).
	sessions []*Session
}

// closeSessions closes the sessions the command left open and returns
// what failed: the commit of the controllers' work and the clock, or the
// release of the state. Every command ends with it (see NewRootCmd), so
// that a command that did its work but could not save it does not exit 0.
func (g *Globals) closeSessions(ctx context.Context) error {
	var errs []error
	for _, s := range g.sessions {
		errs = append(errs, s.Close(context.WithoutCancel(ctx)))
	}
	g.sessions = nil
	return errors.Join(errs...)
}

// AddFlags registers the global flags on the root command.
func (g *Globals) AddFlags(cmd *cobra.Command) {
	f := cmd.PersistentFlags()
	f.StringVar(&g.State, "state", "", "directory of the embedded cluster (default $KONVERGE_STATE, else ./.konverge)")
	f.StringVar(&g.Kubeconfig, "kubeconfig", "", "path to a kubeconfig file: act on that real cluster instead of the embedded one ($KUBECONFIG alone does not)")
	f.StringVar(&g.Context, "context", "", "the kubeconfig context to use: act on that real cluster, from --kubeconfig, else $KUBECONFIG, else ~/.kube/config")
	f.StringVar(&g.CacheDir, "cache-dir", "", "directory of the discovery and OpenAPI cache of a real cluster (default $KUBECACHEDIR, else ~/.kube/cache)")
	f.Float32Var(&g.QPS, "qps", 0, "requests per second to a real cluster at most; 0 means no client-side limit (the server's API Priority and Fairness protects it)")
	f.IntVar(&g.Burst, "burst", 0, "requests a real cluster may get at once above --qps (default 2 x --qps)")
	f.StringVarP(&g.Namespace, "namespace", "n", "", "the namespace of this request (default \"default\")")
}

// complete records whether -n was given; commands call it first.
func (g *Globals) complete(cmd *cobra.Command) {
	if f := cmd.Flags().Lookup("namespace"); f != nil {
		g.NamespaceSet = f.Changed
	}
}

// Ns returns the namespace of the request: -n, else "default".
func (g *Globals) Ns() string {
	if g.Namespace == "" {
		return "default"
	}
	return g.Namespace
}

// realCluster reports whether the flags select a real cluster:
// --kubeconfig or --context.
func (g *Globals) realCluster() bool { return g.Kubeconfig != "" || g.Context != "" }

// StateDir returns the directory of the embedded cluster.
func (g *Globals) StateDir() string {
	if g.State != "" {
		return g.State
	}
	if d := os.Getenv("KONVERGE_STATE"); d != "" {
		return d
	}
	return ".konverge"
}

// Session is an open cluster for the length of one command.
type Session struct {
	// Cluster is what commands read and write.
	Cluster cluster.Interface
	// Store is the embedded cluster; nil for a real cluster.
	Store *local.Store
	// Now is the cluster's time (the virtual clock of the embedded
	// cluster), for ages and timestamps.
	Now func() time.Time
	// Clock is the embedded cluster's virtual clock (see simhook.go);
	// nil for a real cluster.
	Clock *clock.Clock

	closers  []func(ctx context.Context) error
	closed   bool
	closeErr error
}

// Mapper returns the kinds the cluster serves.
func (s *Session) Mapper() cluster.Mapper { return s.Cluster.Mapper() }

// OnClose registers fn to run when the session closes, before the store
// is closed (last registered runs first).
func (s *Session) OnClose(fn func(ctx context.Context) error) {
	s.closers = append(s.closers, fn)
}

// Close runs the close hooks and releases the cluster. It returns the
// same error when called again (commands close their session, and the
// command's end closes it once more to report what failed).
func (s *Session) Close(ctx context.Context) error {
	if s.closed {
		return s.closeErr
	}
	s.closed = true
	var errs []error
	for i := len(s.closers) - 1; i >= 0; i-- {
		errs = append(errs, s.closers[i](ctx))
	}
	s.closers = nil
	if s.Store != nil {
		errs = append(errs, s.Store.Close())
		s.Store = nil
	}
	s.closeErr = errors.Join(errs...)
	if s.closeErr != nil {
		s.closeErr = &closeError{err: s.closeErr}
	}
	return s.closeErr
}

// closeError is a failure to close a session: to save what the command's
// controllers did, or to release the state.
type closeError struct{ err error }

func (e *closeError) Error() string { return "saving the cluster state: " + e.err.Error() }
func (e *closeError) Unwrap() error { return e.err }

// openHooks run on every newly opened embedded session, in order, before
// the command sees it: simHook (simhook.go) hooks the virtual clock and the
// controllers in; tests append theirs.
var openHooks = []func(ctx context.Context, g *Globals, s *Session) error{simHook}

// Open opens the cluster the flags name: a real one with --kubeconfig or
// --context (see kube.go; $KUBECONFIG alone does not select it), else the
// embedded cluster under StateDir, created on first use.
func (g *Globals) Open(ctx context.Context) (*Session, error) {
	if g.realCluster() {
		return g.openKube()
	}
	clk := newSessionClock(ctx)
	st, err := local.Open(g.StateDir(), local.Options{Clock: clk, Warnings: warningPrinter(g.ErrOut)})
	if err != nil {
		return nil, fmt.Errorf("opening the embedded cluster: %w", err)
	}
	s := &Session{Cluster: st, Store: st, Now: clk.Now, Clock: clk}
	for _, h := range openHooks {
		if err := h(ctx, g, s); err != nil {
			_ = s.Close(ctx)
			return nil, err
		}
	}
	g.sessions = append(g.sessions, s)
	return s, nil
}
