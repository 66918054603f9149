package demo_test

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/geilt/tairseach-mcp/internal/demo"
	"github.com/geilt/tairseach-mcp/manifest"
)

type permStatus struct {
	Permission string `json:"permission"`
	Status     string `json:"status"`
	Granted    bool   `json:"granted"`
}

type permList struct {
	Permissions []permStatus `json:"permissions"`
	Total       int          `json:"total"`
}

// statuses returns permissions.list as permission -> status, checking its shape.
func (c *client) statuses() map[string]string {
	c.t.Helper()
	var l permList
	c.result("permissions.list", "", &l)
	if l.Total != 11 || len(l.Permissions) != 11 {
		c.t.Fatalf("permissions.list: total %d, %d permissions", l.Total, len(l.Permissions))
	}
	got := map[string]string{}
	var order []string
	for _, p := range l.Permissions {
		if p.Granted != (p.Status == demo.Granted) {
			c.t.Errorf("permissions.list: %+v", p)
		}
		got[p.Permission] = p.Status
		order = append(order, p.Permission)
	}
	if !slices.Equal(order, manifest.PermissionNames()) {
		c.t.Errorf("permissions.list order %v, want the server's %v", order, manifest.PermissionNames())
	}
	return got
}

// allStatuses returns every permission at status, then the overrides.
func allStatuses(status string, overrides ...string) map[string]string {
	m := map[string]string{}
	for _, p := range manifest.PermissionNames() {
		m[p] = status
	}
	for i := 0; i+1 < len(overrides); i += 2 {
		m[overrides[i]] = overrides[i+1]
	}
	return m
}

func TestPermissionsListDefault(t *testing.T) {
	s := startServer(t, demo.Options{})
	c := dial(t, s.path)
	if got, want := c.statuses(), allStatuses(demo.Granted); !maps.Equal(got, want) {
		t.Errorf("statuses = %v, want %v", got, want)
	}
	// The exact line, as the real server writes it.
	r := c.call("permissions.check", `{"permission":"screen_recording"}`)
	if string(r.Result) != `{"permission":"screen_recording","status":"granted","granted":true}` {
		t.Errorf("permissions.check = %s", r.Result)
	}
	if raw := c.call("permissions.list", "").Result; !strings.HasPrefix(string(raw), `{"permissions":[{"permission":"contacts","status":"granted","granted":true},`) ||
		!strings.HasSuffix(string(raw), `],"total":11}`) {
		t.Errorf("permissions.list = %s", raw)
	}
}

func TestPermissionsGrants(t *testing.T) {
	grants, err := demo.ParseGrants("*=denied,contacts=granted,screen_recording=not_determined")
	if err != nil {
		t.Fatal(err)
	}
	s := startServer(t, demo.Options{Grants: grants})
	c := dial(t, s.path)
	want := allStatuses(demo.Denied, "contacts", demo.Granted, "screen_recording", demo.NotDetermined)
	if got := c.statuses(); !maps.Equal(got, want) {
		t.Errorf("statuses = %v, want %v", got, want)
	}
	var one permStatus
	c.result("permissions.check", `{"permission":"screen_recording"}`, &one)
	if one != (permStatus{"screen_recording", demo.NotDetermined, false}) {
		t.Errorf("permissions.check = %+v", one)
	}
	// A method whose permission is granted runs.
	if r := c.call("contacts.list", `{"limit":1}`); r.Error != nil {
		t.Errorf("contacts.list: %+v", r.Error)
	}
}

