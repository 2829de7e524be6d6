package dashboard

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"

	"github.com/gpuledger/gpuledger/dashboard/static"
)

// staticFile is one embedded file, compressed once at start.
type staticFile struct {
	body  []byte
	gz    []byte // nil when gzip does not make it smaller
	ctype string
	etag  string
}

// loadStatic reads every file of static.FS (whatever the front end put
// there) and gzips it once.
func loadStatic() (map[string]*staticFile, error) {
	root, err := fs.Sub(static.FS, ".")
	if err != nil {
		return nil, fmt.Errorf("dashboard: static files: %w", err)
	}
	files := map[string]*staticFile{}
	err = fs.WalkDir(root, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(root, p)
		if err != nil {
			return err
		}
		f := &staticFile{body: body, ctype: mime.TypeByExtension(path.Ext(p))}
		if f.ctype == "" {
			f.ctype = http.DetectContentType(body)
		}
		sum := sha256.Sum256(body)
		f.etag = `"` + hex.EncodeToString(sum[:12]) + `"`
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		zw.Write(body)
		if err := zw.Close(); err != nil {
			return err
		}
		if buf.Len() < len(body) {
			f.gz = buf.Bytes()
		}
		files[p] = f
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("dashboard: static files: %w", err)
	}
	return files, nil
}

// handleStatic serves PathApp (index.html) and PathApp + "static/NAME"
// (the file NAME of static.FS), gzipped when the client accepts it.
func (s *Server) handleStatic(w http.ResponseWriter, r *http.Request) {
	if len(r.URL.RawQuery) > MaxQuery {
		s.fail(w, r, http.StatusBadRequest, "bad_request", "err_query_long", MaxQuery)
		return
	}
	name := ""
	switch p := r.URL.Path; {
	case p == PathApp || p == PathApp+"index.html":
		name = "index.html"
	case strings.HasPrefix(p, PathApp+"static/"):
		name = strings.TrimPrefix(p, PathApp+"static/")
	}
	f, ok := s.files[name]
	if name == "" || !ok {
		http.Error(w, "404 page not found", http.StatusNotFound)
		return
	}
	h := w.Header()
	body, etag := f.body, f.etag
	gz := f.gz != nil && acceptsGzip(r.Header.Get("Accept-Encoding"))
	if gz {
		// Each encoding is its own representation, with its own tag.
		body, etag = f.gz, strings.TrimSuffix(f.etag, `"`)+`-gz"`
	}
	h.Set("Content-Type", f.ctype)
	h.Set("ETag", etag)
	h.Set("Vary", "Accept-Encoding")
	h.Set("Cache-Control", "no-cache")
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	if gz {
		h.Set("Content-Encoding", "gzip")
	}
	h.Set("Content-Length", fmt.Sprint(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(body)
	}
}

// acceptsGzip reports whether an Accept-Encoding header allows gzip (and
// does not refuse it with q=0).
func acceptsGzip(ae string) bool {
	for _, part := range strings.Split(ae, ",") {
		enc, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.TrimSpace(enc) != "gzip" && strings.TrimSpace(enc) != "*" {
			continue
		}
		q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
		return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
	}
	return false
}
