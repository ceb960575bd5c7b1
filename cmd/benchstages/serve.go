package main

import (
	"net"
	"net/http"
	"time"

	"github.com/leadsignal/leadsignal/internal/benchkit"
	"github.com/leadsignal/leadsignal/web"
)

// serve runs the real web server on a loopback port, with o's options
// beside the bench's store, a silent log and fresh session keys, and
// returns its base URL ("http://127.0.0.1:port") and how to stop it.
func (b *bench) serve(o web.Options) (string, func(), error) {
	o.Store, o.Log = b.st, discard
	o.SessionHashKey, o.SessionBlockKey = benchkit.RandomKey(), benchkit.RandomKey()
	srv := &http.Server{Handler: web.New(o), ReadHeaderTimeout: 10 * time.Second}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() { _ = srv.Close() }, nil
}
