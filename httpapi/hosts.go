package httpapi

import (
	"net"
	"net/http"
	"strings"

	"github.com/agorahq/agora/internal/httpjson"
)

// GuardHosts returns h behind a Host check, the defence against DNS
// rebinding: a page of another site whose name the attacker re-points at
// 127.0.0.1 counts as same-origin to the browser, so only the Host header
// tells its requests from the user's own.
//
// When the server listens on a loopback address (addr: 127.0.0.0/8, ::1 or
// localhost), or when allowed is not empty, a request is answered only if
// its Host (port aside, case aside) is a loopback name — localhost, a name
// under .localhost, a loopback IP — or one of allowed; any other is 403
// host_not_allowed before h runs. A server on any other address with no
// allowed names answers every Host, as it must behind a proxy it does not
// know the name of. Entries of allowed are trimmed and empty ones ignored,
// so a comma-separated flag may be passed as strings.Split(flag, ",").
func GuardHosts(h http.Handler, addr string, allowed []string) http.Handler {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	names := map[string]bool{}
	for _, a := range allowed {
		if a = strings.TrimSpace(a); a != "" {
			names[strings.ToLower(strings.TrimSuffix(a, "."))] = true
		}
	}
	if !loopbackName(host) && len(names) == 0 {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, _, err := net.SplitHostPort(r.Host)
		if err != nil {
			name = r.Host
		}
		name = strings.ToLower(strings.TrimSuffix(strings.Trim(name, "[]"), "."))
		if !loopbackName(name) && !names[name] {
			httpjson.Write(w, http.StatusForbidden, httpjson.ErrorBody("host_not_allowed",
				"this server does not answer for the host name "+r.Host+"; ask its operator to allow the name"))
			return
		}
		h.ServeHTTP(w, r)
	})
}

// loopbackName reports whether name (no port) is a loopback address or a
// name that always resolves to one.
func loopbackName(name string) bool {
	name = strings.ToLower(strings.Trim(name, "[]"))
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		return true
	}
	ip := net.ParseIP(name)
	return ip != nil && ip.IsLoopback()
}
