package main

import (
	"context"
	"fmt"
	"time"

	"github.com/geilt/tairseach-mcp/internal/quote"
	"github.com/geilt/tairseach-mcp/manifest"
	"github.com/geilt/tairseach-mcp/mcpserver/permissions"
)

// checkPermissions reads the macOS permissions the Tairseach app holds and
// lists those the served tools need and do not have, with how to grant
// each: the tools that need them are not offered (--hide-ungranted).
func (d *doctor) checkPermissions(ctx context.Context, reg *manifest.Registry) {
	if d.srv == nil {
		return
	}
	mapped := false
	for _, t := range reg.Tools {
		mapped = mapped || t.Method == permissions.MethodList
	}
	if !mapped {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := d.srv.ReadPermissions(ctx); err != nil {
		d.report(statusWarn, "macOS permissions: permissions.list failed: "+err.Error(), "no tool is left out for a permission until it answers")
		return
	}
	missing := 0
	for _, p := range d.srv.Permissions() {
		if !p.Status.Blocks() {
			continue
		}
		missing++
		left := "left out"
		if !d.o.hideUngranted {
			left = "offered anyway (--hide-ungranted=false); their calls fail"
		}
		d.report(statusWarn, fmt.Sprintf("macOS permission %s is %s: %s %s", quote.Line(p.Name, quote.Name), p.Status, plural(len(p.Tools), "tool"), left), p.Remediation)
	}
	if missing == 0 {
		d.report(statusOK, "macOS permissions: every tool served has the permission it needs", "")
	}
}
