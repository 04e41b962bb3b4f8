package agentchat

import "context"

// Runner runs the coding agent for one message: the Service's one
// dependency on the agent itself. Package claudecli runs the Claude Code
// CLI; hosts and tests may plug their own.
type Runner interface {
	// Run sends the message, calls req.OnEvent with every event in order,
	// and returns when the agent is done, failed or was stopped. Failures
	// of the agent itself come as error events and in RunResult, not as an
	// error; Run's error is for failing to start it at all.
	Run(ctx context.Context, req RunRequest) (RunResult, error)
}

// Turn is one earlier exchange of the conversation, put into the prompt
// when a session cannot be resumed.
type Turn struct {
	Role    string // "user" or "assistant"
	Content string // the message's text
}

// RunRequest is one message to the agent.
type RunRequest struct {
	Message   string // the user's message, as sent
	SessionID string // resume this agent session when set
	// History holds the conversation's earlier user and assistant
	// messages, oldest first, for a run that cannot resume SessionID.
	History []Turn
	// OnEvent receives every event of the run, in order; nil drops them.
	OnEvent func(Event)
}

// RunResult says how a run ended.
type RunResult struct {
	SessionID string // the session to resume next time
	ExitCode  int    // the agent process's exit code; -1 when a signal ended it
	Stopped   string // why the runner stopped the agent, if it did
	FellBack  bool   // resuming failed and the run was retried without
	Stderr    string // the end of the agent's diagnostic output, for messages
}
