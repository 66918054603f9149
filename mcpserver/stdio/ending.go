package stdio

import (
	"encoding/json"
	"fmt"

	"github.com/geilt/tairseach-mcp/mcpserver/shutdown"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// ending returns, one per call, the messages that end what would otherwise
// wait for a client that is gone: a cancellation of each open
// subscriptions/listen (the go-sdk then answers it with its result), and
// an error response to each request of the server still unanswered (an
// elicitation: the call waiting for it is then refused). nil when none
// are left.
func (c *conn) ending() jsonrpc.Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.endingBuilt {
		c.endingBuilt = true
		for n, r := range c.reqs {
			if r.method == "subscriptions/listen" && !r.cancelled {
				if r.acked {
					c.endingMsgs = append(c.endingMsgs, endListen(n))
				} else {
					r.endOnAck = true
				}
			}
		}
		for id := range c.outgoing {
			c.endingMsgs = append(c.endingMsgs, unanswered(id))
		}
		clear(c.outgoing)
	}
	if len(c.endingMsgs) == 0 {
		return nil
	}
	msg := c.endingMsgs[0]
	c.endingMsgs = c.endingMsgs[1:]
	return msg
}

// addEnding queues one more ending message once they were built, and
// wakes the drain to hand it to the go-sdk. c.mu must be held.
func (c *conn) addEnding(msg jsonrpc.Message) {
	c.endingMsgs = append(c.endingMsgs, msg)
	select {
	case c.more <- struct{}{}:
	default:
	}
}

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
