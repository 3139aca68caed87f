// Package static holds the lab's browser assets, embedded in the binary:
// Apache ECharts 5.4.3 (dist/echarts.min.js from the npm package, with its
// Apache-2.0 LICENSE and NOTICE), the style sheet, and app.js, the one
// script that draws every chart from its option JSON, streams run progress
// and makes the form friendlier. Pages carry no inline script.
//
// Each asset also has a content-hashed name (URL): pages link those, and
// web serves them as immutable, gzip-compressed once (Gzip) and kept.
package static

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"path"
	"strings"
	"sync"
)

// FS holds the assets under their file names.
//
//go:embed echarts.min.js echarts.LICENSE echarts.NOTICE style.css app.js favicon.svg
var FS embed.FS

// hashed lists the assets served under content-hashed names.
var hashed = []string{"echarts.min.js", "style.css", "app.js"}

// Asset is one hashed asset: its file name, its hashed name, its bytes,
// their sha256 and, made on first use, their gzip form.
type Asset struct {
	Name, Hashed string
	Body         []byte
	SHA256       string

	gzipOnce sync.Once
	gzipBody []byte
}

var (
	assetsOnce sync.Once
	byName     map[string]*Asset
	byHashed   map[string]*Asset
)

func load() {
	byName, byHashed = map[string]*Asset{}, map[string]*Asset{}
	for _, name := range hashed {
		body, err := FS.ReadFile(name)
		if err != nil {
			// The names are embedded above: this cannot fail.
			panic(fmt.Sprintf("static asset %s: %v", name, err))
		}
		sum := sha256.Sum256(body)
		hexSum := hex.EncodeToString(sum[:])
		a := &Asset{Name: name, Hashed: hashedName(name, hexSum[:16]), Body: body, SHA256: hexSum}
		byName[name], byHashed[a.Hashed] = a, a
	}
}

// hashedName puts the hash before the extension: "app.js" → "app.HASH.js",
// "echarts.min.js" → "echarts.min.HASH.js".
func hashedName(name, hash string) string {
	ext := path.Ext(name)
	return strings.TrimSuffix(name, ext) + "." + hash + ext
}

// URL is the content-hashed URL of an asset ("/static/app.HASH.js"); an
// asset without a hashed name keeps its plain URL.
func URL(name string) string {
	assetsOnce.Do(load)
	if a := byName[name]; a != nil {
		return "/static/" + a.Hashed
	}
	return "/static/" + name
}

// ByHashedName is the asset of a hashed name, or nil.
func ByHashedName(hashedName string) *Asset {
	assetsOnce.Do(load)
	return byHashed[hashedName]
}

// Gzip is the asset compressed with gzip (best compression), made once.
func (a *Asset) Gzip() []byte {
	a.gzipOnce.Do(func() {
		var buf bytes.Buffer
		zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		if err != nil {
			panic(fmt.Sprintf("gzip %s: %v", a.Name, err)) // only for a bad level
		}
		_, _ = zw.Write(a.Body) // a bytes.Buffer does not fail
		_ = zw.Close()
		a.gzipBody = buf.Bytes()
	})
	return a.gzipBody
}
