package limiter

import "math"

// NginxZones is the limit_req directives of one location, as
// ngx_http_limit_req_handler (src/http/modules/ngx_http_limit_req_module.c,
// nginx 1.22.1) checks them, each zone at its own key:
//
//   - the zones are looked up in order; a zone whose key is empty is
//     skipped; every zone but the last only reads its key
//     (ngx_http_limit_req_lookup with account 0): it computes the key's
//     excess, excess' = max(0, excess - rate*ms/1000 + 1000), and refuses
//     past the burst, but stores nothing, except that a key it has not seen
//     is created then (after dropping up to two idle keys) with excess 0
//     and last = 0, the clock's origin, and stays even when the request is
//     refused; the last zone with a key stores its excess' at once
//     (account 1), and a new key there starts at excess 0, last = now;
//   - the first zone that refuses stops the loop and the request is refused
//     (limit_req_status, default 503): the zones before it are left as
//     they were (save for keys they created);
//   - when none refuses, ngx_http_limit_req_account charges every zone
//     looked up before the last, recomputing its excess' (a key that zone
//     created reads last = 0, so it drains whole: it ends at excess 0, as
//     a new key of the last zone does), and the request waits the longest of the
//     zones' delays, (excess' - delay)*1000/rate ms for each zone whose
//     excess' passes its delay=, on the millisecond clock;
//   - with every key empty the request passes at once, untouched.
//
// One zone is exactly NginxLimitReq.Offer (TestNginxZonesOfOneIsTheGate).
// nginx refuses the same zone twice in one location, so every zone here is
// a gate of its own.
type NginxZones struct {
	zones []*NginxLimitReq
	nodes []int32 // the key each zone looked up for the request in hand (-1: none)
}

// NewNginxZones checks zones as one location's limit_req directives, in
// order.
func NewNginxZones(zones []*NginxLimitReq) *NginxZones {
	nodes := make([]int32, len(zones))
	for i := range nodes {
		nodes[i] = -1
	}
	return &NginxZones{zones: zones, nodes: nodes}
}

// The lookup's answers (ngx_http_limit_req_lookup's return codes).
const (
	nginxDeclined = iota // no zone looked the request up
	nginxOK              // the last zone passed and stored its excess
	nginxAgain           // a zone before the last passed; nothing stored
	nginxBusy            // past the burst: refused
)

// handlerZone makes the gate a zone of NginxZones.
func (g *NginxLimitReq) handlerZone() *NginxLimitReq { return g }

// lookup is ngx_http_limit_req_lookup of key slot k at now: the key's
// excess' and the answer; with account it stores excess' (and now, when
// time passed) as Offer does.
func (g *NginxLimitReq) lookup(now int64, k int32, account bool) (int, int64) {
	k = keySlot(g.keys, k)
	if int(k) >= len(g.live) {
		g.grow(k)
	}
	if !g.live[k] {
		g.expire(now)
		g.live[k], g.excess[k], g.last[k] = true, 0, now
		g.pushFront(k)
		if account {
			return nginxOK, 0
		}
		g.excess[k] = nginxFresh // nginx: lr->last = 0
		return nginxAgain, 0
	}
	g.unlink(k)
	g.pushFront(k)
	ms, excess := g.drain(now, k)
	if excess > g.burst {
		return nginxBusy, excess
	}
	if account {
		g.excess[k] = excess
		if ms != 0 {
			g.last[k] = now
		}
		return nginxOK, excess
	}
	return nginxAgain, excess
}

// charge is ngx_http_limit_req_account's step for one zone looked up
// before the last: it stores the key's excess' and returns it.
func (g *NginxLimitReq) charge(now int64, k int32) int64 {
	k = keySlot(g.keys, k)
	ms, excess := g.drain(now, k)
	if ms != 0 {
		g.last[k] = now
	}
	g.excess[k] = excess
	return excess
}

// nginxFresh marks the excess of a key a zone before the last created
// and has not charged: nginx creates it with last = 0 (the clock's
// origin), so its next reading drains everything, excess' =
// max(0 - rate*now/1000 + 1000, 0) = 0 on a server up for more than
// 1000/rate seconds (the lab assumes it is), and the idle-key expiry may
// drop it.
const nginxFresh = -1

// drain is the key's excess' at now (the drain, then the request's 1000)
// and the ms since its last change, as the lookup and the account read
// them.
func (g *NginxLimitReq) drain(now int64, k int32) (ms, excess int64) {
	if g.excess[k] == nginxFresh {
		return 1, 0
	}
	ms = now - g.last[k]
	if ms < -60000 {
		ms = 1
	} else if ms < 0 {
		ms = 0
	}
	return ms, max(g.excess[k]-g.rate*ms/1000+1000, 0)
}

// delayMS is the wait of a request whose key holds excess in the zone.
func (g *NginxLimitReq) delayMS(excess int64) int64 {
	if excess <= g.delay {
		return 0
	}
	return (excess - g.delay) * 1000 / g.rate
}

// OfferKeys decides one request: keys[i] is its key slot in zone i (-1:
// empty). Refused is false; otherwise the release, floor(t) plus the
// longest delay, or t when nothing waits.
func (z *NginxZones) OfferKeys(t float64, keys []int32) (float64, bool) {
	now := int64(math.Floor(t))
	rc, excess := nginxDeclined, int64(0)
	limit := 0
	n := 0
	for ; n < len(z.zones); n++ {
		limit = n
		k := keys[n]
		if k < 0 {
			continue
		}
		rc, excess = z.zones[n].lookup(now, k, n == len(z.zones)-1)
		if rc == nginxAgain {
			z.nodes[n] = k
			continue
		}
		break
	}
	switch rc {
	case nginxDeclined:
		return t, true
	case nginxBusy:
		for i := range n {
			z.nodes[i] = -1
		}
		return 0, false
	case nginxAgain:
		excess = 0 // the last zone's key was empty
	}
	wait := int64(0)
	if limit < len(z.zones) {
		wait = z.zones[limit].delayMS(excess)
	}
	for i := n - 1; i >= 0; i-- {
		k := z.nodes[i]
		if k < 0 {
			continue
		}
		z.nodes[i] = -1
		if d := z.zones[i].delayMS(z.zones[i].charge(now, k)); d > wait {
			wait = d
		}
	}
	if wait == 0 {
		return t, true
	}
	return float64(now + wait), true
}
