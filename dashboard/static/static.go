// Package static holds the dashboard's page, script, style sheet and the
// vendored chart library, embedded in the binary: the hub may have no
// internet, so nothing is loaded from a CDN.
package static

import "embed"

// FS holds the files served under /app/ (index.html) and /app/static/.
//
//go:embed index.html
var FS embed.FS
