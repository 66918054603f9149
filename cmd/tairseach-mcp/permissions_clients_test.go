package main

// The macOS permissions seen by real clients: the bridge against the demo
// backend, whose grants the test changes while both run by rewriting its
// --grants-file, as a user would change them in System Settings.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// writeGrants replaces the demo backend's grants file in one rename, so
// that the backend never reads half of it.
func writeGrants(t *testing.T, path, grants string) {
	t.Helper()
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte(grants), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// permissionsEnv is the examples served against a demo backend that
// starts with screen_recording denied; grants is its --grants-file.
func permissionsEnv(t *testing.T) (e env, grants string) {
	t.Helper()
	e = newEnv(t)
	grants = filepath.Join(filepath.Dir(e.socket), "grants")
	writeGrants(t, grants, "screen_recording=denied\n")
	startBackend(t, e.socket, "--grants-file", grants)
	return e, grants
}

// permissionsInterval is how often the bridges of these tests read the
// grants again (a minute by default).
const permissionsInterval = "200ms"

// tsSeen is what scripts/ts-permissions.mjs saw of a call.
type tsSeen struct {
	IsError bool
	Text    string
	Types   []string
	Thrown  string
}

// tsPermissions is the last line scripts/ts-permissions.mjs prints.
type tsPermissions struct {
	Instructions string
	Denied       struct {
		Tools                  []string
		ListedBeforeGrantsRead bool
		Call                   tsSeen
	}
	Granted struct {
		Tools []string
		Call  tsSeen
	}
	Undetermined struct {
		Tools             []string
		Declined          tsSeen
		DeclinedAgain     tsSeen
		CheckAfterDecline struct{ Status string }
		Accepted          tsSeen
	}
	AfterRequest struct {
		Tools []string
		Check struct{ Status string }
		Call  tsSeen
	}
	Questions []struct{ Message string }
}

// TestTypeScriptSDKPermissions follows a permission through its statuses
// with the TypeScript SDK client, over stdio and over HTTP with the bearer
// token: denied, the tool that needs it is not listed and a call by name
// says how to grant it; granted in the backend, the client is sent
// list_changed and the tool is listed and works; not determined, a call by
// name asks the user (elicitation) whether to ask macOS, once per
// permission: declined, the next call is not asked again; for another
// permission, on yes the bridge calls permissions.request, which the demo's
// user grants.
func TestTypeScriptSDKPermissions(t *testing.T) {
	nodeModules(t)
	const tool, other = "tairseach_screen_capture", "tairseach_contacts_list"
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			e, grants := permissionsEnv(t)
			flags := []string{"--permissions-interval", permissionsInterval}
			spec := map[string]any{"tool": tool, "permission": "screen_recording", "other": other, "otherPermission": "contacts"}
			if transport == "stdio" {
				spec["stdio"] = map[string]any{"command": bridgeBin, "args": e.args(append(flags, "--log-level", "warn")...)}
			} else {
				b := startHTTPDefault(t, e, flags...)
				spec["http"] = map[string]any{"url": b.url, "headers": map[string]string{"Authorization": "Bearer " + b.token}}
			}
			raw, _ := json.Marshal(spec)
			cmd, lines := startNode(t, "ts-permissions.mjs", string(raw))
			step := func(want string) {
				t.Helper()
				var m map[string]any
				l := readLine(t, lines, 60*time.Second)
				if json.Unmarshal([]byte(l), &m) != nil || m["step"] != want {
					t.Fatalf("ts-permissions: %.500q, want step %q", l, want)
				}
			}
			step("denied")
			writeGrants(t, grants, "screen_recording=granted\n")
			step("granted")
			writeGrants(t, grants, "screen_recording=not_determined\ncontacts=not_determined\n")
			var out tsPermissions
			l := readLine(t, lines, 60*time.Second)
			if err := json.Unmarshal([]byte(l), &out); err != nil {
				t.Fatalf("ts-permissions output %.500q: %v", l, err)
			}
			if err := cmd.Wait(); err != nil {
				t.Fatalf("ts-permissions: %v", err)
			}

			// Denied.
			d := out.Denied
			if slices.Contains(d.Tools, tool) || !slices.Contains(d.Tools, "tairseach_contacts_list") || !slices.Contains(d.Tools, "tairseach_permissions_check") {
				t.Errorf("tools listed with screen_recording denied: %v", d.Tools)
			}
			if d.ListedBeforeGrantsRead {
				t.Errorf("the first tools/list offered %s: it was answered before the grants were read", tool)
			}
			// initialize is answered at once, before the manifests and the
			// grants are read; the HTTP bridge has read them by the time
			// it is reached.
			if transport == "http" && !strings.Contains(out.Instructions, `not offered: "screen_recording" (denied): 1 tool.`) {
				t.Errorf("initialize's instructions do not say what is left out: %q", out.Instructions)
			}
			if c := d.Call; !c.IsError || !strings.Contains(c.Text, `needs the macOS permission "screen_recording", which is denied`) ||
				!strings.Contains(c.Text, "System Settings › Privacy & Security › Screen Recording") {
				t.Errorf("a call of %s by name while denied: %+v; want isError naming the permission, its status and the pane", tool, c)
			}

			// Granted.
			if g := out.Granted; !slices.Contains(g.Tools, tool) || g.Call.IsError || strings.Join(g.Call.Types, ",") != "text,image" {
				t.Errorf("after the grant: tools %v, call %+v; want %s listed and a picture", g.Tools, g.Call, tool)
			}

			// Not determined: declined, then accepted.
			u := out.Undetermined
			if slices.Contains(u.Tools, tool) || slices.Contains(u.Tools, other) {
				t.Errorf("tools listed with screen_recording and contacts not determined: %v", u.Tools)
			}
			if c := u.Declined; !c.IsError || !strings.Contains(c.Text, `declined by the user: they chose not to have Tairseach ask macOS for the permission "screen_recording"`) ||
				!strings.Contains(c.Text, "Tairseach app's Permissions view") || strings.Contains(c.Text, "permissions.request") {
				t.Errorf("a call declined at the question: %+v; want isError saying what the user can do, and no method to call", c)
			}
			if c := u.DeclinedAgain; !c.IsError || !strings.Contains(c.Text, "the user declined to have Tairseach ask macOS for it") || strings.Contains(c.Text, "permissions.request") {
				t.Errorf("a call after the decline: %+v; want isError saying the user declined, without asking again", c)
			}
			if u.CheckAfterDecline.Status != "not_determined" {
				t.Errorf("permissions.check after the user declined: %q; want not_determined (nothing asked of macOS)", u.CheckAfterDecline.Status)
			}
			if c := u.Accepted; !c.IsError || !strings.Contains(c.Text, `macOS is asking the user to grant "contacts"`) {
				t.Errorf("a call accepted at the question: %+v", c)
			}
			// One question per permission: declined, then accepted.
			if len(out.Questions) != 2 {
				t.Errorf("the client was asked %d questions, want 2: %+v", len(out.Questions), out.Questions)
			}
			for i, want := range [][2]string{{tool, `"screen_recording"`}, {other, `"contacts"`}} {
				if i < len(out.Questions) && (!strings.Contains(out.Questions[i].Message, want[0]) || !strings.Contains(out.Questions[i].Message, want[1])) {
					t.Errorf("question %q does not name the tool %s and the permission %s", out.Questions[i].Message, want[0], want[1])
				}
			}
			a := out.AfterRequest
			if a.Check.Status != "granted" {
				t.Errorf("permissions.check after permissions.request: %q; want granted (the demo's user says yes)", a.Check.Status)
			}
			if !slices.Contains(a.Tools, other) || a.Call.IsError {
				t.Errorf("after permissions.request: tools %v, call %+v", a.Tools, a.Call)
			}
		})
	}
}
