// Package workload turns a workload spec into the arrival list every limiter
// of a sweep replays: a time-sorted list of (t_ms, client).
//
// Time is float64 milliseconds from 0; the arrival window is [0, duration_ms).
// Every generator is deterministic: random parts draw from a PCG source
// (math/rand/v2) seeded with the run seed and the part's index, never from a
// global source. Ties in time keep generation order (parts in the order
// given, then clients in order), so the list never depends on scheduling.
package workload

// Arrivals is a time-sorted list of requests, stored as parallel slices so a
// 10 M-request run costs 12 bytes a request.
type Arrivals struct {
	T       []float64 // arrival times in ms, non-decreasing
	Client  []int32   // index into Clients, one per arrival
	Clients []Client  // every client named by the workload, in order of declaration
	Groups  []string  // client group names in order of declaration

	// GivenServiceMS is the service time each request's trace line gives
	// (NaN where it gives none); nil when no trace part has a service_ms
	// column. Only the server's empirical distribution reads it.
	GivenServiceMS []float64
	// ServiceMS is the service time of each request on the point's server
	// (server.Spec.Draw); nil: every request takes the server's service_ms.
	// Generate leaves it nil; the sweep fills a copy per load and server.
	ServiceMS []float64
	// ClientPart is the index of the part that declared each client first:
	// whose behaviour (Behaviour) its requests have.
	ClientPart []int32
}

// Len is the number of arrivals.
func (a *Arrivals) Len() int { return len(a.T) }

// GroupOf is the index of client i's group (-1 for none).
func (a *Arrivals) GroupOf(i int) int { return a.Clients[i].GroupIndex() }

// Client is one caller of the service.
type Client struct {
	Name   string  `json:"name"`
	Group  string  `json:"group,omitempty"`
	Weight float64 `json:"weight"` // share weight for weighted per-client limiters
	group  int     // index into Arrivals.Groups, -1 when ungrouped
}

// GroupIndex is the client's index into Arrivals.Groups, or -1.
func (c Client) GroupIndex() int { return c.group }
