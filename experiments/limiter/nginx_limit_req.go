package limiter

import (
	"fmt"
	"math"

	"github.com/ratelab/ratelab/experiments/cacheline"
	"github.com/ratelab/ratelab/experiments/calculus"
	"github.com/ratelab/ratelab/experiments/field"
)

// NginxLimitReq is nginx's limit_req, exact to
// src/http/modules/ngx_http_limit_req_module.c (unchanged from nginx
// 1.19.9 to 1.31; Debian 12 ships 1.22.1): ngx_http_limit_req_lookup (the excess update and the burst
// check), ngx_http_limit_req_account (the delay), ngx_http_limit_req_handler
// (503 or a timer of the delay) and ngx_http_limit_req_expire (dropping idle
// keys); the settings as ngx_http_limit_req_zone and ngx_http_limit_req
// parse them.
//
// Clock: nginx's cached whole-millisecond clock (ngx_current_msec); an
// arrival at t ms reads floor(t). Rate: thousandths of a request per second,
// whole (rate=Nr/s is 1000N, rate=Nr/m is 1000N/60 truncated, so 1r/m is
// 16); rate_rps is truncated the same way.
//
// Per key (a zone entry), nginx keeps excess, in thousandths of a request,
// and the time it last changed. A request of a key ms milliseconds later
// gives excess' = max(0, excess - rate*ms/1000 + 1000) (integer division);
// note that the drain may go below zero before the 1000 is added, so a key
// idle for a while passes with excess' below 1000. A new key starts empty:
// its first request passes with excess 0. If excess' > burst*1000 the
// request is answered 503 at once and the key is left as it was; else the
// key keeps excess'. With excess' <= delay*1000 the request passes at once;
// else it waits (excess' - delay*1000)*1000/rate whole ms (integer division,
// and 0 ms passes at once) on a timer set on the millisecond clock, so it is
// released at floor(t) + that many ms. nodelay is an infinite delay=, so
// nothing waits. The gate therefore both delays and rejects (only rejects
// with nodelay or delay >= burst).
//
// key "zone" is one key for every request (limit_req_zone with a constant
// key: $server_name is empty, and limits nothing, where no server_name is set);
// "client" one per client ($binary_remote_addr), each with the full rate
// and burst. Creating a key first drops up to two of the least recently
// looked-up keys that have been idle at least 60 s with nothing left to
// drain (nginx does, and a dropped key that comes back starts empty again).
// The zone is assumed large enough that no key is evicted for memory.
//
// Curve: per key the output obeys (burst+1) + rate*(d + 2 ms) (the ms
// clock costs up to 1 ms at each end of a window; the property test checks
// it). With key "client" every key has the full rate and burst (Keyed), so
// n clients obey n times that. DelayBoundMS is
// (burst-delay)*1000*1000/rate whole ms: the longest timer of an admitted
// request (0 when delay >= burst; it does not see nodelay, where nothing
// waits, so it is loose there). Nominal is the truncated rate times the
// window (per key with key "client").
//
// Per key with delays (key "client", nodelay off, delay < burst, more than
// one client), requests of different keys wait independently and leave out
// of arrival order, which the lab's single FIFO server cannot take: New
// refuses that combination.
type NginxLimitReq struct {
	_     cacheline.Pad // a sweep's points run side by side (package cacheline)
	rate  int64         // thousandths of a request per second (ctx->rate)
	burst int64         // thousandths (limit->burst)
	delay int64         // thousandths (limit->delay); MaxInt64 for nodelay
	keys  bool          // one key per client

	// One entry per key (one in zone mode).
	excess []int64
	last   []int64 // ms
	live   []bool
	// The zone's queue of keys, most recently looked up first (nginx's
	// ctx->sh->queue); -1 ends it.
	prev, next []int32
	head, tail int32
	_          cacheline.Pad
}

// nginxExpireIdleMS is how long a key must have been idle before
// ngx_http_limit_req_expire may drop it.
const nginxExpireIdleMS = 60_000

// NewNginxLimitReq builds the gate: rate in requests/s, burst and delay in
// requests (delay ignored with nodelay), one key per client when perKey
// (clients keys), else one key.
func NewNginxLimitReq(rateRPS, burst, delay float64, nodelay, perKey bool, clients int) *NginxLimitReq {
	n := 1
	if perKey {
		n = max(clients, 1)
	}
	g := &NginxLimitReq{
		rate:   nginxRate(rateRPS),
		burst:  int64(burst) * 1000,
		delay:  int64(delay) * 1000,
		keys:   perKey,
		excess: make([]int64, n),
		last:   make([]int64, n),
		live:   make([]bool, n),
		prev:   make([]int32, n),
		next:   make([]int32, n),
		head:   -1,
		tail:   -1,
	}
	if nodelay {
		g.delay = math.MaxInt64
	}
	return g
}