func TestPermissionsCheckErrors(t *testing.T) {
	s := startServer(t, demo.Options{})
	c := dial(t, s.path)
	valid := `["contacts", "calendar", "reminders", "location", "photos", "camera", "microphone", "screen_recording", "accessibility", "full_disk_access", "automation"]`
	tests := []struct {
		method, params string
		msg            string
	}{
		{"permissions.check", `{"permission":"bluetooth"}`, "Unknown permission: bluetooth. Valid: " + valid},
		{"permissions.check", `{}`, "Missing 'permission' parameter"},
		{"permissions.check", ``, "Missing 'permission' parameter"},
		{"permissions.check", `{"permission":7}`, "Missing 'permission' parameter"},
		{"permissions.request", `{"permission":"Contacts"}`, "Unknown permission: Contacts"},
		{"permissions.request", `{"name":"contacts"}`, "Missing 'permission' parameter"},
		{"demo.setPermission", `{"permission":"contacts","status":"yes"}`, `unknown status "yes"`},
		{"demo.setPermission", `{"permission":"nope","status":"denied"}`, `unknown permission "nope"`},
	}
	for _, tt := range tests {
		r := c.call(tt.method, tt.params)
		if r.Error == nil || r.Error.Code != -32602 || !strings.HasPrefix(r.Error.Message, tt.msg) {
			t.Errorf("%s %s: %s / %+v, want -32602 %q", tt.method, tt.params, r.Result, r.Error, tt.msg)
		}
	}
	if got := c.statuses(); !maps.Equal(got, allStatuses(demo.Granted)) {
		t.Errorf("statuses changed by failed calls: %v", got)
	}
}

func TestPermissionDenied(t *testing.T) {
	s := startServer(t, demo.Options{CaptureDir: t.TempDir()})
	c := dial(t, s.path)
	tests := []struct {
		method, params string
		permission     string
		status         string
		remediation    string
	}{
		{"contacts.list", `{}`, "contacts", demo.Denied, "User must grant permission manually in System Settings > Privacy & Security > Contacts"},
		{"contacts.search", `{"query":"a"}`, "contacts", demo.NotDetermined, "Permission can be requested. Call permissions.request with permission='contacts'"},
		{"screen.capture", `{}`, "screen_recording", demo.Denied, "User must grant permission manually in System Settings > Privacy & Security > Screen Recording"},
		{"calendar.updateEvent", `{"id":"e1"}`, "calendar", demo.Restricted, "Permission is restricted by system policy and cannot be granted"},
		{"files.read", `{"path":"/etc/hosts"}`, "full_disk_access", demo.Unknown, "Permission status unknown. Check System Settings > Privacy & Security"},
		{"automation.click", `{"x":1,"y":1}`, "accessibility", demo.Denied, "User must grant permission manually in System Settings > Privacy & Security > Accessibility"},
		{"automation.run", `{"script":"1"}`, "automation", demo.Denied, "User must grant permission manually in System Settings > Privacy & Security > Automation"},
		{"location.get", `{}`, "location", demo.Denied, "User must grant permission manually in System Settings > Privacy & Security > Location Services"},
	}
	for _, tt := range tests {
		t.Run(tt.method, func(t *testing.T) {
			c.t = t
			if err := s.srv.SetPermission(tt.permission, tt.status); err != nil {
				t.Fatal(err)
			}
			r := c.call(tt.method, tt.params)
			if r.Error == nil || r.Error.Code != -32001 || r.Error.Message != "Permission not granted" {
				t.Fatalf("got %s / %+v, want -32001", r.Result, r.Error)
			}
			var data struct{ Permission, Status, Remediation string }
			if err := json.Unmarshal(r.Error.Data, &data); err != nil {
				t.Fatalf("data %s: %v", r.Error.Data, err)
			}
			if data.Permission != tt.permission || data.Status != tt.status || data.Remediation != tt.remediation {
				t.Errorf("data = %s", r.Error.Data)
			}
			if strings.Contains(string(r.Error.Data), `\u0026`) {
				t.Errorf("data %s escapes &", r.Error.Data)
			}
			// Granted, a method the demo serves runs and one it does not
			// serve is not found, as the permission is checked first.
			if err := s.srv.SetPermission(tt.permission, demo.Granted); err != nil {
				t.Fatal(err)
			}
			r = c.call(tt.method, tt.params)
			if r.Error != nil && r.Error.Code != -32601 {
				t.Errorf("granted: %+v", r.Error)
			}
		})
	}
	// Methods needing no permission are never refused.
	for _, p := range manifest.PermissionNames() {
		s.srv.SetPermission(p, demo.Denied)
	}
	for _, m := range []string{"server.status", "demo.echo", "permissions.list", "word_count"} {
		if r := c.call(m, `{"text":""}`); r.Error != nil {
			t.Errorf("%s with every permission denied: %+v", m, r.Error)
		}
	}
}

