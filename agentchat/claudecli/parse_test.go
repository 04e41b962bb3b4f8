package claudecli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/agentchat"
)

// replay parses a fixture transcript (real CLI output; see
// testdata/stream-json) and returns its events as "type:detail" strings.
func replay(t *testing.T, name string) ([]string, *Parser) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "stream-json", name))
	require.NoError(t, err)
	defer f.Close()
	p := &Parser{}
	var out []string
	require.NoError(t, ReadLines(f, func(b []byte) error {
		evs, err := p.ParseLine(b)
		require.NoError(t, err, "%s", b)
		for _, e := range evs {
			d := e.Content
			switch e.Type {
			case agentchat.EventToolUse:
				d = e.Tool + " " + string(e.Input)
			case agentchat.EventToolResult:
				d = e.Tool + " " + e.Output
				if e.IsError {
					d += " (error)"
				}
			case agentchat.EventDone:
				d = e.Result
			}
			out = append(out, string(e.Type)+":"+d)
		}
		return nil
	}))
	return out, p
}

func TestReplaySuccessToolUse(t *testing.T) {
	got, p := replay(t, "success_tool_use.jsonl")
	require.Equal(t, []string{
		"system:init",
		"assistant:I'll run a command.",
		`tool_use:Bash {"command":"echo hello","description":"Print hello"}`,
		"tool_result:Bash hello",
		"assistant:The command printed hello.",
		"done:The command printed hello.",
	}, got)
	require.Equal(t, "326bff2f-1227-4fb1-9e44-cb5d0ef09ad6", p.SessionID)
	require.False(t, p.Result.ResumeFailed(""))

	var init Parser
	evs, err := init.ParseLine([]byte(`{"type":"system","subtype":"init","session_id":"s-1"}`))
	require.NoError(t, err)
	require.JSONEq(t, `{"content":"init","session_id":"s-1","subtype":"init"}`, string(evs[0].Data()), "the subtype slot-machine's page reads")
}

func TestReplayPartialMessagesMatchesPlain(t *testing.T) {
	plain, _ := replay(t, "success_tool_use.jsonl")
	partial, _ := replay(t, "success_partial_messages.jsonl")
	require.Equal(t, len(plain), len(partial), "stream_event lines add nothing: %v", partial)
	for i := range plain {
		require.Equal(t, strings.SplitN(plain[i], ":", 2)[0], strings.SplitN(partial[i], ":", 2)[0])
	}
}

func TestReplayErrors(t *testing.T) {
	got, p := replay(t, "bad_resume.jsonl")
	require.Len(t, got, 2)
	require.True(t, strings.HasPrefix(got[0], "error:"), got[0])
	require.True(t, strings.HasPrefix(got[1], "done:"))
	require.True(t, p.Result.ResumeFailed(""), "num_turns 0 and an error: resume failed")
	require.Equal(t, "11111111-2222-3333-4444-555555555555", p.SessionID)

	got, p = replay(t, "auth_401_retries.jsonl")
	retries := 0
	for _, g := range got {
		if strings.HasPrefix(g, "system:API retry") {
			retries++
		}
	}
	require.Equal(t, 10, retries)
	require.Contains(t, got, "error:Invalid API key · Fix external API key")
	require.False(t, p.Result.ResumeFailed(""), "a failure after a turn is not a resume failure")

	got, _ = replay(t, "error_max_turns.jsonl")
	require.True(t, strings.HasPrefix(got[len(got)-2], "error:"), got)

	got, _ = replay(t, "permission_denied.jsonl")
	found := false
	for _, g := range got {
		found = found || strings.HasSuffix(g, "(error)")
	}
	require.True(t, found, "a denied tool call is an error tool_result: %v", got)

	got, p = replay(t, "sigterm_no_result.jsonl")
	require.Equal(t, []string{"system:init"}, got)
	require.Nil(t, p.Result, "no result line: the runner reports the exit")

	got, _ = replay(t, "sigterm_mid_tool.jsonl")
	require.Contains(t, strings.Join(got, "\n"), "tool_result:Bash")
	got, _ = replay(t, "sigint_interrupted.jsonl")
	require.True(t, strings.HasPrefix(got[len(got)-1], "done:"))
}

func TestResumeFailedOnDuplicateToolUseIDs(t *testing.T) {
	r := &ResultLine{IsError: true, NumTurns: 3, Text: "API Error: 400 messages.2: `tool_use` ids must be unique"}
	require.True(t, r.ResumeFailed(""))
	var none *ResultLine
	require.True(t, none.ResumeFailed("Error: tool_use ids must be unique"))
	require.False(t, none.ResumeFailed("something else"))
}

func TestLongLines(t *testing.T) {
	big := strings.Repeat("x", 200<<10)
	input := `{"type":"assistant","message":{"content":[{"type":"text","text":"` + big + `"}]}}` + "\n" + `{"type":"result","subtype":"success","num_turns":1}`
	p := &Parser{}
	var events []agentchat.Event
	require.NoError(t, ReadLines(strings.NewReader(input), func(b []byte) error {
		evs, err := p.ParseLine(b)
		events = append(events, evs...)
		return err
	}))
	require.Len(t, events, 2)
	require.Len(t, events[0].Content, 200<<10)
	_, err := p.ParseLine([]byte("not json"))
	require.ErrorIs(t, err, ErrNotJSON)
}

// FuzzParseLine: no input makes the parser panic, and every event it
// returns has a type.
func FuzzParseLine(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "stream-json", "*.jsonl"))
	for _, name := range files {
		data, _ := os.ReadFile(name)
		for _, l := range strings.Split(string(data), "\n") {
			if len(l) < 4096 {
				f.Add([]byte(l))
			}
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p := &Parser{}
		evs, _ := p.ParseLine(b)
		for _, e := range evs {
			if e.Type == "" {
				t.Fatalf("event without a type from %q", b)
			}
			_ = e.Data()
		}
	})
}
