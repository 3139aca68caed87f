package workload

import (
	"github.com/ratelab/ratelab/experiments/field"
)

// Behaviour is how a part's clients treat each request they send: how long
// they wait for it (timeout_ms), whether and when they send it again
// (retries, backoff, jitter, the gate's Retry-After), how many retries they
// allow themselves (a retry budget) and whether they refuse requests
// locally while the service rejects many (Google SRE adaptive throttling).
// Its fields are fields of every part type (Behaviour fields); left out, a
// client sends each request once and waits for it however long it takes,
// the open loop of every run before client behaviour existed.
//
// The engine runs a point whose parts have any behaviour (Active) through
// its event-driven client model (experiments/simulate_clients.go).
type Behaviour struct {
	// TimeoutMS is how long a client waits for an attempt, counted from
	// the moment it reaches the gate; it abandons the attempt when its
	// sojourn (rounded as the lab rounds it) is longer. 0: no timeout.
	TimeoutMS float64 `json:"timeout_ms,omitempty"`
	// Retries is how many times a failed request is sent again (an attempt
	// fails when the gate rejects it or its client abandons it).
	Retries int `json:"retries,omitempty"`
	// BackoffMS is the wait before the first retry, counted from the
	// failure (the rejection, or the moment the client gave up).
	BackoffMS float64 `json:"backoff_ms,omitempty"`
	// Backoff is "fixed" (every retry waits backoff_ms) or "exponential"
	// (retry k waits backoff_ms × 2^(k-1), at most backoff_max_ms).
	Backoff string `json:"backoff,omitempty"`
	// BackoffMaxMS caps an exponential backoff (0: no cap).
	BackoffMaxMS float64 `json:"backoff_max_ms,omitempty"`
	// Jitter spreads each wait d: "none" (d), "full" (uniform in [0, d)),
	// "equal" (d/2 + uniform in [0, d/2)) or "decorrelated" (uniform in
	// [backoff_ms, 3 × the previous wait), at most backoff_max_ms).
	Jitter string `json:"jitter,omitempty"`
	// RetryAfter is "ignore" or "honour": a client that honours it never
	// retries a rejected attempt before the gate said it would admit again.
	RetryAfter string `json:"retry_after,omitempty"`
	// Budget is "none", "client" (each client its own budget) or "global"
	// (one budget shared by every client of every part with a global
	// budget): in each aligned second, retries are at most
	// budget_ratio × the first attempts so far in that second plus
	// budget_floor_rps; a retry over the budget is not sent.
	Budget         string  `json:"budget,omitempty"`
	BudgetRatio    float64 `json:"budget_ratio,omitempty"`
	BudgetFloorRPS float64 `json:"budget_floor_rps,omitempty"`
	// ThrottleK turns on Google SRE adaptive throttling (0: off): a client
	// refuses an attempt itself with probability
	// max(0, (requests - K × accepts) / (requests + 1)) over the last
	// throttle_window_ms (requests: attempts it tried; accepts: attempts
	// answered before the client gave up). A refused attempt ends its
	// request.
	ThrottleK        float64 `json:"throttle_k,omitempty"`
	ThrottleWindowMS float64 `json:"throttle_window_ms,omitempty"`
}

// Words and defaults of the behaviour fields.
const (
	BackoffFixed       = "fixed"
	BackoffExponential = "exponential"

	JitterNone         = "none"
	JitterFull         = "full"
	JitterEqual        = "equal"
	JitterDecorrelated = "decorrelated"

	RetryAfterIgnore = "ignore"
	RetryAfterHonour = "honour"

	BudgetNone   = "none"
	BudgetClient = "client"
	BudgetGlobal = "global"

	DefaultThrottleWindowMS = 120_000 // the SRE book's two minutes
	MaxRetries              = 100
	MaxThrottleK            = 10
)

