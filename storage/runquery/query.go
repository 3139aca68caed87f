// Package runquery reads the run list's query language (docs/web.md,
// "The run list"); storage compiles a query to SQL (storage/query_sql.go):
//
//	goodput_rps > 150 and limiter = token-bucket
//	(tag = baseline or tag = canary) and not status = failed
//	`share_pct_api-1` >= 20 and name ~ "re-run"
//
// A query is comparisons joined by and, or, not and parentheses (not
// binds tightest, then and, then or). A comparison is a column, an
// operator (=, !=, <, <=, >, >=, or ~: contains, ASCII case ignored) and
// a value. A column is a bare word or a name in backquotes; a value a
// number, a bare word (token-bucket) or a string in double or single
// quotes (a backslash takes the next character as it is). Keywords
// (and, or, not) ignore case. A query with no comparison operator at all
// (none of = < > ! ~) is plain text, found in names, ids and limiter
// labels. Parse reads the syntax; what the columns are and which
// operators each takes is checked when the query is compiled to SQL
// (query_sql.go), with the same positions.
package runquery

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Expr is a parsed query: And, Or, Not, Compare or Text.
type Expr interface {
	// appendTo prints the expression in the syntax Parse reads;
	// prec is the binding of the operator around it.
	appendTo(b []byte, prec int) []byte
}

// And and Or join two expressions.
type (
	And struct{ Left, Right Expr }
	Or  struct{ Left, Right Expr }
	// Not negates an expression.
	Not struct{ X Expr }
	// Text is a query without comparisons: text searched in names, ids
	// and limiter labels.
	Text struct{ Text string }
)

// Compare is one comparison.
type Compare struct {
	Column string
	Op     string // =, !=, <, <=, >, >=, ~
	Value  Literal
	// ColumnPos, OpPos and ValuePos are 1-based character positions in
	// the query, for errors.
	ColumnPos, OpPos, ValuePos int
}

// Literal is a comparison's value: a number (IsNum; Text is how it was
// written) or text.
type Literal struct {
	Text  string
	Num   float64
	IsNum bool
}

// Error is a query that cannot be read or run: what is wrong, the
// 1-based character position where, and a hint ("did you mean
// goodput_rps?").
type Error struct {
	Msg  string
	Pos  int
	Hint string
}

func (e *Error) Error() string {
	s := e.Msg
	if e.Pos > 0 {
		s += " at " + strconv.Itoa(e.Pos)
	}
	if e.Hint != "" {
		s += "; " + e.Hint
	}
	return s
}

// MaxRunes is the longest query read; MaxDepth the deepest
// nesting of parentheses and nots.
const (
	MaxRunes = 1000
	MaxDepth = 50
)

// Operators lists the comparison operators.
var Operators = []string{"=", "!=", "<", "<=", ">", ">=", "~"}

// String prints e so that Parse reads it back as e.
func String(e Expr) string {
	if e == nil {
		return ""
	}
	return string(e.appendTo(nil, 0))
}

const (
	precOr = iota + 1
	precAnd
	precNot
)

func (x *Or) appendTo(b []byte, prec int) []byte {
	return appendBinary(b, prec, precOr, " or ", x.Left, x.Right)
}
func (x *And) appendTo(b []byte, prec int) []byte {
	return appendBinary(b, prec, precAnd, " and ", x.Left, x.Right)
}

func appendBinary(b []byte, outer, own int, op string, l, r Expr) []byte {
	if outer > own {
		b = append(b, '(')
	}
	b = l.appendTo(b, own)
	b = append(b, op...)
	b = r.appendTo(b, own+1) // a right operand of the same operator keeps its parentheses
	if outer > own {
		b = append(b, ')')
	}
	return b
}

func (x *Not) appendTo(b []byte, _ int) []byte {
	return x.X.appendTo(append(b, "not "...), precNot)
}

func (x *Text) appendTo(b []byte, _ int) []byte { return append(b, x.Text...) }

func (x *Compare) appendTo(b []byte, _ int) []byte {
	if bareName(x.Column) {
		b = append(b, x.Column...)
	} else {
		b = quote(b, '`', x.Column)
	}
	b = append(b, ' ')
	b = append(b, x.Op...)
	b = append(b, ' ')
	if x.Value.IsNum {
		return append(b, x.Value.Text...)
	}
	return quote(b, '"', x.Value.Text)
}

