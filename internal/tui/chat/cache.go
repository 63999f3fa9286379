package chat

import "container/list"

// cacheKey names one render of one version of an item at one width.
type cacheKey struct{ id, version, width int }

type entry struct {
	key   cacheKey
	lines []string
	draft bool // a plain stand-in until the markdown render arrives
	size  int
}

// renderCache keeps rendered items, least recently used first out, within
// a byte budget: rendered text is ~25x its markdown, so 10,000 cached
// messages would not fit in memory. It belongs to the UI goroutine.
type renderCache struct {
	maxBytes int
	bytes    int
	lru      *list.List // of *entry, most recent at the front
	byKey    map[cacheKey]*list.Element
}

func newRenderCache(maxBytes int) *renderCache {
	return &renderCache{maxBytes: maxBytes, lru: list.New(), byKey: map[cacheKey]*list.Element{}}
}

func (c *renderCache) get(k cacheKey) (*entry, bool) {
	el, ok := c.byKey[k]
	if !ok {
		return nil, false
	}
	c.lru.MoveToFront(el)
	return el.Value.(*entry), true
}

func (c *renderCache) put(k cacheKey, lines []string, draft bool) *entry {
	if el, ok := c.byKey[k]; ok {
		c.bytes -= el.Value.(*entry).size
		c.lru.Remove(el)
		delete(c.byKey, k)
	}
	size := 64
	for _, l := range lines {
		size += len(l) + 16
	}
	e := &entry{key: k, lines: lines, draft: draft, size: size}
	c.byKey[k] = c.lru.PushFront(e)
	c.bytes += size
	for c.bytes > c.maxBytes && c.lru.Len() > 1 {
		old := c.lru.Back()
		oe := old.Value.(*entry)
		c.lru.Remove(old)
		delete(c.byKey, oe.key)
		c.bytes -= oe.size
	}
	return e
}

//lint:ignore U1000 dead (issue 24): left to the TUI's rework, which owns this package
func (c *renderCache) len() int { return c.lru.Len() }
