package observe

import (
	"context"
	"encoding/json"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Observer records calls in the audit log and the traces; the zero value
// records nothing.
type Observer struct {
	Audit     *Audit
	Telemetry *Telemetry
}

// On reports whether calls are audited or traced.
func (ob Observer) On() bool { return ob.Audit != nil || ob.Telemetry != nil }

// Start begins following a request for name with args, made as info
// says: a call of the tool name, or for the other kinds a read or
// completion of the target name, whose tool Resolved names. The context
// is ctx: nothing below the call reads its span from it.
func (ob Observer) Start(ctx context.Context, info CallInfo, name string, args json.RawMessage) (context.Context, *Call) {
	o := newCall()
	o.start, o.info, o.tool, o.args, o.id = time.Now(), info, name, args, newSpanID()
	if info.Kind != "" && info.Kind != "tool" {
		o.tool, o.target = "", name
	}
	if len(o.args) == 0 || string(o.args) == "null" {
		o.args = json.RawMessage("{}")
	}
	if t := ob.Telemetry; t != nil {
		t.startCall(o)
	}
	return ctx, o
}

// End records how the call ended: res is its result, nil when the caller
// cancelled it; limit is the size past which a result is not measured.
// With the audit log, End hands over the call's line, written within the
// log's Delay; without one, or with Sync, End returns once it is in the
// file (see Audit). o is observe's again once End is called: its caller
// must not use it after.
func (ob Observer) End(o *Call, res *mcp.CallToolResult, limit int) {
	o.end = time.Now()
	o.classify(res, limit)
	if t := ob.Telemetry; t != nil {
		t.endCall(o) // before the audit line, whose write may wait (Sync)
	}
	if ob.Audit != nil {
		ob.Audit.record(o) // frees o once its line is made
		return
	}
	o.free()
}
