package streamable

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/geilt/tairseach-mcp/internal/jsonenc"
	"github.com/geilt/tairseach-mcp/internal/quote"
)

// SameOriginOnly refuses, with 403 and whatever the method or path, a
// request that a browser sent from another site: its Sec-Fetch-Site is
// neither same-origin nor none, or its Origin does not name the host the
// request was sent to. Requests without either header (curl, the SDK
// clients) pass. Go's http.CrossOriginProtection lets GET, HEAD and OPTIONS
// through; here they are refused too, since GET /mcp opens an event stream
// and GET /healthz tells the backends' paths.
func SameOriginOnly(log zerolog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if why := crossOrigin(r); why != "" {
			log.Debug().Str("origin", r.Header.Get("Origin")).Str("host", r.Host).Str("method", r.Method).Str("path", r.URL.Path).
				Str("why", why).Msg("refused a cross-origin request")
			// why quotes the request's headers as they came.
			http.Error(w, "Forbidden: cross-origin request ("+quote.Escape(why)+")", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// crossOrigin says why r comes from another origin, or "" when it does not.
func crossOrigin(r *http.Request) string {
	switch site := r.Header.Values("Sec-Fetch-Site"); {
	case len(site) > 1:
		return "more than one Sec-Fetch-Site"
	case len(site) == 1 && site[0] != "same-origin" && site[0] != "none":
		return "Sec-Fetch-Site " + site[0]
	}
	origins := r.Header.Values("Origin")
	switch {
	case len(origins) == 0:
		return ""
	case len(origins) > 1:
		return "more than one Origin"
	}
	u, err := url.Parse(origins[0])
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "Origin " + origins[0] + " is not an http(s) origin"
	}
	if !strings.EqualFold(u.Host, r.Host) {
		return "Origin " + origins[0] + " is not " + r.Host
	}
	return ""
}

// LocalhostOnly is the go-sdk's DNS-rebinding check, for the paths it does
// not serve: a request that reached a loopback address must name a loopback
// host.
func LocalhostOnly(log zerolog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && IsLoopback(local.String()) && !IsLoopback(r.Host) {
			log.Debug().Str("host", r.Host).Str("path", r.URL.Path).Msg("refused a request with a non-loopback Host on a loopback address")
			http.Error(w, fmt.Sprintf("Forbidden: invalid Host header %s", quote.Line(r.Host, quote.Text)), http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// RequireToken refuses requests without "Authorization: Bearer token". The
// comparison is of SHA-256 digests in constant time, so that neither the
// token's bytes nor its length show in the timing.
//
// The refusal says where the token is, and does not say "Unauthorized":
// mcp-remote, finding no OAuth metadata, registers itself at /register and
// shows the body of the refusal; a message with "Unauthorized" in it would
// make it wait for a browser sign-in that never comes, any other fails it
// at once with the message.
func RequireToken(token, hint string, log zerolog.Logger, next http.Handler) http.Handler {
	want := sha256.Sum256([]byte(token))
	if hint == "" {
		hint = "the token the server was given"
	}
	body := []byte(`{"error":"invalid_token","error_description":`)
	body = jsonenc.AppendString(body, "tairseach-mcp needs a bearer token, not an OAuth sign-in: send the header "+
		"Authorization: Bearer TOKEN, with "+hint, false)
	body = append(body, "}\n"...)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme, got, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		sum := sha256.Sum256([]byte(strings.TrimSpace(got)))
		if !strings.EqualFold(scheme, "Bearer") || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			log.Debug().Str("remote", r.RemoteAddr).Str("path", r.URL.Path).Msg("refused a request without the bearer token")
			w.Header().Set("WWW-Authenticate", `Bearer realm="tairseach-mcp"`)
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("X-Content-Type-Options", "nosniff")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write(body)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// SlowBodyGuard bounds the read of a request body by timeout: a
// client that sends its body a byte at a time gets its connection closed
// instead of holding it (and a goroutine) forever. The deadline is lifted
// once the body is read, so that the response can stream as long as it
// needs.
func SlowBodyGuard(timeout time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		if rc.SetReadDeadline(time.Now().Add(timeout)) != nil {
			next.ServeHTTP(w, r)
			return
		}
		r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc}
		next.ServeHTTP(w, r)
	})
}

// deadlineBody lifts the connection's read deadline at the end of the body.
type deadlineBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	done bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.done {
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

// IsLoopback reports whether addr (host or host:port) is "localhost" or a
// loopback IP.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = strings.TrimSuffix(strings.TrimPrefix(addr, "["), "]")
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// IsLoopbackHost reports whether host (a name or an IP, without a port) is
// "localhost" or a loopback IP: a listener there is reachable from this
// machine only.
func IsLoopbackHost(host string) bool { return IsLoopback(host) }
