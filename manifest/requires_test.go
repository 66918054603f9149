package manifest

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

func TestToolPermissions(t *testing.T) {
	const (
		impl   = `"implementation":{"methods":{"a":"a"}}`
		implAB = `"implementation":{"methods":{"a":"a","b":"b"}}`
	)
	tests := []struct {
		name     string
		data     string
		want     map[string][]string // tool name -> Permissions
		problems []Problem           // Message is a substring
	}{
		{
			name: "none",
			data: `{"id":"c","tools":[{"name":"a"}],` + impl + `}`,
			want: map[string][]string{"a": nil},
		},
		{
			name: "credentials only",
			data: `{"id":"c","requires":{"credentials":[{"id":"google"}]},"tools":[{"name":"a"}],` + impl + `}`,
			want: map[string][]string{"a": nil},
		},
		{
			name: "empty list",
			data: `{"id":"c","requires":{"permissions":[]},"tools":[{"name":"a","requires":{"permissions":null}}],` + impl + `}`,
			want: map[string][]string{"a": nil},
		},
		{
			name: "manifest level applies to every tool",
			data: `{"id":"c","requires":{"permissions":[{"name":"contacts"}]},"tools":[{"name":"a"},{"name":"b"}],` + implAB + `}`,
			want: map[string][]string{"a": {"contacts"}, "b": {"contacts"}},
		},
		{
			name: "tool level adds to manifest level, sorted and deduped",
			data: `{"id":"c","requires":{"permissions":[{"name":"screen_recording"},{"name":"contacts","optional":true}]},
				"tools":[{"name":"a","requires":{"permissions":[{"name":"accessibility","reason":"clicks"},{"name":"contacts"}]}},{"name":"b"}],` + implAB + `}`,
			want: map[string][]string{"a": {"accessibility", "contacts", "screen_recording"}, "b": {"contacts", "screen_recording"}},
		},
		{
			name: "tool level alone",
			data: `{"id":"c","tools":[{"name":"a","requires":{"permissions":[{"name":"automation"}]}},{"name":"b","requires":{}}],` + implAB + `}`,
			want: map[string][]string{"a": {"automation"}, "b": nil},
		},
		{
			name:     "unknown name is a warning and kept",
			data:     `{"id":"c","requires":{"permissions":[{"name":"bluetooth"}]},"tools":[{"name":"a","requires":{"permissions":[{"name":"Contacts"}]}}],` + impl + `}`,
			want:     map[string][]string{"a": {"Contacts", "bluetooth"}},
			problems: []Problem{{File: "x.json", Severity: Warning, Message: `requires.permissions[0]: unknown permission "bluetooth" (known: contacts, calendar,`}, {File: "x.json", Tool: "a", Severity: Warning, Message: `requires.permissions[0]: unknown permission "Contacts"`}},
		},
		{
			name:     "a string entry is read with a warning",
			data:     `{"id":"c","requires":{"permissions":["camera"]},"tools":[{"name":"a"}],` + impl + `}`,
			want:     map[string][]string{"a": {"camera"}},
			problems: []Problem{{File: "x.json", Severity: Warning, Message: `requires.permissions[0] is the string "camera"; the Tairseach server reads only {"name": "camera"}`}},
		},
		{
			name: "bad entries are ignored with warnings",
			data: `{"id":"c","requires":{"permissions":[1,{"name":""},{"name":7},"",{"name":"photos"}]},"tools":[{"name":"a"}],` + impl + `}`,
			want: map[string][]string{"a": {"photos"}},
			problems: []Problem{
				{File: "x.json", Severity: Warning, Message: `requires.permissions[0] is ignored: it must be an object {"name": …}, got number`},
				{File: "x.json", Severity: Warning, Message: `requires.permissions[1] is ignored: it has no "name" string`},
				{File: "x.json", Severity: Warning, Message: `requires.permissions[2] is ignored: it has no "name" string`},
				{File: "x.json", Severity: Warning, Message: `requires.permissions[3] is ignored: empty name`},
			},
		},
		{
			name: "wrong shapes do not reject the file",
			data: `{"id":"c","requires":"contacts","tools":[{"name":"a","requires":{"permissions":{"name":"camera"}}}],` + impl + `}`,
			want: map[string][]string{"a": nil},
			problems: []Problem{
				{File: "x.json", Severity: Warning, Message: "requires is ignored: it must be an object, got string"},
				{File: "x.json", Tool: "a", Severity: Warning, Message: `requires.permissions is ignored: it must be an array of {"name": …}, got object`},
			},
		},
		{
			name: "a hidden tool says nothing",
			data: `{"id":"c","tools":[{"name":"a","mcp_expose":false,"requires":{"permissions":[{"name":"nope"}]}}],` + impl + `}`,
			want: map[string][]string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := ParseFile("x.json", []byte(tt.data), Options{})
			if err != nil {
				t.Fatalf("ParseFile: %v", err)
			}
			got := map[string][]string{}
			for _, tool := range f.Tools {
				got[tool.ToolName] = tool.Permissions
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("permissions = %q, want %q", got, tt.want)
			}
			checkProblems(t, f.Problems, tt.problems)
		})
	}
}

