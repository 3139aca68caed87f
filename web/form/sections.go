package form

import (
	"encoding/json"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/experiments/server"
	"github.com/ratelab/ratelab/experiments/workload"
)

// The form's folded sections (<details>): a part's clients, a limiter's
// instances, the sweep's seed and replications, the server, the
// objectives and the advanced settings. Each shows a one-line summary of
// what it holds, written here for the page as served and by static/app.js
// as the user types, by one rule: every input of the section that is
// shown (of the row's type) and given, in page order, as "Label value
// unit" (a select: "Label value"; a text area: its label, or its lines
// (data-summary="lines"), or its JSON object's keys, sorted, each with its
// list's length (data-summary="keys")), joined by ", "; nothing given:
// the section's empty text. A section holding an error is open.

// summary joins a section's items, or says it is empty.
func summary(items []string, empty string) string {
	items = slices.DeleteFunc(items, func(s string) bool { return s == "" })
	if len(items) == 0 {
		return empty
	}
	return strings.Join(items, ", ")
}

// textItem is a text input's item: "Timeout 500 ms", or "" when empty.
func textItem(label, value, unit string) string {
	v := strings.TrimSpace(value)
	if v == "" {
		return ""
	}
	if unit != "" {
		v += " " + unit
	}
	return label + " " + v
}

// choiceItem is a select's item: "Jitter full", or "" for the default.
func choiceItem(label, value string) string {
	if value == "" {
		return ""
	}
	return label + " " + value
}

// areaItem is a text area's item: its label when it holds text.
func areaItem(label, value string) string {
	if strings.TrimSpace(value) == "" {
		return ""
	}
	return label
}

// linesItem is a text area's lines (data-summary="lines").
func linesItem(value string) string {
	var out []string
	for _, l := range strings.Split(value, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, ", ")
}

// keysItem is a JSON object's keys, sorted, each with its list's length
// (data-summary="keys"): "loads 8, servers 2, slo"; the label when the
// text is no JSON object.
func keysItem(label, value string) string {
	if strings.TrimSpace(value) == "" {
		return ""
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(value), &obj) != nil {
		return label
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		var list []json.RawMessage
		if json.Unmarshal(obj[k], &list) == nil {
			keys[i] = k + " " + strconv.Itoa(len(list))
		}
	}
	return strings.Join(keys, ", ")
}

// fieldItem is a part field's item, as its input shows it.
func fieldItem(fd workload.Field, value string) string {
	if fd.Input.Choice() {
		return choiceItem(fd.Label, value)
	}
	if isArea(fd) {
		return areaItem(fd.Label, value)
	}
	return textItem(fd.Label, value, fd.Unit)
}

// isClientField reports whether a part field is about its clients (who
// they are and how they treat a request), folded under "Clients".
func isClientField(name string) bool {
	switch name {
	case "client", "group", "weight":
		return true
	}
	return slices.ContainsFunc(workload.BehaviourFields(), func(f workload.Field) bool { return f.Name == name })
}

// partMainFields are a part row's inputs shown unfolded; clientFields
// those under its "Clients".
func partMainFields(typ string) []workload.Field {
	return slices.DeleteFunc(partFields(typ), func(f workload.Field) bool { return isClientField(f.Name) })
}

func clientFields(typ string) []workload.Field {
	return slices.DeleteFunc(partFields(typ), func(f workload.Field) bool { return !isClientField(f.Name) })
}

// ClientsEmpty is the clients' summary when nothing is given.
const ClientsEmpty = "one client; each request sent once, waited for however long it takes"

// clientsSummary sums up a part's clients.
func clientsSummary(p Part) string {
	k := partKind(p.Type)
	var items []string
	for _, fd := range clientFields(p.Type) {
		if k != nil && k.Has(fd.Name) {
			items = append(items, fieldItem(fd, p.Get(fd.Name)))
		}
	}
	return summary(items, ClientsEmpty)
}

// InstancesEmpty is a limiter's instances' summary when nothing is given.
const InstancesEmpty = "one instance"

// instancesSummary sums up a limiter's instances.
func instancesSummary(l Limiter) string {
	var items []string
	for _, p := range limiter.ReplicaParams() {
		items = append(items, textItem(p.Label, l.Param(p.Name), p.Unit))
	}
	for _, o := range limiter.ReplicaOptions() {
		items = append(items, choiceItem(o.Label, l.Option(o.Name)))
	}
	return summary(items, InstancesEmpty)
}

// sweepSummary sums up the seed, replications and description.
func (f *Sweep) sweepSummary() string {
	return summary([]string{textItem("Seed", f.Seed, ""), textItem("Replications", f.Replications, "runs"), areaItem("Description", f.Description)}, "defaults")
}

// serverSummary sums up the server section.
func (f *Sweep) serverSummary() string {
	items := []string{textItem("Workers", f.Workers, ""), textItem("Service time", f.ServiceMS, "ms"), textItem("Deadline", f.DeadlineMS, "ms")}
	for _, o := range server.Options() {
		items = append(items, choiceItem(o.Label, f.Setting(ServerOptionKey(o.Name))))
	}
	items = append(items, textItem("Door bound", f.Setting(BoundKey), "requests"))
	for _, n := range server.Numbers() {
		items = append(items, textItem(n.Label, f.Setting(ServerOptionKey(n.Name)), n.Unit))
	}
	return summary(items, "defaults")
}

// objectivesSummary is the objectives, one after the other.
func (f *Sweep) objectivesSummary() string {
	return summary([]string{linesItem(f.Objectives)}, "none: the run page ranks no setting")
}

// advancedSummary sums up the advanced section: the models first (servers,
// loads, classes: what most changes the sweep), then windows, reports and rules.
func (f *Sweep) advancedSummary() string {
	items := []string{keysItem(modelsLabel, f.Models), textItem("Rolling window", f.RollingWindowMS, "ms"), textItem("Fairness window", f.FairnessWindowMS, "ms"), areaItem("Extra CSV reports", f.Reports)}
	for _, r := range experiments.Rules() {
		items = append(items, choiceItem(r.Label, f.Setting(r.Path)))
	}
	return summary(items, "defaults")
}

// modelsLabel labels the models input.
const modelsLabel = "Servers, loads, classes, SLO, client policies and trigger"

// errIn reports whether any of the keys has an error: its section opens.
func (f *Sweep) errIn(keys ...string) bool {
	for _, k := range keys {
		if len(f.Err(k)) > 0 {
			return true
		}
	}
	return false
}

// clientsOpen reports an error among part i's client inputs.
func (f *Sweep) clientsOpen(i int, p Part) bool {
	for _, fd := range clientFields(p.Type) {
		if f.errIn(RowKey("parts", i, fd.Name)) {
			return true
		}
	}
	return false
}

// instancesOpen reports an error among limiter i's instance inputs.
func (f *Sweep) instancesOpen(i int) bool {
	for _, p := range limiter.ReplicaParams() {
		if f.errIn(RowKey("limiters", i, p.Name)) {
			return true
		}
	}
	for _, o := range limiter.ReplicaOptions() {
		if f.errIn(RowKey("limiters", i, o.Name)) {
			return true
		}
	}
	return false
}

// serverOpen reports an error in the server section.
func (f *Sweep) serverOpen() bool {
	keys := []string{"server.workers", "server.service_ms", "server.deadline_ms", BoundKey}
	for _, o := range server.Options() {
		keys = append(keys, ServerOptionKey(o.Name))
	}
	for _, n := range server.Numbers() {
		keys = append(keys, ServerOptionKey(n.Name))
	}
	return f.errIn(keys...)
}
