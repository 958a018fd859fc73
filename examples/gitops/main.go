// Command gitops is a minimal GitOps sync loop written on konverge's
// library. Each round loads a directory of manifests (decoding only the
// documents whose bytes changed), plans them against the cluster (with a
// Planner that remembers its last plan, so that an object whose manifest
// and live object did not move is not planned again), applies the plan
// when something drifted, and waits until every object is healthy.
// Between rounds it plays the rest of the world: an autoscaler scales the
// Deployment, and someone edits its image by hand. An ignore rule leaves
// the autoscaler's replicas alone; the edit is drift, named by its field
// path, and reverted.
//
// It runs on an embedded cluster on a virtual clock, so waiting for a
// rollout takes no wall time:
//
//	go run ./examples/gitops [-dir examples/gitops/manifests]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/konverge/konverge/apply"
	"github.com/konverge/konverge/clock"
	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/kubelet"
	"github.com/konverge/konverge/manifest"
	"github.com/konverge/konverge/objref"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/sim"
	"github.com/konverge/konverge/wait"
)

func main() {
	dir := flag.String("dir", "examples/gitops/manifests", "the directory of manifests to keep in sync")
	flag.Parse()
	if err := run(context.Background(), os.Stdout, *dir); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

// syncer keeps a cluster in sync with a directory.
type syncer struct {
	dir    string
	c      cluster.Interface
	driver wait.Driver
	opts   apply.Options
	out    io.Writer
	// planner remembers its last plan: an object whose manifest and live
	// object did not move since gets the change planned then, so a
	// round costs what changed.
	planner *apply.Planner
	// cache gives the objects of the manifests whose bytes did not
	// change since the last round without decoding them again.
	cache manifest.Cache
}

func newSyncer(dir string, c *local.Store, driver wait.Driver, out io.Writer) *syncer {
	opts := options()
	return &syncer{dir: dir, c: c, driver: driver, opts: opts, out: out,
		planner: apply.NewPlanner(c, c.Mapper(), opts).WithMemory()}
}

// options are the loop's apply options: every object a member of the
// ApplySet "shop" (so that objects removed from the directory are
// pruned), and the Deployment's replicas left to its autoscaler.
func options() apply.Options {
	return apply.Options{
		Namespace:        "shop",
		EnforceNamespace: true,
		Prune:            true,
		ApplySet:         "shop",
		Ignore: []apply.IgnoreRule{{
			Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "web",
			Paths: []string{"spec.replicas"},
			// Or every field the autoscaler writes:
			// Managers: []string{"kube-controller-manager"},
		}},
	}
}

// sync is one round of the loop.
func (s *syncer) sync(ctx context.Context) error {
	objs, err := manifest.Read(ctx, []string{s.dir}, manifest.Options{Cache: &s.cache})
	if err != nil {
		return err
	}
	plan, err := s.planner.Plan(ctx, objs)
	if err != nil {
		return err
	}
	drifted := plan.Masked().Drifted()
	if len(drifted) == 0 {
		fmt.Fprintln(s.out, "in sync: nothing to do")
		return nil
	}
	for _, c := range drifted {
		if len(c.Paths) == 0 {
			fmt.Fprintf(s.out, "plan: %s\n", c)
			continue
		}
		fmt.Fprintf(s.out, "plan: %s, drift at %v\n", c, c.Paths)
	}
	results, err := apply.New(s.c, s.opts).ApplyPlan(ctx, plan)
	if err != nil {
		return err
	}
	var refs []objref.Ref
	for _, r := range results {
		if r.Action != apply.Pruned {
			refs = append(refs, r.Ref)
		}
	}
	_, err = wait.ForCurrent(ctx, s.c, refs, wait.Options{
		Timeout: 10 * time.Minute,
		Driver:  s.driver,
		OnEvent: func(e wait.Event) {
			if e.Health.Status != "Current" || e.Ref.Kind == "Deployment" {
				fmt.Fprintf(s.out, "  %s\n", e)
			}
		},
	})
	if err != nil {
		return err
	}
	fmt.Fprintln(s.out, "healthy")
	return nil
}

// run plays the story on a fresh embedded cluster.
func run(ctx context.Context, out io.Writer, dir string) error {
	state, err := os.MkdirTemp("", "konverge-gitops")
	if err != nil {
		return err
	}
	defer os.RemoveAll(state)
	clk := clock.New(clock.Manual, clock.Epoch)
	st, err := local.Open(state, local.Options{Clock: clk})
	if err != nil {
		return err
	}
	defer st.Close()
	runner := sim.New(st, clk, sim.Controllers(kubelet.DefaultProfile())...)
	s := newSyncer(dir, st, runner, out)

	step := func(title string) { fmt.Fprintf(out, "\n# %s\n", title) }
	step("first sync")
	if err := s.sync(ctx); err != nil {
		return err
	}
	step("second sync")
	if err := s.sync(ctx); err != nil {
		return err
	}

	step("the autoscaler scales web to 4; someone sets its image by hand")
	deploy := schema.GVK{Group: "apps", Version: "v1", Kind: "Deployment"}
	if _, err := st.Patch(ctx, deploy, "shop", "web", cluster.MergePatchType,
		[]byte(`{"spec":{"replicas":4}}`), cluster.FieldOwner("kube-controller-manager")); err != nil {
		return err
	}
	if _, err := st.Patch(ctx, deploy, "shop", "web", cluster.StrategicMergePatchType,
		[]byte(`{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.26"}]}}}}`),
		cluster.FieldOwner("kubectl-edit")); err != nil {
		return err
	}
	if _, err := runner.Settle(ctx); err != nil {
		return err
	}
	step("third sync")
	if err := s.sync(ctx); err != nil {
		return err
	}
	web, err := st.Get(ctx, deploy, "shop", "web")
	if err != nil {
		return err
	}
	spec := web["spec"].(map[string]any)
	image := spec["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["image"]
	fmt.Fprintf(out, "web: replicas %v (the autoscaler's), image %v (the directory's)\n", spec["replicas"], image)

	step("fourth sync")
	return s.sync(ctx)
}
