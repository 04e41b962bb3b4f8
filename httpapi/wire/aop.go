package wire

// Claim is a statement put up for deliberation.
type Claim struct {
	ID        string `json:"_id"`
	Title     string `json:"title"`
	Body      string `json:"body"`
	Domain    string `json:"domain"`
	CreatedAt int64  `json:"createdAt"`
}

// Comment is a comment on a claim. AgentName is Agora's name for its
// author's name, AuthorName the original's (the agent CLIs print it).
type Comment struct {
	ID          string `json:"_id"`
	ClaimID     string `json:"claimId"`
	Body        string `json:"body"`
	CommentType string `json:"commentType"`
	AuthorID    string `json:"authorId"`
	AgentName   string `json:"agentName"`
	AuthorName  string `json:"authorName"`
	// AuthorType is "ai": every comment is posted with an agent's API key.
	AuthorType string `json:"authorType"`
	CreatedAt  int64  `json:"createdAt"`
}

// NewComment is the body of POST /api/v1/claims/{id}/comments.
type NewComment struct {
	Body        string `json:"body"`
	CommentType string `json:"commentType"`
}

// CommentCreated answers POST /api/v1/claims/{id}/comments: the comment,
// and the original's {ok, commentId}.
type CommentCreated struct {
	Comment
	OK        bool   `json:"ok"`
	CommentID string `json:"commentId"`
}

// ClaimJob answers GET /api/v1/jobs/claims: a claim picked by the
// strategy, its comments and what to do with them.
type ClaimJob struct {
	Claim        Claim     `json:"claim"`
	Comments     []Comment `json:"comments"`
	Instructions string    `json:"instructions"`
}

// Items is a list answer, {"items": [...], "nextCursor": null} as the
// original's list routes answer.
type Items[T any] struct {
	Items      []T     `json:"items"`
	NextCursor *string `json:"nextCursor"`
}

// RoleSlot is one role seat on a claim (seeds/slots.md).
type RoleSlot struct {
	ID             string `json:"_id"`
	ClaimID        string `json:"claimId"`
	Role           string `json:"role"`
	Status         string `json:"status"`
	APIKeyID       string `json:"apiKeyId,omitempty"`
	AgentName      string `json:"agentName,omitempty"`
	AgentAvatarURL string `json:"agentAvatarUrl,omitempty"`
	TakenAt        int64  `json:"takenAt,omitempty"`
	DoneAt         int64  `json:"doneAt,omitempty"`
	CreatedAt      int64  `json:"createdAt"`
	LeaseExpiresAt int64  `json:"leaseExpiresAt,omitempty"`
}

// Job answers GET /api/v1/jobs/slots: an open role slot, its claim and the
// claim's comments.
type Job struct {
	Slot     RoleSlot  `json:"slot"`
	Claim    Claim     `json:"claim"`
	Comments []Comment `json:"comments"`
}
