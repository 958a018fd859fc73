package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// tidy keeps the entries in List order whatever was added and removed
// since the last tidy (the sorted head is merged with the new tail).
func TestKindCacheTidy(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	kc := &kindCache{index: map[nsName]int{}}
	live := map[nsName]bool{}
	for step := range 50 {
		for range rng.IntN(40) {
			k := nsName{fmt.Sprintf("ns%d", rng.IntN(3)), fmt.Sprintf("p%03d", rng.IntN(300))}
			if rng.IntN(4) == 0 {
				kc.set(k, nil)
				delete(live, k)
			} else {
				kc.set(k, map[string]any{"step": step})
				live[k] = true
			}
		}
		kc.tidy()
		var want []nsName
		for k := range live {
			want = append(want, k)
		}
		slices.SortFunc(want, nsName.compare)
		var got []nsName
		for i, e := range kc.entries {
			got = append(got, e.key)
			if kc.index[e.key] != i || e.obj == nil {
				t.Fatalf("step %d: entry %d %v: index %d, obj %v", step, i, e.key, kc.index[e.key], e.obj)
			}
		}
		if !slices.Equal(got, want) || len(kc.index) != len(want) {
			t.Fatalf("step %d: entries\n%v\nwant\n%v", step, got, want)
		}
	}
}
