// Package claudecli runs the Claude Code CLI for agentchat: [Runner]
// starts one `claude -p --output-format stream-json --verbose` process per
// message (resuming the conversation's session, falling back to a fresh
// one with the history in the prompt when resuming fails, with idle and
// total watchdogs, and always reaping its process group); [Parser] turns
// the CLI's stream-json lines into agentchat's normalised events; and
// [ParseEnvFile] reads the KEY=value file a host adds to the CLI's
// environment.
//
// It is the only part of Agora that knows the CLI: package agentchat
// keeps conversations and speaks to any agentchat.Runner, so a host can
// plug another agent without this package.
//
//	runner := &claudecli.Runner{Dir: "/srv/app", SystemPrompt: agentchat.TitleInstructions}
//	chat := agentchat.New(st, runner, agentchat.WithNotifier(st))
package claudecli
