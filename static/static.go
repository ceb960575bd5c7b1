// Package static embeds the application's CSS, JavaScript and icon and serves
// them under content-hashed names so that browsers may cache them forever.
//
// Views refer to an asset by its logical name through [Path]:
//
//	<link rel="stylesheet" href={ static.Path("css/app.css") }>
//
// which yields a URL such as "/static/css/app.3f2a9c0d1e4b.css". The hash is
// the first 12 hex digits of the SHA-256 of the file's contents, computed when
// the program starts, so a changed file gets a new URL and stale copies are
// never served. [Handler] serves those URLs with immutable caching headers.
//
// [Favicon] serves the icon (img/icon.svg) at /favicon.ico too, where
// browsers and other clients look when a page names no icon.
//
// Third-party files (htmx, Pico CSS) are vendored; see README.md and
// vendor.sh in this directory.
package static

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"
)

// URLPrefix is the URL path under which [Handler] expects to be mounted and
// with which every [Path] result begins.
const URLPrefix = "/static/"

//go:embed js css img
var files embed.FS

// hashLen is the number of hex digits of the SHA-256 used in hashed names.
const hashLen = 12

// asset is one embedded file, ready to serve.
type asset struct {
	hashed string // e.g. "css/app.0123456789ab.css"
	data   []byte
	ctype  string
	etag   string // quoted strong ETag of the identity encoding
	gzip   func() []byte
}

var (
	byLogical = map[string]*asset{} // "css/app.css" -> asset
	byHashed  = map[string]*asset{} // "css/app.0123456789ab.css" -> asset
)

func init() {
	err := fs.WalkDir(files, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := files.ReadFile(name)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		hash := hex.EncodeToString(sum[:])[:hashLen]
		a := &asset{
			hashed: hashedName(name, hash),
			data:   data,
			ctype:  contentType(name, data),
			etag:   `"` + hash + `"`,
		}
		if compressible(a.ctype) {
			a.gzip = sync.OnceValue(func() []byte { return gzipBytes(data) })
		}
		byLogical[name] = a
		byHashed[a.hashed] = a
		return nil
	})
	if err != nil {
		panic("static: reading embedded files: " + err.Error())
	}
}

// hashedName inserts hash before the last extension of the base name:
// "js/htmx.min.js" becomes "js/htmx.min.<hash>.js", "LICENSE" becomes
// "LICENSE.<hash>".
func hashedName(name, hash string) string {
	ext := path.Ext(name)
	return strings.TrimSuffix(name, ext) + "." + hash + ext
}

// types pins the Content-Type of common asset extensions so that responses do
// not depend on the host's mime.types files.
var types = map[string]string{
	".css":   "text/css; charset=utf-8",
	".js":    "text/javascript; charset=utf-8",
	".mjs":   "text/javascript; charset=utf-8",
	".map":   "application/json",
	".json":  "application/json",
	".svg":   "image/svg+xml",
	".png":   "image/png",
	".jpg":   "image/jpeg",
	".webp":  "image/webp",
	".ico":   "image/x-icon",
	".woff2": "font/woff2",
	".txt":   "text/plain; charset=utf-8",
}

func contentType(name string, data []byte) string {
	ext := strings.ToLower(path.Ext(name))
	if t, ok := types[ext]; ok {
		return t
	}
	if t := mime.TypeByExtension(ext); t != "" {
		return t
	}
	return http.DetectContentType(data)
}

func compressible(ctype string) bool {
	return strings.HasPrefix(ctype, "text/") ||
		strings.HasPrefix(ctype, "application/json") ||
		strings.HasPrefix(ctype, "image/svg+xml")
}

// gzipBytes compresses data, or returns nil if that does not make it smaller.
func gzipBytes(data []byte) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if _, err := zw.Write(data); err != nil {
		return nil
	}
	if err := zw.Close(); err != nil || buf.Len() >= len(data) {
		return nil
	}
	return buf.Bytes()
}

// Path returns the URL path of the embedded file with the given logical name,
// which is its path relative to this directory, such as "css/app.css" or
// "js/htmx.min.js". The result is [URLPrefix] followed by the content-hashed
// name, e.g. "/static/css/app.0123456789ab.css".
//
// Path panics if there is no such file: logical names are compile-time
// constants in the views, so an unknown name is a programming error.
func Path(name string) string {
	a, ok := byLogical[name]
	if !ok {
		panic("static: unknown asset " + strconv.Quote(name))
	}
	return URLPrefix + a.hashed
}

