package permissions

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/geilt/tairseach-mcp/socketrpc"
)

// CodeDenied is the JSON-RPC error code of a method refused for want of a
// permission.
const CodeDenied = -32001

// PermissionError is the server's refusal of a method whose permission is
// not granted: the data of its -32001 error.
type PermissionError struct {
	// Permission is the permission the method needs; "" when the server did
	// not say.
	Permission string
	Status     Status
	// Remediation says what the user can do: the server's text, or
	// Remediation's when the server gave none or gave one meant for another
	// status.
	Remediation string
}

// Error says which permission is missing and what to do about it.
func (e *PermissionError) Error() string {
	p := e.Permission
	if p == "" {
		p = "a macOS permission"
	}
	if e.Remediation == "" {
		return fmt.Sprintf("%s is %s", p, e.Status)
	}
	return fmt.Sprintf("%s is %s: %s", p, e.Status, e.Remediation)
}

// dataJSON is the data of a -32001 error, {permission, status, remediation}.
type dataJSON struct {
	Permission  string `json:"permission"`
	Status      string `json:"status"`
	Remediation string `json:"remediation"`
}

// FromError returns the PermissionError err carries: a *socketrpc.Error
// with code CodeDenied, anywhere in err's chain. ok is false for any other
// error. Data that cannot be read gives a PermissionError with the parts
// that could, and Unknown for a status missing.
func FromError(err error) (pe *PermissionError, ok bool) {
	var rpcErr *socketrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != CodeDenied {
		return nil, false
	}
	return ParseData(rpcErr.Data), true
}

// ParseData reads the data of a -32001 error. The server's own remediation
// is kept unless it is missing, or the status is spelt as Rust's Debug does
// ("NotDetermined"): the server then picks its text for an unknown status
// whatever the status is, and Remediation's is given instead.
func ParseData(data json.RawMessage) *PermissionError {
	var d dataJSON
	_ = json.Unmarshal(data, &d) // what could not be read stays empty
	pe := &PermissionError{Permission: d.Permission, Status: ParseStatus(d.Status), Remediation: d.Remediation}
	if pe.Remediation == "" || d.Status != string(pe.Status) {
		pe.Remediation = Remediation(pe.Permission, pe.Status)
	}
	return pe
}

// permission is what Remediation knows of one permission.
type permission struct {
	// pane is the pane's name under System Settings › Privacy & Security.
	pane string
	// grant says how to turn it on there, after "open System Settings ›
	// Privacy & Security › pane and".
	grant string
	// ask says how Tairseach gets the permission before macOS has decided;
	// {perm} stands for the permission's name.
	ask string
}

const (
	switchOn = "turn Tairseach on"
	prompt   = "call permissions.request for {perm}, and answer the macOS prompt the Tairseach app shows"
)

var known = map[string]permission{
	"contacts":   {"Contacts", switchOn, prompt},
	"calendar":   {"Calendars", "allow Tairseach full access", prompt},
	"reminders":  {"Reminders", switchOn, prompt},
	"location":   {"Location Services", "turn Location Services on, and Tairseach below it", prompt},
	"photos":     {"Photos", switchOn, prompt},
	"camera":     {"Camera", switchOn, prompt},
	"microphone": {"Microphone", switchOn, prompt},
	"screen_recording": {"Screen Recording (Screen & System Audio Recording on macOS 15 and later)",
		"turn Tairseach on, then quit and reopen the Tairseach app",
		"call permissions.request for {perm}: macOS then lists Tairseach under Privacy & Security › Screen Recording, where it must be turned on; then quit and reopen the Tairseach app"},
	"accessibility": {"Accessibility", switchOn,
		"call permissions.request for {perm}: macOS then lists Tairseach under Privacy & Security › Accessibility, where it must be turned on"},
	"full_disk_access": {"Full Disk Access", "turn Tairseach on (add it with + if it is not listed), then quit and reopen the Tairseach app",
		"macOS never asks for Full Disk Access: open System Settings › Privacy & Security › Full Disk Access, add Tairseach with + and turn it on, then quit and reopen the Tairseach app"},
	"automation": {"Automation", "under Tairseach, turn on the app it controls (System Events for UI automation)",
		"call permissions.request for {perm}, or run the automation once, and allow Tairseach to control the app when macOS asks"},
}

// Remediation says what a user can do about permission p having status s,
// for when the server gave no text: the pane of System Settings ›
// Privacy & Security to use and how. It is "" for Granted.
func Remediation(p string, s Status) string {
	k, ok := known[p]
	what := "the permission"
	if p != "" {
		what = "the " + p + " permission"
	}
	settings := "System Settings › Privacy & Security"
	if ok {
		settings += " › " + k.pane
	}
	switch s {
	case Granted:
		return ""
	case Denied:
		if !ok {
			return "open " + settings + " and give Tairseach " + what
		}
		return "open " + settings + " and " + k.grant
	case NotDetermined:
		if ok {
			return strings.ReplaceAll(k.ask, "{perm}", p)
		}
		if p == "" {
			return "give Tairseach the permission in " + settings
		}
		return "call permissions.request for " + p + ", or give Tairseach " + what + " in " + settings
	case Restricted:
		return "macOS restricts " + what + " on this Mac (a configuration profile or Screen Time): it cannot be given in System Settings; ask whoever manages the Mac"
	}
	return "Tairseach cannot tell whether macOS gives it " + what + "; check " + settings
}
