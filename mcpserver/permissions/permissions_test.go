package permissions_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/geilt/tairseach-mcp/manifest"
	"github.com/geilt/tairseach-mcp/mcpserver/permissions"
	"github.com/geilt/tairseach-mcp/socketrpc"
)

// list returns a permissions.list result as the server writes it, from
// permission, status pairs.
func list(kv ...string) json.RawMessage {
	var entries []string
	for i := 0; i+1 < len(kv); i += 2 {
		entries = append(entries, fmt.Sprintf(`{"permission":%q,"status":%q,"granted":%t}`, kv[i], kv[i+1], kv[i+1] == "granted"))
	}
	return json.RawMessage(fmt.Sprintf(`{"permissions":[%s],"total":%d}`, strings.Join(entries, ","), len(entries)))
}

func TestParseStatus(t *testing.T) {
	tests := map[string]permissions.Status{
		"granted": permissions.Granted, "denied": permissions.Denied, "not_determined": permissions.NotDetermined,
		"restricted": permissions.Restricted, "unknown": permissions.Unknown,
		// Rust's Debug, as the server's manifest router writes it.
		"Granted": permissions.Granted, "Denied": permissions.Denied, "NotDetermined": permissions.NotDetermined,
		"Restricted": permissions.Restricted, "Unknown": permissions.Unknown,
		"": permissions.Unknown, "limited": permissions.Unknown, "GRANTED": permissions.Unknown,
	}
	for in, want := range tests {
		if got := permissions.ParseStatus(in); got != want {
			t.Errorf("ParseStatus(%q) = %q, want %q", in, got, want)
		}
	}
	for s, blocks := range map[permissions.Status]bool{
		permissions.Granted: false, permissions.Unknown: false,
		permissions.Denied: true, permissions.Restricted: true, permissions.NotDetermined: true,
	} {
		if s.Blocks() != blocks {
			t.Errorf("%s.Blocks() = %v", s, !blocks)
		}
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want map[string]permissions.Status
		err  string
	}{
		{"real", string(list("contacts", "granted", "screen_recording", "denied", "camera", "not_determined")),
			map[string]permissions.Status{"contacts": "granted", "screen_recording": "denied", "camera": "not_determined"}, ""},
		{"empty", `{"permissions":[],"total":0}`, map[string]permissions.Status{}, ""},
		{"odd entries", `{"permissions":[{"status":"denied"},{"permission":"photos","granted":true},{"permission":"camera","granted":false},
			{"permission":"microphone","status":"limited"},{"permission":"location","status":"Denied"},{"permission":"automation","status":"granted","granted":false}]}`,
			map[string]permissions.Status{"photos": "granted", "camera": "unknown", "microphone": "unknown", "location": "denied", "automation": "granted"}, ""},
		{"no array", `{"total":0}`, nil, `no "permissions" array`},
		{"null", `null`, nil, `no "permissions" array`},
		{"array", `[]`, nil, "cannot unmarshal array"},
		{"not json", `{"permissions":`, nil, "unexpected end"},
		{"entry not an object", `{"permissions":[1]}`, nil, "cannot unmarshal number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := permissions.Parse(json.RawMessage(tt.in))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || !maps.Equal(got, tt.want) {
				t.Errorf("Parse = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

func TestBlocked(t *testing.T) {
	g := permissions.NewGrants(map[string]permissions.Status{
		"contacts": permissions.Granted, "screen_recording": permissions.Denied, "camera": permissions.NotDetermined,
		"photos": permissions.Restricted, "location": permissions.Unknown,
	})
	tests := []struct {
		perms  []string
		perm   string
		status permissions.Status
	}{
		{nil, "", ""},
		{[]string{"contacts"}, "", ""},
		{[]string{"location"}, "", ""},              // unknown
		{[]string{"microphone"}, "", ""},            // not listed
		{[]string{"bluetooth", "contacts"}, "", ""}, // not a permission the server knows
		{[]string{"screen_recording"}, "screen_recording", permissions.Denied},
		{[]string{"camera"}, "camera", permissions.NotDetermined},
		{[]string{"photos"}, "photos", permissions.Restricted},
		{[]string{"contacts", "photos", "screen_recording"}, "photos", permissions.Restricted}, // the first that blocks
	}
	for _, tt := range tests {
		perm, status, blocked := g.Blocked(tt.perms)
		if perm != tt.perm || status != tt.status || blocked != (tt.perm != "") {
			t.Errorf("Blocked(%q) = %q, %q, %v; want %q, %q", tt.perms, perm, status, blocked, tt.perm, tt.status)
		}
	}
	// Nothing known blocks nothing.
	if _, _, blocked := (permissions.Grants{}).Blocked([]string{"screen_recording"}); blocked {
		t.Error("the zero Grants blocks")
	}
	if g.String() != "camera=not_determined contacts=granted location=unknown photos=restricted screen_recording=denied" {
		t.Errorf("String() = %q", g)
	}
	m := g.Map()
	m["contacts"] = permissions.Denied
	if g.Status("contacts") != permissions.Granted || g.Status("microphone") != permissions.Unknown {
		t.Error("Map shares the Grants' map, or Status is wrong")
	}
	if !g.Equal(permissions.NewGrants(g.Map())) || g.Equal(permissions.Grants{}) || !(permissions.Grants{}).Equal(permissions.NewGrants(nil)) {
		t.Error("Equal")
	}
}

func TestFromError(t *testing.T) {
	denied := &socketrpc.Error{Code: -32001, Message: "Permission not granted",
		Data: json.RawMessage(`{"permission":"screen_recording","status":"denied","remediation":"User must grant permission manually in System Settings > Privacy & Security > Screen Recording"}`)}
	tests := []struct {
		name string
		err  error
		want *permissions.PermissionError
	}{
		{"server's own text", denied, &permissions.PermissionError{Permission: "screen_recording", Status: permissions.Denied,
			Remediation: "User must grant permission manually in System Settings > Privacy & Security > Screen Recording"}},
		{"wrapped", fmt.Errorf("calling tool: %w", denied), &permissions.PermissionError{Permission: "screen_recording", Status: permissions.Denied,
			Remediation: "User must grant permission manually in System Settings > Privacy & Security > Screen Recording"}},
		// The router's Debug status comes with the text for an unknown status.
		{"router's status", &socketrpc.Error{Code: -32001, Data: json.RawMessage(`{"permission":"camera","status":"NotDetermined","remediation":"Permission status unknown. Check System Settings > Privacy & Security"}`)},
			&permissions.PermissionError{Permission: "camera", Status: permissions.NotDetermined, Remediation: permissions.Remediation("camera", permissions.NotDetermined)}},
		{"no remediation", &socketrpc.Error{Code: -32001, Data: json.RawMessage(`{"permission":"contacts","status":"restricted"}`)},
			&permissions.PermissionError{Permission: "contacts", Status: permissions.Restricted, Remediation: permissions.Remediation("contacts", permissions.Restricted)}},
		{"no data", &socketrpc.Error{Code: -32001, Message: "permission denied"},
			&permissions.PermissionError{Status: permissions.Unknown, Remediation: permissions.Remediation("", permissions.Unknown)}},
		{"data of another shape", &socketrpc.Error{Code: -32001, Data: json.RawMessage(`"contacts"`)},
			&permissions.PermissionError{Status: permissions.Unknown, Remediation: permissions.Remediation("", permissions.Unknown)}},
		{"another code", &socketrpc.Error{Code: -32002, Data: denied.Data}, nil},
		{"not a server error", errors.New("calling: connection refused"), nil},
		{"nil", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := permissions.FromError(tt.err)
			if ok != (tt.want != nil) {
				t.Fatalf("ok = %v", ok)
			}
			if ok && *got != *tt.want {
				t.Errorf("got %+v\nwant %+v", *got, *tt.want)
			}
		})
	}
	pe, _ := permissions.FromError(denied)
	if pe.Error() != `"screen_recording" is denied: "User must grant permission manually in System Settings > Privacy & Security > Screen Recording"` {
		t.Errorf("Error() = %q", pe.Error())
	}
}

func TestRemediation(t *testing.T) {
	for _, p := range manifest.PermissionNames() {
		if r := permissions.Remediation(p, permissions.Granted); r != "" {
			t.Errorf("%s granted: %q", p, r)
		}
		// Each permission the server knows has its own pane.
		if r := permissions.Remediation(p, permissions.Denied); !strings.HasPrefix(r, "open System Settings › Privacy & Security › ") {
			t.Errorf("%s denied: %q", p, r)
		}
		for _, s := range []permissions.Status{permissions.NotDetermined, permissions.Restricted, permissions.Unknown} {
			// What the user can do, never a method the model could call
			// around them.
			if r := permissions.Remediation(p, s); r == "" || strings.Contains(r, "{pane}") || strings.Contains(r, "permissions.request") {
				t.Errorf("%s %s: %q", p, s, r)
			}
		}
	}
	tests := []struct {
		perm   string
		status permissions.Status
		want   string
	}{
		{"screen_recording", permissions.Denied, "open System Settings › Privacy & Security › Screen Recording (Screen & System Audio Recording on macOS 15 and later) and turn Tairseach on, then quit and reopen the Tairseach app"},
		{"contacts", permissions.Denied, "open System Settings › Privacy & Security › Contacts and turn Tairseach on"},
		{"contacts", permissions.NotDetermined, "open the Tairseach app's Permissions view and click Request next to Contacts, then allow it when macOS asks"},
		{"screen_recording", permissions.NotDetermined, "open the Tairseach app's Permissions view and click Request next to Screen Recording: macOS then lists Tairseach under System Settings › Privacy & Security › Screen Recording, where it must be turned on; then quit and reopen the Tairseach app"},
		{"full_disk_access", permissions.NotDetermined, "macOS never asks for Full Disk Access: open System Settings › Privacy & Security › Full Disk Access, add Tairseach with + and turn it on, then quit and reopen the Tairseach app"},
		{"camera", permissions.Restricted, `macOS restricts the "camera" permission on this Mac (a configuration profile or Screen Time): it cannot be given in System Settings; ask whoever manages the Mac`},
		{"location", permissions.Unknown, `Tairseach cannot tell whether macOS gives it the "location" permission; check System Settings › Privacy & Security › Location Services`},
		{"bluetooth", permissions.Denied, `open System Settings › Privacy & Security and give Tairseach the "bluetooth" permission`},
		{"bluetooth", permissions.NotDetermined, `give Tairseach the "bluetooth" permission from the Tairseach app's Permissions view (Request), or in System Settings › Privacy & Security`},
		{"blue\ntooth" + strings.Repeat("h", 100), permissions.Denied, `open System Settings › Privacy & Security and give Tairseach the "blue\ntooth` + strings.Repeat("h", 53) + `"… (47 more bytes) permission`},
		{"", permissions.Unknown, "Tairseach cannot tell whether macOS gives it the permission; check System Settings › Privacy & Security"},
	}
	for _, tt := range tests {
		if got := permissions.Remediation(tt.perm, tt.status); got != tt.want {
			t.Errorf("Remediation(%q, %s) =\n %q\nwant %q", tt.perm, tt.status, got, tt.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(list("contacts", "granted", "camera", "NotDetermined")))
	f.Add([]byte(`{"permissions":[{"permission":"photos","granted":true},{"status":"denied"}]}`))
	f.Add([]byte(`{"permission":"screen_recording","status":"denied","remediation":"User must grant permission manually"}`))
	f.Add([]byte(`null`))
	valid := map[permissions.Status]bool{permissions.Granted: true, permissions.Denied: true, permissions.NotDetermined: true,
		permissions.Restricted: true, permissions.Unknown: true}
	f.Fuzz(func(t *testing.T, data []byte) {
		if m, err := permissions.Parse(data); err == nil {
			for p, s := range m {
				if p == "" || !valid[s] {
					t.Errorf("Parse: %q is %q", p, s)
				}
			}
		}
		pe := permissions.ParseData(data)
		if !valid[pe.Status] || (pe.Remediation == "" && pe.Status != permissions.Granted) {
			t.Errorf("ParseData: %+v", *pe)
		}
		_ = pe.Error()
	})
}
