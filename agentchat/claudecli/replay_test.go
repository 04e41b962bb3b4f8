package claudecli_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/agentchat"
	"github.com/agorahq/agora/agentchat/claudecli"
	"github.com/agorahq/agora/httpapi"
	"github.com/agorahq/agora/store/memstore"
)

// TestEveryFixtureThroughTheService replays every real transcript through
// the fake CLI, the runner and the service, and checks the stored
// conversation event for event: the user's message, then exactly what the
// parser makes of the transcript, then — when the transcript has no result
// line — the runner's error.
func TestEveryFixtureThroughTheService(t *testing.T) {
	fixtures, err := filepath.Abs(filepath.Join("testdata", "stream-json"))
	require.NoError(t, err)
	files, _ := filepath.Glob(filepath.Join(fixtures, "*.jsonl"))
	require.Len(t, files, 10)
	for _, file := range files {
		name := filepath.Base(file)
		t.Run(strings.TrimSuffix(name, ".jsonl"), func(t *testing.T) {
			t.Parallel()
			var want []agentchat.EventType
			want = append(want, agentchat.EventUser)
			p := &claudecli.Parser{}
			f, err := os.Open(file)
			require.NoError(t, err)
			require.NoError(t, claudecli.ReadLines(f, func(b []byte) error {
				evs, _ := p.ParseLine(b)
				for _, e := range evs {
					want = append(want, e.Type)
				}
				return nil
			}))
			f.Close()
			if p.Result == nil {
				want = append(want, agentchat.EventError)
			}
			want = append(want, agentchat.EventStatus)

			runner := &claudecli.Runner{
				Path: claudecli.FakeClaude(), Dir: t.TempDir(),
				Env:         []string{"FAKE_MODE=replay", "FAKE_FIXTURE=" + name, "FAKE_FIXTURES=" + fixtures, "FAKE_RECORD=" + filepath.Join(t.TempDir(), "rec")},
				IdleTimeout: 5 * time.Second, KillGrace: 200 * time.Millisecond, AfterResult: 200 * time.Millisecond,
			}
			st := memstore.New()
			svc := agentchat.New(st, runner)
			defer svc.Close()
			ctx := context.Background()
			c, err := svc.Create(ctx, agentchat.NewConversation{Title: name})
			require.NoError(t, err)
			_, err = svc.Send(ctx, c.ID, "go")
			require.NoError(t, err)
			require.Eventually(t, func() bool { return svc.Running() == "" }, 10*time.Second, 5*time.Millisecond)
			_, ms, err := svc.Conversation(ctx, c.ID)
			require.NoError(t, err)
			var got []agentchat.EventType
			for _, m := range ms {
				got = append(got, m.Type)
			}
			require.Equal(t, want, got)

			// The SSE stream replays exactly the stored events, in order.
			srv := httptest.NewServer(httpapi.AgentChat(svc))
			defer srv.Close()
			sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			req, _ := http.NewRequestWithContext(sctx, "GET", srv.URL+"/agent/conversations/"+c.ID+"/stream", nil)
			res, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			var streamed []agentchat.EventType
			var ids []string
			sc := bufio.NewScanner(res.Body)
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				line := sc.Text()
				if id, ok := strings.CutPrefix(line, "id: "); ok {
					ids = append(ids, id)
				}
				if name, ok := strings.CutPrefix(line, "event: "); ok {
					streamed = append(streamed, agentchat.EventType(name))
					if name == "status" {
						break
					}
				}
			}
			res.Body.Close()
			require.Equal(t, want, streamed)
			for i, id := range ids {
				require.Equal(t, fmt.Sprint(i+1), id, "SSE ids are the message IDs")
			}
			conv, _, _ := svc.Conversation(ctx, c.ID)
			failed := p.Result == nil || p.Result.IsError || strings.HasPrefix(p.Result.Subtype, "error")
			if failed {
				require.Equal(t, agentchat.StatusError, conv.Status)
			} else {
				require.Equal(t, agentchat.StatusIdle, conv.Status)
				require.Equal(t, p.SessionID, conv.SessionID)
			}
		})
	}
}
