package event_test

import (
	"context"
	"testing"
	"time"

	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/controller/event"
	"github.com/konverge/konverge/controller/internal/kobj"
)

type clock struct{ t time.Time }

func (c *clock) Now() time.Time { return c.t }

func TestRecordAggregates(t *testing.T) {
	ctx := context.Background()
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	s, err := local.Open(t.TempDir(), local.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	obj := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "default", "uid": "u1"}}
	t0 := clk.t
	if err := event.Record(ctx, s, t0, obj, event.Normal, "ScalingReplicaSet", "Scaled up", "deployment-controller"); err != nil {
		t.Fatal(err)
	}
	t1 := t0.Add(time.Minute)
	if err := event.Record(ctx, s, t1, obj, event.Normal, "ScalingReplicaSet", "Scaled up", "deployment-controller"); err != nil {
		t.Fatal(err)
	}
	name := event.Name(obj, event.Normal, "ScalingReplicaSet", "Scaled up", "deployment-controller")
	if len(name) != len("web.")+16 {
		t.Errorf("name %q", name)
	}
	ev, err := s.Get(ctx, kobj.EventGVK, "default", name)
	if err != nil {
		t.Fatal(err)
	}
	if kobj.IntOr(ev, 0, "count") != 2 || ev["firstTimestamp"] != kobj.FormatTime(t0) || ev["lastTimestamp"] != kobj.FormatTime(t1) {
		t.Errorf("aggregated event %v", ev)
	}
	if kobj.Str(ev, "involvedObject", "kind") != "Deployment" || kobj.Str(ev, "source", "component") != "deployment-controller" || ev["type"] != "Normal" {
		t.Errorf("event fields %v", ev)
	}
}
