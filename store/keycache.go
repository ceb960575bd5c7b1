package store

import (
	"sync"
	"time"
)

// keyCacheTTL is how long a replica trusts a live ingest key and its
// account without asking the database again. Revoking a key or changing an
// account clears this replica's cache once the change is committed; other
// replicas see it within the TTL.
const keyCacheTTL = 5 * time.Second

// keyCacheMax bounds the cache; past it the cache starts over.
const keyCacheMax = 10_000

// keyCache maps an ingest key's hash to its key and account, so that a
// capture needs no lookup of its own. Unknown keys are never cached.
//
// A lookup that raced a change must not put back what the change cleared:
// every clear starts a new generation, and put only stores a row read in
// the generation still current.
type keyCache struct {
	mu  sync.Mutex
	m   map[string]cachedKey
	gen uint64
}

type cachedKey struct {
	ka      keyAccount
	expires time.Time
}

func newKeyCache() *keyCache { return &keyCache{m: map[string]cachedKey{}} }

// get returns the entry for hash, or the generation to read it in.
func (c *keyCache) get(hash string, now time.Time) (keyAccount, uint64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[hash]
	if !ok || !now.Before(e.expires) {
		return keyAccount{}, c.gen, false
	}
	return e.ka, c.gen, true
}

// put stores a row read in generation gen, unless the cache was cleared
// since.
func (c *keyCache) put(hash string, ka keyAccount, gen uint64, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if len(c.m) >= keyCacheMax {
		clear(c.m)
	}
	c.m[hash] = cachedKey{ka: ka, expires: now.Add(keyCacheTTL)}
}

// used notes a key's use in its entry, leaving the entry's expiry as it is.
func (c *keyCache) used(hash string, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[hash]; ok {
		e.ka.KeyLastUsedAt = &at
		c.m[hash] = e
	}
}

// forget drops every entry: keys and accounts change seldom, and a change
// must be seen at once.
func (c *keyCache) forget() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.m)
	c.gen++
}
