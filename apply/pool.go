package apply

import (
	"context"
	"sync"
	"sync/atomic"
)

// DefaultConcurrency is how many requests an apply has in flight at once
// on a cluster that is not a Batcher, when Options.Concurrency is 0.
const DefaultConcurrency = 16

// forEach runs fn(0), ..., fn(n-1) on up to workers goroutines and waits
// for them. Once ctx ends it starts no more calls; fn sees ctx's error in
// its own requests.
func forEach(ctx context.Context, n, workers int, fn func(i int)) {
	workers = min(max(workers, 1), n)
	if workers <= 1 {
		for i := range n {
			if ctx.Err() != nil {
				return
			}
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				fn(i)
			}
		}()
	}
	wg.Wait()
}
