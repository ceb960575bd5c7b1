package store

import (
	"sync"
	"time"
)

// keyCacheTTL is how long a replica trusts what a cache holds (a live
// ingest key and its account, a CRM connection) without asking the
// database again. A change this replica commits clears its cache at once;
// other replicas see it within the TTL.
const keyCacheTTL = 5 * time.Second

// keyCacheMax bounds a cache; past it the cache starts over.
const keyCacheMax = 10_000

// cache maps a secret's lookup key (an ingest key's hash, a hook's kind
// and token) to the row it names, so that a hot request needs no lookup of
// its own. Unknown keys are never cached.
//
// A lookup that raced a change must not put back what the change cleared:
// every clear starts a new generation, and put only stores a row read in
// the generation still current.
type cache[V any] struct {
	mu  sync.Mutex
	m   map[string]cached[V]
	gen uint64
}

type cached[V any] struct {
	v       V
	expires time.Time
}

// keyCache is the ingest keys' cache.
type keyCache = cache[keyAccount]

func newKeyCache() *keyCache { return newCache[keyAccount]() }

func newCache[V any]() *cache[V] { return &cache[V]{m: map[string]cached[V]{}} }

// get returns the entry for k, or the generation to read it in.
func (c *cache[V]) get(k string, now time.Time) (V, uint64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[k]
	if !ok || !now.Before(e.expires) {
		var zero V
		return zero, c.gen, false
	}
	return e.v, c.gen, true
}

// put stores a row read in generation gen, unless the cache was cleared
// since.
func (c *cache[V]) put(k string, v V, gen uint64, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if len(c.m) >= keyCacheMax {
		clear(c.m)
	}
	c.m[k] = cached[V]{v: v, expires: now.Add(keyCacheTTL)}
}

// update changes k's entry in place, leaving its expiry as it is.
func (c *cache[V]) update(k string, fn func(*V)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[k]; ok {
		fn(&e.v)
		c.m[k] = e
	}
}

// forget drops every entry: what is cached changes seldom, and a change
// must be seen at once.
func (c *cache[V]) forget() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.m)
	c.gen++
}