// Behaviour fields, shared by every part type.
var (
	timeoutField = Field{Name: "timeout_ms", Label: "Timeout", Unit: "ms", Input: InputNumber, Default: "none", Sweep: true,
		Doc: "a client abandons an attempt whose sojourn is longer (counted from the gate)"}
	retriesField = Field{Name: "retries", Label: "Retries", Input: InputInteger, Default: "0", Sweep: true,
		Doc: "how many times a rejected or abandoned request is sent again"}
	backoffMSField = Field{Name: "backoff_ms", Label: "Backoff", Unit: "ms", Input: InputNumber, Default: "0", Sweep: true,
		Doc: "wait before the first retry, from the failure"}
	backoffField = Field{Name: "backoff", Label: "Backoff growth", Input: InputChoice, Choices: []string{BackoffFixed, BackoffExponential}, Default: BackoffFixed,
		Doc: "fixed: every retry waits backoff_ms; exponential: retry k waits backoff_ms × 2^(k-1)"}
	backoffMaxField = Field{Name: "backoff_max_ms", Label: "Backoff cap", Unit: "ms", Input: InputNumber, Default: "none", Sweep: true,
		Doc: "the longest wait of an exponential or decorrelated backoff"}
	jitterField = Field{Name: "jitter", Label: "Jitter", Input: InputChoice, Choices: []string{JitterNone, JitterFull, JitterEqual, JitterDecorrelated}, Default: JitterNone,
		Doc: "full: uniform in [0, d); equal: d/2 + uniform in [0, d/2); decorrelated: uniform in [backoff_ms, 3 × previous wait)"}
	retryAfterField = Field{Name: "retry_after", Label: "Retry-After", Input: InputChoice, Choices: []string{RetryAfterIgnore, RetryAfterHonour}, Default: RetryAfterIgnore,
		Doc: "honour: never retry a refusal before the gate's Retry-After, the first time it would admit the client again; every rate limiter gives one (each limiter type's retry_after says what it is), a concurrency limit cannot (it depends on the server), so behind it clients retry on their backoff (a config whose only refusing gate is one is refused). A retry waits the later of its backoff (with its jitter) and the Retry-After, so refusals that share one advised time come back together unless their backoff is longer"}
	budgetField = Field{Name: "budget", Label: "Retry budget", Input: InputChoice, Choices: []string{BudgetNone, BudgetClient, BudgetGlobal}, Default: BudgetNone,
		Doc: "retries per aligned second at most budget_ratio × first attempts + budget_floor_rps, per client or shared"}
	budgetRatioField = Field{Name: "budget_ratio", Label: "Budget ratio", Input: InputNumber, Default: "0", Sweep: true,
		Doc: "retries allowed per first attempt (0 to 1)"}
	budgetFloorField = Field{Name: "budget_floor_rps", Label: "Budget floor", Unit: "req/s", Input: InputNumber, Default: "0", Sweep: true,
		Doc: "retries allowed every second on top of the ratio"}
	throttleKField = Field{Name: "throttle_k", Label: "Throttle K", Input: InputNumber, Default: "off", Sweep: true,
		Doc: "SRE adaptive throttling: refuse locally with probability max(0, (requests - K × accepts)/(requests + 1))"}
	throttleWindowField = Field{Name: "throttle_window_ms", Label: "Throttle window", Unit: "ms", Input: InputNumber, Default: "120000", Sweep: true,
		Doc: "the window of the throttling counts"}
)

// BehaviourFields are the fields of a part's clients' behaviour, in form
// order; every part type lists them after its own.
func BehaviourFields() []Field {
	return []Field{timeoutField, retriesField, backoffMSField, backoffField, backoffMaxField, jitterField,
		retryAfterField, budgetField, budgetRatioField, budgetFloorField, throttleKField, throttleWindowField}
}

// Active reports whether the behaviour differs from the plain open loop
// (send once, wait forever).
func (b *Behaviour) Active() bool { return *b != Behaviour{} }

// behaviourSlot is one behaviour field's JSON key and its value in a
// Behaviour (a *float64, *int or *string), in struct order.
type behaviourSlot struct {
	name string
	ptr  any
}

func (b *Behaviour) slots() [12]behaviourSlot {
	return [12]behaviourSlot{
		{"timeout_ms", &b.TimeoutMS}, {"retries", &b.Retries}, {"backoff_ms", &b.BackoffMS}, {"backoff", &b.Backoff},
		{"backoff_max_ms", &b.BackoffMaxMS}, {"jitter", &b.Jitter}, {"retry_after", &b.RetryAfter}, {"budget", &b.Budget},
		{"budget_ratio", &b.BudgetRatio}, {"budget_floor_rps", &b.BudgetFloorRPS}, {"throttle_k", &b.ThrottleK},
		{"throttle_window_ms", &b.ThrottleWindowMS},
	}
}

// BehaviourKeys are the behaviour fields' JSON keys in struct order (the
// order of the canonical document).
func BehaviourKeys() []string {
	var b Behaviour
	sl := b.slots()
	out := make([]string, len(sl))
	for i, s := range sl {
		out[i] = s.name
	}
	return out
}

// Sets reports whether b sets the field of JSON key name to something
// other than its zero value (which is how the field is left out).
func (b *Behaviour) Sets(name string) bool {
	for _, s := range b.slots() {
		if s.name != name {
			continue
		}
		switch v := s.ptr.(type) {
		case *float64:
			return *v != 0
		case *int:
			return *v != 0
		case *string:
			return *v != ""
		}
	}
	return false
}

// Value is the field of JSON key name (a float64, int or string; nil for
// no such field).
func (b *Behaviour) Value(name string) any {
	for _, s := range b.slots() {
		if s.name == name {
			switch v := s.ptr.(type) {
			case *float64:
				return *v
			case *int:
				return *v
			case *string:
				return *v
			}
		}
	}
	return nil
}

