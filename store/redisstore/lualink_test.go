package redisstore

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const testHelpers = `-- header, dropped

-- a's comment
local function a(x)
  return x
end

local function k() return 1 end

local t, u = {}, {}

-- b uses a and t.
local function b()
  t[1] = a(1)
end

-- unused: a closure no script asks for
local function unused()
  return b()
end
`

func TestLinkScriptKeepsWhatTheScriptUses(t *testing.T) {
	t.Parallel()
	units, err := luaUnits(testHelpers)
	require.NoError(t, err)
	require.Len(t, units, 5)
	require.Equal(t, []string{"t", "u"}, units[2].names)
	require.Equal(t, "-- a's comment\nlocal function a(x)\n  return x\nend", units[0].text)

	got := linkScript(units, "s.lua", "-- calls unused() only in a comment\nreturn b()\n")
	require.Equal(t, "-- a's comment\nlocal function a(x)\n  return x\nend\n\nlocal t, u = {}, {}\n\n-- b uses a and t.\nlocal function b()\n  t[1] = a(1)\nend\n\n-- s.lua\n-- calls unused() only in a comment\nreturn b()\n", got)
	require.NotContains(t, got, "function unused", "a name in a comment links nothing")
	require.NotContains(t, got, "function k")
	require.Contains(t, linkScript(units, "s.lua", "return k()"), "local function k() return 1 end")
}

func TestLuaUnitsRefuseWhatTheyCannotSplit(t *testing.T) {
	t.Parallel()
	for name, src := range map[string]string{
		"no end":        "local function a()\n  return 1\n",
		"not a local":   "x = 1\n",
		"no parameters": "local function a\nend\n",
	} {
		_, err := luaUnits(src)
		require.Error(t, err, name)
	}
}

// The job queue's scripts carry the helpers they use and not the arena's,
// Prism's or agent chat's.
func TestJobQueueScriptsLinkTheirHelpersOnly(t *testing.T) {
	t.Parallel()
	src, err := luaFiles.ReadFile("lua/finish_take_next_many.lua")
	require.NoError(t, err)
	linked := linkScript(luaHelpers, "finish_take_next_many.lua", string(src))
	for _, want := range []string{"local function take_next(", "local function finish_slot(", "local function flush_leaving(", "local function QUEUED_FIELDS(", "local Q_status = 4"} {
		require.Contains(t, linked, want)
	}
	for _, not := range []string{"chat_upgrade", "set_work", "push_game_logs", "put_claim", "local S_doneAt", "local function SLOT_FIELDS("} {
		require.NotContains(t, linked, not)
	}
	require.Less(t, strings.Count(linked, "local function "), 25)
}
