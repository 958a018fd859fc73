package parallel

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// TestChunks calls every index once, in contiguous ranges of at least
// minPer per goroutine.
func TestChunks(t *testing.T) {
	for _, n := range []int{0, 1, 63, 64, 65, 1000, 1025} {
		for _, minPer := range []int{0, 1, 64, 5000} {
			calls := make([]int32, n)
			var mu sync.Mutex
			goroutines := map[int64]bool{}
			Chunks(n, minPer, func(i int) {
				atomic.AddInt32(&calls[i], 1)
				mu.Lock()
				goroutines[goid()] = true
				mu.Unlock()
			})
			for i, c := range calls {
				if c != 1 {
					t.Fatalf("Chunks(%d, %d): index %d called %d times", n, minPer, i, c)
				}
			}
			if limit := max(1, min(runtime.GOMAXPROCS(0), n/max(minPer, 1)+1)); len(goroutines) > limit {
				t.Errorf("Chunks(%d, %d) ran on %d goroutines, want at most %d", n, minPer, len(goroutines), limit)
			}
		}
	}
}

// TestChunksInOrderAlone makes its calls in order when one goroutine does
// the work.
func TestChunksInOrderAlone(t *testing.T) {
	var seen []int
	Chunks(10, 64, func(i int) { seen = append(seen, i) })
	for i, v := range seen {
		if v != i {
			t.Fatalf("calls %v, want 0..9 in order", seen)
		}
	}
}

// TestEach calls every index once, and stops handing out indexes once the
// context ends.
func TestEach(t *testing.T) {
	calls := make([]int32, 500)
	if err := Each(context.Background(), len(calls), func(i int) { atomic.AddInt32(&calls[i], 1) }); err != nil {
		t.Fatal(err)
	}
	for i, c := range calls {
		if c != 1 {
			t.Fatalf("index %d called %d times", i, c)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var made atomic.Int32
	err := Each(ctx, 1000, func(i int) {
		if made.Add(1) == 10 {
			cancel()
		}
	})
	if err == nil || made.Load() >= 1000 {
		t.Errorf("Each after cancel: %v, %d calls", err, made.Load())
	}
}

// goid is the calling goroutine's number, read from the first line of its
// stack trace ("goroutine 123 [running]:").
func goid() int64 {
	var buf [64]byte
	n := runtime.Stack(buf[:], false)
	var id int64
	for _, c := range buf[len("goroutine "):n] {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + int64(c-'0')
	}
	return id
}
