// Package parallel runs the iterations of a loop on all CPUs: in
// contiguous ranges, when the iterations cost about the same (Chunks), or
// one at a time to whichever goroutine is free, when they do not (Each).
package parallel

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
)

// Chunks calls fn(0..n-1) on up to GOMAXPROCS goroutines, each calling
// it for one contiguous range of at least minPer indexes (1 when minPer
// is smaller), and returns when every call has returned. With one
// goroutine the calls are made on the caller's, in order.
func Chunks(n, minPer int, fn func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n/max(minPer, 1)+1, n)
	if workers <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	per := (n + workers - 1) / workers
	var wg sync.WaitGroup
	for lo := 0; lo < n; lo += per {
		hi := min(lo+per, n)
		wg.Go(func() {
			for i := lo; i < hi; i++ {
				fn(i)
			}
		})
	}
	wg.Wait()
}

// Each calls fn(0..n-1) on up to GOMAXPROCS goroutines, handing out the
// next index to the goroutine that is free, until ctx ends; it returns
// ctx's error then, once the calls made have returned.
func Each(ctx context.Context, n int, fn func(i int)) error {
	var next atomic.Int64
	work := func() {
		for ctx.Err() == nil {
			i := int(next.Add(1) - 1)
			if i >= n {
				return
			}
			fn(i)
		}
	}
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		work()
		return ctx.Err()
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(work)
	}
	wg.Wait()
	return ctx.Err()
}
