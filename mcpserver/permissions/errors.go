package permissions

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/geilt/tairseach-mcp/internal/quote"
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

// Error says which permission is missing and what to do about it, the
// server's words quoted on one line (internal/quote).
func (e *PermissionError) Error() string {
	p := "a macOS permission"
	if e.Permission != "" {
		p = quote.Line(e.Permission, quote.Name)
	}
	if e.Remediation == "" {
		return fmt.Sprintf("%s is %s", p, e.Status)
	}
	return fmt.Sprintf("%s is %s: %s", p, e.Status, quote.Line(e.Remediation, quote.Text))
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
	// ask says how the user has Tairseach get the permission before macOS
	// has decided; {pane} stands for pane. It names only what the user can
	// do, never a method the model could call around them.
	ask string
}

const (
	switchOn = "turn Tairseach on"
	request  = "open the Tairseach app's Permissions view and click Request next to {pane}"
	prompt   = request + ", then allow it when macOS asks"
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
		"open the Tairseach app's Permissions view and click Request next to Screen Recording: macOS then lists Tairseach under System Settings › Privacy & Security › Screen Recording, where it must be turned on; then quit and reopen the Tairseach app"},
	"accessibility": {"Accessibility", switchOn,
		request + ": macOS then lists Tairseach under System Settings › Privacy & Security › Accessibility, where it must be turned on"},
	"full_disk_access": {"Full Disk Access", "turn Tairseach on (add it with + if it is not listed), then quit and reopen the Tairseach app",
		"macOS never asks for Full Disk Access: open System Settings › Privacy & Security › Full Disk Access, add Tairseach with + and turn it on, then quit and reopen the Tairseach app"},
	"automation": {"Automation", "under Tairseach, turn on the app it controls (System Events for UI automation)",
		request + ", then allow Tairseach to control the app when macOS asks"},
}

// Remediation says what a user can do about permission p having status s,
// for when the server gave no text: the pane of System Settings ›
// Privacy & Security to use and how, or the Tairseach app's Request for a
// permission macOS has not decided. It is "" for Granted. A permission it
// does not know is named quoted, on one line (internal/quote).
func Remediation(p string, s Status) string {
	k, ok := known[p]
	what := "the permission"
	if p != "" {
		what = "the " + quote.Line(p, quote.Name) + " permission"
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
			return strings.ReplaceAll(k.ask, "{pane}", k.pane)
		}
		return "give Tairseach " + what + " from the Tairseach app's Permissions view (Request), or in " + settings
	case Restricted:
		return "macOS restricts " + what + " on this Mac (a configuration profile or Screen Time): it cannot be given in System Settings; ask whoever manages the Mac"
	}
	return "Tairseach cannot tell whether macOS gives it " + what + "; check " + settings
}
