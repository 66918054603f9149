package pipeline

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"sync"
	"time"
)

// Bounds of the confirmations a 2026-07-28 client has been asked and not
// yet answered.
const (
	// confirmTTL is how long an input request may be answered.
	confirmTTL = 10 * time.Minute
	// maxPendingConfirms bounds the nonces kept; past it the oldest goes.
	maxPendingConfirms = 1024
)

// confirmations issues and redeems the request state of a confirmation
// asked by input request. The state is "nonce.mac": the nonce is single
// use and expires; the HMAC binds it to the tool and the exact argument
// bytes that would be forwarded, so an answer counts for one call, once.
type confirmations struct {
	key [32]byte

	mu      sync.Mutex
	pending map[string]time.Time // nonce → when it was issued
	order   []string             // nonces, oldest first
}

func newConfirmations() *confirmations {
	c := &confirmations{pending: make(map[string]time.Time)}
	if _, err := rand.Read(c.key[:]); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	return c
}

func (c *confirmations) mac(nonce, tool string, args json.RawMessage) string {
	m := hmac.New(sha256.New, c.key[:])
	m.Write([]byte(nonce))
	m.Write([]byte{0})
	m.Write([]byte(tool))
	m.Write([]byte{0})
	m.Write(args)
	return hex.EncodeToString(m.Sum(nil))
}

// issue returns the request state of a new question about tool and args.
func (c *confirmations) issue(tool string, args json.RawMessage) string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	nonce := hex.EncodeToString(b[:])
	now := time.Now()
	c.mu.Lock()
	c.expire(now)
	for len(c.order) >= maxPendingConfirms {
		delete(c.pending, c.order[0])
		c.order = c.order[1:]
	}
	c.pending[nonce] = now
	c.order = append(c.order, nonce)
	c.mu.Unlock()
	return nonce + "." + c.mac(nonce, tool, args)
}

// redeem reports whether state was issued for tool and args, is unexpired
// and unused; it can be true once per state.
func (c *confirmations) redeem(state, tool string, args json.RawMessage) bool {
	nonce, mac, ok := strings.Cut(state, ".")
	if !ok || !hmac.Equal([]byte(mac), []byte(c.mac(nonce, tool, args))) {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expire(time.Now())
	if _, ok := c.pending[nonce]; !ok {
		return false
	}
	delete(c.pending, nonce)
	return true
}

// expire drops the nonces older than confirmTTL. c.mu must be held.
func (c *confirmations) expire(now time.Time) {
	n := 0
	for n < len(c.order) {
		at, ok := c.pending[c.order[n]]
		if ok && now.Sub(at) < confirmTTL {
			break
		}
		delete(c.pending, c.order[n])
		n++
	}
	c.order = c.order[n:]
}
