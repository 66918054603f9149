package routes

import (
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/geilt/tairseach-mcp/manifest"
	"github.com/geilt/tairseach-mcp/mcpserver/permissions"
	"github.com/geilt/tairseach-mcp/mcpserver/policy"
	"github.com/geilt/tairseach-mcp/socketrpc"
)

// testRegistry is a manifest of a tool that reads, one that needs the
// contacts permission, and the permissions' own list.
func testRegistry(t *testing.T) *manifest.Registry {
	t.Helper()
	f, err := manifest.ParseFile("c.json", []byte(`{"id":"c","tools":[
		{"name":"c.read","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true},"requires":{"permissions":[{"name":"contacts"}]}},
		{"name":"c.write","inputSchema":{"type":"object"},"requires":{"permissions":[{"name":"contacts"}]}},
		{"name":"permissions.list","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}],
		"implementation":{"methods":{"c.read":"c.read","c.write":"c.write","permissions.list":"permissions.list"}}}`),
		manifest.Options{Prefix: "t_"})
	if err != nil {
		t.Fatal(err)
	}
	return manifest.Build([]*manifest.File{f})
}

func testOptions(p policy.Policy, g permissions.Grants) Options {
	c := socketrpc.New("/nonexistent", socketrpc.Options{})
	return Options{Policy: p, HideUngranted: true, Grants: g, Log: zerolog.Nop(),
		Client: func(string) *socketrpc.Client { return c }, GrantsClient: func(string) *socketrpc.Client { return c }}
}

// TestBuildServesWhatThePolicyAndTheGrantsLeave: a table is its registry
// under its policy and the grants: the policy's reason first, a
// permission's after it, nothing held against a tool while the grants are
// unknown; the server's own read of the grants is routed whatever is
// served; and a table built again from the same is no change.
func TestBuildServesWhatThePolicyAndTheGrantsLeave(t *testing.T) {
	reg := testRegistry(t)
	denied := permissions.NewGrants(map[string]permissions.Status{"contacts": permissions.Denied})
	for _, c := range []struct {
		name   string
		p      policy.Policy
		g      permissions.Grants
		served string // in name order
		by     map[string]policy.HiddenBy
	}{
		{"grants unknown", policy.Policy{}, permissions.Grants{}, "t_c_read,t_c_write,t_permissions_list", nil},
		{"contacts denied", policy.Policy{}, denied, "t_permissions_list",
			map[string]policy.HiddenBy{"t_c_read": policy.ByPermission, "t_c_write": policy.ByPermission}},
		{"read-only, contacts denied", policy.Policy{ReadOnly: true}, denied, "t_permissions_list",
			map[string]policy.HiddenBy{"t_c_read": policy.ByPermission, "t_c_write": policy.ByFlags}},
		{"the policy hides the grants' own tool", policy.Policy{ExcludeTools: []string{"permissions.*"}}, permissions.Grants{}, "t_c_read,t_c_write",
			map[string]policy.HiddenBy{"t_permissions_list": policy.ByFlags}},
	} {
		table, ch := Build(reg, testOptions(c.p, c.g), Empty())
		if got := strings.Join(table.Order, ","); got != c.served {
			t.Errorf("%s: serves %s, want %s", c.name, got, c.served)
		}
		if strings.Join(ch.Added, ",") != c.served || len(ch.Removed)+len(ch.Changed) != 0 {
			t.Errorf("%s: from nothing, the change is %+v", c.name, ch)
		}
		for name, why := range table.Hidden {
			if why.By != c.by[name] {
				t.Errorf("%s: %s hidden by %v (%s), want %v", c.name, name, why.By, why.Text, c.by[name])
			}
			if _, blocked := table.Blocked[name]; blocked != (why.By == policy.ByPermission) {
				t.Errorf("%s: %s hidden by %v and blocked %v", c.name, name, why.By, blocked)
			}
		}
		if len(table.Hidden) != len(c.by) {
			t.Errorf("%s: hides %d tools, want %d", c.name, len(table.Hidden), len(c.by))
		}
		if table.Internal[permissions.MethodList] == nil {
			t.Errorf("%s: the grants' own read has no route", c.name)
		}
		again, ch := Build(reg, testOptions(c.p, c.g), table)
		if !ch.Empty() || string(again.List) != string(table.List) {
			t.Errorf("%s: built again, the change is %+v", c.name, ch)
		}
	}
}
