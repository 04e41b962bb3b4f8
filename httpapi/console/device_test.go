package console_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/httpapi"
	"github.com/agorahq/agora/httpapi/console"
	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/internal/browser"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store/memstore"
)

// post sends body as JSON, as the original's CLI does, and decodes the
// answer into out.
func post(t *testing.T, url string, body, out any) int {
	t.Helper()
	b, err := json.Marshal(body)
	require.NoError(t, err)
	res, err := http.Post(url, "application/json", bytes.NewReader(b))
	require.NoError(t, err)
	defer res.Body.Close()
	require.NoError(t, json.NewDecoder(res.Body).Decode(out))
	return res.StatusCode
}

// TestDevicePageApproves: an agent CLI asks for a device code, the
// operator opens /device?code=…, enters the admin key, sees what the agent
// asks for and approves it; the CLI's next poll receives a working key.
func TestDevicePageApproves(t *testing.T) {
	const admin = "admin-key-for-the-device-page"
	mem := memstore.New()
	svc := slots.New(mem)
	ids := identity.New(mem, identity.WithAdminKey(admin), identity.WithScopes(httpapi.Scopes()))
	mux := http.NewServeMux()
	mux.Handle("/api/v1/", httpapi.Slots(svc, ids))
	c := console.Handler()
	mux.Handle("/device", c)
	mux.Handle("/console/", c)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	var code struct {
		DeviceCode, UserCode, VerificationURIComplete string
		ExpiresIn                                     int
	}
	require.Equal(t, 200, post(t, srv.URL+"/api/v1/auth/device-code", map[string]any{
		"scopes": []string{"comment:create", "claim:new"}, "agentName": "Skeptic-7", "agentModel": "sonnet-4.6"}, &code))
	require.Equal(t, srv.URL+"/device?code="+code.UserCode, code.VerificationURIComplete)
	var poll map[string]any
	require.Equal(t, 202, post(t, srv.URL+"/api/v1/auth/token", map[string]any{"deviceCode": code.DeviceCode}, &poll))
	require.Equal(t, "pending", poll["status"])

	ctx := browser.New(t, 60*time.Second)
	var agent, scopes, status, notice string
	var shot []byte
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate(code.VerificationURIComplete),
		chromedp.WaitVisible(`#key`, chromedp.ByID),
		browser.Type(`#key`, admin, chromedp.ByID),
		chromedp.Click(`#find`, chromedp.ByID),
		chromedp.WaitVisible(`#request`, chromedp.ByID),
		chromedp.Text(`#agent`, &agent, chromedp.ByID),
		chromedp.Text(`#scopes`, &scopes, chromedp.ByID),
		chromedp.Click(`#approve`, chromedp.ByID),
		chromedp.WaitVisible(`.notice.ok`, chromedp.ByQuery),
		chromedp.Text(`#status`, &status, chromedp.ByID),
		chromedp.Text(`#notice`, &notice, chromedp.ByID),
		chromedp.CaptureScreenshot(&shot),
	))
	browser.SaveScreenshot(t, "device-approved.png", shot)
	require.Equal(t, "Skeptic-7", agent)
	require.Equal(t, "comment:create, claim:create", scopes)
	require.Equal(t, "approved", status)
	require.Equal(t, "Approved: Skeptic-7 receives its key at its next poll.", notice)

	require.Equal(t, 200, post(t, srv.URL+"/api/v1/auth/token", map[string]any{"deviceCode": code.DeviceCode}, &poll))
	require.Equal(t, "approved", poll["status"])
	k, err := ids.Authenticate(t.Context(), poll["apiKey"].(string))
	require.NoError(t, err)
	require.Equal(t, "Skeptic-7", k.Name)
	require.True(t, k.Has(slots.ScopeClaimCreate))
}
