package httpapi

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/agentchat"
)

// TestSuperseded: a run's closing status is superseded by a later user
// message once a run started after it. When the messages read hold the
// user message alone, the read may predate the new run's first event, so
// superseded asks started about that user message, which is how a stream
// opened while the new run began, ran and ended (its status idle again
// by the check) still skips the old status.
func TestSuperseded(t *testing.T) {
	msg := func(id int64, typ agentchat.EventType) agentchat.Message { return agentchat.Message{ID: id, Type: typ} }
	var asked []int64
	started := func(answer bool) func(int64) bool {
		return func(id int64) bool {
			asked = append(asked, id)
			return answer
		}
	}
	require.False(t, superseded(nil, started(true)), "nothing later")
	require.False(t, superseded([]agentchat.Message{msg(8, agentchat.EventSystem)}, started(true)), "no user message later")
	require.Empty(t, asked)
	require.True(t, superseded([]agentchat.Message{msg(8, agentchat.EventUser), msg(9, agentchat.EventSystem)}, started(false)), "a run stored an event after it")
	require.Empty(t, asked, "what was read says so")
	require.True(t, superseded([]agentchat.Message{msg(8, agentchat.EventUser)}, started(true)))
	require.False(t, superseded([]agentchat.Message{msg(8, agentchat.EventUser), msg(9, agentchat.EventUser)}, started(false)))
	require.Equal(t, []int64{8, 8}, asked, "asked about the first user message")
}
