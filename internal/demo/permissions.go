package demo

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/rs/zerolog"

	"github.com/geilt/tairseach-mcp/internal/jsonenc"
)

// The macOS privacy permissions, as the real server reports and enforces
// them (proxy/handlers/permissions.rs, proxy/handlers/mod.rs,
// proxy/protocol.rs). The demo grants every one unless told otherwise.

// permissionNames is the server's ALL_PERMISSIONS, in its order.
var permissionNames = []string{
	"contacts", "calendar", "reminders", "location", "photos", "camera",
	"microphone", "screen_recording", "accessibility", "full_disk_access", "automation",
}

// Permission statuses, as the server spells them.
const (
	Granted       = "granted"
	Denied        = "denied"
	NotDetermined = "not_determined"
	Restricted    = "restricted"
	Unknown       = "unknown"
)

var statuses = []string{Granted, Denied, NotDetermined, Restricted, Unknown}

// methodPermission is the server's table of the permission each method
// needs (required_permission in proxy/handlers/mod.rs). The server checks it
// before it looks for the method, and so does the demo: a method listed here
// that the demo does not serve answers -32001 when its permission is not
// granted, and -32601 when it is.
var methodPermission = func() map[string]string {
	table := map[string]string{}
	for perm, methods := range map[string][]string{
		"contacts":         {"contacts.list", "contacts.search", "contacts.get", "contacts.create", "contacts.update", "contacts.delete"},
		"calendar":         {"calendar.list", "calendar.events", "calendar.getEvent", "calendar.createEvent", "calendar.updateEvent", "calendar.deleteEvent"},
		"reminders":        {"reminders.lists", "reminders.list", "reminders.create", "reminders.complete", "reminders.delete"},
		"location":         {"location.get", "location.watch"},
		"photos":           {"photos.albums", "photos.list", "photos.get", "photos.search"},
		"screen_recording": {"screen.capture", "screen.windows"},
		"automation":       {"automation.run"},
		"accessibility":    {"automation.click", "automation.type"},
		"full_disk_access": {"files.read", "files.write", "files.list"},
		"camera":           {"camera.list", "camera.snap", "camera.capture", "camera.start", "camera.stop"},
		"microphone":       {"microphone.record", "microphone.start", "microphone.stop"},
	} {
		for _, m := range methods {
			table[m] = perm
		}
	}
	return table
}()

// MethodPermission returns the permission the real server checks before it
// runs method, or "" when it checks none.
func MethodPermission(method string) string { return methodPermission[method] }

// ParseGrants parses permission statuses written as
// "contacts=granted,screen_recording=denied": entries separated by commas or
// new lines, each a permission name (or "*" for every permission not named)
// and one of granted, denied, not_determined, restricted, unknown. Blank
// entries and text after a '#' on a line are ignored.
func ParseGrants(s string) (map[string]string, error) {
	grants := map[string]string{}
	for line := range strings.Lines(s) {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		for entry := range strings.SplitSeq(line, ",") {
			entry = strings.TrimSpace(entry)
			if entry == "" {
				continue
			}
			name, status, ok := strings.Cut(entry, "=")
			name, status = strings.TrimSpace(name), strings.TrimSpace(status)
			switch {
			case !ok:
				return nil, fmt.Errorf("%q: want permission=status", entry)
			case name != "*" && !slices.Contains(permissionNames, name):
				return nil, fmt.Errorf("%q: unknown permission %q (want one of %s, or *)", entry, name, strings.Join(permissionNames, ", "))
			case !slices.Contains(statuses, status):
				return nil, fmt.Errorf("%q: unknown status %q (want one of %s)", entry, status, strings.Join(statuses, ", "))
			}
			grants[name] = status
		}
	}
	return grants, nil
}

