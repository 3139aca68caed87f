package workload

import (
	"fmt"
	"strings"

	"github.com/ratelab/ratelab/experiments/field"
)

// Arrival is how a part with several clients, or a flash crowd, spaces its
// requests in time.
type Arrival string

// Arrival processes.
const (
	ArrivalUniform      Arrival = "uniform"
	ArrivalPoisson      Arrival = "poisson"
	ArrivalSynchronized Arrival = "synchronized"
)

// The fields several part types share; each row lists the ones it accepts.
var (
	clientField = Field{Name: "client", Label: "Client", Input: InputText, Default: DefaultClient,
		Doc: "one caller's name"}
	groupField = Field{Name: "group", Label: "Group", Input: InputText,
		Doc: "the clients' group; numbered clients are <group>-1..N"}
	clientsField = Field{Name: "clients", Label: "Clients", Input: InputInteger,
		Doc: "how many callers, named <group>-1..N"}
	weightField = Field{Name: "weight", Label: "Weight", Input: InputNumber, Default: "1",
		Doc: "share of a weighted limiter"}
	rateField = Field{Name: "rate_rps", Label: "Rate", Unit: "req/s", Input: InputNumber, Sweep: true,
		Doc: "requests per second"}
	startField = Field{Name: "start_ms", Label: "Start", Unit: "ms", Input: InputNumber, Default: "0", Sweep: true,
		Doc: "no arrivals before this time"}
	endField = Field{Name: "end_ms", Label: "End", Unit: "ms", Input: InputNumber, Default: "end of the window", Sweep: true,
		Doc: "no arrivals at or after this time"}
	arrivalField = Field{Name: "arrival", Label: "Arrivals", Input: InputChoice,
		Choices: []string{string(ArrivalUniform), string(ArrivalPoisson), string(ArrivalSynchronized)},
		Doc:     "how the requests are spaced in time"}
)

// checkChoice refuses a value of a choice field that is not one of its
// choices; "" (left out) is allowed.
func checkChoice(path string, choices []string, v string) field.List {
	var errs field.List
	if v == "" {
		return errs
	}
	for _, c := range choices {
		if v == c {
			return errs
		}
	}
	quoted := make([]string, len(choices))
	for i, c := range choices {
		quoted[i] = fmt.Sprintf("%q", c)
	}
	list := quoted[len(quoted)-1]
	if len(quoted) > 1 {
		list = strings.Join(quoted[:len(quoted)-1], ", ") + " or " + list
	}
	errs.Add(path, "must be %s", list)
	return errs
}

// checkArrival refuses an arrival process that is not one of the choices.
func checkArrival(path string, a Arrival) field.List {
	return checkChoice(path, arrivalField.Choices, string(a))
}