func quote(b []byte, q byte, s string) []byte {
	b = append(b, q)
	for i := 0; i < len(s); i++ {
		if s[i] == q || s[i] == '\\' {
			b = append(b, '\\')
		}
		b = append(b, s[i])
	}
	return append(b, q)
}

// wordBreak are the characters that end a bare word.
const wordBreak = "()=!<>~\"'`"

func isSpace(c rune) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// bareName reports whether a column prints without quotes: a word that
// reads back as itself and is no keyword.
func bareName(s string) bool {
	if s == "" || isKeyword(s) {
		return false
	}
	for _, c := range s {
		if isSpace(c) || strings.ContainsRune(wordBreak, c) || c == '\\' || !utf8.ValidRune(c) || c == utf8.RuneError {
			return false
		}
	}
	return true
}

func isKeyword(s string) bool {
	return strings.EqualFold(s, "and") || strings.EqualFold(s, "or") || strings.EqualFold(s, "not")
}

// numberWord is a bare word read as a number.
var numberWord = regexp.MustCompile(`^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$`)

// IsPlainText reports whether a query is plain text (no comparison
// operator anywhere).
func IsPlainText(q string) bool { return !strings.ContainsAny(q, "=<>!~") }

// Parse reads a query. The empty query (or only spaces) is nil: no
// filter.
func Parse(q string) (Expr, error) {
	if !utf8.ValidString(q) {
		return nil, &Error{Msg: "the query is not UTF-8 text"}
	}
	if n := utf8.RuneCountInString(q); n > MaxRunes {
		return nil, &Error{Msg: fmt.Sprintf("the query has %d characters; at most %d", n, MaxRunes)}
	}
	if strings.TrimFunc(q, isSpace) == "" {
		return nil, nil
	}
	if IsPlainText(q) {
		return &Text{Text: strings.TrimFunc(q, isSpace)}, nil
	}
	toks, err := lex(q)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	e, err := p.or(0)
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tokEnd {
		if t.kind == tokRParen {
			return nil, &Error{Msg: "a ) without its (", Pos: t.pos}
		}
		return nil, &Error{Msg: "expected and, or or the end, not " + t.show(), Pos: t.pos}
	}
	return e, nil
}

type tokKind int

const (
	tokEnd    tokKind = iota
	tokWord           // a bare word
	tokString         // "..." or '...'
	tokName           // `...`
	tokOp             // = != < <= > >= ~
	tokLParen
	tokRParen
)

type token struct {
	kind tokKind
	text string // the word, the unquoted string or name, the operator
	pos  int    // 1-based character position
}

func (t token) show() string {
	switch t.kind {
	case tokEnd:
		return "the end"
	case tokString:
		return "the text " + strconv.Quote(clip(t.text, 30))
	case tokName:
		return "`" + clip(t.text, 30) + "`"
	}
	return "`" + clip(t.text, 30) + "`"
}

func lex(q string) ([]token, error) {
	var toks []token
	rs := []rune(q)
	for i := 0; i < len(rs); {
		c := rs[i]
		pos := i + 1
		switch {
		case isSpace(c):
			i++
		case c == '(':
			toks = append(toks, token{tokLParen, "(", pos})
			i++
		case c == ')':
			toks = append(toks, token{tokRParen, ")", pos})
			i++
		case c == '=' || c == '~':
			toks = append(toks, token{tokOp, string(c), pos})
			i++
		case c == '<' || c == '>' || c == '!':
			op := string(c)
			if i+1 < len(rs) && rs[i+1] == '=' {
				op += "="
			}
			if op == "!" {
				return nil, &Error{Msg: "a ! that is not !=", Pos: pos}
			}
			toks = append(toks, token{tokOp, op, pos})
			i += len(op)
		case c == '"' || c == '\'' || c == '`':
			var b strings.Builder
			j := i + 1
			for ; j < len(rs) && rs[j] != c; j++ {
				if rs[j] == '\\' && j+1 < len(rs) {
					j++
				}
				b.WriteRune(rs[j])
			}
			if j >= len(rs) {
				what := "quote"
				if c == '`' {
					what = "backquote"
				}
				return nil, &Error{Msg: "a " + what + " " + string(c) + " that is not closed", Pos: pos}
			}
			kind := tokString
			if c == '`' {
				kind = tokName
			}
			toks = append(toks, token{kind, b.String(), pos})
			i = j + 1
		default:
			j := i
			for j < len(rs) && !isSpace(rs[j]) && !strings.ContainsRune(wordBreak, rs[j]) {
				j++
			}
			toks = append(toks, token{tokWord, string(rs[i:j]), pos})
			i = j
		}
	}
	return append(toks, token{kind: tokEnd, pos: len(rs) + 1}), nil
}

