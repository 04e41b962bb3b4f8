package observe_test

import (
	"fmt"
	"net/http/httptest"
	"os"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/agorahq/agora/httpapi"
	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/observe"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store/memstore"
)

// A host observes the /api/v1 routes: its own registry, the stores
// wrapped, the handler wrapped.
func ExampleHandler() {
	reg := prometheus.NewRegistry()
	metrics, err := observe.NewMetrics(reg)
	if err != nil {
		panic(err)
	}
	log, err := observe.NewLogger(os.Stdout, "text", nil)
	if err != nil {
		panic(err)
	}
	wrap := observe.NewStores("memory", metrics, nil)
	st := memstore.New()
	svc := slots.New(wrap.Slots(st))
	ids := identity.New(wrap.Identity(st), identity.WithAdminKey("admin-example"), identity.WithScopes(httpapi.Scopes()))
	h := observe.Handler(httpapi.Slots(svc, ids, httpapi.WithLogger(log)), observe.HTTPOptions{Metrics: metrics})

	r := httptest.NewRequest("GET", "/api/v1/claims/c-1", nil)
	r.Header.Set("Authorization", "Bearer admin-example")
	r.Header.Set("X-Request-Id", "req-42")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	fmt.Println(w.Code, w.Header().Get("X-Request-Id"))

	scrape := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(scrape, httptest.NewRequest("GET", "/metrics", nil))
	for _, line := range strings.Split(scrape.Body.String(), "\n") {
		if strings.HasPrefix(line, "agora_store_calls_total") && strings.Contains(line, `"GetClaim"`) && !strings.HasSuffix(line, " 0") ||
			strings.HasPrefix(line, "agora_http_requests_total") {
			fmt.Println(line)
		}
	}
	// Output:
	// 404 req-42
	// agora_http_requests_total{code="404",method="GET",route="GET /api/v1/claims/{claimId}"} 1
	// agora_store_calls_total{backend="memory",operation="GetClaim",result="not_found"} 1
}
