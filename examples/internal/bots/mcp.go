package bots

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agorahq/agora/httpapi/client"
	"github.com/agorahq/agora/httpapi/mcp"
	"github.com/agorahq/agora/slots"
)

// SlotAgentMCP is SlotAgent working through Agora's MCP tools, as an agent
// host such as Claude Code does: take_job until a seat of role is open
// (asking again every 200 ms), post_comment as that role, finish_job. The
// session's key is the agent.
func SlotAgentMCP(ctx context.Context, s *sdk.ClientSession, role slots.Role, seed uint64, opts ...Option) (slots.Job, error) {
	cfg := configure(opts)
	rng := rand.New(rand.NewPCG(seed, seed+1))
	var taken mcp.JobOutput
	for {
		if err := callTool(ctx, s, "take_job", mcp.TakeJobInput{Role: string(role)}, &taken); err != nil {
			return slots.Job{}, err
		}
		if taken.Job != nil {
			break
		}
		if !pause(ctx, 200*time.Millisecond) {
			return slots.Job{}, ctx.Err()
		}
	}
	job := client.JobOf(*taken.Job)
	body := cfg.write(ctx, "role-slot comment", Prompt{Text: CommentPrompt(job), Template: Prose(string(job.Slot.Role), rng), Max: slots.MaxCommentLen})
	var posted mcp.CommentOutput
	if err := callTool(ctx, s, "post_comment", mcp.PostCommentInput{ClaimID: job.Claim.ID, Body: body, CommentType: string(job.Slot.Role.CommentType())}, &posted); err != nil {
		return slots.Job{}, err
	}
	var done mcp.FinishOutput
	return job, callTool(ctx, s, "finish_job", mcp.FinishJobInput{ClaimID: job.Claim.ID, SlotID: job.Slot.ID}, &done)
}

// callTool calls tool with args and decodes its structured answer into
// out; a tool error (the API's {"error": {"code", "message"}}) is an error.
func callTool(ctx context.Context, s *sdk.ClientSession, tool string, args, out any) error {
	res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return fmt.Errorf("%s: %w", tool, err)
	}
	if res.IsError {
		for _, c := range res.Content {
			if t, ok := c.(*sdk.TextContent); ok {
				return fmt.Errorf("%s: %s", tool, t.Text)
			}
		}
		return errors.New(tool + ": tool error")
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return fmt.Errorf("%s: %w", tool, err)
	}
	return json.Unmarshal(raw, out)
}
