package sdklog

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

// TestSlogNotificationsToGoneClientsQuiet: the go-sdk's warning that a
// notification could not be sent (the client closed stdin meanwhile) is
// debug, not on stderr at the default level; its other warnings stay.
func TestSlogNotificationsToGoneClientsQuiet(t *testing.T) {
	var buf strings.Builder
	log := slog.New(New(zerolog.New(&buf).Level(zerolog.WarnLevel)))
	log.Warn("calling notifications/tools/list_changed: client is closing: EOF")
	if buf.Len() != 0 {
		t.Errorf("logged at warn: %s", buf.String())
	}
	log.Warn("something else")
	if !strings.Contains(buf.String(), `"level":"warn"`) {
		t.Errorf("other warnings are lost: %q", buf.String())
	}
}
