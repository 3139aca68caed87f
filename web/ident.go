package web

import (
	"context"
	"html"
	"io"
	"strings"

	"github.com/a-h/templ"
)

// ident writes an identifier (a run or limiter name, a metric, a setting
// such as "token-bucket rate_rps=60", a config path) so that it wraps only
// after "-", "_", "=" or "." (a config path's) and at spaces, never inside a run of
// letters: the text escaped, a <wbr> after each of those characters.
func ident(s string) templ.Component {
	return templ.ComponentFunc(func(_ context.Context, w io.Writer) error {
		_, err := io.WriteString(w, identHTML(s))
		return err
	})
}

// identHTML is ident's HTML.
func identHTML(s string) string {
	var b strings.Builder
	start := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '-', '_', '=', '.':
			// Not after a lone sign or a decimal point between digits.
			if s[i] == '.' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9' {
				continue
			}
			b.WriteString(html.EscapeString(s[start : i+1]))
			b.WriteString("<wbr>")
			start = i + 1
		}
	}
	b.WriteString(html.EscapeString(s[start:]))
	return b.String()
}
