// Package static holds the lab's browser assets, embedded in the binary:
// Apache ECharts 5.4.3 (dist/echarts.min.js from the npm package, with its
// Apache-2.0 LICENSE and NOTICE), the style sheet, and app.js, the one
// script that draws every chart from its option JSON, streams run progress
// and makes the form friendlier. Pages carry no inline script.
package static

import "embed"

// FS holds the assets under their file names.
//
//go:embed echarts.min.js echarts.LICENSE echarts.NOTICE style.css app.js favicon.svg
var FS embed.FS
