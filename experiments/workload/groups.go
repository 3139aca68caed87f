package workload

import "fmt"

// IndexGroups sets each client's group index (GroupIndex) from its Group
// name and groups, as Generate does: for clients read back from storage,
// where the index is not serialized. A client with no group gets -1; a
// group missing from groups is an error.
func IndexGroups(clients []Client, groups []string) error {
	index := make(map[string]int, len(groups))
	for i, g := range groups {
		index[g] = i
	}
	for i := range clients {
		c := &clients[i]
		if c.Group == "" {
			c.group = -1
			continue
		}
		gi, ok := index[c.Group]
		if !ok {
			return fmt.Errorf("client %q: group %q is not among the %d groups", c.Name, c.Group, len(groups))
		}
		c.group = gi
	}
	return nil
}
