package clock_test

import (
	"context"
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
