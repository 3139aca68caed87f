package server

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ratelab/ratelab/experiments/field"
)

// Option is one word-valued setting of the server model: its JSON key in the
// server section, the words it takes (the first is the default, also when
// the key is left out) and what each one does. The form, the help and the
// validation iterate Options; nothing else lists the words.
type Option struct {
	Name    string
	Label   string
	Doc     string
	Choices []Choice
}

// Choice is one word of an option.
type Choice struct {
	Name string
	Doc  string
}

// Names of the options and of their choices.
const (
	OptDiscipline = "discipline"
	OptDoor       = "door"
	OptExpire     = "expire"
	OptEnd        = "end"
	OptOccupancy  = "occupancy"
	OptCancel     = "cancel_on_timeout"

	FIFO = "fifo"
	LIFO = "lifo"

	DoorOpen     = "open"
	DoorTailDrop = "tail-drop"
	DoorPriority = "priority"

	ExpireNever     = "never"
	ExpireAtDequeue = "at-dequeue"

	EndDrain = "drain"
	EndCut   = "cut"

	OccupancyCount    = "count"
	OccupancyBusyCeil = "busy-ceil"

	CancelFinish = "finish"
	CancelDrop   = "drop-unstarted"
)

// Options lists the server's word-valued settings. The queue disciplines of
// the seed lab's Post 4 are one setting each: fifo is the plain server (with
// end "cut", as the seed runs it), tail-drop is door "tail-drop", expire is
// expire "at-dequeue", lifo is discipline "lifo"; Post 5's bounded system is
// door "tail-drop" (class-blind) or "priority", with expire "at-dequeue".
func Options() []Option {
	return []Option{
		{Name: OptDiscipline, Label: "Discipline", Doc: "which waiting request a worker takes when it frees", Choices: []Choice{
			{FIFO, "first in, first out: the oldest waiting request"},
			{LIFO, "last in, first out: the newest waiting request; the oldest starve while new work keeps coming"},
		}},
		{Name: OptDoor, Label: "Door", Doc: "what the server does with a request that finds `bound` requests in the system (waiting or in service)", Choices: []Choice{
			{DoorOpen, "every released request enters and waits"},
			{DoorTailDrop, "a request that finds the system full is shed at once (tail drop), whatever its class"},
			{DoorPriority, "as tail-drop, but a request that finds the system full evicts the newest waiting request of a lower class (see classes) and takes a place at the back; it is shed only when no such request waits"},
		}},
		{Name: OptExpire, Label: "Expiry", Doc: "whether a worker discards work that can no longer meet its deadline", Choices: []Choice{
			{ExpireNever, "every request that enters is served, even when it will finish late (service-then-discard)"},
			{ExpireAtDequeue, "a request whose wait plus its service time would pass its deadline (counted from its arrival) is discarded when its turn comes, without using the worker"},
		}},
		{Name: OptEnd, Label: "After the window", Doc: "what happens to work still waiting when the arrival window ends", Choices: []Choice{
			{EndDrain, "the server serves everything it accepted, after the window too"},
			{EndCut, "no service starts at or after the end of the arrival window; what is still waiting then is shed (the seed lab's Posts 4 and 5)"},
		}},
		{Name: OptService, Label: "Service time", Doc: "how long a request takes a worker (see service.go: each request draws its time once, the same at every point)", Choices: serviceChoices()},
		{Name: OptOccupancy, Label: "In-system count", Doc: "how the server counts the requests in the system for an admission gate", Choices: []Choice{
			{OccupancyCount, "the admitted requests whose finish is later than t (exact)"},
			{OccupancyBusyCeil, "ceil((busyUntil - t) / service_ms) in float64, busyUntil the last finish: the seed lab's formula (Posts 1 and 2); one worker; it can differ from the count by one when the division rounds across an integer; with a service distribution service_ms is its mean (the remaining work in requests of mean size)"},
		}},
		{Name: OptCancel, Label: "Abandoned work", Doc: "what the server does with an attempt whose client gave up on it (timeout_ms of a workload part)", Choices: []Choice{
			{CancelFinish, "it serves the attempt anyway: the work is wasted"},
			{CancelDrop, "it drops an attempt that has not started when its client gives up (no work); one already started is finished, wasted"},
		}},
	}
}