type parser struct {
	toks []token
	at   int
}

func (p *parser) peek() token { return p.toks[p.at] }
func (p *parser) next() token {
	t := p.toks[p.at]
	if t.kind != tokEnd {
		p.at++
	}
	return t
}

func (p *parser) keyword(k string) bool {
	t := p.peek()
	return t.kind == tokWord && strings.EqualFold(t.text, k)
}

func (p *parser) or(depth int) (Expr, error) {
	l, err := p.and(depth)
	if err != nil {
		return nil, err
	}
	for p.keyword("or") {
		p.next()
		r, err := p.and(depth)
		if err != nil {
			return nil, err
		}
		l = &Or{Left: l, Right: r}
	}
	return l, nil
}

func (p *parser) and(depth int) (Expr, error) {
	l, err := p.unary(depth)
	if err != nil {
		return nil, err
	}
	for p.keyword("and") {
		p.next()
		r, err := p.unary(depth)
		if err != nil {
			return nil, err
		}
		l = &And{Left: l, Right: r}
	}
	return l, nil
}

func (p *parser) unary(depth int) (Expr, error) {
	t := p.peek()
	if depth > MaxDepth {
		return nil, &Error{Msg: fmt.Sprintf("the query nests deeper than %d parentheses and nots", MaxDepth), Pos: t.pos}
	}
	switch {
	case p.keyword("not"):
		p.next()
		x, err := p.unary(depth + 1)
		if err != nil {
			return nil, err
		}
		return &Not{X: x}, nil
	case t.kind == tokLParen:
		p.next()
		x, err := p.or(depth + 1)
		if err != nil {
			return nil, err
		}
		if c := p.next(); c.kind != tokRParen {
			if c.kind == tokEnd {
				return nil, &Error{Msg: "a ( that is not closed", Pos: t.pos}
			}
			return nil, &Error{Msg: "expected ), and or or, not " + c.show(), Pos: c.pos}
		}
		return x, nil
	}
	return p.compare()
}

func (p *parser) compare() (Expr, error) {
	t := p.next()
	switch {
	case t.kind == tokName:
	case t.kind == tokWord && !isKeyword(t.text):
	case t.kind == tokString:
		return nil, &Error{Msg: "expected a column, not " + t.show() + " (a column's name goes in backquotes: `name`)", Pos: t.pos}
	default:
		return nil, &Error{Msg: "expected a column, not " + t.show(), Pos: t.pos}
	}
	c := &Compare{Column: t.text, ColumnPos: t.pos}
	op := p.next()
	if op.kind != tokOp {
		return nil, &Error{Msg: "expected an operator (" + strings.Join(Operators, " ") + ") after " + t.show() + ", not " + op.show(), Pos: op.pos}
	}
	c.Op, c.OpPos = op.text, op.pos
	v := p.next()
	c.ValuePos = v.pos
	switch v.kind {
	case tokString:
		c.Value = Literal{Text: v.text}
	case tokWord:
		c.Value = Literal{Text: v.text}
		if numberWord.MatchString(v.text) {
			if n, err := strconv.ParseFloat(v.text, 64); err == nil {
				c.Value.Num, c.Value.IsNum = n, true
			}
		}
	default:
		return nil, &Error{Msg: "expected a value after " + op.show() + ", not " + v.show(), Pos: v.pos}
	}
	return c, nil
}

// clip is s cut to n characters, "…" marking a cut.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}
