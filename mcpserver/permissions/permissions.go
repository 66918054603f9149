// Package permissions follows the macOS privacy permissions of the Tairseach
// app: which of them macOS has granted, whether a tool that needs some can
// run, and what to tell a user whose call was refused.
//
// The server reaches contacts, the screen, the camera and the rest only with
// the permission for each, and refuses a method whose permission is not
// granted with JSON-RPC error -32001. A Tracker keeps the statuses the
// server's permissions.list reports (Grants), so that the bridge can tell
// before a call whether it would be refused (Blocked, from a tool's
// manifest.Tool.Permissions); FromError reads the refusal itself. What is
// not known is never held against a tool: a permission whose status is
// unknown, or not reported, blocks nothing.
//
// The package knows nothing of MCP; the bridge decides what a blocked tool
// becomes, and reads the permissions through its own path to the server.
package permissions

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// The backend methods of the macOS permissions, where a manifest maps them:
// the grants are read by MethodList, and macOS is asked for one by
// MethodRequest.
const (
	MethodList    = "permissions.list"
	MethodRequest = "permissions.request"
)

// Status is a permission's status as the server reports it.
type Status string

// The statuses the server reports.
const (
	Granted       Status = "granted"
	Denied        Status = "denied"
	NotDetermined Status = "not_determined"
	Restricted    Status = "restricted"
	Unknown       Status = "unknown"
)

// ParseStatus returns the Status the server means by s. The server writes
// snake_case ("not_determined"), except that the -32001 errors of tools it
// routes by manifest spell the status as Rust's Debug does
// ("NotDetermined"); both are read. Anything else is Unknown.
func ParseStatus(s string) Status {
	switch s {
	case "granted", "Granted":
		return Granted
	case "denied", "Denied":
		return Denied
	case "not_determined", "NotDetermined":
		return NotDetermined
	case "restricted", "Restricted":
		return Restricted
	}
	return Unknown
}

// Blocks reports whether a method needing a permission of status s would be
// refused: denied, restricted and not_determined block; granted does not,
// and unknown is given the benefit of the doubt.
func (s Status) Blocks() bool {
	return s == Denied || s == Restricted || s == NotDetermined
}

// Grants are the statuses of the permissions as last reported. The zero
// value knows nothing. A Grants is not modified once made and may be shared.
type Grants struct {
	m map[string]Status
}

// NewGrants returns Grants holding a copy of statuses.
func NewGrants(statuses map[string]Status) Grants {
	if len(statuses) == 0 {
		return Grants{}
	}
	return Grants{m: maps.Clone(statuses)}
}

// Known reports whether g holds any status.
func (g Grants) Known() bool { return len(g.m) > 0 }

// Status returns the status of permission p; Unknown when it was not reported.
func (g Grants) Status(p string) Status {
	if s, ok := g.m[p]; ok {
		return s
	}
	return Unknown
}

// Map returns a copy of the statuses, by permission.
func (g Grants) Map() map[string]Status { return maps.Clone(g.m) }

// Equal reports whether g and o hold the same statuses.
func (g Grants) Equal(o Grants) bool { return maps.Equal(g.m, o.m) }

// Blocked reports the first of perms whose status blocks (see
// Status.Blocks), and that status. Permissions not reported do not block.
func (g Grants) Blocked(perms []string) (perm string, status Status, blocked bool) {
	for _, p := range perms {
		if s := g.Status(p); s.Blocks() {
			return p, s, true
		}
	}
	return "", "", false
}

// String lists the statuses in permission order, e.g. "camera=denied contacts=granted".
func (g Grants) String() string {
	if !g.Known() {
		return "(unknown)"
	}
	var b strings.Builder
	for i, p := range slices.Sorted(maps.Keys(g.m)) {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(p + "=" + string(g.m[p]))
	}
	return b.String()
}

// listJSON is the result of permissions.list:
// {"permissions":[{"permission":"contacts","status":"granted","granted":true},…],"total":11}.
type listJSON struct {
	Permissions *[]entryJSON `json:"permissions"`
}

type entryJSON struct {
	Permission string `json:"permission"`
	Status     string `json:"status"`
	Granted    *bool  `json:"granted"`
}

// Parse reads the result of permissions.list into each permission's status.
// An entry without a permission name is skipped; one without a status but
// with "granted": true is Granted, else Unknown. The error says what is
// wrong with a result of another shape.
func Parse(list json.RawMessage) (map[string]Status, error) {
	var l listJSON
	if err := json.Unmarshal(list, &l); err != nil {
		return nil, fmt.Errorf("reading permissions.list result: %w", err)
	}
	if l.Permissions == nil {
		return nil, errors.New(`reading permissions.list result: no "permissions" array`)
	}
	m := make(map[string]Status, len(*l.Permissions))
	for _, e := range *l.Permissions {
		if e.Permission == "" {
			continue
		}
		s := ParseStatus(e.Status)
		if e.Status == "" && e.Granted != nil && *e.Granted {
			s = Granted
		}
		m[e.Permission] = s
	}
	return m, nil
}
