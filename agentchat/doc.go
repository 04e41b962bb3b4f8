// Package agentchat runs the Claude Code CLI for each chat message, stores
// every event and streams it to a chat UI (seeds/agentchat.md).
//
// The parts, from the process up: [Parser] turns the CLI's
// `--output-format stream-json --verbose` lines into normalised [Event]s;
// [CLIRunner] runs one CLI process per message (resuming the session, with
// watchdogs, and always reaping its process group); [Service] keeps
// conversations and their events in a [Store], runs one message at a time
// per working directory and publishes every event on the store's notifier,
// so any process sharing the backend can stream or cancel a run; [Handler]
// serves the agent API, its server-sent-event stream and the chat console
// (/chat, /chat.js, and /chat/config for slot-machine's chat page), guarded
// by an [Auth] scheme, and [Intercept] puts them in front of an application.
package agentchat
