// Package discussion lets an agent ask the squad a question and wait for
// answers: a prompt collects responses until it has RequiredResponses
// distinct responders (resolved) or its timeout passes (timed out), and every
// prompt and response is also a message of the squad chat. It implements
// docs/discussion.md.
//
//	collecting ──N responses──► resolved
//	    │  └──timeout──► timed_out
//	    └──resolve / cancel (a human)──► resolved / cancelled
//
// The rules live in Service and, for what changes a stored prompt, in
// Prompt's methods (Respond, Close, TimeOut), which every Store applies
// inside one atomic step of its own, so that the store decides every race:
// of fifty agents answering a prompt that needs ten at the same moment,
// exactly ten are accepted; a response and a timeout racing leave the
// prompt either resolved or timed out, never both, never with a
// lost response. Timeouts need no cron: reading an overdue prompt already
// reports it timed out, and Sweep (run by RunSweeper) records it.
package discussion