func TestPermissionsRequest(t *testing.T) {
	grants := map[string]string{"camera": demo.NotDetermined, "photos": demo.Denied}
	s := startServer(t, demo.Options{Grants: grants})
	c := dial(t, s.path)
	if r := c.call("camera.snap", `{}`); r.Error == nil || r.Error.Code != -32001 {
		t.Fatalf("camera.snap before the request: %s / %+v", r.Result, r.Error)
	}
	r := c.call("permissions.request", `{"permission":"camera"}`)
	if r.Error != nil || string(r.Result) != `{"permission":"camera","action":"request_triggered","message":"Permission dialog triggered. Check for system prompt or Settings opened."}` {
		t.Fatalf("permissions.request = %s / %+v", r.Result, r.Error)
	}
	// The demo's user says yes at once.
	var one permStatus
	c.result("permissions.check", `{"permission":"camera"}`, &one)
	if one.Status != demo.Granted || !one.Granted {
		t.Errorf("camera after the request: %+v", one)
	}
	// A denied permission is not asked about again.
	c.call("permissions.request", `{"permission":"photos"}`)
	c.call("permissions.request", `{"permission":"photos"}`)
	c.result("permissions.check", `{"permission":"photos"}`, &one)
	if one.Status != demo.Denied {
		t.Errorf("photos after the request: %+v", one)
	}
	if n, m, z := s.srv.PermissionRequests("camera"), s.srv.PermissionRequests("photos"), s.srv.PermissionRequests("contacts"); n != 1 || m != 2 || z != 0 {
		t.Errorf("requests: camera %d, photos %d, contacts %d; want 1, 2, 0", n, m, z)
	}
}

func TestDemoSetPermission(t *testing.T) {
	s := startServer(t, demo.Options{})
	c := dial(t, s.path)
	var one permStatus
	c.result("demo.setPermission", `{"permission":"microphone","status":"restricted"}`, &one)
	if one != (permStatus{"microphone", demo.Restricted, false}) {
		t.Errorf("demo.setPermission = %+v", one)
	}
	if got := c.statuses(); !maps.Equal(got, allStatuses(demo.Granted, "microphone", demo.Restricted)) {
		t.Errorf("statuses = %v", got)
	}
	// Seen by every connection.
	if got := dial(t, s.path).statuses()["microphone"]; got != demo.Restricted {
		t.Errorf("another connection sees %s", got)
	}
}

func TestGrantsFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "grants")
	write := func(content string) {
		t.Helper()
		// A new file in its place, as editors save: seen whatever the clock's grain.
		tmp := filepath.Join(dir, "grants.tmp")
		if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, file); err != nil {
			t.Fatal(err)
		}
	}
	write("# what macOS says\nscreen_recording = denied\ncontacts=not_determined, camera=restricted\n")
	s := startServer(t, demo.Options{Grants: map[string]string{"photos": demo.Denied, "camera": demo.Denied}, GrantsFile: file})
	c := dial(t, s.path)
	want := allStatuses(demo.Granted, "photos", demo.Denied, "camera", demo.Restricted, "screen_recording", demo.Denied, "contacts", demo.NotDetermined)
	if got := c.statuses(); !maps.Equal(got, want) {
		t.Fatalf("statuses = %v, want %v", got, want)
	}

	write("screen_recording=granted\n")
	want = allStatuses(demo.Granted, "photos", demo.Denied, "camera", demo.Denied)
	if got := c.statuses(); !maps.Equal(got, want) {
		t.Errorf("after the file changed: %v, want %v", got, want)
	}

	// Changes over the file last until the file changes.
	c.call("demo.setPermission", `{"permission":"location","status":"denied"}`)
	if got := c.statuses()["location"]; got != demo.Denied {
		t.Errorf("location = %s after demo.setPermission", got)
	}
	write("screen_recording=denied\n")
	want = allStatuses(demo.Granted, "photos", demo.Denied, "camera", demo.Denied, "screen_recording", demo.Denied)
	if got := c.statuses(); !maps.Equal(got, want) {
		t.Errorf("after the file changed again: %v, want %v", got, want)
	}

	// A broken file is not applied.
	write("screen_recording=maybe\n")
	if got := c.statuses(); !maps.Equal(got, want) {
		t.Errorf("after a broken file: %v, want %v", got, want)
	}

	// A missing file counts as empty.
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	want = allStatuses(demo.Granted, "photos", demo.Denied, "camera", demo.Denied)
	if got := c.statuses(); !maps.Equal(got, want) {
		t.Errorf("after the file was removed: %v, want %v", got, want)
	}

	// Written in place, a change of size is seen too.
	if err := os.WriteFile(file, []byte("*=unknown"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := c.statuses(); !maps.Equal(got, allStatuses(demo.Unknown)) {
		t.Errorf("after the file came back: %v", got)
	}
	if err := os.WriteFile(file, []byte("*=denied,contacts=granted"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := c.statuses(); !maps.Equal(got, allStatuses(demo.Denied, "contacts", demo.Granted)) {
		t.Errorf("after the file was rewritten: %v", got)
	}
}

func TestParseGrants(t *testing.T) {
	tests := []struct {
		in   string
		want map[string]string
		err  string
	}{
		{"", map[string]string{}, ""},
		{" contacts = denied ,, camera=granted", map[string]string{"contacts": "denied", "camera": "granted"}, ""},
		{"*=not_determined\n# a comment, with commas\nphotos=restricted # trailing\n", map[string]string{"*": "not_determined", "photos": "restricted"}, ""},
		{"contacts=denied,contacts=granted", map[string]string{"contacts": "granted"}, ""},
		{"contacts", nil, `"contacts": want permission=status`},
		{"bluetooth=granted", nil, `unknown permission "bluetooth"`},
		{"contacts=yes", nil, `unknown status "yes" (want one of granted, denied, not_determined, restricted, unknown)`},
		{"Contacts=granted", nil, `unknown permission "Contacts"`},
	}
	for _, tt := range tests {
		got, err := demo.ParseGrants(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseGrants(%q) error %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || !maps.Equal(got, tt.want) {
			t.Errorf("ParseGrants(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

// TestMethodPermission checks the table against the manifests of the real
// server: every corpus tool that needs a permission calls a method that
// needs the same one. The one exception is the server's own: its table
// (proxy/handlers/mod.rs) leaves out reminders.uncomplete, so the server
// runs it without checking Reminders.
func TestMethodPermission(t *testing.T) {
	const missing = "reminders.uncomplete"
	r, err := manifest.Load(filepath.Join("..", "..", "manifest", "testdata", "tairseach-manifests"), manifest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, tool := range r.Tools {
		if len(tool.Permissions) == 0 {
			if p := demo.MethodPermission(tool.Method); p != "" {
				t.Errorf("%s: method %s needs %s, its manifest says none", tool.Name, tool.Method, p)
			}
			continue
		}
		n++
		if tool.Method == missing {
			if p := demo.MethodPermission(tool.Method); p != "" {
				t.Errorf("%s needs %s; the real server checks nothing", missing, p)
			}
			continue
		}
		if p := demo.MethodPermission(tool.Method); len(tool.Permissions) != 1 || p != tool.Permissions[0] {
			t.Errorf("%s: method %s needs %q, its manifest says %q", tool.Name, tool.Method, p, tool.Permissions)
		}
	}
	if n < 30 {
		t.Errorf("only %d tools need a permission", n)
	}
}
