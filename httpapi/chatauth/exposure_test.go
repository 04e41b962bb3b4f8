package chatauth_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/httpapi/chatauth"
)

func TestCheckExposure(t *testing.T) {
	open := chatauth.Config{}
	for _, addr := range []string{"127.0.0.1:8090", "[::1]:80", "localhost:8080", "127.5.5.5:1"} {
		require.NoError(t, open.CheckExposure(addr), addr)
	}
	for _, addr := range []string{":8090", "0.0.0.0:8090", "[::]:80", "10.1.2.3:8080", "example.com:80"} {
		require.ErrorContains(t, open.CheckExposure(addr), "-chat-open", addr)
		require.NoError(t, chatauth.Config{Open: true}.CheckExposure(addr), addr)
		require.NoError(t, chatauth.Config{Mode: "secret", Secret: "s"}.CheckExposure(addr), addr)
	}
}
