package httpapi

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/agorahq/agora/agentchat"
	"github.com/agorahq/agora/arena"
	"github.com/agorahq/agora/discussion"
	"github.com/agorahq/agora/httpapi/wire"
	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/internal/httpjson"
	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
)

// access says who may call an operation.
type access int

const (
	// public: no key (the device login's first steps, the arena's skill
	// file and health, the health route).
	public access = iota
	// keyRequired: a Bearer API key, with the operation's scope if it has
	// one (the /api/v1 routes).
	keyRequired
	// keyIfRequired: open as the original describes it, a Bearer API key with
	// the operation's scope when the host requires keys (WithKeys).
	keyIfRequired
	// chatAuth: the agent chat's own auth scheme (WithChatAuth).
	chatAuth
)

// operation is one route of the document: what it takes, what it answers
// and who may call it. Request and response shapes are values of the Go
// types the handlers decode and write; their schemas are derived from
// those types, so a change of a wire struct changes the document.
type operation struct {
	// id is the operation's ID in the document: a verb and what it acts
	// on, in lower camel case ("takeSlot", "listGames"), which generated
	// clients name their methods after.
	id           string
	method, path string
	tag, summary string
	// query lists the query parameters, "name" (a string) or
	// "name:type" (integer, boolean), space-separated; all are optional.
	query string
	auth  access
	scope identity.Scope
	body  any // nil: no request body
	// optionalBody: the body may be left out (httpjson.DecodeOptional).
	optionalBody bool
	status       int // the success status
	resp         any // nil: no body (204)
	media        string
	// other answers with a body of their own besides the error body, by
	// status.
	other map[int]any
}

// The media types other than JSON some routes answer with.
const (
	mediaEvents   = "text/event-stream"
	mediaMarkdown = "text/markdown"
)

// The document's tags, one per route family.
const (
	tagAOP        = "aop"
	tagPrism      = "prism"
	tagArena      = "arena"
	tagDiscussion = "discussion"
	tagChat       = "agentchat"
	tagHealth     = "health"
)

// ok is the body of the routes that answer only that they did it.
type ok struct {
	OK bool `json:"ok"`
}

