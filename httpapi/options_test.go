package httpapi_test

import (
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/httpapi"
	"github.com/agorahq/agora/httpapi/chatauth"
)

// TestOptionsFitTheirHandlers: each option is an option of exactly the
// handlers that read it, so passing one to another handler does not
// compile.
func TestOptionsFitTheirHandlers(t *testing.T) {
	t.Parallel()
	fits := func(o any) []string {
		var names []string
		if _, ok := o.(httpapi.SlotsOption); ok {
			names = append(names, "Slots")
		}
		if _, ok := o.(httpapi.ArenaOption); ok {
			names = append(names, "Arena")
		}
		if _, ok := o.(httpapi.DiscussionOption); ok {
			names = append(names, "Discussion")
		}
		if _, ok := o.(httpapi.ChatOption); ok {
			names = append(names, "AgentChat")
		}
		if _, ok := o.(httpapi.HealthOption); ok {
			names = append(names, "HealthHandler")
		}
		return names
	}
	require.Equal(t, []string{"Slots", "Arena", "Discussion", "AgentChat", "HealthHandler"}, fits(httpapi.WithLogger(slog.Default())))
	require.Equal(t, []string{"Slots", "Arena", "Discussion"}, fits(httpapi.WithLimiter(nil)))
	require.Equal(t, []string{"Arena", "Discussion"}, fits(httpapi.WithKeys(nil)))
	require.Equal(t, []string{"Slots"}, fits(httpapi.WithPrism(nil)))
	require.Equal(t, []string{"AgentChat"}, fits(httpapi.WithChatAuth(chatauth.Scheme{})))
	require.Equal(t, []string{"AgentChat"}, fits(httpapi.WithChatLook("", "", "")))
}