// ReadGrantsFile reads a grants file as ParseGrants reads a string.
func ReadGrantsFile(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	g, err := ParseGrants(string(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return g, nil
}

// grantTable holds the status of every permission. The connections'
// goroutines share it.
type grantTable struct {
	log  zerolog.Logger
	base map[string]string // Options.Grants
	file string            // Options.GrantsFile; "" for none

	mu       sync.Mutex        // guards the fields below
	status   map[string]string // permission -> status; every permission is present
	read     fs.FileInfo       // the grants file as last read; nil before, or while it is missing
	requests map[string]int    // permissions.request calls per permission
	lists    int               // permissions.list calls
}

func newGrantTable(log zerolog.Logger, base map[string]string, file string) *grantTable {
	g := &grantTable{log: log, base: base, file: file, requests: map[string]int{}}
	g.status = g.compose(nil)
	return g
}

// compose returns every permission's status: granted, overridden by "*"
// and then the named entries of base, then of file.
func (g *grantTable) compose(file map[string]string) map[string]string {
	st := make(map[string]string, len(permissionNames))
	for _, layer := range []map[string]string{{"*": Granted}, g.base, file} {
		if s, ok := layer["*"]; ok {
			for _, p := range permissionNames {
				st[p] = s
			}
		}
		for p, s := range layer {
			if p != "*" {
				st[p] = s
			}
		}
	}
	return st
}

// refresh re-reads the grants file if it changed since it was last read
// (another file in its place, another size or modification time). A file
// that cannot be parsed leaves the statuses as they are; a missing one
// counts as empty. Changes made since (setPermission, a granted request)
// last until the file changes again. g.mu must be held.
func (g *grantTable) refresh() {
	if g.file == "" {
		return
	}
	fi, err := os.Stat(g.file)
	if errors.Is(err, fs.ErrNotExist) {
		if g.read != nil {
			g.read = nil
			g.status = g.compose(nil)
			g.log.Info().Str("file", g.file).Msg("grants file removed; statuses from --grants")
		}
		return
	}
	if err != nil {
		g.log.Warn().Err(err).Msg("checking grants file")
		return
	}
	if g.read != nil && os.SameFile(g.read, fi) && fi.ModTime().Equal(g.read.ModTime()) && fi.Size() == g.read.Size() {
		return
	}
	file, err := ReadGrantsFile(g.file)
	g.read = fi // a broken file is not read again until it changes
	if err != nil {
		g.log.Warn().Err(err).Msg("grants file not applied")
		return
	}
	g.status = g.compose(file)
	g.log.Info().Str("file", g.file).Msg("grants file applied")
}

// get returns the status of permission p, "" for an unknown name.
func (g *grantTable) get(p string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.refresh()
	return g.status[p]
}

// all returns a copy of every status.
func (g *grantTable) all() map[string]string {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.refresh()
	return maps.Clone(g.status)
}

// set sets the status of permission p, which must be one of the server's,
// to status, which must be one of statuses.
func (g *grantTable) set(p, status string) error {
	if !slices.Contains(permissionNames, p) {
		return fmt.Errorf("unknown permission %q", p)
	}
	if !slices.Contains(statuses, status) {
		return fmt.Errorf("unknown status %q", status)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.refresh()
	g.status[p] = status
	return nil
}

// request records a permissions.request for p. The demo's user answers
// the prompt at once and says yes: a not_determined permission becomes
// granted. macOS does not ask again about a permission already decided, so
// the others stay as they are.
func (g *grantTable) request(p string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.refresh()
	g.requests[p]++
	if g.status[p] == NotDetermined {
		g.status[p] = Granted
	}
}

// SetPermission sets the status of a permission until it is set again or the
// grants file changes.
func (s *Server) SetPermission(permission, status string) error {
	return s.grants.set(permission, status)
}

// PermissionRequests returns how many permissions.request calls for
// permission the server has answered.
func (s *Server) PermissionRequests(permission string) int {
	s.grants.mu.Lock()
	defer s.grants.mu.Unlock()
	return s.grants.requests[permission]
}

// PermissionLists returns how many permissions.list calls the server has
// answered.
func (s *Server) PermissionLists() int {
	s.grants.mu.Lock()
	defer s.grants.mu.Unlock()
	return s.grants.lists
}

// checkPermission answers the error the real server gives when method needs
// a permission that is not granted, or nil.
func (g *grantTable) checkPermission(method string) *rpcError {
	p, ok := methodPermission[method]
	if !ok {
		return nil
	}
	if st := g.get(p); st != Granted {
		return permissionDenied(p, st)
	}
	return nil
}

// permissionDenied is the real server's JsonRpcResponse::permission_denied
// (proxy/protocol.rs).
func permissionDenied(p, status string) *rpcError {
	data, _ := jsonenc.Marshal(permissionErrorData{Permission: p, Status: status, Remediation: remediation(p, status)})
	return &rpcError{Code: codePermissionDenied, Message: "Permission not granted", Data: data}
}

type permissionErrorData struct {
	Permission  string `json:"permission"`
	Status      string `json:"status"`
	Remediation string `json:"remediation"`
}

// panes names each permission's pane under System Settings > Privacy & Security.
var panes = map[string]string{
	"contacts": "Contacts", "calendar": "Calendars", "reminders": "Reminders",
	"location": "Location Services", "photos": "Photos", "camera": "Camera",
	"microphone": "Microphone", "screen_recording": "Screen Recording",
	"accessibility": "Accessibility", "full_disk_access": "Full Disk Access", "automation": "Automation",
}

// remediation is the server's text, word for word.
func remediation(p, status string) string {
	switch status {
	case NotDetermined:
		return "Permission can be requested. Call permissions.request with permission='" + p + "'"
	case Denied:
		pane, ok := panes[p]
		if !ok {
			pane = "Privacy & Security"
		}
		return "User must grant permission manually in System Settings > Privacy & Security > " + pane
	case Restricted:
		return "Permission is restricted by system policy and cannot be granted"
	}
	return "Permission status unknown. Check System Settings > Privacy & Security"
}

// permissionStatus is one permission as permissions.check and
// permissions.list report it.
type permissionStatus struct {
	Permission string `json:"permission"`
	Status     string `json:"status"`
	Granted    bool   `json:"granted"`
}

// permissionParam reads params.permission as the server does: a missing or
// non-string value is "Missing 'permission' parameter".
func permissionParam(params []byte) (string, *rpcError) {
	var p struct {
		Permission any `json:"permission"`
	}
	if e := decodeParams(params, &p); e != nil {
		return "", e
	}
	name, ok := p.Permission.(string)
	if !ok {
		return "", invalidParams("Missing 'permission' parameter")
	}
	return name, nil
}

// validPermissions is the server's {:?} of ALL_PERMISSIONS, as its
// permissions.check error shows it.
var validPermissions = `["` + strings.Join(permissionNames, `", "`) + `"]`

func (g *grantTable) permissionsCheck(_ context.Context, params []byte) ([]byte, *rpcError) {
	p, e := permissionParam(params)
	if e != nil {
		return nil, e
	}
	if !slices.Contains(permissionNames, p) {
		return nil, invalidParams(fmt.Sprintf("Unknown permission: %s. Valid: %s", p, validPermissions))
	}
	st := g.get(p)
	return marshalResult(permissionStatus{Permission: p, Status: st, Granted: st == Granted})
}

func (g *grantTable) permissionsList(context.Context, []byte) ([]byte, *rpcError) {
	g.mu.Lock()
	g.lists++
	g.mu.Unlock()
	all := g.all()
	list := make([]permissionStatus, len(permissionNames))
	for i, p := range permissionNames {
		list[i] = permissionStatus{Permission: p, Status: all[p], Granted: all[p] == Granted}
	}
	return marshalResult(struct {
		Permissions []permissionStatus `json:"permissions"`
		Total       int                `json:"total"`
	}{list, len(list)})
}

func (g *grantTable) permissionsRequest(_ context.Context, params []byte) ([]byte, *rpcError) {
	p, e := permissionParam(params)
	if e != nil {
		return nil, e
	}
	if !slices.Contains(permissionNames, p) {
		return nil, invalidParams("Unknown permission: " + p)
	}
	g.request(p)
	return marshalResult(struct {
		Permission string `json:"permission"`
		Action     string `json:"action"`
		Message    string `json:"message"`
	}{p, "request_triggered", "Permission dialog triggered. Check for system prompt or Settings opened."})
}

// demoSetPermission is the demo's own: {"permission": P, "status": S} sets
// P's status and answers as permissions.check does.
func (g *grantTable) demoSetPermission(ctx context.Context, params []byte) ([]byte, *rpcError) {
	p, e := permissionParam(params)
	if e != nil {
		return nil, e
	}
	var st struct {
		Status string `json:"status"`
	}
	if e := decodeParams(params, &st); e != nil {
		return nil, e
	}
	if err := g.set(p, st.Status); err != nil {
		return nil, invalidParams(err.Error() + " (want a permission of permissions.list and a status: " + strings.Join(statuses, ", ") + ")")
	}
	return g.permissionsCheck(ctx, params)
}
