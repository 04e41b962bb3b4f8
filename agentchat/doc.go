// Package agentchat runs the Claude Code CLI for each chat message, stores
// every event and streams it to a chat UI (seeds/agentchat.md).
//
// This first slice holds the events of the chat and the parser that turns
// the CLI's `--output-format stream-json --verbose` output into them; the
// runner, the conversation store and the HTTP/SSE layer build on it.
package agentchat
