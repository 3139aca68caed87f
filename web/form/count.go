package form

import (
	"fmt"
	"math"
	"strconv"
)

// Count is the form's live count, "N points × M arrivals ≈ T s" with the
// lists that multiply (POST /api/form/count): the engine's Size of the
// config the form makes, so the count is the run's by construction. A
// form that makes no config has no count but its problems.
type Count struct {
	Points   int     `json:"points"`
	Runs     int     `json:"runs"` // points × replications
	Arrivals float64 `json:"arrivals_per_run"`
	Seconds  float64 `json:"cpu_s"` // experiments.Size.Seconds
	Product  string  `json:"product"`
	Text     string  `json:"text"`
	// Lists are the ids of the inputs whose lists multiply the sweep.
	Lists    []string       `json:"lists"`
	Problems []CountProblem `json:"problems"`
}

// CountProblem is one error of the form: the config path, the id of the
// input it stands at and the message.
type CountProblem struct {
	Path    string `json:"path"`
	Input   string `json:"input"`
	Message string `json:"message"`
}

// Count counts the form without touching its errors.
func (f *Sweep) Count() Count {
	g := *f
	g.Errors, g.Problems = nil, nil
	return CountOf(&Post{Form: &g})
}

// CountOf counts a posted form.
func CountOf(p *Post) Count {
	cfg, _ := p.Config()
	if cfg == nil {
		c := Count{Problems: []CountProblem{}, Lists: []string{}}
		for _, e := range p.Form.Problems {
			c.Problems = append(c.Problems, CountProblem{Path: e.Path, Input: InputID(Key(e.Path)), Message: e.Msg})
		}
		c.Text = "Not counted: " + problemsText(len(c.Problems))
		if len(c.Problems) > 0 {
			e := c.Problems[0]
			c.Text += " (" + e.Path + ": " + e.Message + ")"
		}
		return c
	}
	z := cfg.Size()
	c := Count{Points: z.Points, Runs: z.Runs, Arrivals: z.Arrivals / float64(max(z.Runs, 1)), Seconds: z.Seconds(),
		Product: z.Product(), Lists: []string{}, Problems: []CountProblem{}}
	for _, path := range z.Paths() {
		c.Lists = append(c.Lists, InputID(Key(path)))
	}
	c.Text = fmt.Sprintf("%s × %s arrivals %s of CPU", z, groupDigits(int64(math.Round(c.Arrivals))), seconds(c.Seconds))
	return c
}

// groupDigits writes n with its thousands apart: 1,250,000.
func groupDigits(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// seconds writes an estimate to the precision it has: "< 0.1 s", "≈ 2.5 s",
// "≈ 40 s", "≈ 12 min".
func seconds(s float64) string {
	switch {
	case s < 0.1:
		return "< 0.1 s"
	case s < 10:
		return "≈ " + strconv.FormatFloat(s, 'f', 1, 64) + " s"
	case s < 120:
		return "≈ " + strconv.FormatFloat(s, 'f', 0, 64) + " s"
	}
	return "≈ " + strconv.FormatFloat(s/60, 'f', 0, 64) + " min"
}
