package runquery

import (
	"reflect"
	"testing"
)

// sameExpr compares two queries, positions aside.
func sameExpr(a, b Expr) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case *And:
		y, ok := b.(*And)
		return ok && sameExpr(x.Left, y.Left) && sameExpr(x.Right, y.Right)
	case *Or:
		y, ok := b.(*Or)
		return ok && sameExpr(x.Left, y.Left) && sameExpr(x.Right, y.Right)
	case *Not:
		y, ok := b.(*Not)
		return ok && sameExpr(x.X, y.X)
	case *Text:
		y, ok := b.(*Text)
		return ok && *x == *y
	case *Compare:
		y, ok := b.(*Compare)
		return ok && x.Column == y.Column && x.Op == y.Op && reflect.DeepEqual(x.Value, y.Value)
	}
	return false
}

// TestParse: precedence, quoting, and the printed form.
func TestParse(t *testing.T) {
	for _, tc := range []struct{ in, out string }{
		{"goodput_rps > 150 and limiter = token-bucket", `goodput_rps > 150 and limiter = "token-bucket"`},
		{"a=1 or b=2 and c=3", "a = 1 or b = 2 and c = 3"},
		{"(a=1 or b=2) and c=3", "(a = 1 or b = 2) and c = 3"},
		{"a=1 or (b=2 or c=3)", "a = 1 or (b = 2 or c = 3)"},
		{"NOT a=1 AND not (b != x Or c<=-2.5e3)", `not a = 1 and not (b != "x" or c <= -2.5e3)`},
		{"`odd name` ~ 'it''s'", "`odd name` ~ \"it\""},
		{`name = "say \"hi\" \\ "`, `name = "say \"hi\" \\ "`},
		{"`and` = 1", "`and` = 1"},
		{"x = and", `x = "and"`},
		{"plain words here", "plain words here"},
		{"   ", ""},
	} {
		e, err := Parse(tc.in)
		if tc.in == "`odd name` ~ 'it''s'" {
			// 'it' then 's' then a quote left open
			if err == nil {
				t.Errorf("%q: no error", tc.in)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if got := String(e); got != tc.out {
			t.Errorf("%q printed %q, want %q", tc.in, got, tc.out)
		}
	}
	e, _ := Parse("a=1 or b=2 and c=3")
	if o, ok := e.(*Or); !ok || func() bool { _, ok := o.Right.(*And); return !ok }() {
		t.Errorf("and binds tighter than or: %#v", e)
	}
	for _, tc := range []struct{ in, want string }{
		{"a = ", "expected a value after `=`, not the end at 5"},
		{"a 1 = 2", "expected an operator (= != < <= > >= ~) after `a`, not `1` at 3"},
		{"a = 1 b = 2", "expected and, or or the end, not `b` at 7"},
		{"a = 1)", "a ) without its ( at 6"},
		{"a ! 1", "a ! that is not != at 3"},
		{`"a" = 1`, "expected a column, not the text \"a\" (a column's name goes in backquotes: `name`) at 1"},
		{"é = `x", "a backquote ` that is not closed at 5"},
	} {
		if _, err := Parse(tc.in); err == nil || err.Error() != tc.want {
			t.Errorf("%q: %v, want %s", tc.in, err, tc.want)
		}
	}
	deep := ""
	for range MaxDepth + 5 {
		deep += "("
	}
	if _, err := Parse(deep + "a=1"); err == nil {
		t.Error("no error past the depth limit")
	}
}

// FuzzParse: Parse never panics, and a query it reads prints as
// text it reads back to the same query, which prints the same.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"goodput_rps > 150 and limiter = token-bucket",
		"(tag = a or tag = b) and not status = done",
		"`x y` ~ \"q\\\"\" or z <= -1e9",
		"plain text",
		"a = 'x' and (b != 2 or not (c < .5))",
		"created > 2026-01-01T00:00:00Z",
		")(", "a = 1 or", "\"", "`",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		e, err := Parse(q)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("%q: error %T, want *Error", q, err)
			}
			return
		}
		printed := String(e)
		again, err := Parse(printed)
		if err != nil {
			t.Fatalf("%q printed as %q, which does not read: %v", q, printed, err)
		}
		if !sameExpr(e, again) {
			t.Fatalf("%q printed as %q reads as another query: %#v vs %#v", q, printed, e, again)
		}
		if p2 := String(again); p2 != printed {
			t.Fatalf("%q: printed %q, then %q", q, printed, p2)
		}
	})
}
