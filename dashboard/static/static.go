// Package static holds the dashboard's page, script, style sheet and the
// vendored chart library, embedded in the binary: the hub may have no
// internet, so nothing is loaded from a CDN, and there is no build step.
//
// uPlot.iife.min.js and uPlot.min.css are uPlot 1.6.32 (MIT, see
// uPlot.LICENSE), copied unchanged from the npm package's dist/ folder
// (`npm pack uplot@1.6.32`).
//
// index.html is served at /app/ and every file at /app/static/NAME; the
// page names them by relative URLs (static/app.js, api/me), so it works
// under any prefix the hub is published at.
package static

import "embed"

// FS holds the files served under /app/ (index.html) and /app/static/.
//
//go:embed index.html app.js app.css uPlot.iife.min.js uPlot.min.css uPlot.LICENSE
var FS embed.FS

// RenderedMark is the performance mark app.js sets once, a task after the
// first page's first screen is drawn, its charts included (charts further
// down are drawn once that screen is shown). The browser tests and the
// first-render benchmark read it; its time from navigation start is how
// long the user waited for the dashboard.
const RenderedMark = "gpuledger-rendered"

// CompleteMark is the mark app.js sets once every chart of the first page
// is drawn, those below the first screen too.
const CompleteMark = "gpuledger-complete"
