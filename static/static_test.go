package static

import (
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

const immutable = "public, max-age=31536000, immutable"

// result is a served response, read and closed.
type result struct {
	StatusCode int
	Header     http.Header
	Body       []byte
}

func do(t *testing.T, method, target string, header map[string]string) result {
	t.Helper()
	req := httptest.NewRequestWithContext(t.Context(), method, target, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	Handler().ServeHTTP(rec, req)
	resp := rec.Result()
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return result{resp.StatusCode, resp.Header, body}
}

func TestPathServesExactBytes(t *testing.T) {
	tests := []struct {
		name  string
		url   *regexp.Regexp
		ctype string
	}{
		{"css/app.css", regexp.MustCompile(`^/static/css/app\.[0-9a-f]{12}\.css$`), "text/css; charset=utf-8"},
		{"css/pico.min.css", regexp.MustCompile(`^/static/css/pico\.min\.[0-9a-f]{12}\.css$`), "text/css; charset=utf-8"},
		{"js/htmx.min.js", regexp.MustCompile(`^/static/js/htmx\.min\.[0-9a-f]{12}\.js$`), "text/javascript; charset=utf-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, err := files.ReadFile(tt.name)
			if err != nil {
				t.Fatal(err)
			}
			url := Path(tt.name)
			if !tt.url.MatchString(url) {
				t.Fatalf("Path(%q) = %q, want match for %s", tt.name, url, tt.url)
			}
			if again := Path(tt.name); again != url {
				t.Fatalf("Path not stable: %q then %q", url, again)
			}

			resp := do(t, http.MethodGet, url, nil)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("GET %s: status %d", url, resp.StatusCode)
			}
			if got := resp.Header.Get("Content-Type"); got != tt.ctype {
				t.Errorf("Content-Type = %q, want %q", got, tt.ctype)
			}
			if got := resp.Header.Get("Cache-Control"); got != immutable {
				t.Errorf("Cache-Control = %q, want %q", got, immutable)
			}
			if got := resp.Header.Get("Content-Encoding"); got != "" {
				t.Errorf("Content-Encoding = %q without Accept-Encoding", got)
			}
			if got := resp.Body; !bytes.Equal(got, want) {
				t.Errorf("body differs from embedded file (%d vs %d bytes)", len(got), len(want))
			}
			etag := resp.Header.Get("ETag")
			if !regexp.MustCompile(`^"[0-9a-f]{12}"$`).MatchString(etag) || !strings.Contains(url, etag[1:13]) {
				t.Errorf("ETag = %q, want the quoted hash from %q", etag, url)
			}

			// Conditional request.
			resp = do(t, http.MethodGet, url, map[string]string{"If-None-Match": etag})
			if resp.StatusCode != http.StatusNotModified {
				t.Errorf("If-None-Match: status %d, want 304", resp.StatusCode)
			}

			// HEAD: headers, no body.
			resp = do(t, http.MethodHead, url, nil)
			if resp.StatusCode != http.StatusOK || len(resp.Body) != 0 {
				t.Errorf("HEAD: status %d, want 200 with empty body", resp.StatusCode)
			}
			if got := resp.Header.Get("Content-Length"); got != strconv.Itoa(len(want)) {
				t.Errorf("HEAD Content-Length = %q, want %d", got, len(want))
			}

			// gzip.
			resp = do(t, http.MethodGet, url, map[string]string{"Accept-Encoding": "br, gzip;q=0.8"})
			if got := resp.Header.Get("Content-Encoding"); got != "gzip" {
				t.Fatalf("Content-Encoding = %q, want gzip", got)
			}
			if got := resp.Header.Get("Vary"); got != "Accept-Encoding" {
				t.Errorf("Vary = %q", got)
			}
			if got := resp.Header.Get("ETag"); got == etag {
				t.Errorf("gzip ETag %q equals identity ETag", got)
			}
			zr, err := gzip.NewReader(bytes.NewReader(resp.Body))
			if err != nil {
				t.Fatal(err)
			}
			if got, err := io.ReadAll(zr); err != nil || !bytes.Equal(got, want) {
				t.Errorf("gunzipped body differs (err %v)", err)
			}

			// Without the /static prefix (mounted behind http.StripPrefix).
			resp = do(t, http.MethodGet, strings.TrimPrefix(url, "/static"), nil)
			if resp.StatusCode != http.StatusOK {
				t.Errorf("stripped path: status %d", resp.StatusCode)
			}
		})
	}
}

func TestNotFound(t *testing.T) {
	app := Path("css/app.css")
	stale := strings.Replace(app, app[len(app)-16:len(app)-4], "000000000000", 1)
	if stale == app {
		t.Fatal("test setup: stale URL equals current URL")
	}
	tests := []struct{ name, target string }{
		{"unhashed", "/static/css/app.css"},
		{"stale hash", stale},
		{"unknown", "/static/css/nope.0123456789ab.css"},
		{"short hash", strings.Replace(app, app[len(app)-16:len(app)-4], app[len(app)-16:len(app)-5], 1)},
		{"directory", "/static/css/"},
		{"root", "/static/"},
		{"outside embed", "/static/static.go"},
		{"traversal", "/static/../static/" + strings.TrimPrefix(app, "/static/") + "/.."},
		{"readme", "/static/README.md"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := do(t, http.MethodGet, tt.target, nil)
			if resp.StatusCode != http.StatusNotFound {
				t.Errorf("GET %s: status %d, want 404", tt.target, resp.StatusCode)
			}
			if got := resp.Header.Get("Cache-Control"); got == immutable {
				t.Errorf("404 carries immutable Cache-Control")
			}
		})
	}
}

func TestMethodNotAllowed(t *testing.T) {
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete} {
		resp := do(t, m, Path("js/htmx.min.js"), nil)
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("%s: status %d, want 405", m, resp.StatusCode)
		}
		if got := resp.Header.Get("Allow"); got != "GET, HEAD" {
			t.Errorf("%s: Allow = %q", m, got)
		}
	}
}

func TestPathPanicsOnUnknownName(t *testing.T) {
	for _, name := range []string{"", "css/nope.css", "/css/app.css", "app.css", "css", "css/app.css/"} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("Path(%q) did not panic", name)
				}
			}()
			Path(name)
		})
	}
}

func TestEveryEmbeddedFileHasAPath(t *testing.T) {
	n := 0
	err := fs.WalkDir(files, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		n++
		if resp := do(t, http.MethodGet, Path(name), nil); resp.StatusCode != http.StatusOK {
			t.Errorf("%s: status %d", name, resp.StatusCode)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != len(byHashed) || n < 3 {
		t.Errorf("walked %d files, %d hashed names", n, len(byHashed))
	}
}

func TestHashedName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"css/app.css", "css/app.h.css"},
		{"js/htmx.min.js", "js/htmx.min.h.js"},
		{"img/logo", "img/logo.h"},
		{"v1.2/file", "v1.2/file.h"},
	}
	for _, tt := range tests {
		if got := hashedName(tt.in, "h"); got != tt.want {
			t.Errorf("hashedName(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestAcceptsGzip(t *testing.T) {
	tests := []struct {
		header string
		want   bool
	}{
		{"", false},
		{"gzip", true},
		{"GZIP", true},
		{"deflate, gzip;q=1.0, *;q=0.5", true},
		{"gzip;q=0", false},
		{"gzip; q=0.000", false},
		{"br", false},
		{"x-gzip2", false},
	}
	for _, tt := range tests {
		if got := acceptsGzip(tt.header); got != tt.want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", tt.header, got, tt.want)
		}
	}
}