// Field is one numeric field of the server section: its JSON key, its
// label and unit, whether it takes whole numbers, and whether it takes a
// list of values to sweep (experiments/lists). The sweep, its results
// column and the form's list input read these rows.
type Field struct {
	Name    string
	Label   string
	Unit    string
	Integer bool
	Sweep   bool
	Doc     string
}

// Fields lists the server's numeric fields.
func Fields() []Field {
	out := []Field{
		{Name: "workers", Label: "Workers", Unit: "workers", Integer: true, Sweep: true, Doc: "identical workers serving in parallel"},
		{Name: "service_ms", Label: "Service time", Unit: "ms", Sweep: true, Doc: "the time one request takes a worker"},
		{Name: "deadline_ms", Label: "Deadline", Unit: "ms", Sweep: true, Doc: "a request is on time when it finishes within this of its arrival"},
		{Name: "bound", Label: "Door bound", Unit: "requests", Integer: true, Sweep: true, Doc: "the requests in the system at which a shedding door sheds"},
	}
	for _, n := range Numbers() { // the service distributions' settings: every one sweeps
		out = append(out, Field{Name: n.Name, Label: n.Label, Unit: n.Unit, Sweep: true, Doc: n.Doc})
	}
	return out
}

// FieldByName finds a numeric field of the server section.
func FieldByName(name string) (Field, bool) {
	for _, f := range Fields() {
		if f.Name == name {
			return f, true
		}
	}
	return Field{}, false
}

// Sweepable reports whether the server section takes a list in key.
func Sweepable(key string) bool {
	f, ok := FieldByName(key)
	return ok && f.Sweep
}

// OptionByName finds an option of the server model.
func OptionByName(name string) (*Option, bool) {
	opts := Options()
	i := slices.IndexFunc(opts, func(o Option) bool { return o.Name == name })
	if i < 0 {
		return nil, false
	}
	return &opts[i], true
}

// Option is the value of a word-valued setting: its default when left out.
func (s *Spec) Option(name string) string {
	v := ""
	switch name {
	case OptDiscipline:
		v = s.Discipline
	case OptDoor:
		v = s.Door
	case OptExpire:
		v = s.Expire
	case OptEnd:
		v = s.End
	case OptOccupancy:
		v = s.Occupancy
	case OptService:
		v = s.Service
	case OptCancel:
		v = s.CancelOnTimeout
	}
	if v == "" {
		if o, ok := OptionByName(name); ok {
			v = o.Choices[0].Name
		}
	}
	return v
}

// Classic reports whether the spec is the plain forward-pass server (FIFO,
// open door, no expiry, drained after the window): every released request
// is served, in release order, and its finish is known when it enters.
func (s *Spec) Classic() bool {
	return s.Option(OptDiscipline) == FIFO && s.Option(OptDoor) == DoorOpen &&
		s.Option(OptExpire) == ExpireNever && s.Option(OptEnd) == EndDrain
}

// Bounded reports whether the door sheds at a full system.
func (s *Spec) Bounded() bool { return s.Option(OptDoor) != DoorOpen }

// DoorBound is the number of requests in the system at which a bounded door
// sheds: Bound when given, else capacity × deadline rounded half up
// (workers × 1000/service_ms requests/s times deadline_ms/1000 s), the
// seed lab's deadline budget.
func (s *Spec) DoorBound() int {
	if s.Bound > 0 {
		return s.Bound
	}
	x := s.RateRPS() * (s.DeadlineMS / 1000.0)
	r := math.Floor(x)
	if x-r >= 0.5 {
		r++
	}
	return int(r)
}

// MaxBound bounds the door bound.
const MaxBound = 10_000_000

