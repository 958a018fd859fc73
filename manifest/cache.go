package manifest

import "sync"

// Cache remembers the documents a Read parsed, by their bytes (and the
// line they start on): a Read with the same Cache (Options.Cache) parses
// only the documents whose bytes changed since the last Read with it, and
// gives the others' objects as that Read gave them, the same maps. A sync
// loop that reads a directory every round decodes only what changed; its
// callers must not modify the objects (package apply does not, unless
// given them with Options.GiveObjects). The
// documents of the last Read only are remembered, and documents with
// problems never. A Cache serves one Read at a time; the zero value is
// ready to use.
type Cache struct {
	mu         sync.Mutex
	last, next map[cacheKey][]docResult
	nextMu     sync.Mutex
}

// cacheKey identifies a unit by its text and place.
type cacheKey struct {
	sum  uint64
	size int
	line int
	json bool
}

// parse fills u.docs, from the cache when it holds u's text (c may be nil).
func (c *Cache) parse(u *unit) {
	if c == nil || u.err != nil {
		u.parse()
		return
	}
	k := cacheKey{sum: digestText(u.data), size: len(u.data), line: u.line, json: u.json}
	docs, ok := c.last[k]
	if !ok {
		u.parse()
		docs = u.docs
		for _, d := range docs {
			if len(d.errs) > 0 {
				return // problems are reported afresh
			}
		}
	} else {
		u.docs = docs
	}
	c.nextMu.Lock()
	c.next[k] = docs
	c.nextMu.Unlock()
}
