package stdio

// The messages that end what would otherwise wait on a client that is gone
// or a session cut off; conn.ending hands them to the go-sdk.

import (
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/geilt/tairseach-mcp/mcpserver/shutdown"
)

// endListen is the cancellation that ends the listen the go-sdk knows as n.
func endListen(n int64) jsonrpc.Message {
	return &jsonrpc.Request{Method: "notifications/cancelled",
		Params: json.RawMessage(fmt.Sprintf(`{"requestId":%d,"reason":"the client closed its input"}`, n))}
}

// unanswered is the response that ends a request of the server to a client
// that can no longer answer.
func unanswered(id jsonrpc.ID) jsonrpc.Message {
	return &jsonrpc.Response{ID: id,
		Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the client closed its input before answering"}}
}

// cancelRequest is the cancellation of the request the go-sdk knows as n,
// cut off by the hurry.
func cancelRequest(n int64, why shutdown.Reason) jsonrpc.Message {
	return &jsonrpc.Request{Method: "notifications/cancelled",
		Params: json.RawMessage(fmt.Sprintf(`{"requestId":%d,"reason":"tairseach-mcp is shutting down (%s)"}`, n, why))}
}