// validateOptions checks the word-valued settings and the bound.
func (s *Spec) validateOptions(path string) field.List {
	var errs field.List
	for _, o := range Options() {
		v := s.RawOption(o.Name)
		if v == "" {
			continue
		}
		if !slices.ContainsFunc(o.Choices, func(c Choice) bool { return c.Name == v }) {
			names := make([]string, len(o.Choices))
			for i, c := range o.Choices {
				names[i] = strconv.Quote(c.Name)
			}
			errs.Add(field.Join(path, o.Name), "must be one of %s", strings.Join(names, ", "))
		}
	}
	if s.Bound < 0 || s.Bound > MaxBound {
		errs.Add(field.Join(path, "bound"), "must be between 1 and %d (0 or left out: capacity × deadline)", MaxBound)
	} else if s.Bound > 0 && !s.Bounded() {
		errs.Add(field.Join(path, "bound"), "is the bound of a door that sheds: give door %q or %q, or leave bound out", DoorTailDrop, DoorPriority)
	}
	if s.Option(OptOccupancy) == OccupancyBusyCeil {
		if s.Workers != 1 && s.Workers != 0 {
			errs.Add(field.Join(path, OptOccupancy), "%q is the seed lab's formula for one worker (workers is %d)", OccupancyBusyCeil, s.Workers)
		}
		if !s.Classic() {
			errs.Add(field.Join(path, OptOccupancy), "%q reads the finish of the last request, known on entry only at the plain server: it needs discipline %q, door %q, expire %q and end %q", OccupancyBusyCeil, FIFO, DoorOpen, ExpireNever, EndDrain)
		}
	}
	return errs
}

// RawOption is a word-valued setting as given ("" when left out).
func (s *Spec) RawOption(name string) string {
	switch name {
	case OptDiscipline:
		return s.Discipline
	case OptDoor:
		return s.Door
	case OptExpire:
		return s.Expire
	case OptEnd:
		return s.End
	case OptOccupancy:
		return s.Occupancy
	case OptService:
		return s.Service
	case OptCancel:
		return s.CancelOnTimeout
	}
	return ""
}

// Override returns s with every field that v sets (non-zero) taken from v:
// a variant of the server ("servers" in a config) over its base.
func (s Spec) Override(v Spec) Spec {
	if v.Workers != 0 {
		s.Workers = v.Workers
	}
	if v.ServiceMS != 0 {
		s.ServiceMS = v.ServiceMS
	}
	if v.DeadlineMS != 0 {
		s.DeadlineMS = v.DeadlineMS
	}
	if v.Service != "" && v.Service != s.Option(OptService) {
		for _, n := range Numbers() { // the base's distribution's settings
			n.Set(&s, 0)
		}
	}
	for _, n := range Numbers() {
		if x := n.Get(&v); x != 0 {
			n.Set(&s, x)
		}
	}
	for _, o := range Options() {
		if w := v.RawOption(o.Name); w != "" {
			s.SetOption(o.Name, w)
		}
	}
	if v.Bound != 0 {
		s.Bound = v.Bound
	}
	if v.Knee != 0 {
		s.Knee, s.KneeSlope, s.KneePower = v.Knee, v.KneeSlope, v.KneePower
	}
	if v.Degrade != nil {
		s.Degrade = v.Degrade
	}
	s.resolveMean()
	return s
}

// SetOption sets a word-valued setting ("" leaves it to its default).
func (s *Spec) SetOption(name, v string) {
	switch name {
	case OptDiscipline:
		s.Discipline = v
	case OptDoor:
		s.Door = v
	case OptExpire:
		s.Expire = v
	case OptEnd:
		s.End = v
	case OptOccupancy:
		s.Occupancy = v
	case OptService:
		s.Service = v
	case OptCancel:
		s.CancelOnTimeout = v
	default:
		panic(fmt.Sprintf("server: no option %q", name))
	}
}

// busyCeil is the seed lab's in-system formula: 0 when the last finish is at or
// before t, else ceil((busyUntil - t) / service) in float64.
func (s *Server) ceilCount(t float64) int {
	if s.n == 0 {
		return 0
	}
	busyUntil := s.fin[(s.head+s.n-1)&(len(s.fin)-1)] // finishes never decrease
	if busyUntil <= t {
		return 0
	}
	return int(math.Ceil((busyUntil - t) / s.serviceMS)) // the mean, with a distribution
}
