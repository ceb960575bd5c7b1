package static

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func serveFavicon(t *testing.T, method, target string, header map[string]string) result {
	t.Helper()
	req := httptest.NewRequestWithContext(t.Context(), method, target, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	Favicon().ServeHTTP(rec, req)
	resp := rec.Result()
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return result{resp.StatusCode, resp.Header, body}
}

// Browsers ask for /favicon.ico on every page that names no icon; it is
// the SVG icon, cached a day and checked again by its ETag.
func TestFaviconServesTheIcon(t *testing.T) {
	icon, err := files.ReadFile("img/icon.svg")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(icon, []byte("<svg")) || bytes.Contains(bytes.ToLower(icon), []byte("<script")) {
		t.Fatalf("img/icon.svg is not a plain SVG:\n%s", icon)
	}
	r := serveFavicon(t, http.MethodGet, FaviconPath, nil)
	if r.StatusCode != http.StatusOK {
		t.Fatalf("GET %s = %d; want 200", FaviconPath, r.StatusCode)
	}
	if !bytes.Equal(r.Body, icon) {
		t.Errorf("GET %s body differs from img/icon.svg", FaviconPath)
	}
	for k, want := range map[string]string{
		"Content-Type":           "image/svg+xml",
		"Cache-Control":          "public, max-age=86400",
		"X-Content-Type-Options": "nosniff",
	} {
		if got := r.Header.Get(k); got != want {
			t.Errorf("%s = %q; want %q", k, got, want)
		}
	}
	etag := r.Header.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	if r := serveFavicon(t, http.MethodGet, FaviconPath, map[string]string{"If-None-Match": etag}); r.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match = %d; want 304", r.StatusCode)
	}
	if r := serveFavicon(t, http.MethodHead, FaviconPath, nil); r.StatusCode != http.StatusOK || len(r.Body) != 0 {
		t.Errorf("HEAD = %d with %d bytes; want 200 and no body", r.StatusCode, len(r.Body))
	}
	if r := serveFavicon(t, http.MethodPost, FaviconPath, nil); r.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST = %d; want 405", r.StatusCode)
	}
	if r := serveFavicon(t, http.MethodGet, "/favicon.png", nil); r.StatusCode != http.StatusNotFound {
		t.Errorf("GET /favicon.png = %d; want 404", r.StatusCode)
	}
}

// A page's <link rel="icon"> names the icon by its hashed URL, cached
// forever like the other assets.
func TestIconHashedURL(t *testing.T) {
	url := Path("img/icon.svg")
	if !strings.HasPrefix(url, "/static/img/icon.") || !strings.HasSuffix(url, ".svg") {
		t.Fatalf("Path(img/icon.svg) = %q", url)
	}
	r := do(t, http.MethodGet, url, nil)
	if r.StatusCode != http.StatusOK || r.Header.Get("Content-Type") != "image/svg+xml" || r.Header.Get("Cache-Control") != immutable {
		t.Errorf("GET %s = %d, %q, %q", url, r.StatusCode, r.Header.Get("Content-Type"), r.Header.Get("Cache-Control"))
	}
}