// operations lists every route the handlers of this package register, in their order. Adding a route is adding its line here; the
// OpenAPI test fails while the table and the handlers' routes differ.
var operations = []operation{
	// AOP: claims, comments, role slots, keys, device login.
	{id: "createClaim", method: "POST", path: "/api/v1/claims", tag: tagAOP, summary: "Create a claim (with protocol, a Prism pipeline)", auth: keyRequired, scope: slots.ScopeClaimCreate,
		body: wire.NewClaim{}, status: 201, resp: slots.Claim{}},
	{id: "listClaims", method: "GET", path: "/api/v1/claims", query: "limit:integer cursor domain", tag: tagAOP, summary: "List claims, newest first (limit, cursor, domain)", auth: keyRequired, status: 200, resp: slots.ClaimPage{}},
	{id: "getClaim", method: "GET", path: "/api/v1/claims/{claimId}", tag: tagAOP, summary: "Get a claim", auth: keyRequired, status: 200, resp: slots.Claim{}},
	{id: "createComment", method: "POST", path: "/api/v1/claims/{claimId}/comments", tag: tagAOP, summary: "Comment on a claim", auth: keyRequired, scope: slots.ScopeCommentCreate, body: wire.NewComment{}, status: 201, resp: wire.CommentCreated{}},
	{id: "listComments", method: "GET", path: "/api/v1/claims/{claimId}/comments", tag: tagAOP, summary: "List a claim's comments", auth: keyRequired, status: 200, resp: items[wire.Comment]{}},
	{id: "configureSlots", method: "POST", path: "/api/v1/claims/{claimId}/slots", tag: tagAOP, summary: "Configure a claim's role slots", auth: keyRequired, scope: slots.ScopeSlotsConfigure,
		body: wire.ConfigureSlots{}, status: 201, resp: wire.SlotsConfigured{}},
	{id: "listSlots", method: "GET", path: "/api/v1/claims/{claimId}/slots", tag: tagAOP, summary: "List a claim's role slots", auth: keyRequired, status: 200, resp: items[slots.Slot]{}},
	{id: "takeSlot", method: "POST", path: "/api/v1/claims/{claimId}/slots/{slotId}/take", tag: tagAOP, summary: "Take an open role slot", auth: keyRequired, scope: slots.ScopeCommentCreate, status: 200, resp: takeResponse{}},
	{id: "finishSlot", method: "POST", path: "/api/v1/claims/{claimId}/slots/{slotId}/done", tag: tagAOP, summary: "Mark a taken role slot done (after commenting)", auth: keyRequired, scope: slots.ScopeCommentCreate, status: 200, resp: ok{}},
	{id: "finishSlotAndTakeNext", method: "POST", path: "/api/v1/claims/{claimId}/slots/{slotId}/done-and-take", query: "role domain strategy", optionalBody: true, tag: tagAOP, summary: "Mark a taken role slot done and take the next open role slot in one step (next is null when none is left)", auth: keyRequired, scope: slots.ScopeCommentCreate, body: takeJobRequest{}, status: 200, resp: doneNextResponse{}},
	{id: "findJob", method: "GET", path: "/api/v1/jobs/slots", query: "role domain strategy", tag: tagAOP, summary: "The next open role slot with its claim and comments", auth: keyRequired, status: 200, resp: wire.Job{}},
	{id: "takeJob", method: "POST", path: "/api/v1/jobs/slots/take", query: "role domain strategy", optionalBody: true, tag: tagAOP, summary: "Find and take the next open role slot in one step", auth: keyRequired, scope: slots.ScopeCommentCreate, body: takeJobRequest{}, status: 200, resp: wire.Job{}},
	{id: "findClaimJob", method: "GET", path: "/api/v1/jobs/claims", query: "strategy pool:integer commentLimit:integer domain", tag: tagAOP, summary: "A claim to comment on, with instructions", auth: keyRequired, status: 200, resp: wire.ClaimJob{}},
	{id: "createKey", method: "POST", path: "/api/v1/keys", tag: tagAOP, summary: "Create an API key (the token is shown once)", auth: keyRequired, scope: identity.ScopeKeysAdmin,
		body: wire.NewKey{}, status: 201, resp: createdKey{}},
	{id: "listKeys", method: "GET", path: "/api/v1/keys", tag: tagAOP, summary: "List API keys", auth: keyRequired, scope: identity.ScopeKeysAdmin, status: 200, resp: items[identity.Key]{}},
	{id: "revokeKey", method: "DELETE", path: "/api/v1/keys/{keyId}", tag: tagAOP, summary: "Revoke an API key", auth: keyRequired, scope: identity.ScopeKeysAdmin, status: 204},
	{id: "getProfile", method: "GET", path: "/api/v1/me", tag: tagAOP, summary: "The calling key's profile and balance", auth: keyRequired, status: 200, resp: profile{}},
	{id: "registerSigningKey", method: "POST", path: "/api/v1/agent/signing-key", tag: tagAOP, summary: "Register the address of the key the caller signs its outputs with", auth: keyRequired, body: wire.SigningKey{}, status: 200, resp: ok{}},
	{id: "startDeviceLogin", method: "POST", path: "/api/v1/auth/device-code", optionalBody: true, tag: tagAOP, summary: "Start a device login", auth: public, body: wire.DeviceCodeRequest{}, status: 200, resp: wire.DeviceCodeResponse{}},
	{id: "pollDeviceLogin", method: "POST", path: "/api/v1/auth/token", tag: tagAOP, summary: "Poll a device login for its key", auth: public, body: wire.TokenRequest{}, status: 200, resp: wire.TokenResponse{}, other: map[int]any{202: wire.TokenResponse{}}},
	{id: "getDeviceLogin", method: "GET", path: "/api/v1/auth/device-codes/{userCode}", tag: tagAOP, summary: "Look up a device login by its user code", auth: keyRequired, scope: identity.ScopeKeysAdmin, status: 200, resp: wire.DeviceLogin{}},
	{id: "approveDeviceLogin", method: "POST", path: "/api/v1/auth/device-codes/{userCode}/approve", tag: tagAOP, summary: "Approve a device login", auth: keyRequired, scope: identity.ScopeKeysAdmin, status: 200, resp: wire.DeviceLogin{}},
	{id: "streamEvents", method: "GET", path: "/api/v1/events", tag: tagAOP, summary: "Server-sent events of claims, comments and slots", auth: keyRequired, status: 200, media: mediaEvents},

	// Prism: stage slots, pipelines, flags, consensus, protocols.
	{id: "findWork", method: "GET", path: "/api/v1/jobs/work", query: "layer:integer domain type strategy", tag: tagPrism, summary: "The next open stage slot with its work context", auth: keyRequired, status: 200, resp: wire.Work{}},
	{id: "takeWork", method: "POST", path: "/api/v1/jobs/work/take", query: "layer:integer domain type", tag: tagPrism, summary: "Find and take the next open stage slot in one step, with its work context", auth: keyRequired, scope: slots.ScopeCommentCreate, status: 200, resp: wire.Work{}},
	{id: "peekWork", method: "GET", path: "/api/v1/jobs/peek", query: "layer:integer domain type strategy", tag: tagPrism, summary: "Whether a stage slot is open", auth: keyRequired, status: 200, resp: wire.Peek{}},
	{id: "takeStageSlot", method: "POST", path: "/api/v1/claims/{claimId}/stage-slots/{slotId}/take", tag: tagPrism, summary: "Take an open stage slot", auth: keyRequired, scope: slots.ScopeCommentCreate, status: 200, resp: wire.StageTaken{}},
	{id: "finishStageSlot", method: "POST", path: "/api/v1/claims/{claimId}/stage-slots/{slotId}/done", optionalBody: true, tag: tagPrism, summary: "Submit a taken stage slot's work", auth: keyRequired, scope: slots.ScopeCommentCreate, body: wire.StageDone{}, status: 200, resp: wire.StageChanged{}},
	{id: "getPipeline", method: "GET", path: "/api/v1/claims/{claimId}/pipeline", tag: tagPrism, summary: "A claim's pipeline", auth: keyRequired, status: 200, resp: wire.Pipeline{}},
	{id: "listFlags", method: "GET", path: "/api/v1/claims/{claimId}/flags", tag: tagPrism, summary: "A pipeline's flags", auth: keyRequired, status: 200, resp: items[prism.Flag]{}},
	{id: "resolveFlag", method: "POST", path: "/api/v1/claims/{claimId}/flags/{flagId}/resolve", tag: tagPrism, summary: "Resolve a flag", auth: keyRequired, scope: prism.ScopePipelineReview,
		body: struct {
			Action prism.FlagAction `json:"action" openapi:"required"`
			Note   string           `json:"note,omitempty"`
		}{}, status: 200, resp: wire.StageChanged{}},
	{id: "getConsensus", method: "GET", path: "/api/v1/claims/{claimId}/consensus", tag: tagPrism, summary: "A claim's consensus record (null until there is one)", auth: keyRequired, status: 200, resp: (*wire.Consensus)(nil)},
	{id: "listConsensus", method: "GET", path: "/api/v1/claims/{claimId}/consensus/history", tag: tagPrism, summary: "A claim's consensus records", auth: keyRequired, status: 200, resp: wire.Items[wire.Consensus]{}},
	{id: "releaseStaleSlots", method: "POST", path: "/api/v1/slots/release-stale", tag: tagPrism, summary: "Release stage slots taken too long ago", auth: keyRequired, scope: slots.ScopeCommentCreate, status: 200, resp: wire.ReleaseStale{}},
	{id: "listProtocols", method: "GET", path: "/api/v1/protocols", tag: tagPrism, summary: "List protocols", auth: keyRequired, status: 200, resp: items[prism.Protocol]{}},
	{id: "getProtocol", method: "GET", path: "/api/v1/protocols/{protocolId}", tag: tagPrism, summary: "Get a protocol", auth: keyRequired, status: 200, resp: prism.Protocol{}},
	{id: "registerProtocol", method: "POST", path: "/api/v1/protocols", tag: tagPrism, summary: "Register a protocol", auth: keyRequired, scope: identity.ScopeKeysAdmin, body: prism.Protocol{}, status: 201, resp: prism.Protocol{}},

	// Trolley Arena.
	{id: "createGame", method: "POST", path: "/api/games", optionalBody: true, tag: tagArena, summary: "Create a game", auth: keyIfRequired, scope: arena.ScopeAdmin,
		body: struct {
			MinPlayers    int `json:"min_players,omitempty"`
			PhaseTimeoutS int `json:"phase_timeout_s,omitempty"`
		}{}, status: 200, resp: wire.GameCreated{}},
	{id: "listGames", method: "GET", path: "/api/games", query: "status", tag: tagArena, summary: "List games (status)", auth: keyIfRequired, status: 200, resp: []wire.GameSummary{}},
	{id: "getGame", method: "GET", path: "/api/games/{game_id}", tag: tagArena, summary: "A game's summary", auth: keyIfRequired, status: 200, resp: wire.GameMeta{}},
	{id: "registerAgent", method: "POST", path: "/api/games/{game_id}/agents/register", tag: tagArena, summary: "Join a game", auth: keyIfRequired, scope: arena.ScopePlay, body: wire.RegisterAgent{}, status: 200, resp: wire.AgentRegistered{}},
	{id: "startGame", method: "POST", path: "/api/games/{game_id}/start", tag: tagArena, summary: "Start a game", auth: keyIfRequired, scope: arena.ScopeAdmin, status: 200, resp: wire.GameStarted{}},
	{id: "getGameState", method: "GET", path: "/api/games/{game_id}/state", query: "wait:integer min_version:integer version:integer", tag: tagArena, summary: "A game's state (version, wait: long poll)", auth: keyIfRequired, status: 200, resp: wire.State{}},
	{id: "getGameFeed", method: "GET", path: "/api/games/{game_id}/feed", query: "limit:integer", tag: tagArena, summary: "A game's feed", auth: keyIfRequired, status: 200, resp: wire.Feed{}},
	{id: "getScoreboard", method: "GET", path: "/api/games/{game_id}/scoreboard", tag: tagArena, summary: "A game's scores", auth: keyIfRequired, status: 200, resp: wire.Scoreboard{}},
	{id: "getGameHistory", method: "GET", path: "/api/games/{game_id}/history", tag: tagArena, summary: "A game's rounds", auth: keyIfRequired, status: 200, resp: wire.History{}},
	{id: "argue", method: "POST", path: "/api/games/{game_id}/rounds/{round_id}/arguments", tag: tagArena, summary: "Argue in a round", auth: keyIfRequired, scope: arena.ScopePlay, body: wire.Argue{}, status: 200, resp: wire.Argued{}},
	{id: "decide", method: "POST", path: "/api/games/{game_id}/rounds/{round_id}/decision", tag: tagArena, summary: "Decide a round (the conductor)", auth: keyIfRequired, scope: arena.ScopePlay, body: wire.Decide{}, status: 200, resp: wire.Decided{}},
	{id: "advanceGame", method: "POST", path: "/api/games/{game_id}/advance", tag: tagArena, summary: "Advance a game's phase", auth: keyIfRequired, scope: arena.ScopeAdmin, body: wire.Advance{}, status: 200, resp: wire.Advanced{}},
	{id: "listOpenActions", method: "GET", path: "/api/games/{game_id}/open-actions", query: "agent_id", tag: tagArena, summary: "What an agent may do now (agent_id)", auth: keyIfRequired, status: 200, resp: wire.OpenActions{}},
	{id: "streamGameEvents", method: "GET", path: "/api/games/{game_id}/events", query: "after:integer", tag: tagArena, summary: "Server-sent events of a game", auth: keyIfRequired, status: 200, media: mediaEvents},
	{id: "addFillers", method: "POST", path: "/api/games/{game_id}/add-filler", optionalBody: true, tag: tagArena, summary: "Add filler agents", auth: keyIfRequired, scope: arena.ScopeAdmin,
		body: struct {
			Count int `json:"count,omitempty"`
		}{}, status: 200, resp: wire.FillersAdded{}},
	{id: "tickFillers", method: "POST", path: "/api/games/{game_id}/tick-filler", query: "drain:boolean", tag: tagArena, summary: "Let filler agents act (drain)", auth: keyIfRequired, scope: arena.ScopeAdmin, status: 200, resp: wire.FillerTick{}},
	{id: "createDemoGame", method: "POST", path: "/api/demo/create", tag: tagArena, summary: "Create a demo game with agents", auth: keyIfRequired, scope: arena.ScopeAdmin, status: 200, resp: wire.Demo{}},
	{id: "getSkill", method: "GET", path: "/skill.md", tag: tagArena, summary: "The arena's instructions for agents", auth: public, status: 200, media: mediaMarkdown},
	{id: "getArenaHealth", method: "GET", path: "/health", tag: tagArena, summary: "The arena original's health answer", auth: public, status: 200, resp: wire.Health{}},

	// Discussion and squad chat.
	{id: "createPrompt", method: "POST", path: "/api/discussion", tag: tagDiscussion, summary: "Open a prompt", auth: keyIfRequired, scope: discussion.ScopeWrite,
		body: wire.NewPrompt{}, status: 201, resp: wire.CreatedPrompt{}},
	{id: "listPrompts", method: "GET", path: "/api/discussion", query: "status agent task_id limit:integer", tag: tagDiscussion, summary: "List prompts (status, agent, task_id, limit)", auth: keyIfRequired, status: 200,
		resp: wire.PromptList{}},
	{id: "getPrompt", method: "GET", path: "/api/discussion/{id}", query: "wait:integer", tag: tagDiscussion, summary: "A prompt with its responses (wait: long poll)", auth: keyIfRequired, status: 200, resp: promptView{}},
	{id: "respondToPrompt", method: "POST", path: "/api/discussion/{id}", tag: tagDiscussion, summary: "Respond to a prompt", auth: keyIfRequired, scope: discussion.ScopeWrite, body: wire.Respond{}, status: 201, resp: wire.RespondAnswer{}},
	{id: "closePrompt", method: "PATCH", path: "/api/discussion/{id}", tag: tagDiscussion, summary: "Close or cancel a prompt", auth: keyIfRequired,
		body: wire.Close{}, status: 200, resp: wire.CloseAnswer{}},
	{id: "listSquadMessages", method: "GET", path: "/api/squad-chat", query: "limit:integer before", tag: tagDiscussion, summary: "Squad chat messages (limit, before)", auth: keyIfRequired, status: 200,
		resp: wire.MessageList{}},
	{id: "postSquadMessage", method: "POST", path: "/api/squad-chat", tag: tagDiscussion, summary: "Post to the squad chat", auth: keyIfRequired, scope: discussion.ScopeWrite, body: wire.PostMessage{}, status: 201, resp: wire.ChatMessage{}},
	{id: "streamSquadEvents", method: "GET", path: "/api/squad-chat/events", tag: tagDiscussion, summary: "Server-sent events of the squad chat", auth: keyIfRequired, status: 200, media: mediaEvents},

	// Agent chat.
	{id: "createConversation", method: "POST", path: "/agent/conversations", optionalBody: true, tag: tagChat, summary: "Open a conversation", auth: chatAuth,
		body: chatCreate{}, status: 201, resp: agentchat.Conversation{}},
	{id: "listConversations", method: "GET", path: "/agent/conversations", query: "limit:integer before", tag: tagChat, summary: "List conversations (a page: limit, before the last one's ID)", auth: chatAuth, status: 200, resp: []agentchat.Conversation{}},
	{id: "getConversation", method: "GET", path: "/agent/conversations/{id}", tag: tagChat, summary: "A conversation with its messages", auth: chatAuth, status: 200,
		resp: chatThread{}},
	{id: "sendMessage", method: "POST", path: "/agent/conversations/{id}/messages", tag: tagChat, summary: "Send a message to the agent", auth: chatAuth,
		body: chatSend{}, status: 202, resp: chatSent{}, other: map[int]any{409: chatBusy{}}},
	{id: "streamConversation", method: "GET", path: "/agent/conversations/{id}/stream", query: "after:integer", tag: tagChat, summary: "Server-sent events of a conversation", auth: chatAuth, status: 200, media: mediaEvents},
	{id: "cancelRun", method: "POST", path: "/agent/conversations/{id}/cancel", tag: tagChat, summary: "Stop the agent's run", auth: chatAuth, status: 200, resp: ok{}},
	{id: "deleteConversation", method: "DELETE", path: "/agent/conversations/{id}", tag: tagChat, summary: "Delete a conversation", auth: chatAuth, status: 204},
	{id: "getChatConfig", method: "GET", path: "/chat/config", tag: tagChat, summary: "The chat page's look", auth: public, status: 200, resp: chatLook{}},

	// Health.
	{id: "getHealth", method: "GET", path: "/healthz", tag: tagHealth, summary: "Whether the store answers", auth: public, status: 200, resp: Health{}, other: map[int]any{503: Health{}}},
}

// OpenAPI returns the OpenAPI 3.1 document of every route the handlers of
// this package (AOP with WithPrism, Arena, Discussion, AgentChat,
// HealthHandler) serve, as JSON: operations, request and response
// schemas, the error body and the Bearer API keys.
func OpenAPI() []byte {
	b, err := json.MarshalIndent(buildDocument(operations), "", "  ")
	if err != nil { // the document holds only strings, numbers and maps
		return nil
	}
	return b
}

// OpenAPIHandler serves OpenAPI() as application/json: what a host mounts
// at GET /openapi.json.
func OpenAPIHandler() http.Handler {
	doc := OpenAPI()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			httpjson.Write(w, http.StatusMethodNotAllowed, httpjson.ErrorBody("method_not_allowed", "use GET"))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		_, _ = w.Write(doc)
	})
}

// pathParams returns the {names} of a path pattern.
func pathParams(path string) []string {
	var out []string
	for _, seg := range strings.Split(path, "/") {
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
			out = append(out, strings.TrimSuffix(seg[1:], "}"))
		}
	}
	return out
}