// Override returns b with the fields o gives replaced by o's, keeping b's
// others: a client policy over a part's own behaviour. gives(name) says
// whether o gives the field of that JSON key (a policy gives the fields its
// document names, even as 0 or "none", so "retries": 0 turns a part's
// retries off); nil gives means the fields o sets (Sets).
func (b Behaviour) Override(o Behaviour, gives func(name string) bool) Behaviour {
	if gives == nil {
		gives = o.Sets
	}
	dst, src := b.slots(), o.slots()
	for i := range src {
		if !gives(src[i].name) {
			continue
		}
		switch v := src[i].ptr.(type) {
		case *float64:
			*dst[i].ptr.(*float64) = *v
		case *int:
			*dst[i].ptr.(*int) = *v
		case *string:
			*dst[i].ptr.(*string) = *v
		}
	}
	return b
}

// Budgeted reports whether retries spend a budget.
func (b *Behaviour) Budgeted() bool { return b.Budget == BudgetClient || b.Budget == BudgetGlobal }

// Throttles reports whether the clients throttle themselves.
func (b *Behaviour) Throttles() bool { return b.ThrottleK > 0 }

// ThrottleWindow is the throttling window, its default when left out.
func (b *Behaviour) ThrottleWindow() float64 {
	if b.ThrottleWindowMS == 0 {
		return DefaultThrottleWindowMS
	}
	return b.ThrottleWindowMS
}

// Validate checks the behaviour; path is its part's (or policy's) path.
func (b *Behaviour) Validate(path string) field.List {
	var errs field.List
	ms := func(name string, v float64) {
		if !finite(v) || v < 0 || v > MaxDurationMS {
			errs.Add(field.Join(path, name), "must be a time between 0 and %d ms", MaxDurationMS)
		}
	}
	ms("timeout_ms", b.TimeoutMS)
	ms("backoff_ms", b.BackoffMS)
	ms("backoff_max_ms", b.BackoffMaxMS)
	if b.Retries < 0 || b.Retries > MaxRetries {
		errs.Add(field.Join(path, "retries"), "must be between 0 and %d", MaxRetries)
	}
	errs = append(errs, checkChoice(field.Join(path, "backoff"), backoffField.Choices, b.Backoff)...)
	errs = append(errs, checkChoice(field.Join(path, "jitter"), jitterField.Choices, b.Jitter)...)
	errs = append(errs, checkChoice(field.Join(path, "retry_after"), retryAfterField.Choices, b.RetryAfter)...)
	errs = append(errs, checkChoice(field.Join(path, "budget"), budgetField.Choices, b.Budget)...)
	if !finite(b.BudgetRatio) || b.BudgetRatio < 0 || b.BudgetRatio > 1 {
		errs.Add(field.Join(path, "budget_ratio"), "must be between 0 and 1 (retries per first attempt)")
	}
	if !finite(b.BudgetFloorRPS) || b.BudgetFloorRPS < 0 || b.BudgetFloorRPS > MaxRateRPS {
		errs.Add(field.Join(path, "budget_floor_rps"), "must be a rate between 0 and %d requests/s", MaxRateRPS)
	}
	if (b.BudgetRatio != 0 || b.BudgetFloorRPS != 0) && !b.Budgeted() {
		errs.Add(field.Join(path, "budget"), "must be %q or %q with budget_ratio or budget_floor_rps", BudgetClient, BudgetGlobal)
	}
	if !finite(b.ThrottleK) || b.ThrottleK < 0 || b.ThrottleK > MaxThrottleK || (b.ThrottleK > 0 && b.ThrottleK < 1) {
		errs.Add(field.Join(path, "throttle_k"), "must be 0 (off) or between 1 and %d (the SRE book uses 2)", MaxThrottleK)
	}
	if !finite(b.ThrottleWindowMS) || b.ThrottleWindowMS < 0 || b.ThrottleWindowMS > MaxDurationMS {
		errs.Add(field.Join(path, "throttle_window_ms"), "must be a time between 0 and %d ms", MaxDurationMS)
	} else if b.ThrottleWindowMS > 0 && b.ThrottleWindowMS < 10 {
		errs.Add(field.Join(path, "throttle_window_ms"), "must be at least 10 ms (it is counted in ten slices)")
	}
	if b.ThrottleWindowMS != 0 && b.ThrottleK == 0 {
		errs.Add(field.Join(path, "throttle_window_ms"), "needs throttle_k")
	}
	return errs
}

// BaseBackoffMS is the wait before retry k (1 for the first) before jitter:
// backoff_ms, or backoff_ms × 2^(k-1) capped at backoff_max_ms.
func (b *Behaviour) BaseBackoffMS(k int) float64 {
	d := b.BackoffMS
	if b.Backoff == BackoffExponential {
		d = b.BackoffMS * float64(uint64(1)<<min(k-1, 62)) // k <= MaxRetries + 1
	}
	if b.BackoffMaxMS > 0 && d > b.BackoffMaxMS {
		d = b.BackoffMaxMS
	}
	return d
}
