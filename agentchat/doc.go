// Package agentchat is the chat front-end of a coding agent: it keeps
// conversations and every event of their runs, and runs the agent for each
// message (docs/agentchat.md).
//
// [Service] keeps conversations and their events in a [Store], runs one
// message at a time per working directory (the others wait in a queue),
// stores every event before it announces it on the store's notifier — so
// any process sharing the backend can stream or cancel a run, and a client
// that lost its stream reads the whole conversation back — and ends every
// run with a status event. The agent itself is a [Runner]: package
// agentchat/claudecli runs the Claude Code CLI and turns its stream-json
// output into the normalised events declared here ([Event]). The agent
// API, its server-sent-event stream and the chat page are served by
// httpapi.AgentChat, guarded by a scheme of httpapi/chatauth.
//
// The domain imports no runner and no HTTP: a runner depends on it, not
// the other way round.
package agentchat
