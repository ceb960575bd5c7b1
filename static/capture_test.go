package static

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// The site snippet is served at /capture.js, cached an hour and checked
// again by its ETag, gzipped for clients that take it, and at most 4 KB
// gzipped (DESIGN.md, "Browser capture").
func TestCaptureScript(t *testing.T) {
	js, err := files.ReadFile("js/capture.js")
	if err != nil {
		t.Fatal(err)
	}
	if gz := gzipBytes(js); len(gz) > 4096 {
		t.Errorf("capture.js is %d bytes gzipped; want at most 4096", len(gz))
	}
	get := func(header http.Header) *http.Response {
		req := httptest.NewRequestWithContext(t.Context(), http.MethodGet, CapturePath, nil)
		for k, v := range header {
			req.Header[k] = v
		}
		rec := httptest.NewRecorder()
		Capture().ServeHTTP(rec, req)
		return rec.Result()
	}
	r := get(nil)
	body, _ := io.ReadAll(r.Body)
	if r.StatusCode != http.StatusOK || !bytes.Equal(body, js) {
		t.Fatalf("GET %s = %d, %d bytes; want 200 and capture.js", CapturePath, r.StatusCode, len(body))
	}
	for k, want := range map[string]string{"Content-Type": "text/javascript; charset=utf-8", "Cache-Control": "public, max-age=3600"} {
		if got := r.Header.Get(k); got != want {
			t.Errorf("%s = %q; want %q", k, got, want)
		}
	}
	if r := get(http.Header{"If-None-Match": {r.Header.Get("ETag")}}); r.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match = %d; want 304", r.StatusCode)
	}
	if r := get(http.Header{"Accept-Encoding": {"gzip"}}); r.Header.Get("Content-Encoding") != "gzip" {
		t.Errorf("Accept-Encoding gzip: Content-Encoding %q", r.Header.Get("Content-Encoding"))
	}
	if !bytes.Contains(js, []byte("capture.js v1")) {
		t.Error("capture.js does not name its version in its first line")
	}
}