// Handler returns an http.Handler that serves the embedded files under the
// hashed URLs returned by [Path]. It expects the request path to still carry
// the [URLPrefix] ("/static/css/app.0123456789ab.css"); a path from which
// the prefix was already stripped ("/css/app.0123456789ab.css" or
// "css/app.0123456789ab.css") is accepted too.
//
// Responses carry the file's Content-Type, "Cache-Control: public,
// max-age=31536000, immutable", a strong ETag (If-None-Match is honoured),
// and are gzip-compressed when the client accepts it and it helps. Range
// requests are supported. Unknown names, unhashed logical names and names
// with a stale hash get 404; methods other than GET and HEAD get 405.
func Handler() http.Handler {
	return http.HandlerFunc(serve)
}

func serve(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Path
	if rest, ok := strings.CutPrefix(name, URLPrefix); ok {
		name = rest
	} else {
		name = strings.TrimPrefix(name, "/")
	}
	a, ok := byHashed[name]
	if !ok {
		http.NotFound(w, r)
		return
	}
	serveAsset(w, r, a, immutableCache)
}

// immutableCache lets browsers keep a hashed URL forever: its content
// never changes.
const immutableCache = "public, max-age=31536000, immutable"

// FaviconPath is the URL at which [Favicon] expects to be mounted.
const FaviconPath = "/favicon.ico"

// faviconCache lets browsers keep the icon a day: /favicon.ico carries no
// hash, so a new icon must reach them in time; the ETag makes checking
// again cheap.
const faviconCache = "public, max-age=86400"

// Favicon returns an http.Handler that serves the site icon, img/icon.svg,
// as image/svg+xml at [FaviconPath]: browsers ask for it on every page that
// names no icon, and a 404 there is an error in their console. Responses
// carry "Cache-Control: public, max-age=86400" and an ETag; other paths get
// 404 and methods other than GET and HEAD get 405.
func Favicon() http.Handler { return unhashed(FaviconPath, "img/icon.svg", faviconCache) }

// CapturePath is where [Capture] serves the site snippet, the address that
// websites' pages name (docs/capture-js.md).
const CapturePath = "/capture.js"

// captureCache lets browsers keep the snippet an hour: its URL carries no
// hash, so a new version reaches every site within the hour, and the ETag
// makes checking again cheap. Its hashed URL ([Path]("js/capture.js"))
// is cached for good, for a site that pins a version.
const captureCache = "public, max-age=3600"

// Capture returns an http.Handler that serves js/capture.js at
// [CapturePath], with "Cache-Control: public, max-age=3600" and an ETag.
func Capture() http.Handler { return unhashed(CapturePath, "js/capture.js", captureCache) }

// unhashed serves the file of the logical name at the one path urlPath
// with the given Cache-Control; other paths get 404.
func unhashed(urlPath, name, cacheControl string) http.Handler {
	a := byLogical[name]
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != urlPath {
			http.NotFound(w, r)
			return
		}
		serveAsset(w, r, a, cacheControl)
	})
}

// serveAsset writes a with the given Cache-Control.
func serveAsset(w http.ResponseWriter, r *http.Request, a *asset, cacheControl string) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, http.StatusText(http.StatusMethodNotAllowed), http.StatusMethodNotAllowed)
		return
	}

	h := w.Header()
	h.Set("Content-Type", a.ctype)
	h.Set("Cache-Control", cacheControl)
	h.Set("X-Content-Type-Options", "nosniff")
	body, etag := a.data, a.etag
	if a.gzip != nil {
		h.Add("Vary", "Accept-Encoding")
		if acceptsGzip(r.Header.Get("Accept-Encoding")) {
			if gz := a.gzip(); gz != nil {
				body, etag = gz, a.etag[:len(a.etag)-1]+`-gzip"`
				h.Set("Content-Encoding", "gzip")
			}
		}
	}
	h.Set("ETag", etag)
	// ServeContent handles HEAD, Range, If-None-Match and Content-Length.
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
}

// acceptsGzip reports whether an Accept-Encoding header value lists gzip
// with a non-zero quality.
func acceptsGzip(header string) bool {
	for part := range strings.SplitSeq(header, ",") {
		coding, params, _ := strings.Cut(part, ";")
		if !strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			continue
		}
		params = strings.ReplaceAll(params, " ", "")
		if q, ok := strings.CutPrefix(params, "q="); ok {
			if v, err := strconv.ParseFloat(q, 64); err == nil && v == 0 {
				return false
			}
		}
		return true
	}
	return false
}
