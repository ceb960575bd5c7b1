package store

import (
	"testing"
	"time"
)

// A lookup that began before a clear does not put back the row it read.
func TestKeyCacheGeneration(t *testing.T) {
	t.Parallel()
	c := newKeyCache()
	now := time.Now()
	_, gen, ok := c.get("h", now)
	if ok {
		t.Fatal("empty cache has an entry")
	}
	c.forget() // a revocation commits while the lookup reads
	c.put("h", keyAccount{KeyID: 1}, gen, now)
	if _, _, ok := c.get("h", now); ok {
		t.Error("a row read before the clear was cached after it")
	}
	_, gen, _ = c.get("h", now)
	c.put("h", keyAccount{KeyID: 1}, gen, now)
	if ka, _, ok := c.get("h", now); !ok || ka.KeyID != 1 {
		t.Error("a row read after the clear was not cached")
	}
	if _, _, ok := c.get("h", now.Add(keyCacheTTL)); ok {
		t.Error("an entry outlived its TTL")
	}
}
