package permissions_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/geilt/tairseach-mcp/internal/demo"
	"github.com/geilt/tairseach-mcp/manifest"
	"github.com/geilt/tairseach-mcp/mcpserver/permissions"
	"github.com/geilt/tairseach-mcp/socketrpc"
)

// startDemo serves the demo backend on a Unix socket in a short temp dir;
// stop stops it and waits for it.
func startDemo(t *testing.T, opts demo.Options) (path string, srv *demo.Server, stop func()) {
	t.Helper()
	dir, err := os.MkdirTemp("", "perm")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path = filepath.Join(dir, "s.sock")
	ln, err := demo.Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	srv = demo.New(zerolog.Nop(), opts)
	go func() { done <- srv.Serve(ctx, ln) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}
	t.Cleanup(stop)
	return path, srv, stop
}

// TestWithDemo follows the permissions of the demo backend, which answers
// permissions.list and refuses methods as the real server does.
func TestWithDemo(t *testing.T) {
	reg, err := manifest.Load(filepath.Join("..", "..", "manifest", "testdata", "tairseach-manifests"), manifest.Options{Prefix: "tairseach_"})
	if err != nil {
		t.Fatal(err)
	}
	capture, ok := reg.Lookup("tairseach_screen_capture")
	if !ok {
		t.Fatal("no tairseach_screen_capture in the corpus")
	}
	contacts, _ := reg.Lookup("tairseach_contacts_list")
	camera, _ := reg.Lookup("tairseach_camera_snap")

	path, srv, stop := startDemo(t, demo.Options{
		CaptureDir: t.TempDir(),
		Grants:     map[string]string{"screen_recording": demo.Denied, "camera": demo.NotDetermined},
	})
	client := socketrpc.New(path, socketrpc.Options{Logger: zerolog.Nop()})
	defer client.Close()
	read := func(ctx context.Context) (json.RawMessage, error) {
		return client.Call(ctx, "permissions.list", nil)
	}
	rec := make(recorder, 10)
	tr := startTracker(t, permissions.Options{Read: read, OnChange: rec.onChange, Interval: time.Hour})

	c := rec.next(t)
	if c.old.Known() || len(c.now.Map()) != 11 || c.now.Status("contacts") != permissions.Granted {
		t.Fatalf("first change %v -> %v", c.old, c.now)
	}
	if p, s, blocked := tr.Blocked(capture.Permissions); !blocked || p != "screen_recording" || s != permissions.Denied {
		t.Errorf("screen.capture: Blocked = %q, %q, %v", p, s, blocked)
	}
	if p, s, blocked := tr.Blocked(camera.Permissions); !blocked || p != "camera" || s != permissions.NotDetermined {
		t.Errorf("camera.snap: Blocked = %q, %q, %v", p, s, blocked)
	}
	if _, _, blocked := tr.Blocked(contacts.Permissions); blocked {
		t.Error("contacts.list blocked")
	}

	// The call itself is refused, and the refusal says why.
	_, err = client.Call(context.Background(), capture.Method, nil)
	pe, ok := permissions.FromError(err)
	if !ok {
		t.Fatalf("screen.capture: %v, want a permission error", err)
	}
	if *pe != (permissions.PermissionError{Permission: "screen_recording", Status: permissions.Denied,
		Remediation: "User must grant permission manually in System Settings > Privacy & Security > Screen Recording"}) {
		t.Errorf("screen.capture: %+v", *pe)
	}

	// A request reaches the app, whose user says yes.
	if _, err := client.Call(context.Background(), "permissions.request", json.RawMessage(`{"permission":"camera"}`)); err != nil {
		t.Fatal(err)
	}
	if n := srv.PermissionRequests("camera"); n != 1 {
		t.Errorf("the demo saw %d requests for camera", n)
	}
	tr.Refresh()
	c = rec.next(t)
	if c.old.Status("camera") != permissions.NotDetermined || c.now.Status("camera") != permissions.Granted {
		t.Errorf("after the request: camera %s -> %s", c.old.Status("camera"), c.now.Status("camera"))
	}

	// Granted in System Settings while the bridge runs.
	if err := srv.SetPermission("screen_recording", demo.Granted); err != nil {
		t.Fatal(err)
	}
	tr.Refresh()
	if c = rec.next(t); c.now.Status("screen_recording") != permissions.Granted {
		t.Errorf("after the grant: %v", c.now)
	}
	if _, _, blocked := tr.Blocked(capture.Permissions); blocked {
		t.Error("screen.capture still blocked")
	}
	if _, err := client.Call(context.Background(), capture.Method, nil); err != nil {
		t.Errorf("screen.capture after the grant: %v", err)
	}

	// The app quits: what was read last is kept, with its age and why it
	// is not newer.
	if err := srv.SetPermission("screen_recording", demo.Denied); err != nil {
		t.Fatal(err)
	}
	tr.Refresh()
	rec.next(t)
	stop()
	for tr.State().Err == nil {
		tr.Refresh()
		time.Sleep(time.Millisecond)
	}
	if st := tr.State(); !errors.Is(st.Err, socketrpc.ErrUnavailable) || st.Grants.Status("screen_recording") != permissions.Denied {
		t.Errorf("after the app quit: %v (%v)", st.Grants, st.Err)
	}
	if _, _, blocked := tr.Blocked(capture.Permissions); !blocked {
		t.Error("screen.capture offered again once the app quit")
	}
	if _, err := read(context.Background()); !errors.Is(err, socketrpc.ErrUnavailable) {
		t.Errorf("read after stop: %v", err)
	}
}
