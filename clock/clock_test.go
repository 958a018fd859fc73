package clock_test

import (
	"bytes"
	"context"
	"slices"
	"testing"
	"time"

	"github.com/konverge/konverge/clock"
	"github.com/konverge/konverge/cluster/local"
)

func TestSaveLoadAndSet(t *testing.T) {
	ctx := context.Background()
	st, err := local.Open(t.TempDir(), local.Options{LockTimeout: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c := clock.New(clock.Manual, clock.Epoch)
	if found, err := c.Load(ctx, st); err != nil || found {
		t.Fatalf("Load on a new state = %v, %v", found, err)
	}
	c.Set(clock.Epoch.Add(time.Minute))
	c.Set(clock.Epoch) // time does not go back
	c.SetSettled(clock.Settled{Revision: 7, At: c.Now()})
	if err := c.Save(ctx, st); err != nil {
		t.Fatal(err)
	}
	d := clock.New(clock.Wall, time.Now())
	if found, err := d.Load(ctx, st); err != nil || !found {
		t.Fatalf("Load = %v, %v", found, err)
	}
	if d.Mode() != clock.Manual || !d.Now().Equal(clock.Epoch.Add(time.Minute)) || d.Settled().Revision != 7 {
		t.Errorf("loaded %s %s %+v", d.Mode(), d.Now(), d.Settled())
	}
	if _, err := clock.ParseMode("lunar"); err == nil {
		t.Error("ParseMode accepted lunar")
	}
}

// kcm is kube-controller-manager's client rate: --kube-api-qps 20,
// --kube-api-burst 30.
var kcm = clock.Rate{QPS: 20, Burst: 30}

// perSecond takes tokens second by second from start, each second's
// requests sent within that second, and returns how many each second got.
func perSecond(c *clock.Clock, name string, r clock.Rate, start time.Time, seconds, want int) []int {
	out := make([]int, seconds)
	for s := range seconds {
		now := start.Add(time.Duration(s) * time.Second)
		for out[s] < want {
			sent, ok := c.Take(name, r, now, now.Add(time.Second))
			if !ok {
				break
			}
			if sent.Before(now) || !sent.Before(now.Add(time.Second)) {
				panic("sent outside its second")
			}
			out[s]++
		}
	}
	return out
}

func TestTakePace(t *testing.T) {
	c := clock.New(clock.Manual, clock.Epoch)
	// A full bucket gives the burst at once and the tokens that come
	// within the second (one every 50 ms: 19 more), then 20 a second.
	got := perSecond(c, "replicaset", kcm, clock.Epoch, 4, 1000)
	if want := []int{49, 20, 20, 20}; !slices.Equal(got, want) {
		t.Errorf("tokens per second = %v, want %v", got, want)
	}
	// Another client has a bucket of its own.
	if got := perSecond(c, "deployment", kcm, clock.Epoch, 1, 1000); got[0] != 49 {
		t.Errorf("a second client got %d tokens in its first second, want 49", got[0])
	}
	// A quiet spell refills the bucket up to the burst only: after a
	// minute, 30 at once and 19 more within the second.
	later := clock.Epoch.Add(time.Minute)
	if got := perSecond(c, "replicaset", kcm, later, 2, 1000); !slices.Equal(got, []int{49, 20}) {
		t.Errorf("after a quiet minute: %v, want [49 20]", got)
	}
	// A request that finds no token in its window is told when the next
	// one comes, and takes nothing.
	now := later.Add(2 * time.Second)
	perSecond(c, "replicaset", kcm, now, 1, 1000)
	next, ok := c.Take("replicaset", kcm, now, now.Add(time.Second))
	if ok || !next.Equal(now.Add(time.Second)) {
		t.Errorf("Take on an empty bucket = %s, %v; want %s, false", next, ok, now.Add(time.Second))
	}
	// Without a QPS nothing is limited.
	if _, ok := c.Take("kube-apiserver", clock.Rate{}, now, now); !ok {
		t.Error("a Rate without QPS limited a request")
	}
}

func TestBucketsPersistAndRestore(t *testing.T) {
	ctx := context.Background()
	st, err := local.Open(t.TempDir(), local.Options{LockTimeout: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c := clock.New(clock.Manual, clock.Epoch)
	snap := c.Snapshot()
	perSecond(c, "replicaset", kcm, clock.Epoch, 1, 1000)
	if err := c.Save(ctx, st); err != nil {
		t.Fatal(err)
	}
	// A new process goes on with the bucket as it was left: empty.
	d := clock.New(clock.Manual, clock.Epoch)
	if _, err := d.Load(ctx, st); err != nil {
		t.Fatal(err)
	}
	if _, ok := d.Take("replicaset", kcm, clock.Epoch, clock.Epoch.Add(time.Second)); ok {
		t.Error("a loaded clock forgot the empty bucket")
	}
	// A rollback gives the tokens back.
	c.Restore(snap)
	if got := perSecond(c, "replicaset", kcm, clock.Epoch, 1, 1000); got[0] != 49 {
		t.Errorf("after Restore: %d tokens, want 49", got[0])
	}
	// A bucket full again by the clock's time is not persisted.
	c.Set(clock.Epoch.Add(time.Hour))
	_, data, err := c.Persisted()
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte("buckets")) {
		t.Errorf("persisted a full bucket: %s", data)
	}
}
