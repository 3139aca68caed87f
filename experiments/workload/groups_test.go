package workload

import "testing"

func TestIndexGroupsMatchesGenerate(t *testing.T) {
	end := 1000.0
	spec := Spec{DurationMS: 1000, Parts: []Part{
		{Type: Clients, Group: "b", Clients: 2, RateRPS: 5},
		{Type: Constant, Client: "solo", RateRPS: 5, EndMS: &end},
		{Type: Clients, Group: "a", Clients: 1, RateRPS: 5},
	}}
	a, err := Generate(&spec, 1)
	if err != nil {
		t.Fatal(err)
	}
	stored := make([]Client, len(a.Clients))
	for i, c := range a.Clients {
		stored[i] = Client{Name: c.Name, Group: c.Group, Weight: c.Weight} // as JSON gives them back
	}
	if err := IndexGroups(stored, a.Groups); err != nil {
		t.Fatal(err)
	}
	for i, c := range stored {
		if c != a.Clients[i] {
			t.Errorf("client %d: %+v (group %d), want %+v (group %d)", i, c, c.GroupIndex(), a.Clients[i], a.Clients[i].GroupIndex())
		}
	}
	if err := IndexGroups([]Client{{Name: "x", Group: "nosuch"}}, a.Groups); err == nil {
		t.Error("client of an unknown group: no error")
	}
}
