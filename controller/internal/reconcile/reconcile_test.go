package reconcile_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/controller"
	"github.com/konverge/konverge/controller/internal/ctrltest"
	"github.com/konverge/konverge/controller/internal/kobj"
	"github.com/konverge/konverge/controller/internal/reconcile"
)

type recorder map[string]bool

func (r recorder) Synced(owner map[string]any, wrote bool, _ time.Time) { r[kobj.Name(owner)] = wrote }

func owner(name string) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name, "namespace": "default"}}
}

// TestLoop: how the loop merges the owners' outcomes and sorts their
// errors, with upstream's back-off and with Refused.
func TestLoop(t *testing.T) {
	boom := errors.New("boom")
	conflict := cluster.NewConflict("configmaps", "a", "stale")
	for _, tc := range []struct {
		name      string
		loop      reconcile.Loop
		outcomes  map[string]error
		wantErr   string
		requeue   time.Duration // after now; 0: none
		scheduled bool
		wrote     recorder
	}{
		{
			name:     "refusals dropped, failures as returned",
			loop:     reconcile.Loop{Name: "x", Refused: cluster.IsStatus},
			outcomes: map[string]error{"a": conflict, "b": boom, "c": nil},
			wantErr:  "x: boom",
			requeue:  time.Minute,
			wrote:    recorder{"a": true, "b": true, "c": false},
		},
		{
			name:     "back-off: a conflict is retried a second later, a failure named",
			loop:     reconcile.Loop{Name: "x", Component: "x-controller"},
			outcomes: map[string]error{"a": conflict, "b": boom, "c": nil},
			wantErr:  "x: default/b: boom",
			requeue:  time.Second,
			wrote:    recorder{"a": true, "b": true, "c": false},
		},
		{
			name:      "scheduled",
			loop:      reconcile.Loop{Name: "x", Component: "x-controller", Scheduled: true},
			outcomes:  map[string]error{"a": nil},
			requeue:   time.Minute,
			scheduled: true,
			wrote:     recorder{"a": false},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := ctrltest.New(t)
			var owners []map[string]any
			for _, n := range []string{"a", "b", "c"} {
				if _, ok := tc.outcomes[n]; ok {
					owners = append(owners, e.Create(owner(n)))
				}
			}
			rec := recorder{}
			tc.loop.Memory = rec
			var res controller.Result
			var runErr error
			err := e.Batch(func(c cluster.Interface) error {
				res, runErr = tc.loop.Run(e.Ctx, c, e.Now(), owners, func(_ context.Context, o map[string]any) (reconcile.Outcome, error) {
					err := tc.outcomes[kobj.Name(o)]
					return reconcile.Outcome{Changed: err != nil, Requeue: e.Now().Add(time.Minute)}, err
				})
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := errString(runErr); got != tc.wantErr {
				t.Errorf("error %q, want %q", got, tc.wantErr)
			}
			if want := e.Now().Add(tc.requeue); !res.RequeueAt.Equal(want) {
				t.Errorf("requeue at %v, want %v", res.RequeueAt, want)
			}
			if got := !res.Scheduled.IsZero(); got != tc.scheduled {
				t.Errorf("scheduled %v, want %v", res.Scheduled, tc.scheduled)
			}
			for n, w := range tc.wrote {
				if got, ok := rec[n]; !ok || got != w {
					t.Errorf("memory told %s wrote %v (told: %v), want %v", n, got, ok, w)
				}
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestCleanSkip: an owner is skipped when its last sync wrote nothing,
// no write concerns it and its requeue time has not come.
func TestCleanSkip(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a := reconcile.Key{"ns", "a"}
	for _, tc := range []struct {
		name  string
		clean reconcile.Clean
		dirty func(d *reconcile.Dirty)
		skip  bool
	}{
		{"clean", reconcile.Clean{a: {}}, nil, true},
		{"never synced", reconcile.Clean{}, nil, false},
		{"requeue to come", reconcile.Clean{a: now.Add(time.Second)}, nil, true},
		{"requeue come", reconcile.Clean{a: now}, nil, false},
		{"owner written", reconcile.Clean{a: {}}, func(d *reconcile.Dirty) { d.Owners[a] = true }, false},
		{"namespace written", reconcile.Clean{a: {}}, func(d *reconcile.Dirty) { d.NS["ns"] = true }, false},
		{"all", reconcile.Clean{a: {}}, func(d *reconcile.Dirty) { d.All = true }, false},
		{"an Event of the owner", reconcile.Clean{a: {}}, func(d *reconcile.Dirty) {
			d.Namespaced(controller.Key{Kind: "Event", Namespace: "ns", Name: "a.18a2b3c4d5e6f789"})
		}, false},
		{"a quota of its namespace", reconcile.Clean{a: {}}, func(d *reconcile.Dirty) {
			d.Namespaced(controller.Key{Kind: "ResourceQuota", Namespace: "ns", Name: "q"})
		}, false},
		{"another namespace", reconcile.Clean{a: {}}, func(d *reconcile.Dirty) {
			d.Namespaced(controller.Key{Kind: "Namespace", Name: "other"})
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := reconcile.NewDirty()
			if tc.dirty != nil {
				tc.dirty(&d)
			}
			if _, skip := tc.clean.Skip(d, a, now); skip != tc.skip {
				t.Errorf("skip %v, want %v", skip, tc.skip)
			}
		})
	}
	c := reconcile.Clean{a: {}, {"ns", "gone"}: {}}
	c.Forget([]map[string]any{{"metadata": map[string]any{"namespace": "ns", "name": "a"}}})
	if _, ok := c[reconcile.Key{"ns", "gone"}]; ok || len(c) != 1 {
		t.Errorf("after Forget: %v", c)
	}
	c.Record(a, true, time.Time{})
	if len(c) != 0 {
		t.Errorf("after a write: %v", c)
	}
}