func TestCorpusPermissions(t *testing.T) {
	r := loadCorpus(t)
	want := map[string][]string{
		"tairseach_screen_capture":        {"screen_recording"},
		"tairseach_screen_windows":        {"screen_recording"},
		"tairseach_contacts_list":         {"contacts"},
		"tairseach_calendar_events":       {"calendar"},
		"tairseach_reminders_create":      {"reminders"},
		"tairseach_location_get":          {"location"},
		"tairseach_photos_albums":         {"photos"},
		"tairseach_camera_snap":           {"camera"},
		"tairseach_files_read":            {"full_disk_access"},
		"tairseach_permissions_list":      nil,
		"tairseach_config_get":            nil,
		"tairseach_gmail_list_messages":   nil, // credentials, no permissions
		"tairseach_jira_issues_search":    nil,
		"tairseach_gcalendar_list_events": nil,
	}
	for name, perms := range want {
		tool, ok := r.Lookup(name)
		if !ok {
			t.Errorf("Lookup(%s) failed", name)
			continue
		}
		if !slices.Equal(tool.Permissions, perms) {
			t.Errorf("%s needs %q, want %q", name, tool.Permissions, perms)
		}
	}
	// Every permission a corpus tool needs is one the server knows.
	for _, tool := range r.Tools {
		for _, p := range tool.Permissions {
			if !KnownPermission(p) {
				t.Errorf("%s needs unknown permission %q", tool.Name, p)
			}
		}
	}

	// The automation tools are hidden in the corpus; exposed, they need what
	// their own requires say.
	data, err := os.ReadFile(filepath.Join(corpusDir, "core", "automation.json"))
	if err != nil {
		t.Fatal(err)
	}
	data = bytes.ReplaceAll(data, []byte(`"mcp_expose":false,`), nil)
	f, err := ParseFile("core/automation.json", data, Options{Prefix: "tairseach_"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, tool := range f.Tools {
		got[tool.ToolName] = tool.Permissions
	}
	wantAuto := map[string][]string{
		"automation.run":   {"automation"},
		"automation.click": {"accessibility"},
		"automation.type":  {"accessibility"},
	}
	if !reflect.DeepEqual(got, wantAuto) {
		t.Errorf("automation tools need %q, want %q", got, wantAuto)
	}
	if len(f.Problems) != 0 {
		t.Errorf("problems: %v", f.Problems)
	}
}

func TestPermissionNames(t *testing.T) {
	names := PermissionNames()
	if len(names) != 11 || names[0] != "contacts" || names[10] != "automation" {
		t.Errorf("PermissionNames() = %q", names)
	}
	names[0] = "changed"
	if !KnownPermission("contacts") || KnownPermission("changed") || KnownPermission("") {
		t.Error("PermissionNames returns the package's own slice")
	}
}
