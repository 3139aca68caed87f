package workload

import (
	"fmt"
	"strconv"

	"github.com/ratelab/ratelab/experiments/field"
)

// Users is a closed loop: users virtual users named "<group>-1".."<group>-N"
// (group "user" when left out), each sending its next request a think time
// after its previous one ended (completed, timed out, or was refused), as
// load tools model virtual users. User k sends its first request at
// start_ms + k × think_ms / users (fixed think times, spread evenly) or
// after a first exponential think time; no request starts at or after
// end_ms. The part lists no arrivals: the engine's client model makes them
// as the run goes (experiments/simulate_clients.go), so a user never has
// more than one request in flight.
const Users PartType = "users"

// Think-time distributions.
const (
	ThinkFixed       = "fixed"
	ThinkExponential = "exponential"

	DefaultUsersGroup = "user"
	MaxUsers          = 100_000
)

var (
	usersField = Field{Name: "users", Label: "Users", Input: InputInteger,
		Doc: "virtual users, each with at most one request in flight"}
	thinkMSField = Field{Name: "think_ms", Label: "Think time", Unit: "ms", Input: InputNumber, Sweep: true,
		Doc: "after a request ends, before the user's next (at least 1 ms)"}
	thinkField = Field{Name: "think", Label: "Think distribution", Input: InputChoice, Choices: []string{ThinkFixed, ThinkExponential}, Default: ThinkFixed,
		Doc: "fixed, or exponential with mean think_ms (seeded)"}
)

// Loop is a closed-loop part's users as the client model runs them.
type Loop struct {
	Users       int
	ThinkMS     float64
	Exponential bool
	StartMS     float64
	EndMS       float64 // no request starts at or after it
}

func usersKind() *Kind {
	return &Kind{
		Type:  Users,
		Label: "closed-loop users",
		Model: "N virtual users <group>-1..N, each sending its next request think_ms after its previous one ended",
		Fields: []Field{groupField.with("the users' group; users are <group>-1..N", DefaultUsersGroup), usersField, weightField,
			thinkMSField, thinkField, startField, endField},
		Validate: validateUsers,
		Expected: func(p *Part, w float64) float64 {
			start, end := p.span(w)
			return float64(p.Users) * (end - start) / max(p.ThinkMS, 1)
		},
		Generate: func(g *Generator, p *Part) error {
			g.usersClients(p)
			return nil
		},
		DeclareClients: func(g *Generator, p *Part) { g.usersClients(p) },
		CountClients:   func(p *Part) int { return max(p.Users, 1) },
		Describe: func(p *Part) string {
			think := p.Think
			if think == "" {
				think = ThinkFixed
			}
			return fmt.Sprintf("%d users, think %g ms (%s)", p.Users, p.ThinkMS, think)
		},
		Users: func(p *Part) *Loop {
			return &Loop{Users: p.Users, ThinkMS: p.ThinkMS, Exponential: p.Think == ThinkExponential, StartMS: p.StartMS, EndMS: endOr(p, -1)}
		},
	}
}

// endOr is the part's end_ms, or or when it has none.
func endOr(p *Part, or float64) float64 {
	if p.EndMS != nil {
		return *p.EndMS
	}
	return or
}

func validateUsers(p *Part, path string, _ float64) field.List {
	var errs field.List
	if p.Users < 1 || p.Users > MaxUsers {
		errs.Add(field.Join(path, "users"), "must be between 1 and %d", MaxUsers)
	}
	if !finite(p.ThinkMS) || p.ThinkMS < 1 || p.ThinkMS > MaxDurationMS {
		errs.Add(field.Join(path, "think_ms"), "must be between 1 and %d ms (a user refused at once would otherwise send again at the same instant)", MaxDurationMS)
	}
	errs = append(errs, checkChoice(field.Join(path, "think"), thinkField.Choices, p.Think)...)
	return errs
}

// checkUsersOwnClients refuses, at its group, a users part whose users
// are clients another part declared first (two users parts left in the
// group "user", or a clients part of that group): the client model runs
// a user's requests as its own client's, one at a time. A part after the
// users that declares one of them (a clients part of that group, a trace
// naming "user-1") is refused at that part: its requests would run as the
// user's, with the users part's behaviour.
func (s *Spec) checkUsersOwnClients(path string) field.List {
	var errs field.List
	var g *Generator
	users := map[string]int{} // a users part's client → that part
	for i := range s.Parts {
		p := &s.Parts[i]
		if p.Type != Users && len(users) > 0 {
			own := newGenerator(s.DurationMS, 0)
			own.declare(i, p)
			for _, cl := range own.clients {
				if u, ok := users[cl.Name]; ok {
					parts := field.Join(path, "parts")
					errs.Add(field.Index(parts, i), "its client %q is a user of %s: give the users a group of their own", cl.Name, field.Index(parts, u))
					break
				}
			}
		}
		if p.Type == Users {
			for k := range p.Users {
				name := usersGroup(p) + "-" + strconv.Itoa(k+1)
				if _, ok := users[name]; !ok {
					users[name] = i
				}
			}
			if g == nil { // the parts before it
				g = newGenerator(s.DurationMS, 0)
				for j := range i {
					g.declare(j, &s.Parts[j])
				}
			}
			group := usersGroup(p)
			for k := range p.Users {
				name := group + "-" + strconv.Itoa(k+1)
				if c, ok := g.index[name]; ok {
					parts := field.Join(path, "parts")
					errs.Add(field.Join(field.Index(parts, i), "group"), "its users %s-1..%d include %q, a client of %s: give the users a group of their own", group, p.Users, name, field.Index(parts, int(g.clientPart[c])))
					break
				}
			}
		}
		if g != nil {
			g.declare(i, p)
		}
	}
	return errs
}

// usersGroup is the group a users part's users are named after.
func usersGroup(p *Part) string {
	if p.Group == "" {
		return DefaultUsersGroup
	}
	return p.Group
}

// usersClients declares the part's users as clients <group>-1..N.
func (g *Generator) usersClients(p *Part) []int32 {
	group := usersGroup(p)
	ids := make([]int32, p.Users)
	for k := range ids {
		ids[k] = g.Client(group+"-"+strconv.Itoa(k+1), group, p.Weight)
	}
	return ids
}