// nginxRate is rate_rps in nginx's thousandths of a request per second,
// truncated (as ctx->rate = rate * 1000 / scale).
func nginxRate(rateRPS float64) int64 { return clockUnits(rateRPS, 1000) }

// Offer looks the client's key up, answers 503 (false) when its excess
// would pass the burst, and else releases at once or after the delay.
func (g *NginxLimitReq) Offer(t float64, client int32) (float64, bool) {
	now := int64(math.Floor(t))
	k := keySlot(g.keys, client)
	if int(k) >= len(g.live) {
		g.grow(k)
	}
	if !g.live[k] {
		g.expire(now)
		g.live[k], g.excess[k], g.last[k] = true, 0, now
		g.pushFront(k)
		return t, true // a new key passes with excess 0
	}
	g.unlink(k)
	g.pushFront(k)
	ms := max(now-g.last[k], 0)
	excess := max(g.excess[k]-g.rate*ms/1000+1000, 0)
	if excess > g.burst {
		return 0, false
	}
	g.excess[k] = excess
	if ms != 0 {
		g.last[k] = now
	}
	if excess <= g.delay {
		return t, true
	}
	wait := (excess - g.delay) * 1000 / g.rate
	if wait == 0 {
		return t, true
	}
	return float64(now + wait), true
}

// NextAdmitMS is when the client's key would pass again (Advisor): the
// first whole millisecond of nginx's clock at which its excess, drained by
// rate*ms/1000 (integer division), plus the request's 1000 is at most the
// burst. nginx sends no Retry-After with its 503 (limit_req_status only
// sets the code); this is the model's time, at which the excess has
// drained below the burst. A key that is not in the zone passes at once.
func (g *NginxLimitReq) NextAdmitMS(t float64, client int32) float64 {
	k := keySlot(g.keys, client)
	if int(k) >= len(g.live) || !g.live[k] || g.excess[k] == nginxFresh {
		return t
	}
	// excess - rate*ms/1000 + 1000 <= burst  <=>  rate*ms/1000 >= need
	need := g.excess[k] + 1000 - g.burst
	ms := int64(0)
	if need > 0 {
		ms = (need*1000 + g.rate - 1) / g.rate // the least ms with rate*ms >= 1000*need
	}
	return max(t, float64(g.last[k]+ms))
}

// expire is ngx_http_limit_req_expire(ctx, 1): before a key is created, up
// to two keys at the end of the queue are dropped if idle for at least 60 s
// with their excess drained.
func (g *NginxLimitReq) expire(now int64) {
	for range 2 {
		k := g.tail
		if k < 0 {
			return
		}
		ms := now - g.last[k]
		if g.excess[k] != nginxFresh && (ms < nginxExpireIdleMS || g.excess[k]-g.rate*ms/1000 > 0) {
			return
		}
		g.unlink(k)
		g.live[k] = false
	}
}

// grow makes room for key slot k: a shadow replay names its keys as it
// reads them (a sweep sizes the gate for its clients, and never grows it).
func (g *NginxLimitReq) grow(k int32) {
	n := max(int(k)+1, 2*len(g.live))
	extend := func(s []int64) []int64 { return append(s, make([]int64, n-len(s))...) }
	g.excess, g.last = extend(g.excess), extend(g.last)
	g.live = append(g.live, make([]bool, n-len(g.live))...)
	g.prev = append(g.prev, make([]int32, n-len(g.prev))...)
	g.next = append(g.next, make([]int32, n-len(g.next))...)
}

func (g *NginxLimitReq) pushFront(k int32) {
	g.prev[k], g.next[k] = -1, g.head
	if g.head >= 0 {
		g.prev[g.head] = k
	} else {
		g.tail = k
	}
	g.head = k
}

func (g *NginxLimitReq) unlink(k int32) {
	if p := g.prev[k]; p >= 0 {
		g.next[p] = g.next[k]
	} else {
		g.head = g.next[k]
	}
	if n := g.next[k]; n >= 0 {
		g.prev[n] = g.prev[k]
	} else {
		g.tail = g.prev[k]
	}
}

// TypeNginxLimitReq is nginx limit_req's type name.
const TypeNginxLimitReq Type = "nginx-limit-req"

// Parameter and option names of nginx limit_req.
const (
	ParamNginxDelay = "delay"
	OptionNodelay   = "nodelay"
	OptionNginxKey  = "key"
)

