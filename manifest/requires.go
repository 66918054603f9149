package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/geilt/tairseach-mcp/internal/jsonscan"
	"github.com/geilt/tairseach-mcp/internal/quote"
)

// permissionNames are the macOS privacy permissions the Tairseach server
// knows, in the order its permissions.list reports them.
var permissionNames = []string{
	"contacts", "calendar", "reminders", "location", "photos", "camera",
	"microphone", "screen_recording", "accessibility", "full_disk_access", "automation",
}

// PermissionNames returns the names of the macOS privacy permissions the
// Tairseach server knows (contacts, screen_recording, …), in the order its
// permissions.list reports them.
func PermissionNames() []string { return slices.Clone(permissionNames) }

// KnownPermission reports whether name is one of PermissionNames.
func KnownPermission(name string) bool { return slices.Contains(permissionNames, name) }

// requiresJSON is a "requires" block, of a manifest or of one tool. Its
// members are read leniently (see requiredPermissions): the real server
// rejects a manifest whose "requires" has the wrong shape, but this package
// reports it and loads the tools anyway.
type requiresJSON struct {
	Permissions json.RawMessage `json:"permissions"`
}

// permissionJSON is one entry of requires.permissions, {"name": "contacts"}.
// The real format also has "optional" and "reason"; the server checks an
// optional permission like any other, so they do not change what a tool needs.
type permissionJSON struct {
	Name string `json:"name"`
}

// requiredPermissions returns the permission names of a "requires" value,
// in the order written, with a warning for each part it could not read and
// for each name the server does not know.
func requiredPermissions(raw json.RawMessage) (names []string, warnings []string) {
	const where = "requires.permissions"
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	var req requiresJSON
	if raw[0] != '{' || json.Unmarshal(raw, &req) != nil {
		return nil, []string{fmt.Sprintf("requires is ignored: it must be an object, got %s", jsonscan.Kind(raw))}
	}
	perms := bytes.TrimSpace(req.Permissions)
	if len(perms) == 0 || bytes.Equal(perms, []byte("null")) {
		return nil, nil
	}
	var entries []json.RawMessage
	if perms[0] != '[' || json.Unmarshal(perms, &entries) != nil {
		return nil, []string{fmt.Sprintf("%s is ignored: it must be an array of {\"name\": …}, got %s", where, jsonscan.Kind(perms))}
	}
	for i, e := range entries {
		var name string
		switch e = bytes.TrimSpace(e); {
		case len(e) > 0 && e[0] == '{':
			var p permissionJSON
			if json.Unmarshal(e, &p) != nil || p.Name == "" {
				warnings = append(warnings, fmt.Sprintf(`%s[%d] is ignored: it has no "name" string`, where, i))
				continue
			}
			name = p.Name
		case len(e) > 0 && e[0] == '"':
			if json.Unmarshal(e, &name) != nil || name == "" {
				warnings = append(warnings, fmt.Sprintf("%s[%d] is ignored: empty name", where, i))
				continue
			}
			warnings = append(warnings, fmt.Sprintf(`%s[%d] is the string %s; the Tairseach server reads only {"name": %s}`, where, i, quote.Line(name, quote.Name), quote.Line(name, quote.Name)))
		default:
			warnings = append(warnings, fmt.Sprintf(`%s[%d] is ignored: it must be an object {"name": …}, got %s`, where, i, jsonscan.Kind(e)))
			continue
		}
		if !KnownPermission(name) {
			warnings = append(warnings, fmt.Sprintf("%s[%d]: unknown permission %s (known: %s)", where, i, quote.Line(clip(name, 40), quote.Text), strings.Join(permissionNames, ", ")))
		}
		names = append(names, name)
	}
	return names, warnings
}

// mergePermissions returns the sorted union of a and b without
// duplicates, or nil when both are empty.
func mergePermissions(a, b []string) []string {
	if len(a)+len(b) == 0 {
		return nil
	}
	out := make([]string, 0, len(a)+len(b))
	out = append(append(out, a...), b...)
	slices.Sort(out)
	return slices.Clip(slices.Compact(out))
}
