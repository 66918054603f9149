package main

// How a flag's value is read the same way by every group of options: a
// path's leading ~, an on/off switch.

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/geilt/tairseach-mcp/internal/quote"
)

// expandHome replaces a leading ~ of p with home.
func expandHome(p, home string) string {
	if p == "~" {
		return home
	}
	if strings.HasPrefix(p, "~/") {
		return filepath.Join(home, p[2:])
	}
	return p
}

// onOff reads the value of an on/off flag, which also takes true and
// false, as "on" or "off".
func onOff(flag, v string) (string, error) {
	switch v {
	case "on", "true":
		return "on", nil
	case "off", "false":
		return "off", nil
	}
	return "", usageError{fmt.Errorf("--%s %s: want on or off", flag, quote.Line(v, quote.Text))}
}