func nginxLimitReqKind() *Kind {
	return &Kind{
		Type:       TypeNginxLimitReq,
		RetryAfter: "when the key's excess has drained to let one more within the burst (nginx itself sends no Retry-After)",
		Model:      "nginx limit_req (rate_rps, burst, delay; nodelay, key): whole-ms clock, excess in thousandths, a new key starts empty; delays, and answers 503 past the burst",
		Params: []Param{
			{Name: ParamRate, Admits: AdmitsLarger, Label: "Rate", Unit: "req/s",
				Units: "requests/s", RangeNote: `nginx takes whole r/s or r/m: at least rate=1r/m; rate=0r/s is an "invalid rate"`,
				Min: 1.0 / 60, Max: MaxRateRPS,
				Doc: "limit_req_zone rate=, held in thousandths of a request/s and truncated (1r/m is 0.016/s)"},
			{Name: ParamBurst, Admits: AdmitsLarger, Label: "Burst", Unit: "requests", Integer: true, Min: 0, Max: MaxSize, Optional: true,
				Doc: "limit_req burst=: requests a key may have in excess (0 when not set); one more passes when the key is empty"},
			{Name: ParamNginxDelay, Admits: AdmitsLarger, Label: "Delay", Unit: "requests", Integer: true, Min: 0, Max: MaxSize, Optional: true,
				Doc: "limit_req delay=: excess requests passed at once before the rest wait (0: nginx's default, every excess request waits); ignored with nodelay"},
		},
		Options: []Option{
			{Name: OptionNodelay, Label: "nodelay", Choices: []string{"off", "on"},
				Doc: "on: limit_req nodelay, excess requests within the burst pass at once"},
			{Name: OptionNginxKey, Label: "Key", Choices: []string{"zone", "client"},
				Doc: "zone: one key for every request (a constant key); client: one key per client ($binary_remote_addr), each with the full rate and burst"},
		},
		Size:    ParamBurst,
		Stage:   true,
		Example: Params{ParamRate: 100, ParamBurst: 20, ParamNginxDelay: 0},
		New: func(s *Spec, p Params, env Env) (Gate, error) {
			nodelay := s.Option(OptionNodelay) == "on"
			perKey := s.Option(OptionNginxKey) == "client"
			if perKey && !nodelay && p[ParamNginxDelay] < p[ParamBurst] && len(env.Weights) > 1 {
				return nil, fmt.Errorf("nginx limit_req per client key with delays (nodelay off, delay %g < burst %g) releases requests of different keys out of arrival order, which the lab's FIFO server cannot take: set nodelay on, or delay >= burst",
					p[ParamNginxDelay], p[ParamBurst])
			}
			return NewNginxLimitReq(p[ParamRate], p[ParamBurst], p[ParamNginxDelay], nodelay, perKey, len(env.Weights)), nil
		},
		Keyed:        func(s *Spec) bool { return s.Option(OptionNginxKey) == "client" },
		CheckClients: checkNginxKeyDelays,
		// Per key: (burst+1) + rate*(d + 2 ms), the ms clock costing up to
		// 1 ms at each end of a window.
		Curve: func(p Params) calculus.Curve {
			r := calculus.PerMS(p[ParamRate])
			return calculus.Affine(r, p[ParamBurst]+1+2*r)
		},
		DelayBoundMS: func(s *Spec, p Params) float64 {
			if s.Option(OptionNodelay) == "on" {
				return 0 // nothing waits
			}
			excess := (int64(p[ParamBurst]) - int64(p[ParamNginxDelay])) * 1000
			if excess <= 0 {
				return 0
			}
			return float64(excess * 1000 / nginxRate(p[ParamRate]))
		},
		Nominal: func(p Params, windowMS float64) float64 {
			return float64(nginxRate(p[ParamRate])) / 1000 * windowMS / 1000
		},
	}
}

// checkNginxKeyDelays refuses per-client keys with delays over several
// clients: requests of different keys wait independently and leave out of
// arrival order, which the lab's single FIFO server cannot take.
func checkNginxKeyDelays(s *Spec, path string, weights []float64) field.List {
	var errs field.List
	if len(weights) < 2 || s.Option(OptionNginxKey) != "client" || s.Option(OptionNodelay) == "on" {
		return nil
	}
	for _, p := range s.Points() {
		if p[ParamNginxDelay] < p[ParamBurst] {
			errs.Add(field.Join(path, OptionNodelay), "key \"client\" with delays (nodelay off, delay %g < burst %g) over %d clients releases requests of different keys out of arrival order, which the lab's FIFO server cannot take: set nodelay \"on\", or delay >= burst, or key \"zone\"",
				p[ParamNginxDelay], p[ParamBurst], len(weights))
			return errs
		}
	}
	return nil
}
